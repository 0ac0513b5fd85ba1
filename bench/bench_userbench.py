"""UserBench with the oracle: wall time of a run, world build and scoring time per task, memory.
Prints figures; asserts nothing.

    python bench/bench_userbench.py [--modes quick,deep] [--workers 2] [--repeat 20]

- run: wall seconds of ``pytest suites/userbench --egi-model egi/oracle --egi-mode <mode>``
  (serial and at ``-n <workers>``), items per second, and the peak RSS of the largest process of
  those runs (the controller or an xdist worker);
- world build: milliseconds to generate one task (its option database, preferences and pools)
  per environment, median and max over upstream's test-split sizes (471 tasks), and the size of
  a task record as JSON;
- episode: milliseconds of one oracle episode in process (agent loop, environment, rule
  simulator), median over the quick profile's tasks;
- scoring: microseconds of ``SUITE.score`` on an oracle trajectory (median, ``--repeat``
  rounds) and of ``SUITE.summarize`` over the quick profile's records.
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
from pytest_egi.models.offline import Noise, PolicyClient  # noqa: E402
from pytest_egi.suite import SuiteProfile  # noqa: E402
from suites.userbench import SUITE  # noqa: E402
from suites.userbench.agent import run_trial  # noqa: E402
from suites.userbench.data import ENVIRONMENTS, TEST_SIZES, generate_task  # noqa: E402

QUICK = ("travel22", "travel33", "travel44")


def run(mode: str, workers: int) -> tuple[float, int]:
    """Wall seconds and item count of an oracle run (raises when pytest fails)."""
    wall, stdout = oracle_run("userbench", mode, workers)
    tail = [line for line in stdout.splitlines() if " passed" in line][-1]
    return wall, int(tail.split(" passed")[0].split()[-1])


def world_build() -> dict[str, tuple[float, float, int]]:
    """Per environment: (median ms, max ms, median JSON bytes) of generating one task, over
    upstream's test-split size of that environment."""
    out = {}
    for env in ENVIRONMENTS:
        times, sizes = [], []
        for i in range(TEST_SIZES[env]):
            begin = time.perf_counter()
            task = generate_task(env, i, 42)
            times.append(1000 * (time.perf_counter() - begin))
            sizes.append(len(json.dumps(task)))
        out[env] = (statistics.median(times), max(times), int(statistics.median(sizes)))
    return out


def episodes_and_scoring(repeat: int) -> tuple[float, float, float]:
    """(median ms per oracle episode, median µs per ``score``, µs per ``summarize`` of the
    quick profile's records) over the quick profile's tasks."""
    profile = SuiteProfile(seed=42, categories=list(QUICK), per_category=60, max_turns=20, temperature=1.0)
    tasks = SUITE.load_tasks(profile, None)
    episode_ms, trajectories = [], []
    for task in tasks:
        noise = Noise(0.0, f"42|userbench|{task.id}|1")
        client = PolicyClient("egi/oracle", SUITE.reference_policy(task, None, noise), noise)
        begin = time.perf_counter()
        traj = run_trial(task, client, None)
        episode_ms.append(1000 * (time.perf_counter() - begin))
        trajectories.append(traj.to_dict())
    score_us, records = [], []
    for _ in range(repeat):
        for task, traj in zip(tasks, trajectories, strict=True):
            begin = time.perf_counter()
            score = SUITE.score(task, traj, None)
            score_us.append(1e6 * (time.perf_counter() - begin))
    for task, traj in zip(tasks, trajectories, strict=True):
        score = SUITE.score(task, traj, None)
        records.append({"category": task.category, "status": "passed", "values": score.values})
    begin = time.perf_counter()
    for _ in range(repeat):
        SUITE.summarize(records)
    summarize_us = 1e6 * (time.perf_counter() - begin) / repeat
    return statistics.median(episode_ms), statistics.median(score_us), summarize_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="quick,deep", help="comma-separated: quick, deep")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    for mode in args.modes.split(","):
        for workers in (1, args.workers):
            wall, items = run(mode, workers)
            print(f"{mode} userbench, egi/oracle, -n {workers}: {wall:.2f} s wall, "
                  f"{items / wall:.1f} items/s ({items} items)")  # fmt: skip
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    print(f"peak RSS of the largest process of those runs: {peak_mib:.0f} MiB")
    for env, (median_ms, max_ms, size) in world_build().items():
        print(f"world build {env} ({TEST_SIZES[env]} tasks): median {median_ms:.2f} ms, max {max_ms:.2f} ms "
              f"per task; task record {size / 1024:.1f} KiB")  # fmt: skip
    episode_ms, score_us, summarize_us = episodes_and_scoring(args.repeat)
    print(f"oracle episode in process (quick, 180 tasks): median {episode_ms:.2f} ms per task")
    print(f"scoring: median {score_us:.1f} µs per task; summarize 180 records {summarize_us / 1000:.2f} ms")


if __name__ == "__main__":
    main()
