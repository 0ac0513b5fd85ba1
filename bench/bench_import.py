"""What the installed plugin costs a pytest run that does not use it. Prints figures; asserts
nothing.

    python bench/bench_import.py [--repeat 9]

Figures (median of ``--repeat`` runs, each in a fresh interpreter; this checkout's
``pytest_egi`` first on ``sys.path``):

- import: ``pytest_egi.plugin``'s cumulative import time from ``python -X importtime`` with
  pytest imported first (so only what the plugin adds is counted), and the modules it pulls in
  that an unrelated run never needs;
- run: wall and CPU time of ``pytest -q -p no:cacheprovider test_one.py`` (one trivial test, in a
  temporary folder) with the plugin and with ``-p no:egi``, runs interleaved so that load on
  the machine hits both alike; the difference is the plugin's cost.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pydantic", "litellm", "jinja2", "rich", "yaml", "sqlite3", "numpy", "filelock", "httpx")
"""Modules an unrelated pytest run should not pay for."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("PYTEST_ADDOPTS", None)
    return env


def import_ms() -> float:
    """Cumulative import time of ``pytest_egi.plugin`` (ms) after ``import pytest``."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import pytest, pytest_egi.plugin"],
                          env=_env(), cwd=ROOT, capture_output=True, text=True, check=True)  # fmt: skip
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| pytest_egi\.plugin$", line)
        if m:
            return int(m.group(1)) / 1000
    raise RuntimeError("pytest_egi.plugin not in the -X importtime output")


def heavy_modules() -> list[str]:
    """The modules of ``HEAVY`` that importing the plugin loads."""
    code = f"import sys, pytest_egi.plugin; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], env=_env(), cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    return out.split()


def run_s(folder: Path, *extra: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one pytest run of ``test_one.py`` in ``folder``; CPU
    time (user + system of the child) is less sensitive to other load on the machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_one.py", *extra],
                   cwd=folder, env=_env(), check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    imports = [import_ms() for _ in range(args.repeat)]
    print(f"import pytest_egi.plugin (after pytest): median {statistics.median(imports):.1f} ms "
          f"(min {min(imports):.1f}, max {max(imports):.1f}, {args.repeat} runs)")  # fmt: skip
    print(f"heavy modules it imports: {' '.join(heavy_modules()) or 'none'}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_one.py").write_text("def test_one():\n    assert True\n")
        with_plugin, without = [], []
        run_s(folder)  # warm the file cache
        for _ in range(args.repeat):
            with_plugin.append(run_s(folder))
            without.append(run_s(folder, "-p", "no:egi"))
    for i, label in ((0, "wall"), (1, "CPU")):
        a = statistics.median(r[i] for r in with_plugin) * 1000
        b = statistics.median(r[i] for r in without) * 1000
        print(f"pytest run of one test, {label}: with the plugin {a:.0f} ms, with -p no:egi {b:.0f} ms, "
              f"plugin adds {a - b:.0f} ms (medians of {args.repeat})")  # fmt: skip


if __name__ == "__main__":
    main()
