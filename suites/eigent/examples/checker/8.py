"""Checker 8: the fixed stats.py passes the original checks (run from the checker's own copy)."""

import subprocess
import sys
from pathlib import Path

ORIGINAL = Path(__file__).resolve().parent.parent / "files" / "8" / "check_stats.py"


def check(working_directory):
    if not (Path(working_directory) / "stats.py").is_file():
        print("FAIL: stats.py not found")
        return False
    run = subprocess.run(
        [sys.executable, "-c", ORIGINAL.read_text(encoding="utf-8")],
        cwd=working_directory,
        capture_output=True,
        text=True,
        timeout=20,
    )
    if run.returncode != 0:
        print(f"FAIL: the checks fail: {run.stderr.strip()[-300:]}")
        return False
    print("PASS")
    return True
