"""The terminal summary: per suite its failures and counts, the missing sub-metrics with their
causes (with ``-v`` the sub-metric tables and the buckets' contributors with their transforms),
then the verdict: EGI, M1-M6 with ceilings and route counts, the gate."""

from __future__ import annotations

import io
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from pytest_egi.models.usage import format_usage_lines, summarize_usage
from pytest_egi.report.failures import failure_kinds_line, kinds_text
from pytest_egi.scoring.aggregate import Aggregate
from pytest_egi.scoring.config import BUCKETS, describe_weights
from pytest_egi.scoring.gate import gate_lines
from pytest_egi.scoring.missing import not_collected_reason
from pytest_egi.scoring.verdict import Verdict

if TYPE_CHECKING:
    from rich.table import Table

__all__ = [
    "bucket_lines", "contributor_lines", "detail_lines", "egi_headline", "failure_lines", "format_value",
    "gate_line", "missing_lines", "no_answer_line", "summary_lines", "verdict_lines",
]


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


DEFAULT_WIDTH = 110
"""The width of the tables when the caller names none."""

_COUNT_NAMES = ("tasks", "entries", "trials", "items", "count", "_k")
_STATISTICS = ("mean", "median", "avg", "rate", "ratio", "score", "f1", "accuracy", "share")


def _render(table: Table, width: int = DEFAULT_WIDTH) -> list[str]:
    """The table as plain lines at ``width`` columns (60 at least); a cell that does not fit
    wraps at word boundaries (a word longer than its column is folded)."""
    from rich.console import Console  # not at module level: rich costs ~0.1 s to import

    console = Console(file=io.StringIO(), width=max(60, width), color_system=None, force_terminal=False)
    console.print(table)
    return [line.rstrip() for line in console.file.getvalue().rstrip("\n").splitlines()]  # type: ignore[attr-defined]


def format_value(metric: str, value: float | None) -> str:
    """A sub-metric's native value as the tables show it: a count (one whose name says it
    counts: ``tasks``, ``entries``, ``trials``, ``pass_hat_k_k``; or an integral value above 1
    whose name is not a statistic: mean, median, rate...) as an integer, anything else with
    three decimals (``replies_median`` 3.000); ``—`` for None."""
    if value is None:
        return "—"
    last = metric.rsplit(".", 1)[-1]
    if float(value).is_integer() and (last.endswith(_COUNT_NAMES) or (
            abs(value) > 1 and not any(w in last for w in _STATISTICS))):
        return str(int(value))
    return f"{value:.3f}"


def routes_counted(res: Any) -> dict[str, int]:
    """Per bucket (M1..M6), the routes the ``routes`` column counts: those that contributed
    and those missing. An optional route of a suite that did not run (an opt-in suite left
    out) is in neither, so a run without that suite reads ``8/8``, not ``8/10``.

    Args:
        res: the run's :class:`~pytest_egi.scoring.egi.EgiResult`.
    """
    counted = {b: len(res.buckets[b].contributors) for b in BUCKETS}
    for miss in res.missing:
        counted[miss.bucket] += 1
    return counted


def bucket_lines(agg: Aggregate, width: int = DEFAULT_WIDTH) -> list[str]:
    """The M1..M6 table and its legend (each column said once). Columns: bucket (id and
    name), weight, score and its 95% CI, floor, and where a suite's formula caps a bucket
    (``BucketResult.ceiling``) its ceiling and the score's share of it, then ``routes``
    (sub-metrics scored / routed to the bucket). Figures on 0-100."""
    from rich.table import Table

    res = agg.result
    capped = any(res.buckets[b].ceiling is not None for b in BUCKETS)
    counted = routes_counted(res)

    def table_of(with_names: bool) -> Table:
        table = Table(box=None, pad_edge=False, show_edge=False)
        table.add_column("bucket", overflow="fold")
        columns = ["weight", "score", "95% CI", "floor", *(["ceiling", "share"] if capped else []), "routes"]
        for col in columns:
            table.add_column(col, justify="left" if col == "95% CI" else "right", no_wrap=True)
        for b in BUCKETS:
            br = res.buckets[b]
            row = [f"{b} {br.name}" if with_names else b, f"{br.weight:.2f}", _fmt(br.value), _ci(agg.ci, b),
                   "" if br.floor is None else f"{br.floor:g}"]
            if capped:
                share = "" if br.ceiling is None or br.value is None or br.ceiling <= 0 else (
                    f"{br.value / br.ceiling:.0%}")
                row += ["" if br.ceiling is None else f"{br.ceiling:.1f}", share]
            row.append(f"{len(br.contributors)}/{counted[b]}")
            table.add_row(*row)
        return table

    lines = _render(table_of(True), width)
    words = set(" ".join(lines).split())
    names = ""
    cut = any(w not in words for b in BUCKETS for w in res.buckets[b].name.split())
    if cut or len(lines) > 1 + len(BUCKETS):
        # too narrow for the names on one line each: ids in the table, the names below
        lines = _render(table_of(False), width)
        names = "; ".join(f"{b} {res.buckets[b].name}" for b in BUCKETS)
    legend = ("routes: sub-metrics scored / routed to the bucket (the others are under missing "
              "sub-metrics); figures 0-100")
    if capped:
        legend += ("; ceiling: the most the bucket's formulas allow on these tasks (a perfect "
                   "agent's score), share: score / ceiling")
    return lines + (_wrap(names, width) if names else []) + _wrap(legend, width)


