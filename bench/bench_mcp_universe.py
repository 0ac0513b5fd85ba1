"""MCP-Universe with the oracle: wall time of a run, evaluator throughput, stored state size.
Prints figures; asserts nothing.

    python bench/bench_mcp_universe.py [--mode quick|deep] [--workers 2] [--repeat 20]

- run: wall seconds of ``pytest suites/mcp_universe --egi-model egi/oracle --egi-mode <mode>``
  (serial and at ``-n <workers>``), items per second, and the peak RSS of the largest process
  of those runs (the controller, an xdist worker or an MCP server);
- scoring: milliseconds to run every evaluator of one task on its reference answer, per domain
  (median over the generated tasks, ``--repeat`` rounds, after the worlds are built, as in a
  run);
- stored state: bytes of a repository task's trajectory ``info`` (the state the ``github.*``
  ops read), median and max over the generated tasks run by the oracle.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._run import oracle_run  # noqa: E402
from suites.mcp_universe.data.tasks import DOMAINS, TEMPLATE_ENV, generated_tasks  # noqa: E402


def run(mode: str, workers: int) -> tuple[float, int]:
    """Wall seconds and item count of an oracle run (raises when pytest fails)."""
    wall, stdout = oracle_run("mcp_universe", mode, workers)
    tail = [line for line in stdout.splitlines() if " passed" in line][-1]
    return wall, int(tail.split(" passed")[0].split()[-1])


def scoring(domain: str, repeat: int) -> tuple[float, float]:
    """(seconds to score the first task, median ms to score one task's reference answer) for
    ``domain``; repository tasks are scored on the state their reference calls leave (built
    in-process). Generating the tasks already built the worlds the ops read."""
    from suites.mcp_universe.scorer.evaluator import EvalContext, evaluate

    tasks = generated_tasks(domain, 42)
    states = [_state(t) if domain == "repository_management" else {} for t in tasks]
    begin = time.perf_counter()
    first = EvalContext(seed=42, state=states[0], env=TEMPLATE_ENV)
    for i, ev in enumerate(tasks[0]["evaluators"]):
        evaluate(ev, tasks[0]["reference"]["answer"], first, i)
    build = time.perf_counter() - begin
    times = []
    for _ in range(repeat):
        for task, state in zip(tasks, states, strict=True):
            ctx = EvalContext(seed=42, state=state, env=TEMPLATE_ENV)
            begin = time.perf_counter()
            for i, ev in enumerate(task["evaluators"]):
                evaluate(ev, task["reference"]["answer"], ctx, i)
            times.append(1000 * (time.perf_counter() - begin))
    return build, statistics.median(times)


def _state(task: dict) -> dict:
    from suites._common.mcp_servers.repository import RepositoryWorld

    world = RepositoryWorld(42)
    for call in task["reference"]["calls"]:
        world.call(call["tool"], call["arguments"])
    snapshot = world.call("egi_snapshot_state", {})
    return {"github": json.loads(snapshot) if isinstance(snapshot, str) else snapshot}


def stored_state_bytes() -> list[int]:
    """Bytes of ``info["mcp_universe"]`` of each repository task's oracle trajectory."""
    from pytest_egi.mcp import close_all
    from pytest_egi.models.offline import Noise, PolicyClient
    from pytest_egi.suite import SuiteProfile
    from suites.mcp_universe import SUITE
    from suites.mcp_universe.agent import run_trial

    profile = SuiteProfile(seed=42, categories=["repository_management"])
    sizes = []
    for task in SUITE.load_tasks(profile, {}):
        noise = Noise(0.0, task.id)
        traj = run_trial(task, PolicyClient("egi/oracle", SUITE.reference_policy(task, {}, noise), noise))
        sizes.append(len(json.dumps(traj.info["mcp_universe"])))
    close_all()
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="quick", choices=("quick", "deep"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    for workers in (1, args.workers):
        wall, items = run(args.mode, workers)
        print(f"{args.mode} mcp_universe, egi/oracle, -n {workers}: {wall:.2f} s wall, "
              f"{items / wall:.1f} items/s ({items} items)")  # fmt: skip
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    print(f"peak RSS of the largest process of those runs: {peak_mib:.0f} MiB")
    for domain in DOMAINS:
        build, per_task = scoring(domain, args.repeat)
        print(f"scoring {domain}: first task {build * 1000:.1f} ms; then median "
              f"{per_task:.2f} ms per task (all its evaluators)")  # fmt: skip
    sizes = stored_state_bytes()
    median_kib, max_kib = statistics.median(sizes) / 1024, max(sizes) / 1024
    print(f"repository trajectory info (stored state + cleanups): median {median_kib:.1f} KiB, "
          f"max {max_kib:.1f} KiB over {len(sizes)} tasks")  # fmt: skip


if __name__ == "__main__":
    main()
