"""A suite's oracle run in a pytest subprocess, timed (shared by the suite benchmarks)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def oracle_run(suite: str, mode: str, workers: int) -> tuple[float, str]:
    """Wall seconds and stdout of ``pytest suites/<suite> --egi-model egi/oracle --egi-mode
    <mode>`` (with ``-n <workers>`` when above 1; reports in a temporary folder).

    Raises:
        SystemExit: pytest exited non-zero (the message holds the end of its output).
    """
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "pytest", str(ROOT / "suites" / suite), "-q",
               "-p", "no:cacheprovider", "--egi-model", "egi/oracle", "--egi-mode", mode,
               "--egi-report-dir", out,
               "--egi-bootstrap", "0"] + (["-n", str(workers)] if workers > 1 else [])  # fmt: skip
        begin = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - begin
    if proc.returncode != 0:
        raise SystemExit(f"{mode} run failed ({proc.returncode}):\n{proc.stdout[-2000:]}")
    return wall, proc.stdout
