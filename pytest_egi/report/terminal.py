"""The terminal summary: EGI, M1-M6 with contributor counts, gate line, per-suite table."""

from __future__ import annotations

import io
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from pytest_egi.models.usage import format_usage_lines, summarize_usage
from pytest_egi.report.failures import failure_kinds_line
from pytest_egi.scoring.aggregate import Aggregate
from pytest_egi.scoring.config import BUCKETS, describe_weights
from pytest_egi.scoring.gate import gate_lines
from pytest_egi.scoring.verdict import Verdict

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["egi_headline", "gate_line", "no_answer_line", "summary_lines"]


def _fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _ci(ci: dict[str, Any], key: str) -> str:
    interval = ci.get(key)
    return "" if not interval else f"[{interval[0]:.1f}, {interval[1]:.1f}]"


def egi_headline(agg: Aggregate, verdict: Verdict | None = None) -> str:
    """The EGI line; a run whose figure is not a score says so in the line itself.

    ``EGI 81.2  95% CI [76.0, 85.1]``; ``EGI (partial: M1 M4, 42% of weight) 93.0  partial 95%
    CI [88.1, 96.0]  — not comparable to a full EGI`` (the figure is egi.json's
    ``partial_value``; ``egi.value`` is null); ``EGI (subset: -k "alpha") 93.0  — over the
    selected items only``; ``EGI INTERRUPTED: 2 of 6 items ran (stopping after 1 failures) —
    the figure over the items that ran (93.0) is not a score``; ``EGI INVALID: errored items
    60.0% above --egi-max-error-rate 5.0% — ...``. See :mod:`pytest_egi.scoring.verdict`.
    """
    res = agg.result
    figure_value = res.figure
    subset = f"subset: {', '.join(verdict.subset)}" if verdict is not None and verdict.subset else None
    if verdict is not None and verdict.flags:
        if figure_value is None:
            figure = "no figure (nothing was scored)"
        else:
            partial = f", partial: {res.covered_weight:.0%} of weight" if res.partial else ""
            figure = (f"the figure over the items that were scored ({figure_value:.1f}{partial}) is "
                      "not a score")
        label = f" ({subset})" if subset else ""
        return f"EGI {', '.join(verdict.flags)}{label}: {'; '.join(verdict.reasons)} — {figure}"
    ci = _ci(agg.ci, "EGI")
    ci = f"  {'partial ' if res.partial else ''}95% CI {ci}" if ci else ""
    if figure_value is None:
        return "EGI —  (no bucket has a routed sub-metric)" + (f"  ({subset})" if subset else "")
    labels = [subset] if subset else []
    if res.partial:
        covered = " ".join(res.covered)
        labels.append(f"partial: {covered}, {res.covered_weight:.0%} of weight")
    if not labels:
        return f"EGI {figure_value:.1f}{ci}"
    tail = "  — not comparable to a full EGI" if res.partial else "  — over the selected items only"
    return f"EGI ({'; '.join(labels)}) {figure_value:.1f}{ci}{tail}"


def gate_line(agg: Aggregate) -> str:
    """One line, the gate's outcome and why: ``release gate: READY (...)``, ``release gate: NOT
    READY — M5 61.0 below floor 70; M2 not measured (floor 70)``, or ``release gate: NOT JUDGED
    — <reason>`` (:class:`pytest_egi.scoring.egi.GateResult`, ``not_judged_reason``)."""
    gate = agg.result.gate
    if not gate.judged:
        return f"release gate: NOT JUDGED — {gate.not_judged_reason}"
    if gate.release_ready:
        return "release gate: READY (every floored bucket at or above its floor)"
    parts = []
    for b in gate.breached:
        br = agg.result.buckets[b]
        parts.append(f"{b} {br.value:.1f} below floor {br.floor:g}")
    for b in gate.unmeasured:
        parts.append(f"{b} not measured (floor {agg.result.buckets[b].floor:g})")
    return "release gate: NOT READY — " + "; ".join(parts)


def no_answer_line(summary: Any) -> str:
    """``  no answer 12.5% of scored trials; ended by: 1 context_exceeded, 7 submitted``."""
    ended = ", ".join(f"{v} {k}" for k, v in summary.terminations.items())
    line = f"  no answer {summary.no_answer_share:.1%} of scored trials"
    return line + (f"; ended by: {ended}" if ended else "")


