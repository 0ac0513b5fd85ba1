"""Grader 8 (3 milestones): median on odd unsorted input; median on an even count; population
variance."""

import json
import subprocess
import sys

PROBE = """
import json
from stats import median, variance
out = {}
for key, call in (("odd", lambda: median([9, 1, 7, 3, 5])), ("even", lambda: median([8, 2, 6, 4])),
                  ("var", lambda: variance([1, 2, 3, 4]))):
    try:
        out[key] = call()
    except Exception as exc:
        out[key] = repr(exc)
print(json.dumps(out))
"""


def grade(working_directory):
    run = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=working_directory, capture_output=True, text=True, timeout=20
    )
    try:
        got = json.loads(run.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        got = {}
    completed, total = 0, 3
    for k, (key, want) in enumerate((("odd", 5), ("even", 5.0), ("var", 1.25)), 1):
        if got.get(key) == want:
            completed += 1
        else:
            print(f"MISS [{k}]: {key}: got {got.get(key)!r}, expected {want!r}")
    print(f"{completed}/{total}")
    return completed, total
