"""The run's result in a few flat fields, for tools that read test results (JUnit XML's
suite-level properties, pytest-json-report's summary): the EGI with its interval, the six
buckets and the release gate's verdict, all read from the run's ``egi.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["GATE_VERDICTS", "egi_summary", "gate_verdict", "read_summary"]

GATE_VERDICTS = ("READY", "NOT READY", "NOT JUDGED", "UNDECIDED")
"""The release gate's outcomes (egi.json ``gate``; UNDECIDED only under the confident rule)."""


def gate_verdict(gate: dict[str, Any]) -> str:
    """The gate's one word, one of :data:`GATE_VERDICTS`: egi.json's ``gate.verdict`` when the
    confident rule set it, else from ``judged`` and ``release_ready`` (the point rule, and a
    gate NOT JUDGED under either rule)."""
    if not gate.get("judged", True):
        return "NOT JUDGED"
    verdict = gate.get("verdict")
    if verdict in GATE_VERDICTS:
        return str(verdict)
    return "READY" if gate.get("release_ready") is True else "NOT READY"


def egi_summary(egi: dict[str, Any], *, run_dir: str | None = None) -> dict[str, Any]:
    """The run's result in flat fields, from an ``egi.json`` document.

    Args:
        egi: the parsed ``egi.json`` of a run.
        run_dir: the run folder, reported as ``run_dir`` (None: left out).

    Returns:
        ``{"egi": value or None, "egi_ci95": [lo, hi] or None, "egi_partial_value": ...,
        "egi_partial_ci95": ..., "egi_covered_buckets": [...], "egi_status": "valid" |
        "invalid" | "interrupted" | "incomplete" | ..., "egi_flags": [...], "egi_subset": [...],
        "M1".."M6": bucket value (0-100) or None, "M1_ci95".."M6_ci95": [lo, hi] or None,
        "gate": one of :data:`GATE_VERDICTS`, "gate_release_ready": True | False | None,
        "gate_reason": str | None, "gate_breached": [...], "gate_unmeasured": [...],
        "run_id": str, "run_dir": str}``. ``egi`` is set only when all six buckets are
        measured, as egi.json's ``egi.value`` (a partial figure is ``egi_partial_value``).
        Values are egi.json's, unrounded.
    """
    head = egi.get("egi") or {}
    gate = egi.get("gate") or {}
    out: dict[str, Any] = {
        "egi": head.get("value"),
        "egi_ci95": head.get("ci95"),
        "egi_partial_value": head.get("partial_value"),
        "egi_partial_ci95": head.get("partial_ci95"),
        "egi_covered_buckets": list(head.get("covered_buckets") or []),
        "egi_status": head.get("status"),
        "egi_flags": list(head.get("flags") or []),
        "egi_subset": list(head.get("subset") or []),
    }
    for name, bucket in sorted((egi.get("buckets") or {}).items()):
        out[name] = bucket.get("value")
        out[f"{name}_ci95"] = bucket.get("ci95")
    out.update(
        gate=gate_verdict(gate),
        gate_release_ready=gate.get("release_ready"),
        gate_reason=gate.get("reason") or gate.get("not_judged_reason"),
        gate_breached=list(gate.get("breached") or []),
        gate_unmeasured=list(gate.get("unmeasured") or []),
        run_id=egi.get("run_id"),
    )
    if run_dir is not None:
        out["run_dir"] = run_dir
    return out


def read_summary(written: dict[str, str]) -> dict[str, Any] | None:
    """:func:`egi_summary` of the run a session wrote (``written``: ``{"run_dir": ...,
    "egi_json": ...}`` as :func:`pytest_egi.report.files.write_report_files` returns), or None
    when the session wrote no egi.json (no EGI item ran, a usage error, a run file that
    could not be written)."""
    path = written.get("egi_json")
    if not path:
        return None
    try:
        egi = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return egi_summary(egi, run_dir=written.get("run_dir"))
