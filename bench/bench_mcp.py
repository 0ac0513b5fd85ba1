"""MCP over stdio: server start-up time and per-call latency. Prints figures; asserts nothing.

    python bench/bench_mcp.py [--calls 200] [--starts 3] [--seed 42] [--servers airbnb,finance]

For each local MCP server (``suites/_common/mcp_servers``), started as a real subprocess through
:class:`pytest_egi.mcp.McpServer`:

- start-up: wall seconds from spawn to a listed tool set (spawn + MCP handshake + ``tools/list``),
  median and max over ``--starts`` starts (the first start also pays for the client process's own
  ``import mcp`` and event-loop thread: reported separately);
- per call: wall milliseconds of ``call_tool`` (synchronous API → event-loop thread → stdio →
  server → back), median and p95 over ``--calls`` calls of one cheap and one heavy tool, and
  the result size;
- stop: wall seconds of ``close()`` (stdin closed, process exits by itself);
- memory: the server process's RSS and PSS (its proportional share of pages shared with other
  processes, ``/proc/PID/smaps_rollup``) in MB, after the calls.

Each server is measured twice: spawned (a fresh Python, ``EGI_MCP_FORK=0``'s way) and forked
from the process's fork server (``pytest_egi/mcp/forkserver.py``, the default); the fork
server's own start and memory are printed once.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_egi.mcp import forkserver  # noqa: E402
from pytest_egi.mcp.client import McpServer, close_all  # noqa: E402
from suites._common.mcp_servers import SERVERS, server_spec  # noqa: E402

CALLS = {
    "airbnb": [("airbnb_listing_details", "LISTING"), ("airbnb_search", {"location": "Lisbon", "adults": 2})],
    "healthcare": [
        ("medical_terminology_lookup", {"code": "E11"}),
        ("pubmed_search", {"query": "diabetes", "max_results": 20}),
    ],
    "sports": [
        ("get_game", {"league": "NBA", "game_id": 3}),
        ("get_games", {"league": "MLB", "seasons": [2024]}),
    ],
    "national_parks": [("getParkDetails", "PARK"), ("findParks", {"limit": 50})],
    "finance": [
        ("get_stock_info", {"ticker": "NVLT"}),
        (
            "get_historical_stock_prices",
            {"ticker": "NVLT", "start_date": "2024-06-05", "end_date": "2025-06-05"},
        ),
    ],
    "calculator": [("calculate", {"expression": "(1250.5 - 1100) / 1100 * 100"})],
    "search": [
        ("search", {"query": "Institute of Physics"}),
        ("search", {"query": "festival harbour river"}),
    ],
    "fetch": [("fetch", {"url": "PAGE"}), ("fetch", {"url": "PAGE", "raw": True, "max_length": 999999})],
    "maps": [("maps_geocode", {"address": "TOWN"}), ("maps_search_places", {"query": "museum in TOWN"})],
    "repository": [
        ("search_repositories", {"query": "user:google generative-ai in:name"}),
        ("egi_snapshot_state", {}),
    ],
}
"""Domain → (tool, arguments): a cheap call and a heavy one; ``LISTING`` / ``PARK`` / ``PAGE`` are
filled from a first search (``PAGE``: the first city article of the web corpus; ``TOWN``: the
first town of the maps server's gazetteer)."""


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _args(server: McpServer, domain: str, args: object, seed: int) -> dict:
    if args == "LISTING":
        hit = server.call_tool("airbnb_search", {"location": "Kyoto"}).json()["searchResults"][0]
        return {"id": hit["id"]}
    if args == "PARK":
        return {"parkCode": server.call_tool("findParks", {"limit": 1}).json()["parks"][0]["code"]}
    if isinstance(args, dict) and args.get("url") == "PAGE":
        from suites._common.mcp_servers.web_corpus import build_corpus

        return {**args, "url": build_corpus(seed).cities["city-0"]["url"]}
    if isinstance(args, dict) and any("TOWN" in str(v) for v in args.values()):
        from suites._common.mcp_servers.maps import _parse_towns

        town = _parse_towns()[0].name
        return {k: str(v).replace("TOWN", town) for k, v in args.items()}
    assert isinstance(args, dict)
    return args


def _memory_mb(pid: int) -> tuple[float, float]:
    """(RSS, PSS) of ``pid`` in MB, from ``/proc/PID/smaps_rollup``."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, rest = line.partition(":")
        fields[name] = int(rest.split()[0]) / 1024
    return fields["Rss"], fields["Pss"]


def _server_pid(server: McpServer) -> int:
    """The process that serves: the fork (a forked server's ``pid`` is its launcher's)."""
    for fs in forkserver._servers.values():
        for pid in fs.forks():
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b" ")[2].decode() == server.spec.args[1]:
                return pid
    assert server.pid is not None
    return server.pid


def _measure(domain: str, spec, opts) -> None:
    starts, stops = [], []
    server = McpServer(spec)
    for i in range(opts.starts):
        server.start()
        starts.append(server.startup_s or 0.0)
        if i < opts.starts - 1:
            t = time.perf_counter()
            server.close()
            stops.append(time.perf_counter() - t)
    first = True
    for tool, raw in CALLS[domain]:
        args = _args(server, domain, raw, opts.seed)
        server.call_tool(tool, args)  # warm the path
        lat, size = [], 0
        for _ in range(opts.calls):
            t = time.perf_counter()
            result = server.call_tool(tool, args)
            lat.append((time.perf_counter() - t) * 1000)
            size = len(result.text)
            assert not result.is_error, result.text
        if first:
            rss, pss = _memory_mb(_server_pid(server))
            how = "forked" if spec.preload else "spawned"
            head = (
                f"{domain:<15} {how:<7} {statistics.median(starts):>8.2f}s {max(starts):>8.2f}s "
                f"{statistics.median(stops) if stops else 0:>5.2f}s {rss:>6.0f} {pss:>6.0f}"
            )
        else:
            head = " " * 65
        print(f"{head}  {tool:<28} {statistics.median(lat):>6.2f}ms {_pct(lat, 0.95):>5.2f}ms {size:>7}")
        first = False
    server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per tool (default 200)")
    parser.add_argument("--starts", type=int, default=3, help="starts per server (default 3)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--servers", default=",".join(SERVERS), help="comma-separated domains (default: all)")
    opts = parser.parse_args()
    domains = [d.strip() for d in opts.servers.split(",") if d.strip()]

    begin = time.perf_counter()
    warm = McpServer(dataclasses.replace(server_spec("calculator", opts.seed), preload=()))
    warm.start()
    warm.close()
    print(
        "first start in this process (import mcp, loop, calculator, spawned): "
        f"{time.perf_counter() - begin:.2f}s"
    )
    if forkserver.supported():
        begin = time.perf_counter()
        warm = McpServer(server_spec("calculator", opts.seed))
        warm.start()
        (fs,) = forkserver._servers.values()
        rss, pss = _memory_mb(fs.pid)
        warm.close()
        print(f"the fork server's start and first fork: {time.perf_counter() - begin:.2f}s; "
              f"the fork server's RSS {rss:.0f} MB, PSS {pss:.0f} MB")  # fmt: skip
    print(
        f"{'server':<15} {'how':<7} {'start med':>9} {'start max':>9} {'stop':>6} {'RSS MB':>6} "
        f"{'PSS MB':>6}  {'tool':<28} {'call med':>8} {'p95':>7} {'bytes':>7}"
    )
    for domain in domains:
        spec = server_spec(domain, opts.seed)
        _measure(domain, dataclasses.replace(spec, preload=()), opts)
        if forkserver.supported():
            _measure(domain, spec, opts)
    close_all()


if __name__ == "__main__":
    main()
