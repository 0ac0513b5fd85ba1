"""The release gate that knows how sure it is (``--egi-gate confident``, the default).

The point rule (``--egi-gate point``, :func:`pytest_egi.scoring.egi.compute_egi`) passes a
floored bucket whose value is at or above its floor. The confident rule judges each floored
bucket (``floor`` set in routing.yaml: M2 and M5) from its percentile-bootstrap interval at
``--egi-gate-level`` (default 0.95; :func:`pytest_egi.scoring.egi.bootstrap_egi`):

- **breach**: the interval's upper bound is below the floor;
- **pass**: its lower bound is at or above the floor, and so is the *pessimistic* value
  (:func:`pessimistic_value`: the bucket recomputed with every errored item of its suites
  counted as a failure, the upstream harnesses' rule for an item that did not finish);
- **too close to call**: anything else (the interval straddles the floor, or only the
  errored items keep it from passing).

The session's verdict (:func:`decide_gate`): NOT READY on any breach or an unmeasured floored
bucket, READY when every floored bucket passes, else UNDECIDED, naming the straddling buckets
and how many more tasks of which suites would likely settle each (:func:`tasks_to_settle`).
A bucket without an interval (``--egi-bootstrap 0``, or one undefined in most resamples) is
judged on its point value, and the output says so.

Exit status (``EgiSession._exit_status``): a breach fails the session as before; UNDECIDED
fails it too unless ``--egi-gate-undecided pass``.

Also here: the paired difference of two runs (``egi-bench compare``,
:func:`paired_differences`): the same task draws applied to both runs' records, over the
tasks present in both (matched by suite and task id).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_egi.scoring.config import RoutingConfig
    from pytest_egi.scoring.egi import BootstrapPlan, BucketResult, EgiResult

__all__ = [
    "add_gate_options",
    "gate_options",
    "BREACH",
    "CLOSE",
    "PASS",
    "RULES",
    "UNMEASURED",
    "BucketCall",
    "GateDecision",
    "Settle",
    "bucket_outcome",
    "decide_gate",
    "gate_lines",
    "paired_differences",
    "paired_intervals",
    "pessimistic_value",
    "settle_gate",
    "side_half_width",
    "suite_variance_shares",
    "tasks_to_settle",
    "undecided_reason",
]

RULES = ("confident", "point")
"""``--egi-gate`` values; the first is the default."""
PASS, BREACH, CLOSE, UNMEASURED = "pass", "breach", "too close to call", "not measured"
"""A floored bucket's outcome under the confident rule."""


def _parse_level(text: str) -> float:
    """``--egi-gate-level``: a number strictly between 0 and 1."""
    import pytest

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 < value < 1.0:
        raise pytest.UsageError(f"--egi-gate-level: expected a number between 0 and 1 (e.g. 0.95), "
                                f"got {text!r}")
    return value


def add_gate_options(group: Any) -> None:
    """Register ``--egi-gate``, ``--egi-gate-level`` and ``--egi-gate-undecided`` on the
    plugin's option group."""
    group.addoption(
        "--egi-gate", dest="egi_gate", choices=RULES, default="confident",
        help="Release gate rule: confident (default; a floored bucket passes when its interval "
             "is at or above the floor, breaches when it is below, else is too close to call) "
             "or point (its value at or above the floor)",
    )
    group.addoption(
        "--egi-gate-level", dest="egi_gate_level", metavar="LEVEL", default=0.95, type=_parse_level,
        help="Confidence level of the confident gate's intervals (default: 0.95)",
    )
    group.addoption(
        "--egi-gate-undecided", dest="egi_gate_undecided", choices=("fail", "pass"), default="fail",
        help="Whether an UNDECIDED confident gate (a floored bucket too close to call) fails the "
             "session (default: fail)",
    )


