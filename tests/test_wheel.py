"""The wheel runs outside its checkout (issue 28): built from this checkout with the PEP 517
backend, installed without its dependencies into a folder of its own (this environment's
packages stand in for them: a fresh virtual environment would download and install all of them,
minutes, and a venv made from this one would not see them), then run from an empty folder
with only that folder on ``PYTHONPATH``: ``suites`` and ``pytest_egi`` import from it, never
from the checkout, so a module or data file the wheel lacks fails the run."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "routing.yaml", "pytest_egi", "suites")


def _build_wheel(tmp_path: Path) -> Path:
    src, dist = tmp_path / "src", tmp_path / "dist"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", ".egi_cache", "reports")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    build = "import sys\nfrom setuptools import build_meta\nprint(build_meta.build_wheel(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", build, str(dist)], cwd=src, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return dist / done.stdout.strip().splitlines()[-1]


def _env(target: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON", "EGI_"))}
    env["PYTHONPATH"] = str(target)
    return env


def test_wheel_runs_the_main_job_outside_the_checkout(tmp_path):
    wheel = _build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    assert "pytest_egi/report/templates/report.html.j2" in names
    assert "suites/routing.yaml" in names and "suites/eigent/examples/dataset/0.json" in names
    assert "suites/crmarena/test_crmarena.py" in names and "suites/_common/mcp_servers/maps.py" in names

    target = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--isolated", "install", "--no-deps", "--no-index", "-q",
         "--target", str(target), str(wheel)], capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr[-3000:]
    work = tmp_path / "empty"
    work.mkdir()
    # a conftest.py above both (a venv made inside some checkout) is never loaded by egi-bench run
    above = "raise RuntimeError('a conftest.py above the installed suites was loaded')\n"
    (tmp_path / "conftest.py").write_text(above)
    env = _env(target)

    # the checkout is not importable from here: both packages come from the installed wheel
    code = "import suites, pytest_egi\nprint(suites.__file__)\nprint(pytest_egi.__file__)"
    probe = subprocess.run([sys.executable, "-c", code],
                           cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, probe.stderr
    for line in probe.stdout.splitlines():
        assert Path(line).is_relative_to(target), line

    # the main job on one suite, with the installed default routing (no routing.yaml here)
    egi_bench = str(target / "bin" / "egi-bench")
    ran = subprocess.run(
        [sys.executable, egi_bench, "run", "--suite", "crmarena", "--egi-model", "egi/oracle",
         "--egi-mode", "quick", "-p", "no:cacheprovider", "-q",
         # pytest rewrites the plugin: egi-bench had not imported it in pytest's process
         "-W", "error::pytest.PytestAssertRewriteWarning"],
        cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
    (run,) = (work / "reports").iterdir()
    egi = json.loads((run / "egi.json").read_text())
    assert Path(egi["routing"]["path"]) == target / "suites" / "routing.yaml"
    assert egi["routing"]["sha256"] == hashlib.sha256((ROOT / "routing.yaml").read_bytes()).hexdigest()
    # CRMArena feeds M1, M4 and M5; egi/oracle scores its ceiling on each
    assert egi["egi"]["covered_buckets"] == ["M1", "M4", "M5"]
    assert egi["egi"]["partial_value"] == 100.0 and egi["counts"] == {"passed": 54}
    assert not (work / "routing.yaml").exists() and (work / ".egi_cache").is_dir()

    # egi-bench init: the default routing, with its comments, for a team to edit
    init = [sys.executable, egi_bench, "init"]
    first = subprocess.run(init, cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert (work / "routing.yaml").read_bytes() == (ROOT / "routing.yaml").read_bytes()
    again = subprocess.run(init, cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 2
    assert again.stderr == "egi-bench: error: routing.yaml exists; pass --force to overwrite it\n"
    forced = subprocess.run([*init, "--force"], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert forced.returncode == 0, forced.stderr
