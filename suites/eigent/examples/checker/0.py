"""Checker 0: primes.py prints the primes below 50, space-separated."""

import subprocess
import sys
from pathlib import Path

EXPECTED = "2 3 5 7 11 13 17 19 23 29 31 37 41 43 47"


def check(working_directory):
    script = Path(working_directory) / "primes.py"
    if not script.is_file():
        print("FAIL: primes.py not found")
        return False
    run = subprocess.run(
        [sys.executable, str(script)], cwd=working_directory, capture_output=True, text=True, timeout=10
    )
    if run.stdout.strip() != EXPECTED:
        print(f"FAIL: printed {run.stdout.strip()[:200]!r}, expected {EXPECTED!r}")
        return False
    print("PASS")
    return True