def gate_options(opt: Any) -> tuple[str, float, str]:
    """``(rule, level, undecided)`` from pytest's parsed options (``config.option``)."""
    return (getattr(opt, "egi_gate", "confident"), float(getattr(opt, "egi_gate_level", 0.95)),
            getattr(opt, "egi_gate_undecided", "fail"))


def _pct(level: float) -> str:
    """``0.95`` -> ``95%``, ``0.9`` -> ``90%``, ``0.975`` -> ``97.5%``."""
    return f"{level * 100:g}%"


def pessimistic_value(
    bucket: BucketResult, counts: Mapping[str, Mapping[str, int]], routing: RoutingConfig
) -> float | None:
    """A bucket's value (0-100) with every errored item counted as a failure.

    Errored items are never scored (an infrastructure fault is not a wrong answer); the
    upstream harnesses instead count an item that did not finish as failed. Generic over
    suites: a failure is worth 0 on every route's 0-100 scale (every transform maps the worst
    native value to 0), so a route of a suite with ``s`` scored and ``e`` errored items
    (records) is worth ``y * s / (s + e)`` instead of ``y``; a route of a suite that ran but
    had every item error (no sub-metrics) counts as 0. The bucket is then the same weighted
    mean over these routes (:func:`pytest_egi.scoring.egi.compute_egi`).

    Args:
        bucket: the bucket's result (its contributors).
        counts: suite -> items per status (``SuiteSummary.counts``).
        routing: the routing table (the routes of the bucket).

    Returns:
        The value on 0-100 (rounded to 6 decimals), equal to ``bucket.value`` when no item of
        its suites errored; None when the bucket has no contributor and no all-errored suite.
    """
    parts: list[tuple[float, float]] = []
    for c in bucket.contributors:
        n = counts.get(c.route.split("/", 1)[0], {})
        scored, errored = n.get("passed", 0) + n.get("failed", 0), n.get("error", 0)
        parts.append((c.value * scored / (scored + errored) if scored + errored else c.value, c.weight))
    contributed = {c.route for c in bucket.contributors}
    for route in routing.routes:
        n = counts.get(route.suite)
        if route.bucket != bucket.bucket or route.key in contributed or not n:
            continue
        if n.get("error", 0) and not (n.get("passed", 0) + n.get("failed", 0)):
            parts.append((0.0, route.weight))
    total = sum(w for _, w in parts)
    if not parts or total <= 0:
        return None
    return round(math.fsum(v * w for v, w in parts) / total, 6)


def bucket_outcome(
    value: float | None, interval: Sequence[float] | None, floor: float, pessimistic: float | None = None
) -> str:
    """One floored bucket's outcome under the confident rule (module docstring).

    Args:
        value: the bucket's point value (0-100), None when not measured.
        interval: ``(lower, upper)`` at the gate's level (0-100), None when there is none
            (then the point rule decides: :data:`BREACH` below the floor, else :data:`PASS`).
        floor: the floor (0-100).
        pessimistic: :func:`pessimistic_value`; a pass needs it at or above the floor too.

    Returns:
        :data:`PASS`, :data:`BREACH`, :data:`CLOSE` or :data:`UNMEASURED`.
    """
    if value is None:
        return UNMEASURED
    if interval is None:
        return BREACH if value < floor else PASS
    lower, upper = interval
    if upper < floor:
        return BREACH
    if lower >= floor and (pessimistic is None or pessimistic >= floor):
        return PASS
    return CLOSE


def side_half_width(value: float, interval: Sequence[float], floor: float) -> float:
    """The interval's half-width on the floor's side of ``value``: ``value - lower`` when the
    floor is at or below the value, else ``upper - value`` (a percentile interval need not be
    symmetric). The interval reaches the floor exactly when this is at least ``|value -
    floor|``."""
    lower, upper = interval
    return value - lower if floor <= value else upper - value