def _wrap(text: str, width: int, indent: str = "") -> list[str]:
    """``text`` wrapped at word boundaries to ``width`` columns (60 at least)."""
    import textwrap

    return textwrap.wrap(text, max(60, width), subsequent_indent=indent or "  ",
                         break_long_words=False, break_on_hyphens=False) or [""]


def verdict_lines(settings: Any, agg: Aggregate, verdict: Verdict | None = None,
                  width: int = DEFAULT_WIDTH) -> list[str]:
    """The verdict block, the last thing a session prints before pytest's closing line: the
    EGI headline (with its interval), the model line, the M1-M6 table with its legend, the
    bucket weights when changed, and the gate with its reason. The first line is the
    headline."""
    lines = [
        egi_headline(agg, verdict),
        f"model {settings.model}  mode {settings.mode}  run {settings.run_id}",
    ]
    lines += bucket_lines(agg, width)
    weights_line = describe_weights(dict(settings.weights), getattr(settings, "weights_given", None))
    if weights_line:
        lines.append(weights_line)
    lines += gate_lines(agg) or [gate_line(agg)]  # the confident rule's lines, else the point rule's
    return lines


def missing_lines(res: Any, width: int = DEFAULT_WIDTH) -> list[str]:
    """The routed sub-metrics that did not contribute, grouped by their one cause
    (:func:`pytest_egi.scoring.missing.missing_cause`), each group naming up to 4 of them."""
    by_reason: dict[str, list[str]] = defaultdict(list)
    absent: dict[str, int] = {}  # suites with no test under the paths given: one line for all
    for m in res.missing:
        suite = m.route.split("/", 1)[0]
        if m.reason == not_collected_reason(suite):
            absent[suite] = absent.get(suite, 0) + 1
        else:
            by_reason[m.reason].append(m.route)
    if not by_reason and not absent:
        return []
    lines = [f"missing sub-metrics ({len(res.missing)}; all listed in egi.json):"]
    if absent:
        named = ", ".join(f"{s} ({n})" for s, n in absent.items())
        lines += _wrap(f"  not collected, no test under the paths given: {named}", width, "      ")
    for reason, routes in by_reason.items():
        shown = ", ".join(routes[:4]) + (f", +{len(routes) - 4} more" if len(routes) > 4 else "")
        lines += _wrap(f"  {shown}: {reason}", width, "      ")
    return lines


def contributor_lines(agg: Aggregate, width: int = DEFAULT_WIDTH) -> list[str]:
    """Each bucket's contributors with their transforms: ``M5 benchforce/hospital.accuracy_finished
    gap(0.824 vs 0.700) = 87.6`` (and the route's ceiling, where capped)."""
    lines = ["bucket contributors (transform of the native value to 0-100):"]
    for b in BUCKETS:
        for c in agg.result.buckets[b].contributors:
            cap = "" if c.ceiling is None else f" (ceiling {c.ceiling:.1f})"
            lines += _wrap(f"  {b} {c.route}: {c.transform or _fmt(c.value)}{cap}", width, "      ")
    return lines


def failure_lines(failures: dict[str, dict[str, Any]], *, all_shown: bool = False,
                  width: int = DEFAULT_WIDTH, shown: int = 3) -> list[str]:
    """The failed benchmark items, per suite: their count, their failure kinds (the record's
    ``failure_kind``, where the suite sets one), and the first ``shown`` (by task id) with
    their one-line reason.

    Args:
        failures: suite -> ``{"count": int, "kinds": {kind: count}, "examples": [(task id,
            reason)]}``.
        all_shown: pytest lists every failure itself (``-v``, ``-rA``): no examples here.
    """
    if not failures:
        return []
    total = sum(f["count"] for f in failures.values())
    where = ("each listed above" if all_shown else
             f"the first {shown} of each suite below; all with -v or -rA, and in the run folder's records")
    lines = _wrap(f"failed benchmark items: {total} ({where})", width)
    for suite, f in sorted(failures.items()):
        kinds = kinds_text(f["kinds"])
        lines.append(f"  {suite}: {f['count']} failed" + (f" ({kinds})" if kinds else ""))
        if not all_shown:
            for task_id, reason in f["examples"][:shown]:
                # whole up to three lines (what it got and how it ended are kept; a long
                # expected value is shortened first), wrapped at words
                text = _one_line(f"    {task_id}: ", reason, 3 * max(60, width) - 24)
                lines += _wrap(text, width, "        ")
    return lines


