"""Figures for the quick CRMArena run with egi/oracle: collection time, harness time per task,
peak memory. Prints figures; asserts nothing.

    python bench/bench_crmarena.py [--repeat 3]

Collection time is the wall time of ``pytest --collect-only`` (world generation + task
generation + parametrization); harness time per task is the call-phase duration pytest
measured for each item (scaffold + org queries + scoring + record writing); peak memory is
the largest resident set of the pytest process (ru_maxrss of the child).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = [
    sys.executable,
    "-m",
    "pytest",
    "suites/crmarena",
    "--egi-model",
    "egi/oracle",
    "--egi-mode",
    "quick",
    "-q",
    "-p",
    "no:cacheprovider",
    "--egi-bootstrap",
    "0",
]


def _run(args: list[str]) -> tuple[float, float]:
    """Run a child; return (wall seconds, child peak RSS in MiB so far)."""
    start = time.perf_counter()
    subprocess.run(args, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, peak_kib / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    collect = [_run([*BASE, "--collect-only"])[0] for _ in range(args.repeat)]
    per_task: list[float] = []
    walls: list[float] = []
    peak = 0.0
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as out:
            wall, peak = _run([*BASE, "--egi-report-dir", out])
            walls.append(wall)
            run = next(Path(out).iterdir())
            lines = (run / "timings.jsonl").read_text().splitlines()
            per_task += [json.loads(line)["call_s"] for line in lines]
    print(f"quick CRMArena, egi/oracle, {len(per_task) // args.repeat} tasks, {args.repeat} repeats")

    def spread(label: str, values: list[float], scale: float = 1.0) -> None:
        med, lo, hi = (scale * x for x in (statistics.median(values), min(values), max(values)))
        print(f"{label:28} median {med:.3f}  min {lo:.3f}  max {hi:.3f}")

    spread("collection time (s):", collect)
    spread("whole run wall time (s):", walls)
    spread("harness time per task (ms):", per_task, 1000.0)
    p95 = statistics.quantiles(per_task, n=20)[-1]
    print(f"{'harness time per task p95:':28} {1000 * p95:.3f} ms")
    print(f"peak memory of a pytest process (MiB): {peak:.1f}")


if __name__ == "__main__":
    main()