@dataclass(frozen=True)
class Settle:
    """How many more tasks would likely settle one straddling bucket (:func:`tasks_to_settle`).

    Attributes:
        alone: suite -> extra tasks of that suite alone (the others as they are) that bring
            the half-width below the distance; None when that suite alone cannot (the other
            suites' share of the variance is already wider than the distance).
        together: suite -> extra tasks when every contributing suite grows by the same factor.
        room: suite -> how many more tasks its deep profile holds, where known.
        settleable: False when the value sits on the floor (distance 0): no number of tasks
            settles it.
    """

    alone: dict[str, int | None] = field(default_factory=dict)
    together: dict[str, int] = field(default_factory=dict)
    room: dict[str, int] = field(default_factory=dict)
    settleable: bool = True


def tasks_to_settle(
    half_width: float,
    distance: float,
    parts: Mapping[str, tuple[float, int]],
    room: Mapping[str, int] | None = None,
) -> Settle:
    """The fewest extra tasks per suite that would likely bring a bucket's interval off its
    floor, assuming the point value stays where it is.

    Model: the bucket's variance is the sum of its suites' parts (the suites' tasks are drawn
    independently), each falling as ``1/n`` in the suite's number of tasks ``n``; the
    half-width ``h`` goes as the square root of the variance. With share ``a`` of the variance
    from a suite of ``n`` tasks, ``m`` more tasks of it alone give ``h'^2 = h^2 (1 - a + a n /
    (n + m))``; it settles when ``h' < d``, i.e. ``m > a n / (r - 1 + a) - n`` with ``r =
    d^2 / h^2`` (impossible when ``r - 1 + a <= 0``). Growing every suite by the factor ``1 +
    k`` gives ``h'^2 = h^2 / (1 + k)``: ``k > h^2 / d^2 - 1``, ``m_s > n_s k``.

    Args:
        half_width: ``h``, the interval's half-width on the floor's side (0-100 points;
            :func:`side_half_width`).
        distance: ``d = |value - floor|`` (0-100 points).
        parts: suite -> (its share of the bucket's variance, 0-1; its number of tasks).
        room: suite -> how many more tasks its deep profile holds, where known (the answer
            is not capped by it; :class:`Settle` keeps it so the output can say so).

    Returns:
        The :class:`Settle`; ``settleable`` False when ``distance`` is 0.
    """
    room = dict(room or {})
    if distance <= 0:
        return Settle(room=room, settleable=False)
    if half_width < distance:  # already off the floor by width (a pass held back by errors)
        return Settle({s: 0 for s in parts}, {s: 0 for s in parts}, room)
    r = (distance / half_width) ** 2
    alone: dict[str, int | None] = {}
    for suite, (share, n) in parts.items():
        denom = r - 1 + share
        if denom <= 0 or n <= 0:
            alone[suite] = None
            continue
        x = round(share * n / denom - n, 9)
        alone[suite] = max(1, math.floor(x) + 1)
    k = round(1 / r - 1, 9)
    together = {suite: max(1, math.floor(round(n * k, 9)) + 1) for suite, (_, n) in parts.items()}
    return Settle(alone, together, room)


def _subplan(plan: BootstrapPlan, suite: str) -> BootstrapPlan:
    """``plan`` resampling ``suite``'s tasks only (the other suites left out)."""
    return replace(
        plan,
        strata=[s for s in plan.strata if s[0] == suite],
        n_tasks={suite: plan.n_tasks[suite]},
        fast={k: v for k, v in plan.fast.items() if k == suite},
        slow_tasks={k: v for k, v in plan.slow_tasks.items() if k == suite},
        by_task={k: v for k, v in plan.by_task.items() if k == suite},
        flat={k: v for k, v in plan.flat.items() if k == suite},
        covered=(),
    )