def _one_line(prefix: str, reason: str, width: int) -> str:
    """``prefix + reason`` in ``width`` characters: a long ``expected X, got Y`` keeps what it
    got (and how the episode ended) and shortens what was expected."""
    text = prefix + reason
    if len(text) <= width:
        return text
    if "expected " in reason and ", got " in reason:  # ("<kind>: expected X, got Y (ended: Z)")
        lead, rest = reason.split("expected ", 1)
        expected, got = rest.split(", got ", 1)
        room = max(24, width - len(prefix) - len(lead) - len("expected , got ") - len(got) - 1)
        text = f"{prefix}{lead}expected {expected[:room]}…, got {got}"
    return text if len(text) <= width else text[: width - 1] + "…"


def detail_lines(
    settings: Any,
    agg: Aggregate,
    records: list[dict[str, Any]] | None,
    *,
    usage: dict[str, Any] | None = None,
    verbose: bool = False,
    width: int = DEFAULT_WIDTH,
    kinds: bool = True,
) -> list[str]:
    """What comes before the verdict: data warnings, one line per suite (its counts, its
    no-answer share and how its episodes ended, and with ``kinds`` its failed trials by failure
    kind: the session passes False when its failed items' lines said so), with ``verbose`` the
    per-suite sub-metric tables and the bucket contributors with their transforms, the model usage, and the
    missing sub-metrics with their causes."""
    from rich.table import Table

    res = agg.result
    lines = []
    for warning in getattr(settings, "data_warnings", None) or []:
        lines += _wrap(f"data warning ({warning['suite']}): {warning['warning']}", width)
    subs = Table(box=None, pad_edge=False, show_edge=False)
    for col in ("suite", "sub-metric", "value", "→ bucket", "note"):
        subs.add_column(col, overflow="fold", no_wrap=col in ("value", "→ bucket"))
    route_of = {(r.suite, r.sub_metric): r.bucket for r in settings.routing.routes}
    for name, summary in agg.suites.items():
        counts = ", ".join(f"{v} {k}{'s' if k == 'error' and v != 1 else ''}"
                           for k, v in summary.counts.items())  # as pytest says: "2 errors"
        lines.append(f"{name} v{summary.version}: {counts}" + (f" — {summary.note}" if summary.note else ""))
        if summary.no_answer_share is not None:
            lines.append(no_answer_line(summary))
        if kinds:
            lines += failure_kinds_line(summary.failure_kinds)
        for metric, value in summary.sub_metrics.items():
            bucket = route_of.get((name, metric), "(diagnostic)")
            subs.add_row(name, metric, format_value(metric, value), bucket,
                         summary.sub_metric_notes.get(metric, ""))
        for label, value in summary.pass_k.items():
            subs.add_row(name, label, _fmt(value, 3), "(reliability)", "")
    if verbose and subs.row_count:
        lines += _render(subs, width)
    if verbose:
        lines += contributor_lines(agg, width)
    lines += format_usage_lines(
        usage if usage is not None else summarize_usage(records or []),
        {"model": settings.model, "judge": settings.judge_model, "simulator": settings.simulator_model},
    )
    lines += missing_lines(res, width)
    return lines


def summary_lines(
    settings: Any,
    agg: Aggregate,
    records: list[dict[str, Any]] | None,
    verdict: Verdict | None = None,
    *,
    usage: dict[str, Any] | None = None,
    verbose: bool = True,
    width: int | None = None,
) -> list[str]:
    """The whole summary as lines of plain text (``egi-bench report``, which prints the
    session's lines after it): :func:`detail_lines`, then :func:`verdict_lines` (its first
    line is the EGI headline, labelled by ``verdict``, :mod:`pytest_egi.scoring.verdict`), the
    verdict last as in a pytest session
    (:meth:`pytest_egi.report.session.EgiSession.write_summary`). The usage lines come from
    ``usage`` (:func:`~pytest_egi.models.usage.summarize_usage` of the run's records) when
    given, else from ``records``."""
    if width is None:  # the terminal's, as pytest's (80 when not a terminal)
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns
    return (detail_lines(settings, agg, records, usage=usage, verbose=verbose, width=width)
            + verdict_lines(settings, agg, verdict, width))
