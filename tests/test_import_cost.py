"""Installed but unused, the plugin stays light: structural checks of what it imports (the
timed figures are in ``bench/bench_import.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pydantic", "litellm", "jinja2", "rich", "yaml", "sqlite3", "filelock", "numpy", "httpx",
         "mcp", "mcp_types", "anyio")
"""Third-party (and sqlite3) modules an unrelated pytest run must not pay for."""
EGI_HEAVY = ("pytest_egi.scoring.config", "pytest_egi.suite", "pytest_egi.run.recorder",
             "pytest_egi.report.session", "pytest_egi.scoring.aggregate", "pytest_egi.report",
             "pytest_egi.models.settings", "pytest_egi.models.cache", "pytest_egi.models.litellm_client",
             "pytest_egi.judges",
             "pytest_egi.mcp")  # fmt: skip
"""The plugin's own modules that belong to a configured run only."""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return {**env, **extra}


def test_importing_the_plugin_imports_nothing_heavy():
    code = ("import json, sys, pytest_egi.plugin\n"
            f"print(json.dumps(sorted(m for m in {HEAVY + EGI_HEAVY!r} if m in sys.modules)))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout  # fmt: skip
    assert json.loads(out) == []


def test_unrelated_pytest_run_imports_nothing_heavy(tmp_path):
    """A whole pytest run of an unrelated test: what the plugin adds to ``sys.modules`` (with
    the plugin vs ``-p no:egi``) holds none of the heavy modules."""
    (tmp_path / "test_one.py").write_text(
        "import os, sys\n\ndef test_one():\n"
        "    open(os.environ['MODULES_OUT'], 'w').write('\\n'.join(sorted(sys.modules)))\n"
    )
    loaded = {}
    for label, extra in (("with", []), ("without", ["-p", "no:egi"])):
        out = tmp_path / f"{label}.txt"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_one.py", *extra]
        subprocess.run(cmd, cwd=tmp_path, env=_env(MODULES_OUT=str(out)), check=True, capture_output=True)
        loaded[label] = set(out.read_text().split())
    added = loaded["with"] - loaded["without"]
    assert "pytest_egi.plugin" in added
    heavy = {m for m in added if m.split(".")[0] in HEAVY or m.startswith(EGI_HEAVY)}
    assert sorted(heavy) == []