def suite_variance_shares(
    plan: BootstrapPlan, bucket: BucketResult, *, resamples: int, seed: int
) -> dict[str, tuple[float, int]]:
    """Each contributing suite's share of a bucket's bootstrap variance, and its task count.

    For each suite with a route in the bucket, a bootstrap that resamples only that suite's
    tasks gives the variance of the bucket's value over that suite's routes; scaled by the
    square of those routes' share of the bucket's route weight, it is the suite's part of the
    bucket's variance (the bucket is a weighted mean of routes, the suites independent).

    Returns:
        suite -> (share 0-1, number of tasks in the run); shares sum to 1 (all 0 when no
        suite varies).
    """
    total_weight = sum(c.weight for c in bucket.contributors)
    parts: dict[str, float] = {}
    for suite in sorted({c.route.split("/", 1)[0] for c in bucket.contributors}):
        if suite not in plan.n_tasks or total_weight <= 0:
            continue
        weight = sum(c.weight for c in bucket.contributors if c.route.split("/", 1)[0] == suite)
        rows: list[tuple[float | None, dict[str, float | None]]] = []
        _subplan(plan, suite).run(resamples=resamples, seed=seed, rows_out=rows)
        values = [v for _, buckets in rows if (v := buckets.get(bucket.bucket)) is not None]
        if len(values) < 2:
            continue
        mean = math.fsum(values) / len(values)
        var = math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)
        parts[suite] = var * (weight / total_weight) ** 2
    total = math.fsum(parts.values())
    return {s: (p / total if total > 0 else 0.0, plan.n_tasks[s]) for s, p in parts.items()}


@dataclass
class BucketCall:
    """One floored bucket under the confident rule.

    Attributes:
        outcome: :data:`PASS`, :data:`BREACH`, :data:`CLOSE` or :data:`UNMEASURED`.
        value: the point value (0-100), None when not measured.
        interval: ``[lower, upper]`` at the gate's level, None when there is none.
        floor: the floor (0-100).
        pessimistic: :func:`pessimistic_value`.
        judged_on: ``interval``, or ``point value`` (no interval).
    """

    outcome: str
    value: float | None
    interval: list[float] | None
    floor: float
    pessimistic: float | None
    judged_on: str


@dataclass
class GateDecision:
    """The confident gate's decision (egi.json ``gate``, beside the point rule's keys).

    Attributes:
        rule: ``confident``.
        level: the intervals' confidence level (0-1).
        verdict: ``READY``, ``NOT READY`` or ``UNDECIDED`` (a gate not judged on its run
            gets no decision: ``GateResult.not_judged_reason`` says why, under either rule).
        reason: one sentence, why.
        buckets: floored bucket -> :class:`BucketCall` (as a dict).
        undecided: the buckets too close to call.
        suggestions: per undecided bucket, ``{"bucket", "distance", "half_width", "settleable",
            "alone": {suite: tasks or None}, "together": {suite: tasks}, "room": {suite:
            tasks}, "errored": {suite: errored items}}``.
        undecided_passes: ``--egi-gate-undecided pass``.
        no_interval: why some bucket was judged on its point value, or None.
    """

    rule: str
    level: float
    verdict: str
    reason: str
    buckets: dict[str, dict[str, Any]]
    undecided: list[str]
    suggestions: list[dict[str, Any]]
    undecided_passes: bool = False
    no_interval: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (egi.json ``gate``), with ``lines``: the terminal's gate lines."""
        return {**self.__dict__, "lines": self.lines()}

    def lines(self) -> list[str]:
        """The gate's lines for people (:func:`gate_lines`)."""
        return _decision_lines(self)


def _fmt_interval(interval: Sequence[float] | None) -> str:
    return "" if not interval else f" [{interval[0]:.1f}, {interval[1]:.1f}]"


