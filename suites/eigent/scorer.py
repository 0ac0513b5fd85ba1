"""Pure scoring: per-task values from the checker and grader results, the suite's sub-metrics,
and upstream's results CSV.

Upstream (eigent ``backend/benchmark/main.py``): a task's checkers each give PASS/FAIL and its
graders each give ``completed/total`` milestones; the runner writes one CSV row per checker and
per grader. We add the aggregates: the checker pass rate (passed checker runs / checker runs)
and the milestone completion (Σ completed / Σ total over grader runs), overall, per difficulty
and per tag, all 0-1.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

__all__ = ["CSV_COLUMNS", "aggregate_values", "results_csv", "summarize_records", "task_values"]

CSV_COLUMNS = ("benchmark", "model", "type", "script", "result")
"""Upstream's results CSV header, in order."""


def task_values(results: list[dict[str, Any]], no_answer: bool) -> dict[str, float]:
    """One trial's values from its script results (:class:`~suites.eigent.env.ScriptResult`
    dicts).

    ``passed`` (1 when every checker passed), ``checkers_passed`` / ``checkers_total``,
    ``milestones_completed`` / ``milestones_total``. A trial with no answer (the shared rule)
    gets 0 passed checkers and 0 completed milestones (the totals are kept).
    """
    checkers = [r for r in results if r["type"] == "checker"]
    graders = [r for r in results if r["type"] == "grader"]
    ok = 0 if no_answer else sum(bool(r["passed"]) for r in checkers)
    done = 0 if no_answer else sum(int(r["completed"]) for r in graders)
    return {
        "passed": 1.0 if checkers and ok == len(checkers) else 0.0,
        "checkers_passed": float(ok),
        "checkers_total": float(len(checkers)),
        "milestones_completed": float(done),
        "milestones_total": float(sum(int(r["total"]) for r in graders)),
    }


def aggregate_values(values: Iterable[dict[str, Any]]) -> dict[str, float | None]:
    """``checker_pass_rate`` (Σ passed checkers / Σ checkers), ``milestone_completion``
    (Σ completed / Σ total milestones; None without a grader milestone), ``task_pass_rate``
    (share of trials whose every checker passed) and ``tasks`` (trials), from trials' values."""
    vals = list(values)
    checks = sum(float(v.get("checkers_total") or 0) for v in vals)
    miles = sum(float(v.get("milestones_total") or 0) for v in vals)
    return {
        "checker_pass_rate": sum(float(v.get("checkers_passed") or 0) for v in vals) / checks
        if checks
        else None,
        "milestone_completion": sum(float(v.get("milestones_completed") or 0) for v in vals) / miles
        if miles
        else None,
        "task_pass_rate": sum(float(v.get("passed") or 0) for v in vals) / len(vals) if vals else None,
        "tasks": float(len(vals)),
    }


def summarize_records(
    records: list[dict[str, Any]], difficulties: tuple[str, ...]
) -> dict[str, float | None]:
    """The suite's sub-metrics: :func:`aggregate_values` over all records (unprefixed), per
    difficulty (``<difficulty>.<key>``, difficulties with a record) and per tag
    (``tag.<tag>.<key>``, tags in sorted order; a record's tags are in its ``details``)."""
    out: dict[str, float | None] = dict(aggregate_values(r.get("values") or {} for r in records))
    for level in difficulties:
        mine = [r.get("values") or {} for r in records if r.get("category") == level]
        if mine:
            out.update({f"{level}.{k}": v for k, v in aggregate_values(mine).items()})
    tags = sorted({t for r in records for t in (r.get("details") or {}).get("tags") or []})
    for tag in tags:
        mine = [r.get("values") or {} for r in records if tag in ((r.get("details") or {}).get("tags") or [])]
        agg = aggregate_values(mine)
        out[f"tag.{tag}.checker_pass_rate"] = agg["checker_pass_rate"]
        out[f"tag.{tag}.milestone_completion"] = agg["milestone_completion"]
    return out


def results_csv(rows: Iterable[tuple[str, str, list[dict[str, Any]]]]) -> str:
    """Upstream's ``<timestamp>_results.csv`` text: the header :data:`CSV_COLUMNS`, then per
    trial (``(benchmark name, model, script results)``) its checker rows (``PASS``/``FAIL``),
    then its grader rows (``completed/total``), written by :class:`csv.writer` with its
    defaults (``\\r\\n`` line ends, minimal quoting), as upstream's runner writes them."""
    buf = io.StringIO(newline="")
    writer = csv.writer(buf)
    writer.writerow(list(CSV_COLUMNS))
    for benchmark, model, results in rows:
        for r in results:
            if r["type"] == "checker":
                writer.writerow([benchmark, model, "checker", r["script"], "PASS" if r["passed"] else "FAIL"])
        for r in results:
            if r["type"] == "grader":
                writer.writerow([benchmark, model, "grader", r["script"], f"{r['completed']}/{r['total']}"])
    return buf.getvalue()
