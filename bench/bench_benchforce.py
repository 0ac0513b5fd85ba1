"""Benchforce with the oracle: wall time of a run, the environment server's round-trip latency,
scoring time. Prints figures; asserts nothing.

    python bench/bench_benchforce.py [--mode quick|deep] [--workers 2] [--requests 500] [--repeat 20]

- run: wall seconds of ``pytest suites/benchforce --egi-model egi/oracle --egi-mode <mode>``
  (serial and at ``-n <workers>``), items
  per second, and the peak RSS of the largest process of those runs (the controller, an xdist
  worker or an environment server: every one is a waited-for descendant);
- protocol: one server subprocess, one session over one WebSocket connection; milliseconds per
  request/reply round trip (median, p95, max over ``--requests`` of each kind: ``user.message``
  logging and a read ``tool.call`` executed on the session's state), and per whole session
  (connect, ``session.start``, ``session.end`` with its transcript, close);
- scoring: milliseconds of ``SUITE.score`` on one entry's oracle trajectory (the first call,
  which builds the world and dry-runs, then the median over the profile's entries and
  ``--repeat`` rounds).
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


def run(mode: str, workers: int) -> tuple[float, int]:
    """Wall seconds and item count of an oracle run (raises when pytest fails)."""
    wall, stdout = oracle_run("benchforce", mode, workers)
    tail = [line for line in stdout.splitlines() if " passed" in line][-1]
    return wall, int(tail.split(" passed")[0].split()[-1])


def _ms(values: list[float]) -> str:
    xs = sorted(values)
    p95 = xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
    return f"median {statistics.median(xs):.3f} ms, p95 {p95:.3f} ms, max {xs[-1]:.3f} ms"


def protocol(tasks: list, requests: int) -> dict[str, list[float]]:
    """Round-trip milliseconds per request kind, and per whole session (module docstring)."""
    from suites.benchforce.env import environment
    from suites.benchforce.env.client import EnvSession, ServerProcess

    def read_action(task):  # the entry's first read-only gold call, if any
        tools = environment(task.category).tools
        return next((a for a in task.data["actions"] if tools[a["name"]].kind == "read"), None)

    task = next(t for t in tasks if read_action(t) is not None)
    read = read_action(task)
    entry = {k: v for k, v in task.data.items() if k not in ("env", "seed", "max_turns")}
    out: dict[str, list[float]] = {"user.message": [], "tool.call (read)": [], "session": []}
    server = ServerProcess()
    begin = time.perf_counter()
    server.start()
    out["server start"] = [1000 * (time.perf_counter() - begin)]
    try:
        with EnvSession(server, "bench.rtt.01") as session:
            session.start(task.category, int(task.data["seed"]), entry)
            for _ in range(requests):
                t = time.perf_counter()
                session.say("client", "Hello, I need some help.")
                out["user.message"].append(1000 * (time.perf_counter() - t))
                t = time.perf_counter()
                session.tool_call(read["name"], read["arguments"])
                out["tool.call (read)"].append(1000 * (time.perf_counter() - t))
            session.end("user_exit")
        for i in range(min(requests, 100)):
            t = time.perf_counter()
            with EnvSession(server, f"bench.session.{i:03d}") as session:
                session.start(task.category, int(task.data["seed"]), entry)
                session.say("client", "Hi")
                session.end("user_exit")
            out["session"].append(1000 * (time.perf_counter() - t))
    finally:
        server.stop()
    return out


def scoring(tasks: list, repeat: int) -> tuple[float, float]:
    """(ms of the first score, which builds the world and dry-runs; median ms per entry after)."""
    from pytest_egi.models.offline import Noise, PolicyClient
    from suites.benchforce import SUITE
    from suites.benchforce.agent import run_trial
    from suites.benchforce.env.client import stop_servers

    trajectories = []
    for task in tasks:
        noise = Noise(0.0, task.id)
        client = PolicyClient("egi/oracle", SUITE.reference_policy(task, None, noise), noise)
        trajectories.append(run_trial(task, client).to_dict())
    stop_servers()
    from suites.benchforce import scorer

    scorer._world.cache_clear()  # loading the tasks built the world already
    begin = time.perf_counter()
    SUITE.score(tasks[0], trajectories[0], None)
    first = 1000 * (time.perf_counter() - begin)
    times = []
    for _ in range(repeat):
        for task, traj in zip(tasks, trajectories, strict=True):
            t = time.perf_counter()
            assert SUITE.score(task, traj, None).success
            times.append(1000 * (time.perf_counter() - t))
    return first, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="quick", choices=("quick", "deep"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    for workers in (1, args.workers):
        wall, items = run(args.mode, workers)
        print(f"{args.mode} benchforce, egi/oracle, -n {workers}: {wall:.2f} s wall, "
              f"{items / wall:.1f} items/s ({items} items)")  # fmt: skip
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    print(f"peak RSS of the largest process of those runs (server included): {peak_mib:.0f} MiB")

    from pytest_egi.suite import SuiteProfile
    from suites.benchforce import SUITE

    profile = SuiteProfile(
        seed=42, categories=list(SUITE.categories), per_category=40 if args.mode == "quick" else None
    )
    tasks = SUITE.load_tasks(profile, None)
    figures = protocol(tasks, args.requests)
    print(f"server start (spawn to port read): {figures.pop('server start')[0]:.0f} ms")
    for kind, values in figures.items():
        print(f"protocol {kind}: {_ms(values)} ({len(values)} of them)")
    first, per_entry = scoring(tasks, args.repeat)
    print(f"scoring: first entry {first:.1f} ms (world built, gold dry-run); then median "
          f"{per_entry:.3f} ms per entry over {len(tasks)} entries x {args.repeat}")  # fmt: skip


if __name__ == "__main__":
    main()