def decide_gate(
    result: EgiResult,
    intervals: Mapping[str, Sequence[float] | None],
    *,
    counts: Mapping[str, Mapping[str, int]],
    routing: RoutingConfig,
    level: float = 0.95,
    shares: Mapping[str, Mapping[str, tuple[float, int]]] | None = None,
    room: Mapping[str, int] | None = None,
    bootstrap: int = 1000,
    undecided_passes: bool = False,
) -> GateDecision:
    """The confident rule's decision on a run (module docstring).

    Args:
        result: the run's EGI result (buckets, floors; its ``gate`` says whether it is judged).
        intervals: bucket -> ``(lower, upper)`` at ``level`` (0-100), or None.
        counts: suite -> items per status (for :func:`pessimistic_value`).
        routing: the routing table.
        level: the intervals' confidence level (0-1).
        shares: undecided bucket -> :func:`suite_variance_shares`; a bucket not in it gets
            no suggestion of suites.
        room: suite -> how many more tasks its deep profile holds, where known.
        bootstrap: the bootstrap resamples (0: no interval; said in ``no_interval``).
        undecided_passes: ``--egi-gate-undecided pass``.
    """
    shares = shares or {}
    calls: dict[str, BucketCall] = {}
    for b, br in result.buckets.items():
        if br.floor is None:
            continue
        interval = intervals.get(b) if br.value is not None else None
        pess = pessimistic_value(br, counts, routing)
        outcome = bucket_outcome(br.value, interval, br.floor, pess)
        calls[b] = BucketCall(outcome, br.value, list(interval) if interval else None, br.floor, pess,
                              "interval" if interval else "point value")
    pointed = [b for b, c in calls.items() if c.outcome != UNMEASURED and c.interval is None]
    no_interval = None
    if pointed:
        why = "--egi-bootstrap 0" if bootstrap <= 0 else "undefined in most resamples"
        no_interval = f"no interval for {' '.join(pointed)} ({why}): judged on the point value"
    breach = [b for b, c in calls.items() if c.outcome == BREACH]
    unmeasured = [b for b, c in calls.items() if c.outcome == UNMEASURED]
    close = [b for b, c in calls.items() if c.outcome == CLOSE]
    suggestions: list[dict[str, Any]] = []
    for b in close:
        c = calls[b]
        assert c.value is not None and c.interval is not None
        d, h = abs(c.value - c.floor), side_half_width(c.value, c.interval, c.floor)
        settle = tasks_to_settle(h, d, shares.get(b, {}), {s: n for s, n in (room or {}).items()
                                                          if s in shares.get(b, {})})
        suites = {cb.route.split("/", 1)[0] for cb in result.buckets[b].contributors}
        errored = {s: counts[s].get("error", 0) for s in sorted(suites) if counts.get(s, {}).get("error")}
        suggestions.append({"bucket": b, "distance": round(d, 6), "half_width": round(h, 6),
                            "settleable": settle.settleable, "alone": settle.alone,
                            "together": settle.together, "room": settle.room, "errored": errored})
    if breach or unmeasured:
        verdict = "NOT READY"
        parts = [f"{b} {calls[b].value:.1f}{_fmt_interval(calls[b].interval)} below floor {calls[b].floor:g}"
                 for b in breach]
        parts += [f"{b} not measured (floor {calls[b].floor:g})" for b in unmeasured]
        reason = "; ".join(parts)
    elif close:
        verdict = "UNDECIDED"
        reason = "; ".join(f"{b} {calls[b].value:.1f}{_fmt_interval(calls[b].interval)} too close to call "
                           f"at floor {calls[b].floor:g}" for b in close)
    else:
        verdict = "READY"
        reason = ("every floored bucket's interval at or above its floor" if not pointed
                  else "every floored bucket at or above its floor")
    return GateDecision("confident", level, verdict, reason, {b: c.__dict__ for b, c in calls.items()},
                        close, suggestions, undecided_passes, no_interval)