def _render(table: Table) -> list[str]:
    from rich.console import Console  # not at module level: rich costs ~0.1 s to import

    console = Console(file=io.StringIO(), width=110, color_system=None, force_terminal=False)
    console.print(table)
    return console.file.getvalue().rstrip("\n").splitlines()  # type: ignore[attr-defined]


def routes_counted(res: Any) -> dict[str, int]:
    """Per bucket (M1..M6), the routes the ``routed`` column counts: those that contributed
    and those missing. An optional route of a suite that did not run (an opt-in suite left
    out) is in neither, so a run without that suite reads ``8/8``, not ``8/10``.

    Args:
        res: the run's :class:`~pytest_egi.scoring.egi.EgiResult`.
    """
    counted = {b: len(res.buckets[b].contributors) for b in BUCKETS}
    for miss in res.missing:
        counted[miss.bucket] += 1
    return counted


def summary_lines(
    settings: Any,
    agg: Aggregate,
    records: list[dict[str, Any]] | None,
    verdict: Verdict | None = None,
    *,
    usage: dict[str, Any] | None = None,
) -> list[str]:
    """The whole terminal summary as lines of plain text; the first line is the EGI
    headline, labelled by ``verdict`` (:mod:`pytest_egi.scoring.verdict`). The usage lines come from
    ``usage`` (:func:`~pytest_egi.models.usage.summarize_usage` of the run's records) when
    given, else from ``records``."""
    from rich.table import Table

    res = agg.result
    lines = [
        egi_headline(agg, verdict),
        f"model {settings.model}  mode {settings.mode}  run {settings.run_id}",
    ]
    buckets = Table(box=None, pad_edge=False, show_edge=False)
    for col in ("bucket", "name", "weight", "score", "95% CI", "floor", "routed"):
        buckets.add_column(col, justify="right" if col in ("weight", "score", "floor") else "left")
    routes_per_bucket = routes_counted(res)
    for b in BUCKETS:
        br = res.buckets[b]
        buckets.add_row(
            b,
            br.name,
            f"{br.weight:.2f}",
            _fmt(br.value),
            _ci(agg.ci, b),
            "" if br.floor is None else f"{br.floor:g}",
            f"{len(br.contributors)}/{routes_per_bucket[b]}",
        )
    lines += _render(buckets)
    weights_line = describe_weights(dict(settings.weights), getattr(settings, "weights_given", None))
    if weights_line:
        lines.append(weights_line)
    lines += gate_lines(agg) or [gate_line(agg)]  # the confident rule's lines, else the point rule's
    for warning in getattr(settings, "data_warnings", None) or []:
        lines.append(f"data warning ({warning['suite']}): {warning['warning']}")
    subs = Table(box=None, pad_edge=False, show_edge=False)
    for col in ("suite", "sub-metric", "value", "→ bucket", "note"):
        subs.add_column(col, overflow="fold")
    route_of = {(r.suite, r.sub_metric): r.bucket for r in settings.routing.routes}
    for name, summary in agg.suites.items():
        counts = ", ".join(f"{v} {k}{'s' if k == 'error' and v != 1 else ''}"
                           for k, v in summary.counts.items())  # as pytest says: "2 errors"
        lines.append(f"{name} v{summary.version}: {counts}" + (f" — {summary.note}" if summary.note else ""))
        if summary.no_answer_share is not None:
            lines.append(no_answer_line(summary))
        lines += failure_kinds_line(summary.failure_kinds)
        for metric, value in summary.sub_metrics.items():
            subs.add_row(
                name,
                metric,
                _fmt(value, 3),
                route_of.get((name, metric), "(diagnostic)"),
                summary.sub_metric_notes.get(metric, ""),
            )
        for label, value in summary.pass_k.items():
            subs.add_row(name, label, _fmt(value, 3), "(reliability)", "")
    if subs.row_count:
        lines += _render(subs)
    lines += format_usage_lines(
        usage if usage is not None else summarize_usage(records or []),
        {"model": settings.model, "judge": settings.judge_model, "simulator": settings.simulator_model},
    )
    missing_by_reason: dict[str, list[str]] = defaultdict(list)
    for m in res.missing:
        missing_by_reason[m.reason].append(m.route.split("/", 1)[1])
    if missing_by_reason:
        lines.append(f"missing sub-metrics ({len(res.missing)}; all listed in egi.json):")
        for reason, routes in missing_by_reason.items():
            shown = ", ".join(routes[:4]) + (f", +{len(routes) - 4} more" if len(routes) > 4 else "")
            lines.append(f"  {reason} — {shown}")
    return lines
