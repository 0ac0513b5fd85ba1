"""Grader 0 (4 milestones): the file, is_prime defined, is_prime right, the output right."""

import ast
import subprocess
import sys
from pathlib import Path

EXPECTED = "2 3 5 7 11 13 17 19 23 29 31 37 41 43 47"
PROBE = """
import importlib.util, io, contextlib, json, sys
spec = importlib.util.spec_from_file_location("primes", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
with contextlib.redirect_stdout(io.StringIO()):
    spec.loader.exec_module(mod)
print(json.dumps([bool(mod.is_prime(n)) for n in range(0, 60)]))
"""


def _is_prime(n):
    return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))


def grade(working_directory):
    script = Path(working_directory) / "primes.py"
    completed, total = 0, 4
    if not script.is_file():
        print("MISS [1]: primes.py not found")
        print(f"{completed}/{total}")
        return completed, total
    completed += 1
    try:
        tree = ast.parse(script.read_text(encoding="utf-8"))
        defined = any(isinstance(n, ast.FunctionDef) and n.name == "is_prime" for n in tree.body)
    except SyntaxError:
        defined = False
    if defined:
        completed += 1
        run = subprocess.run(
            [sys.executable, "-c", PROBE, str(script)], capture_output=True, text=True, timeout=10
        )
        if run.returncode == 0 and run.stdout.strip() == str([_is_prime(n) for n in range(60)]).replace(
            "True", "true"
        ).replace("False", "false"):
            completed += 1
        else:
            print("MISS [3]: is_prime gives wrong answers on 0..59")
    else:
        print("MISS [2]: no top-level function is_prime")
        print("MISS [3]: is_prime cannot be tested")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=10)
    if run.stdout.strip() == EXPECTED:
        completed += 1
    else:
        print("MISS [4]: the printed line is not the primes below 50")
    print(f"{completed}/{total}")
    return completed, total