def settle_gate(agg: Any, settings: Any) -> GateDecision | None:
    """Draw the aggregate's deferred intervals (:meth:`~pytest_egi.scoring.aggregate.Aggregate.
    finish_bootstrap`) and, under ``--egi-gate confident``, decide the gate on them: sets
    ``agg.gate_decision`` and replaces ``agg.result.gate`` (``release_ready`` True only on
    READY; ``breached`` the buckets whose interval is below the floor, or whose point value
    is when there is no interval). The point rule leaves the gate as computed.

    Args:
        agg: the run's :class:`~pytest_egi.scoring.aggregate.Aggregate` (``defer_bootstrap=True``, so
            its plan is still pending; otherwise the per-suite shares are not computed).
        settings: the run's settings (``gate_rule``, ``gate_level``, ``gate_undecided``,
            ``bootstrap``, ``mode``, ``routing``).

    Returns:
        The decision, or None under the point rule.
    """
    pending = agg.pending_bootstrap
    agg.finish_bootstrap()
    if getattr(settings, "gate_rule", "point") != "confident" or not agg.result.gate.judged:
        return None  # (a gate not judged is the same under either rule: its reason says why)
    level = float(getattr(settings, "gate_level", 0.95))
    intervals = agg.ci
    if pending is not None and abs(level - 0.95) > 1e-12:
        plan, resamples, seed = pending
        intervals = plan.run(resamples=resamples, seed=seed, level=level)
    counts = {name: s.counts for name, s in agg.suites.items()}
    result = agg.result
    decision = decide_gate(result, intervals, counts=counts, routing=settings.routing, level=level,
                           bootstrap=settings.bootstrap,
                           undecided_passes=getattr(settings, "gate_undecided", "fail") == "pass")
    if decision.undecided and pending is not None:
        plan, resamples, seed = pending
        shares = {b: suite_variance_shares(plan, result.buckets[b], resamples=resamples, seed=seed)
                  for b in decision.undecided}
        room = {s: 0 for s in agg.suites} if settings.mode == "deep" else {}
        decision = decide_gate(result, intervals, counts=counts, routing=settings.routing, level=level,
                               shares=shares, room=room, bootstrap=settings.bootstrap,
                               undecided_passes=decision.undecided_passes)
    agg.gate_decision = decision
    gate = result.gate
    breached = [b for b, c in decision.buckets.items() if c["outcome"] == BREACH]
    result.gate = replace(gate, breached=breached,
                          release_ready=(decision.verdict == "READY") if gate.judged else None)
    return decision


def undecided_reason(agg: Any) -> str | None:
    """Why an UNDECIDED gate fails the session (``session fails: <this>``), or None: the gate
    was not decided by the confident rule, is judged otherwise, or ``--egi-gate-undecided
    pass`` lets it through."""
    decision = getattr(agg, "gate_decision", None)
    if decision is None or decision.verdict != "UNDECIDED" or decision.undecided_passes:
        return None
    return (f"release gate undecided at {_pct(decision.level)}: {decision.reason} (more tasks would "
            "likely settle it; --egi-gate-undecided pass lets it through)")


def _suggestion_lines(s: dict[str, Any]) -> list[str]:
    b = s["bucket"]
    if not s["settleable"]:
        return [f"  {b}: the value sits on the floor; no number of tasks settles it"]
    lines = []
    if s["half_width"] < s["distance"] and s["errored"]:
        errs = ", ".join(f"{n} of {suite}" for suite, n in s["errored"].items())
        return [f"  {b}: only the errored items keep it from passing (counted as failures it is "
                f"below the floor): run them again ({errs} errored items)"]
    alone = [f"~{m} more tasks of {suite}" + (f" (its deep profile holds {s['room'][suite]} more)"
                                              if suite in s["room"] and s["room"][suite] < m else "")
             for suite, m in s["alone"].items() if m is not None]
    cannot = [suite for suite, m in s["alone"].items() if m is None]
    if alone:
        lines.append(f"  to settle {b} (interval ±{s['half_width']:.1f} on the floor's side, value "
                     f"{s['distance']:.1f} from the floor): {' or '.join(alone)}"
                     + (f"; {', '.join(cannot)} alone cannot" if cannot else ""))
    if len(s["together"]) > 1 or (s["together"] and not alone):
        together = " + ".join(f"{m} more of {suite}" for suite, m in s["together"].items())
        lines.append(f"  {'or, every' if alone else f'to settle {b}, every'} suite of {b} grown alike: "
                     f"{together}")
    if not lines:
        lines.append(f"  {b}: no per-suite variance known (no interval per suite)")
    if s["room"] and all(v == 0 for v in s["room"].values()):
        lines.append("  (this deep run already holds every task of its profile: more trials "
                     "(--egi-trials) or more data would be needed)")
    return lines


