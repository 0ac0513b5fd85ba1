"""Eigent (opt-in) with the oracle on the shipped examples: wall time and peak RSS per worker.
Prints figures; asserts nothing.

    python bench/bench_eigent.py [--workers 2]

- run: wall seconds of ``pytest suites/eigent --egi-model egi/oracle --egi-mode quick -n 2
  --egi-opt eigent.dirs=suites/eigent/examples`` (9 tasks; each: a sandboxed working
  directory, the reference steps through the workspace tools, then one checker and one grader
  in sandboxed subprocesses; task 5 also a stdio MCP server per worker), and seconds per item;
- peak RSS: the largest resident set of the pytest processes (the controller or a worker),
  MiB.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "pytest", str(ROOT / "suites" / "eigent"), "-q",
               "-p", "no:cacheprovider",
               "--egi-model", "egi/oracle", "--egi-mode", "quick", "--egi-report-dir", out,
               "--egi-bootstrap", "0", "--egi-opt", f"eigent.dirs={ROOT / 'suites' / 'eigent' / 'examples'}",
               *(["-n", str(args.workers)] if args.workers > 1 else [])]  # fmt: skip
        begin = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - begin
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({proc.returncode}):\n{proc.stdout[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"eigent quick oracle, -n {args.workers}: {wall:.1f} s for 9 items ({wall / 9:.2f} s/item); "
        f"peak RSS of a pytest process {peak:.0f} MiB"
    )


if __name__ == "__main__":
    main()
