"""From trial records to the session result: per-suite sub-metrics, EGI, gate, CIs, pass^k.

Shared by the plugin (at session end, on the controller) and by ``egi-bench report
--rescore`` so both produce the same numbers from the same records.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from pytest_egi.records import record_sort_key
from pytest_egi.report.failures import bucket_failure_counts, failure_counts
from pytest_egi.scoring.config import RoutingConfig
from pytest_egi.scoring.egi import BootstrapPlan, EgiResult, compute_egi, pass_hat_k, prepare_bootstrap
from pytest_egi.scoring.missing import apply_ceilings, refine_missing
from pytest_egi.suite import Suite, load_suite

__all__ = ["Aggregate", "SuiteSummary", "aggregate", "aggregate_run", "no_answer_figures"]

SCORED = ("passed", "failed")


def undefined_notes(suite: Any) -> dict[str, str]:
    """The sub-metrics ``suite`` documents as possibly undefined (``Suite.null_floor`` value
    None) -> its note on each (``sub_metric_notes``, or a default sentence)."""
    floors = getattr(suite, "null_floor", None) or {}
    notes = getattr(suite, "sub_metric_notes", None) or {}
    return {
        key: notes.get(key) or "documented as undefined on some runs (Suite.null_floor)"
        for key, value in floors.items()
        if value is None
    }


def no_answer_figures(records: list[dict[str, Any]]) -> tuple[float | None, dict[str, int]]:
    """One suite's no-answer diagnostic from its records.

    Returns:
        ``(share, terminations)``: the share (0-1) of scored records (status passed/failed)
        whose ``no_answer`` is true, None when none is scored; and the count of records per
        ``termination`` over records that ran (status not skipped; a record without a
        termination counts under ``"unknown"``), sorted by termination.
    """
    scored = [r for r in records if r.get("status") in SCORED]
    share = sum(bool(r.get("no_answer")) for r in scored) / len(scored) if scored else None
    ran = Counter(r.get("termination") or "unknown" for r in records if r.get("status") != "skipped")
    return share, dict(sorted(ran.items()))


@dataclass
class SuiteSummary:
    """One suite's part of the run.

    Attributes:
        sub_metrics: native sub-metrics from the suite's ``summarize`` (empty if none scored).
        counts: items per status (passed / failed / error / skipped).
        version: the suite's version.
        pass_k: ``{"pass^1": x, ...}`` over trials (fractions), when more than one trial ran.
        note: why there are no sub-metrics, when there are none.
        no_answer_share: share of scored trials (passed/failed) that ended with no answer
            (record field ``no_answer``: blank or cut-off reply, turns run out, context
            overflow), 0-1; None when no trial was scored. A diagnostic, never routed.
        terminations: trials per episode termination (``submitted``, ``max_turns``,
            ``context_exceeded``, ``error``, ...) over every trial that ran (skipped ones
            excluded), sorted by name.
        failure_kinds: failed trials per failure kind (record field ``failure_kind``,
            :data:`pytest_egi.outcomes.FAILURE_KINDS`), in the vocabulary's order; empty when
            none failed (:func:`pytest_egi.report.failures.failure_counts`).
    """

    sub_metrics: dict[str, float | None]
    counts: dict[str, int]
    version: str | None
    pass_k: dict[str, float | None] = field(default_factory=dict)
    note: str | None = None
    sub_metric_notes: dict[str, str] = field(default_factory=dict)
    no_answer_share: float | None = None
    terminations: dict[str, int] = field(default_factory=dict)
    failure_kinds: dict[str, int] = field(default_factory=dict)


@dataclass
class Aggregate:
    """Everything computed from the records of one run.

    Attributes:
        result: EGI, buckets, gate, missing sub-metrics.
        suites: per-suite summaries, by suite name.
        ci: 95% bootstrap intervals for EGI and buckets (empty when disabled); ``ci["EGI"]``
            is the interval of ``result.figure``: of the partial value when the run is
            partial (:func:`pytest_egi.scoring.egi.bootstrap_egi`).
        error_rate: errored items / non-skipped items (0 when none ran).
        counts: items per status over the whole run.
        pending_bootstrap: ``(plan, resamples, seed)`` of intervals not drawn yet
            (``aggregate(..., defer_bootstrap=True)``; :meth:`finish_bootstrap` draws them).
    """

    result: EgiResult
    suites: dict[str, SuiteSummary]
    ci: dict[str, tuple[float, float] | None]
    error_rate: float
    counts: dict[str, int]
    pending_bootstrap: tuple[BootstrapPlan, int, int] | None = None
    failure_kinds_by_bucket: dict[str, dict[str, int]] = field(default_factory=dict)
    """Failed trials per bucket and failure kind, through the routing (a failed trial counts
    in each bucket its routed sub-metrics feed: :func:`pytest_egi.report.failures.bucket_failure_counts`)."""
    gate_decision: Any = None
    """The confident gate's :class:`pytest_egi.scoring.gate.GateDecision` (``settle_gate``); None
    under ``--egi-gate point`` or before the intervals are drawn."""

    def finish_bootstrap(self) -> None:
        """Draw the deferred bootstrap's resamples into :attr:`ci` (numpy is imported here);
        a no-op when nothing is pending."""
        if self.pending_bootstrap is not None:
            plan, resamples, seed = self.pending_bootstrap
            self.pending_bootstrap = None
            self.ci = plan.run(resamples=resamples, seed=seed)


def _suite_objects(records: list[dict[str, Any]]) -> tuple[dict[str, Suite], dict[str, str]]:
    objects: dict[str, Suite] = {}
    failures: dict[str, str] = {}
    for rec in records:
        name, module = rec["suite"], rec.get("suite_module")
        if name in objects or name in failures:
            continue
        try:
            objects[name] = load_suite(module)
        except Exception as exc:  # an unimportable suite loses its routes, with the reason
            failures[name] = f"cannot import suite module {module!r}: {exc}"
    return objects, failures


def aggregate(
    records: list[dict[str, Any]],
    routing: RoutingConfig,
    *,
    weights: dict[str, float],
    floors: dict[str, float],
    bootstrap_resamples: int = 1000,
    seed: int = 42,
    notices: list[dict[str, str]] | None = None,
    stopped_early: bool = False,
    defer_bootstrap: bool = False,
    settings: Any = None,
    stop_reason: str | None = None,
) -> Aggregate:
    """Summarise records per suite, route into buckets, compute EGI, gate, CIs and pass^k.

    Args:
        records: trial records of any statuses (see ``pytest_egi.records``).
        routing: the routing table.
        weights: bucket weights (sum to 1).
        floors: bucket floors on 0-100.
        bootstrap_resamples: resamples for CIs; 0 disables them.
        seed: seed of the bootstrap.
        notices: where the bootstrap reports a suite's wrong ``summary_columns`` (it then uses
            ``summarize``); None raises instead (see :func:`~pytest_egi.scoring.egi.bootstrap_egi`).
        stopped_early: the run stopped before all its items ran (INTERRUPTED): the reason of
            a routed sub-metric or suite with nothing scored names "not reached" first.
        defer_bootstrap: prepare the bootstrap (in plain Python) but draw no resample:
            ``ci`` stays empty until :meth:`Aggregate.finish_bootstrap`, which needs none of
            the records of a suite with ``summary_columns`` (the caller may let them go).
        settings: the run's settings (mode, selection, data warnings), when known: each
            missing sub-metric then names its one cause
            (:func:`pytest_egi.scoring.missing.refine_missing`).
        stop_reason: why the run stopped before its end (with ``stopped_early``).

    Returns:
        The aggregate; only ``passed``/``failed`` records are scored (errors and skips are
        counted, never scored as wrong answers).
    """
    records = sorted(records, key=record_sort_key)
    by_suite: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        by_suite[rec["suite"]].append(rec)
    objects, import_failures = _suite_objects(records)
    summaries: dict[str, SuiteSummary] = {}
    sub_metrics: dict[str, dict[str, float | None]] = {}
    reasons: dict[str, str] = {}
    scored_by_suite: dict[str, list[dict[str, Any]]] = {}
    for name, recs in sorted(by_suite.items()):
        counts = Counter(r["status"] for r in recs)
        scored = [r for r in recs if r["status"] in SCORED]
        suite = objects.get(name)
        summary = SuiteSummary({}, dict(sorted(counts.items())), getattr(suite, "version", None))
        summary.sub_metric_notes = dict(getattr(suite, "sub_metric_notes", {}) or {})
        summary.no_answer_share, summary.terminations = no_answer_figures(recs)
        summary.failure_kinds = failure_counts(recs).get(name, {})
        if suite is None:
            summary.note = import_failures.get(name, "suite not importable")
        elif not scored:
            summary.note = (
                f"no scored item ({counts.get('error', 0)} errored, {counts.get('skipped', 0)} skipped)"
            )
        else:
            summary.sub_metrics = dict(suite.summarize(scored))
            sub_metrics[name] = summary.sub_metrics
            scored_by_suite[name] = scored
            # (a task's trials are numbered from 1, one record each: with none past the
            # first, no task has two and there is no pass^k to build)
            if any(int(r["trial"]) > 1 for r in scored):
                outcomes: dict[str, list[bool]] = defaultdict(list)
                for r in scored:
                    outcomes[r["task_id"]].append(bool(r.get("success")))
                max_trials = max(len(v) for v in outcomes.values())
                if max_trials > 1:
                    summary.pass_k = {f"pass^{k}": pass_hat_k(outcomes, k) for k in range(1, max_trials + 1)}
        if summary.note:
            reasons[name] = f"{name}: {summary.note}"
        summaries[name] = summary
    not_reached = "not reached: the run stopped before its items; or " if stopped_early else ""
    for name in routing.suites:
        reasons.setdefault(
            name,
            f"{name}: not run in this session ({not_reached}no item collected: the suite is not "
            "installed here, or was not selected)",
        )
    notes = {name: undefined_notes(objects.get(name)) for name in summaries}
    result = compute_egi(
        sub_metrics, routing, weights=weights, floors=floors, suite_reasons=reasons, notes=notes,
        stopped_early=stopped_early, ran=set(by_suite),
    )
    apply_ceilings(result, routing, sub_metrics, objects)
    if settings is not None:
        refine_missing(result, records, objects, settings,
                       stopped=(stop_reason or "stopped early") if stopped_early else None)
    plan = None
    if bootstrap_resamples > 0 and scored_by_suite:
        plan = prepare_bootstrap(
            scored_by_suite,
            {n: objects[n].summarize for n in scored_by_suite},
            routing,
            weights=weights,
            summary_columns={
                n: objects[n].summary_columns
                for n in scored_by_suite
                if callable(getattr(objects[n], "summary_columns", None))
            },
            notices=notices,
            covered=result.covered,
        )
    counts = Counter(r["status"] for r in records)
    ran = sum(v for k, v in counts.items() if k != "skipped")
    error_rate = counts.get("error", 0) / ran if ran else 0.0
    agg = Aggregate(result, summaries, {}, error_rate, dict(sorted(counts.items())))
    agg.failure_kinds_by_bucket = bucket_failure_counts(
        records, {n: s.summarize for n, s in objects.items()}, routing.routes)
    if plan is not None:
        agg.pending_bootstrap = (plan, bootstrap_resamples, seed)
        if not defer_bootstrap:
            agg.finish_bootstrap()
    return agg


def aggregate_run(
    records: list[dict[str, Any]],
    settings: Any,
    *,
    stopped_early: bool = False,
    defer_bootstrap: bool = False,
    stop_reason: str | None = None,
) -> Aggregate:
    """:func:`aggregate` with a run's routing, weights, floors, bootstrap resamples and seed
    (a :class:`pytest_egi.run.state.RunSettings`): the session's, a rescore's and a merge's. A
    suite's wrong ``summary_columns`` becomes one of ``settings.data_warnings`` (its intervals
    then come from ``summarize``), so the run's report is still written. ``stopped_early``,
    ``defer_bootstrap``: as :func:`aggregate`'s."""
    notices: list[dict[str, str]] = []
    result = aggregate(
        records,
        settings.routing,
        weights=settings.weights,
        floors=settings.floors,
        bootstrap_resamples=settings.bootstrap,
        seed=settings.run_seed,
        notices=notices,
        stopped_early=stopped_early,
        defer_bootstrap=defer_bootstrap,
        settings=settings,
        stop_reason=stop_reason,
    )
    for notice in notices:  # shown as data warnings: terminal, egi.json, report.html
        if notice not in settings.data_warnings:
            settings.data_warnings.append(notice)
    return result