def gate_lines(agg: Any) -> list[str] | None:
    """The terminal's gate lines under the confident rule; None under the point rule (the
    one ``release gate: ...`` line of :func:`pytest_egi.report.terminal.gate_line`).

    ``release gate: UNDECIDED (confident, 95% intervals) — M5 71.2 [64.0, 78.0] too close to
    call at floor 70``, then one line per floored bucket (value, interval, floor, the value
    with errored items counted as failures, outcome), then what would settle each undecided
    bucket."""
    d: GateDecision | None = getattr(agg, "gate_decision", None)
    return None if d is None else d.lines()


def _decision_lines(d: GateDecision) -> list[str]:
    """:meth:`GateDecision.lines`."""
    head = f"release gate: {d.verdict} (confident, {_pct(d.level)} intervals)"
    lines = [f"{head} — {d.reason}"]
    if d.no_interval:
        lines.append(f"  {d.no_interval}")
    for b, c in d.buckets.items():
        if c["value"] is None:
            continue
        pess = "" if c["pessimistic"] is None or c["pessimistic"] == c["value"] else (
            f", {c['pessimistic']:.1f} with errored items as failures")
        ci = f"{_pct(d.level)} CI{_fmt_interval(c['interval'])}" if c["interval"] else "no interval"
        lines.append(f"  {b} {c['value']:.1f}  {ci}  floor {c['floor']:g}{pess}: {c['outcome']}")
    for s in d.suggestions:
        lines += _suggestion_lines(s)
    if d.verdict == "UNDECIDED" and d.undecided_passes:
        lines.append("  (--egi-gate-undecided pass: an undecided gate does not fail the session)")
    return lines


