"""MCPEval quick mode with the oracle: wall time at ``-n 2`` and per-call MCP latency.
Prints figures; asserts nothing.

    python bench/bench_mcpeval.py [--workers 2] [--calls 300]

- run: wall seconds of ``pytest suites/mcpeval --egi-model egi/oracle --egi-mode quick -n 2``
  (50 airbnb tasks, every call executed on a stdio MCP server subprocess per worker), and the
  items per second;
- per call: wall milliseconds of the gold calls of the quick tasks replayed through
  :class:`pytest_egi.mcp.McpToolkit` on one stdio server (synchronous API → event-loop thread
  → stdio → server → back), median, p95 and max; plus the server's start-up seconds.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._run import oracle_run  # noqa: E402
from pytest_egi.mcp import McpToolkit, close_all, shared_server  # noqa: E402
from suites._common.mcp_servers import server_spec  # noqa: E402
from suites.mcpeval.data import generate_tasks  # noqa: E402


def run_quick(workers: int) -> float:
    """Wall seconds of the quick oracle run (raises when pytest fails). Call it before any
    other child process: the peak RSS figure is the largest finished child of this process."""
    return oracle_run("mcpeval", "quick", workers)[0]


def call_latency(calls: int) -> tuple[list[float], float]:
    """Per-call milliseconds over ``calls`` gold calls of the quick tasks, and start-up seconds."""
    server = shared_server(server_spec("airbnb", 42))
    server.start()
    toolkit = McpToolkit.of_servers(server)
    gold = [c for t in generate_tasks("airbnb", 42, 50) for c in t["tool_calls"]]
    times = []
    for i in range(calls):
        call = gold[i % len(gold)]
        begin = time.perf_counter()
        outcome = toolkit.call(call["tool_name"], call["tool_parameters"])
        times.append(1000 * (time.perf_counter() - begin))
        assert not outcome.error, outcome.content
    startup = server.startup_s or 0.0
    close_all()
    return times, startup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    wall = run_quick(args.workers)
    rate = 50 / wall
    print(f"quick mcpeval, egi/oracle, -n {args.workers}: {wall:.2f} s wall, {rate:.1f} items/s (50 items)")
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    print(
        f"peak RSS of the largest process of that run (the controller, an xdist worker or an "
        f"MCP server): {peak_mib:.0f} MiB"
    )
    times, startup = call_latency(args.calls)
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    print(f"airbnb server start-up: {startup:.2f} s")
    print(f"per MCP call over stdio ({len(times)} gold calls): median {statistics.median(times):.2f} ms, "
          f"p95 {p95:.2f} ms, max {max(times):.2f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
