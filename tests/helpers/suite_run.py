"""Run one suite through the real plugin in a pytester sandbox (the acceptance tests' runner)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
"""The checkout whose ``suites/`` the runs use."""


def run_suite(
    pytester: pytest.Pytester, suite: str, model: str, *extra: str, mode: str = "quick"
) -> tuple[pytest.RunResult, dict[str, Any] | None]:
    """``pytest suites/<suite> --egi-model <model> --egi-mode <mode> <extra>`` with no bootstrap,
    its reports in ``reports-<model>-<len(extra)>`` under the sandbox.

    Returns:
        The run's result and its parsed ``egi.json`` (None when the run wrote no report, e.g.
        a usage error).
    """
    out = pytester.path / f"reports-{model.replace('/', '_')}-{len(extra)}"
    result = pytester.runpytest(
        str(ROOT / "suites" / suite), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", model, "--egi-mode", mode, "--egi-report-dir", str(out),
        "--egi-bootstrap", "0", *extra,
    )  # fmt: skip
    runs = list(out.iterdir()) if out.exists() else []
    return result, json.loads((runs[0] / "egi.json").read_text()) if runs else None