def paired_differences(
    rows_a: Sequence[tuple[float | None, Mapping[str, float | None]]],
    rows_b: Sequence[tuple[float | None, Mapping[str, float | None]]],
    *,
    level: float = 0.95,
) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals of B - A from paired resamples (the same task draws on both runs).

    Args:
        rows_a, rows_b: per resample, ``(EGI figure or None, {bucket: value or None})`` of run
            A and run B (``BootstrapPlan.run(rows_out=...)`` of plans built over the same
            tasks in the same order, with the same seed).
        level: the coverage (0.95: 2.5th to 97.5th percentile).

    Returns:
        ``{"EGI": (lo, hi), "M1": ...}`` on 0-100 points; None where the difference was
        undefined in more than half of the resamples.
    """
    from pytest_egi.scoring.egi import percentile_interval

    keys = ["EGI", *sorted({k for _, bs in rows_a for k in bs})]
    out: dict[str, tuple[float, float] | None] = {}
    n = min(len(rows_a), len(rows_b))
    for key in keys:
        diffs = []
        for (ea, ba), (eb, bb) in zip(rows_a, rows_b, strict=False):
            x, y = (ea, eb) if key == "EGI" else (ba.get(key), bb.get(key))
            if x is not None and y is not None:
                diffs.append(y - x)
        interval = percentile_interval(diffs, level, n)
        out[key] = None if interval is None else (round(interval[0], 6), round(interval[1], 6))
    return out


def paired_intervals(
    records_a: Sequence[dict[str, Any]],
    records_b: Sequence[dict[str, Any]],
    routing: RoutingConfig,
    *,
    weights: Mapping[str, float],
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    sub_metrics_out: dict[tuple[str, str], tuple[float, float] | None] | None = None,
) -> tuple[dict[str, tuple[float, float] | None], int]:
    """Paired bootstrap intervals of run B minus run A (``egi-bench compare``).

    The scored records (status passed/failed) of the tasks scored in both runs, matched by
    (suite, task id), are resampled with the same draws for both runs (stratified by suite and
    category like :func:`pytest_egi.scoring.egi.bootstrap_egi`, all trials of a task together);
    each resample's EGI figure and bucket values of B minus A's give the interval. A task in
    one run only is left out (its difference is not paired).

    Args:
        records_a, records_b: the two runs' records.
        routing: the routing table both runs are judged with (A's).
        weights: the bucket weights.
        resamples: bootstrap resamples (>= 1).
        seed: seed of the draws.
        level: the intervals' coverage.
        sub_metrics_out: when given, filled with ``{(suite, sub-metric): (lo, hi) or None}``:
            the same resamples' percentile intervals of each sub-metric's B - A, on the
            sub-metric's own scale (None where it was undefined in more than half of them).

    Returns:
        ``({"EGI": (lo, hi) or None, "M1": ...}, tasks matched)`` on 0-100 points.

    Raises:
        ImportError: a suite module of the records cannot be imported.
    """
    from pytest_egi.records import record_sort_key
    from pytest_egi.scoring.egi import prepare_bootstrap
    from pytest_egi.suite import load_suite

    def scored(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for r in records if r.get("status") in ("passed", "failed")]

    a, b = scored(records_a), scored(records_b)
    common = {(r["suite"], r["task_id"]) for r in a} & {(r["suite"], r["task_id"]) for r in b}
    modules = {r["suite"]: r["suite_module"] for r in a + b if r.get("suite_module")}
    suites = {name: load_suite(modules[name]) for name in sorted({s for s, _ in common}) if name in modules}
    rows: list[list[tuple[float | None, dict[str, float | None]]]] = []
    subs: list[list[dict[str, Mapping[str, float | None]]]] = []
    for recs in (a, b):
        by_suite: dict[str, list[dict[str, Any]]] = {}
        for r in sorted((r for r in recs if (r["suite"], r["task_id"]) in common and r["suite"] in suites),
                        key=record_sort_key):
            by_suite.setdefault(r["suite"], []).append(r)
        out: list[tuple[float | None, dict[str, float | None]]] = []
        subs_run: list[dict[str, Mapping[str, float | None]]] = []
        if by_suite:
            plan = prepare_bootstrap(
                by_suite, {n: suites[n].summarize for n in by_suite}, routing, weights=weights,
                summary_columns={n: suites[n].summary_columns for n in by_suite
                                 if callable(getattr(suites[n], "summary_columns", None))},
                notices=[],
            )
            plan.run(resamples=resamples, seed=seed, level=level, rows_out=out,
                     subs_out=subs_run if sub_metrics_out is not None else None)
        rows.append(out)
        subs.append(subs_run)
    if not rows[0]:
        return {"EGI": None}, 0
    if sub_metrics_out is not None:
        from pytest_egi.scoring.egi import percentile_interval

        diffs: dict[tuple[str, str], list[float]] = {}
        for sa, sb in zip(subs[0], subs[1], strict=False):
            for suite, values in sa.items():
                other = sb.get(suite) or {}
                for metric, x in values.items():
                    y = other.get(metric)
                    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
                        diffs.setdefault((suite, metric), []).append(float(y) - float(x))
        n = min(len(subs[0]), len(subs[1]))
        for key, d in sorted(diffs.items()):
            iv = percentile_interval(d, level, n)
            sub_metrics_out[key] = None if iv is None else (round(iv[0], 6), round(iv[1], 6))
    return paired_differences(rows[0], rows[1], level=level), len(common)
