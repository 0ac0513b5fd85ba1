"""EGI arithmetic as pure functions (DESIGN §4; EGI-Bench report, "Normalisation, missing data,
gate").

transform -> bucket (weighted mean of present routes, renormalised within the bucket) -> EGI
(the weighted sum over the six buckets, only when all six are measured; otherwise a *partial*
figure over the covered buckets' weight, kept apart as ``partial_value``) -> release gate.
Also: percentile-bootstrap confidence intervals over tasks, and pass^k over trials.
"""

from __future__ import annotations

import array
import math
import random
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from pytest_egi.scoring.config import BUCKETS, Route, RoutingConfig

__all__ = [
    "percentile_interval",
    "BucketResult",
    "Contribution",
    "EgiResult",
    "GateResult",
    "Missing",
    "BootstrapPlan",
    "bootstrap_egi",
    "compute_egi",
    "describe_transform",
    "pass_hat_k",
    "prepare_bootstrap",
    "transform",
]

_NOT_REACHED = "not reached: the run stopped before its tasks"
"""The first possible cause of a sub-metric with no scored task on a run that stopped early."""

SubMetrics = Mapping[str, Mapping[str, float | None]]
"""suite -> sub-metric -> native value (None when it could not be computed)."""


def _round(x: float) -> float:
    """Round a 0-100 figure to 6 decimals, so float noise never shows (100.00000000000001)."""
    return round(x, 6)


def transform(route: Route, values: Mapping[str, float | None]) -> float | None:
    """Map a route's native sub-metric value to [0, 100].

    Args:
        route: the route (names the sub-metric, transform and its arguments).
        values: the suite's native sub-metrics.

    Returns:
        The value on 0-100 (clamped), or None when the sub-metric (or the ``gap`` baseline)
        is missing or not finite.

    Transforms: ``fraction`` 100x; ``percent`` x; ``invert_fraction`` 100 - 100x;
    ``clip_invert`` 100 - 100*min(x, c)/c for a lower-is-better x with ceiling c;
    ``gap`` 100 - (100x - 100b) for fractions x and baseline b (Benchforce
    ``100 - (accuracy_finished - accuracy_all)``, EGI-Bench routing table).
    """
    x = values.get(route.sub_metric)
    if x is None or not math.isfinite(x):
        return None
    if route.transform == "fraction":
        y = 100.0 * x
    elif route.transform == "percent":
        y = x
    elif route.transform == "invert_fraction":
        y = 100.0 - 100.0 * x
    elif route.transform == "clip_invert":
        assert route.ceiling is not None
        y = 100.0 - 100.0 * min(max(x, 0.0), route.ceiling) / route.ceiling
    elif route.transform == "gap":
        b = values.get(route.baseline or "")
        if b is None or not math.isfinite(b):
            return None
        y = 100.0 - (100.0 * x - 100.0 * b)
    else:  # pragma: no cover - the config schema closes the set
        raise ValueError(f"unknown transform {route.transform}")
    return min(100.0, max(0.0, y))


def describe_transform(route: Route, values: Mapping[str, float | None], value: float) -> str:
    """The transform of a route as text, with its native inputs and its value on 0-100:
    ``fraction(0.824) = 82.4``, ``percent(61.0) = 61.0``, ``invert_fraction(0.120) = 88.0``,
    ``clip_invert(3.000, ceiling 10) = 70.0``, ``gap(0.824 vs 0.700) = 87.6`` (the value and
    its ``baseline``)."""
    x = values.get(route.sub_metric)
    native = "—" if x is None else f"{x:.1f}" if route.transform == "percent" else f"{x:.3f}"
    if route.transform == "gap":
        b = values.get(route.baseline or "")
        args = f"{native} vs {'—' if b is None else f'{b:.3f}'}"
    elif route.transform == "clip_invert":
        args = f"{native}, ceiling {route.ceiling:g}"
    else:
        args = native
    return f"{route.transform}({args}) = {value:.1f}"


@dataclass
class Contribution:
    """One route's part in a bucket: native value, value on 0-100, weight."""

    route: str
    raw: float | None
    value: float
    weight: float
    transform: str | None = None
    """How ``raw`` became ``value``: ``fraction(0.824) = 82.4``, ``gap(0.824 vs 0.700) = 87.6``
    (:func:`describe_transform`)."""
    ceiling: float | None = None
    """The most the route allows on 0-100 on this run's tasks, where its suite declares a
    ceiling for the sub-metric (``Suite.oracle_ceiling``); None: it can reach 100."""


@dataclass
class Missing:
    """A routed sub-metric that did not contribute, and why."""

    route: str
    bucket: str
    reason: str


@dataclass
class BucketResult:
    """One bucket's score on 0-100 (None when no routed sub-metric was present)."""

    bucket: str
    name: str
    weight: float
    value: float | None
    floor: float | None
    contributors: list[Contribution] = field(default_factory=list)
    ceiling: float | None = None
    """On 0-100, the most the bucket's routed sub-metrics allow on this run's tasks (the
    weighted mean of its contributors' ceilings, 100 for a route without one), where a
    suite's formula caps one below the top of its scale (UserBench's ``micro_avg``); None
    when nothing caps it (:func:`pytest_egi.scoring.missing.apply_ceilings`)."""


@dataclass
class GateResult:
    """Release gate: floored buckets present and at or above their floors.

    Three outcomes: **ready** (``release_ready`` True), **not ready** (False: a floored
    bucket is below its floor or not measured), and **not judged** (None, ``judged`` False:
    the run's figures do not stand for the run it selected, e.g. an interrupted run or one
    shard of a sharded run; ``not_judged_reason`` says why in one sentence).

    Attributes:
        release_ready: every floored bucket present and >= its floor; None when not judged.
        breached: floored buckets present and below their floor (these fail the session
            when the gate is judged; kept, informative, when it is not).
        unmeasured: floored buckets with no routed sub-metric in this run.
        judged: whether the gate was judged on this run (False: see ``not_judged_reason``).
        not_judged_reason: one sentence, why the gate was not judged; None when judged.
    """

    release_ready: bool | None
    breached: list[str]
    unmeasured: list[str]
    judged: bool = True
    not_judged_reason: str | None = None

    def not_judged(self, reason: str) -> GateResult:
        """This gate, not judged: ``release_ready`` None, ``judged`` False, ``reason`` kept;
        ``breached`` and ``unmeasured`` as computed."""
        return replace(self, release_ready=None, judged=False, not_judged_reason=reason)


@dataclass
class EgiResult:
    """The session's EGI.

    EGI is a full score only when all six buckets are measured (DESIGN §4): then ``egi`` is
    the weighted sum on 0-100 and ``partial_value`` is None. When a bucket is empty, ``egi``
    is None and ``partial_value`` is the figure over the covered buckets, renormalised by
    their weight (``covered_weight``): a labelled partial figure for people, never read as
    the full score.

    Attributes:
        egi: the full EGI on 0-100; None unless all six buckets are measured.
        partial: some bucket had no sub-metric.
        covered_weight: sum of the weights of the covered buckets (0-1; their sum, 1.0 up to
            rounding, when not partial).
        buckets: M1..M6 results.
        gate: the release gate.
        missing: routed sub-metrics that did not contribute, with reasons.
        partial_value: on 0-100, the weighted mean over the covered buckets (their weighted
            sum divided by ``covered_weight``) when ``partial``; None when not partial or when
            no bucket (or only buckets of weight 0) is covered.
        covered: the covered buckets, in M1..M6 order.
    """

    egi: float | None
    partial: bool
    covered_weight: float
    buckets: dict[str, BucketResult]
    gate: GateResult
    missing: list[Missing]
    partial_value: float | None = None
    covered: list[str] = field(default_factory=list)

    @property
    def figure(self) -> float | None:
        """The figure to show: the full EGI, else the partial value (label it partial)."""
        return self.egi if self.egi is not None else self.partial_value

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (for egi.json)."""
        return asdict(self)


def compute_egi(
    sub_metrics: SubMetrics,
    routing: RoutingConfig,
    *,
    weights: Mapping[str, float],
    floors: Mapping[str, float],
    suite_reasons: Mapping[str, str] | None = None,
    notes: Mapping[str, Mapping[str, str]] | None = None,
    stopped_early: bool = False,
    ran: Collection[str] | None = None,
) -> EgiResult:
    """Route native sub-metrics into buckets and combine them into EGI.

    Args:
        sub_metrics: suite -> sub-metric -> native value.
        routing: the validated routing table.
        weights: bucket weights (sum to 1).
        floors: bucket floors on 0-100.
        suite_reasons: why a suite has no sub-metrics at all (e.g. "not collected in this
            run"); used as the missing reason for all its routes.
        notes: suite -> sub-metric -> why it can be undefined, for the sub-metrics a suite
            documents as possibly undefined (``Suite.null_floor`` value None; the note is its
            ``sub_metric_notes`` entry). When the suite returns such a sub-metric as None
            (Benchforce's ``accuracy_finished`` when no session finished), the note is the
            missing reason; otherwise the reason says no task was scored for it.
        stopped_early: the run stopped before all its items ran (its verdict is INTERRUPTED,
            :func:`pytest_egi.scoring.verdict.stopped_before_end`): a sub-metric with no scored task
            may not have been reached, and its reason says so first.
        ran: the suites with at least one item in the session (scored or not). An
            ``optional`` route of a suite not in it (or of a suite without sub-metrics, when
            ``ran`` is None) is left out: not a contribution and not missing. Other routes are
            unaffected.

    Returns:
        The EGI result. A missing sub-metric is dropped and its bucket renormalised within
        itself; buckets are never reweighted against each other (DESIGN §4): with a bucket
        empty, ``egi`` is None and the figure over the covered buckets is ``partial_value``.
    """
    suite_reasons = suite_reasons or {}
    notes = notes or {}
    contributions: dict[str, list[Contribution]] = defaultdict(list)
    missing: list[Missing] = []
    for route in routing.routes:
        values = sub_metrics.get(route.suite)
        if values is None and route.optional and (ran is None or route.suite not in ran):
            continue  # an opt-in suite that did not run: its routes are not part of this EGI
        if values is None:
            reason = suite_reasons.get(route.suite, "suite not run in this session")
            missing.append(Missing(route.key, route.bucket, reason))
            continue
        value = transform(route, values)
        if value is None:
            absent = route.sub_metric if values.get(route.sub_metric) is None else route.baseline
            note = notes.get(route.suite, {}).get(str(absent))
            if note and absent in values:  # returned as None: undefined on the tasks that ran
                reason = f"{route.suite} reports {absent} as undefined on this run's tasks: {note}"
            else:
                reason = (
                    f"{route.suite} reported no value for {absent} (no scored task for it in this "
                    f"run: {_NOT_REACHED + '; or ' if stopped_early else ''}outside the profile, "
                    "deselected with -k/-m, or every such task errored)"
                )
            missing.append(Missing(route.key, route.bucket, reason))
            continue
        contributions[route.bucket].append(
            Contribution(route.key, values.get(route.sub_metric), value, route.weight,
                         describe_transform(route, values, value))
        )
    buckets: dict[str, BucketResult] = {}
    for b in BUCKETS:
        spec = routing.buckets[b]  # type: ignore[index]
        contribs = contributions.get(b, [])
        value = _bucket_value([(c.value, c.weight) for c in contribs])
        buckets[b] = BucketResult(b, spec.name, weights[b], value, floors.get(b), contribs)
    figure, covered = _egi_value({b: br.value for b, br in buckets.items()}, weights)
    covered_weight = sum(weights[b] for b in covered)
    full = len(covered) == len(BUCKETS)
    breached = [
        b
        for b, f in floors.items()
        if buckets[b].value is not None and buckets[b].value < f  # type: ignore[operator]
    ]
    unmeasured = [b for b in floors if buckets[b].value is None]
    gate = GateResult(not breached and not unmeasured, breached, unmeasured)
    return EgiResult(
        egi=figure if full else None,
        partial=not full,
        covered_weight=round(covered_weight, 10),
        buckets=buckets,
        gate=gate,
        missing=missing,
        partial_value=None if full else figure,
        covered=covered,
    )


def _bucket_value(parts: list[tuple[float, float]]) -> float | None:
    """A bucket's value on 0-100: the weighted mean of its present routes' ``(value on
    0-100, route weight)``, renormalised within the bucket; None when none is present."""
    if not parts:
        return None
    return _round(math.fsum(v * w for v, w in parts) / sum(w for _, w in parts))


def _egi_value(
    values: Mapping[str, float | None], weights: Mapping[str, float]
) -> tuple[float | None, list[str]]:
    """The EGI figure on 0-100 from the bucket values (weighted sum over the covered buckets,
    over their weight: the full EGI when all six are covered, else the partial figure) and the
    covered buckets in M1..M6 order; the figure is None when none (of positive weight) is
    covered."""
    covered = [b for b in BUCKETS if values.get(b) is not None]
    covered_weight = sum(weights[b] for b in covered)
    if not covered or covered_weight <= 0:
        return None, covered
    return _round(math.fsum(weights[b] * values[b] for b in covered) / covered_weight), covered  # type: ignore[operator]


def _routes_by_bucket(routing: RoutingConfig) -> list[tuple[str, list[Route]]]:
    """Each bucket of M1..M6 with its routes, in file order (the plan of :func:`_egi_figures`)."""
    return [(b, [r for r in routing.routes if r.bucket == b]) for b in BUCKETS]


def _egi_figures(
    sub_metrics: SubMetrics, plan: list[tuple[str, list[Route]]], weights: Mapping[str, float]
) -> tuple[float | None, dict[str, float | None]]:
    """:func:`compute_egi`'s EGI figure (:attr:`EgiResult.figure`: the full EGI, or the
    partial value when a bucket is empty) and bucket values only (the same
    :func:`_bucket_value` and :func:`_egi_value`, so the same floats), without its
    contributions, missing reasons and gate: the bootstrap's per-resample figures. ``plan``
    is :func:`_routes_by_bucket` of the routing."""
    values: dict[str, float | None] = {}
    for b, routes in plan:
        parts: list[tuple[float, float]] = []
        for route in routes:
            native = sub_metrics.get(route.suite)
            value = transform(route, native) if native is not None else None
            if value is not None:
                parts.append((value, route.weight))
        values[b] = _bucket_value(parts)
    return _egi_value(values, weights)[0], values


class _RandrangeStream:
    """``random.Random(seed).randrange(n)`` draws, many at a time, from the same stream.

    Python's ``randrange(n)`` takes 32-bit Mersenne Twister words, keeps the top
    ``k = n.bit_length()`` bits of each and rejects values >= n. numpy's ``MT19937``, given
    the same state, yields the same words, so this produces the exact sequence of
    ``randrange`` values (and consumes the exact words) with vectorised arithmetic.
    """

    _BLOCK = 1 << 16

    def __init__(self, seed: int) -> None:
        import numpy as np

        self._np = np
        key = random.Random(seed).getstate()[1]
        self._gen = np.random.MT19937()
        self._gen.state = {
            "bit_generator": "MT19937",
            "state": {"key": np.array(key[:624], dtype=np.uint32), "pos": key[624]},
        }
        self._buf = np.empty(0, dtype=np.int64)  # the 32-bit words (as int64: no casts later)
        self._i = 0

    def _refill(self, need: int) -> None:
        rest = self._buf[self._i :]
        fresh = self._gen.random_raw(max(need, self._BLOCK)).view(self._np.int64)  # words < 2**32
        self._buf = self._np.concatenate([rest, fresh])
        self._i = 0

    def below(self, n: int, count: int, offset: int = 0) -> list[int]:
        """The next ``count`` values of ``randrange(n)``, each plus ``offset``; 1 <= n < 2**32."""
        if count <= 32:  # a few draws: a plain loop beats numpy's per-call overhead
            return self._below_few(n, count, offset)
        return (self._below_many(n, count) + offset).tolist()

    def below_array(self, n: int, count: int, offset: int = 0) -> Any:
        """:meth:`below` as a numpy int64 array (the same draws, the same stream position)."""
        if count <= 32:
            return self._np.array(self._below_few(n, count, offset), dtype=self._np.int64)
        got = self._below_many(n, count)
        got += offset
        return got

    def _below_few(self, n: int, count: int, offset: int) -> list[int]:
        # a plain loop over as many words as the draws may need, made a list (never the
        # whole buffer: converting it after every refill cost more than the draws)
        shift = 32 - n.bit_length()
        out: list[int] = []
        append = out.append
        while count:
            take = 2 * count + 32
            if self._i + take > len(self._buf):
                self._refill(take)
            i = self._i
            for word in self._buf[i : i + take].tolist():
                i += 1
                v = word >> shift
                if v < n:
                    append(v + offset)
                    count -= 1
                    if not count:
                        break
            self._i = i
        return out

    def _below_many(self, n: int, count: int) -> Any:
        shift = 32 - n.bit_length()
        chunks = []
        need = count
        while need:
            # about half the words or fewer are rejected; take a little more than twice
            take = 2 * need + 32
            if self._i + take > len(self._buf):
                self._refill(take)
            vals = self._buf[self._i : self._i + take] >> shift
            at = (vals < n).nonzero()[0]  # the accepted words' places, in order
            if len(at) >= need:
                at = at[:need]
                chunks.append(vals[at])
                self._i += int(at[-1]) + 1  # the words up to the last accepted one are used
                need = 0
            else:
                chunks.append(vals[at])
                self._i += take
                need -= len(at)
        return chunks[0] if len(chunks) == 1 else self._np.concatenate(chunks)


SummaryColumnsHook = Callable[[list[dict[str, Any]]], Any]
"""A suite's ``summary_columns`` method (records -> :class:`pytest_egi.suite.SummaryColumns`
or None)."""

_CHUNK_CELLS = 1 << 16
"""Most cells (resamples x tasks) of one suite's task-count matrix at a time (0.5 MB: the draws,
their counts and the counts as floats are a few copies of it at the peak)."""


@dataclass
class _Columns:
    """A suite whose resamples are summed as one matrix product (bootstrap fast path)."""

    names: tuple[str, ...]
    task_sums: array.array  # (tasks, m) row-major doubles: column sums of each task's records
    finish: Callable[[Mapping[str, float]], dict[str, float | None]]
    whole: Mapping[str, float | None]  # summarize of all the records (checked against finish)


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _rows_of(values: Any) -> list[Any]:
    """A suite's column values as a list of rows (a numpy array's ``tolist()``)."""
    return values.tolist() if hasattr(values, "tolist") else list(values)


def _suite_columns(
    suite: str,
    hook: SummaryColumnsHook,
    records: Sequence[dict[str, Any]],
    tasks: list[list[dict[str, Any]]],
    summarize: Callable[[list[dict[str, Any]]], Mapping[str, float | None]],
    routing: RoutingConfig,
) -> _Columns | None:
    """The fast path of ``suite``, or None when it must use ``summarize`` (the hook returned
    None, or its ``finish`` leaves out a routed sub-metric ``summarize`` gives). Plain Python:
    nothing here imports numpy (the records are let go of before the resampling does).

    Raises:
        ValueError: the columns do not have one row per record and one column per name, or
            ``finish`` of all the records' sums disagrees with ``summarize`` of them.
    """
    cols = hook(list(records))
    if cols is None:
        return None
    names = tuple(cols.names)
    rows = _rows_of(cols.values)
    width = len(names)
    if len(rows) != len(records) or not all(
        isinstance(row, (list, tuple)) and len(row) == width for row in rows
    ):
        wide = {len(row) if isinstance(row, (list, tuple)) else 0 for row in rows}
        shape = (len(rows), wide.pop() if len(wide) == 1 else "ragged") if rows else (0,)
        raise ValueError(
            f"{suite}: summary_columns gave values of shape {tuple(shape)} for {len(records)} "
            f"records and {width} column names; it must be ({len(records)}, {width}), "
            "one row per record"
        )
    index = {task[0]["task_id"]: i for i, task in enumerate(tasks)}
    task_sums = array.array("d", bytes(8 * width * len(tasks)))  # one block: no small objects
    for rec, row in zip(records, rows, strict=True):  # in record order, as numpy's add.at
        at = index[rec["task_id"]] * width
        # only the non-zero values are added: the sums start at +0.0 and adding a zero of
        # either sign to one never changes it (most columns of a record are zeros)
        for j, value in [(j, v) for j, v in enumerate(map(float, row)) if v]:
            task_sums[at + j] += value
    del index, rows
    totals = [math.fsum(task_sums[j::width]) for j in range(width)]
    got = cols.finish(dict(zip(names, totals, strict=True)))
    want = summarize(list(records))
    routed = {k for r in routing.routes if r.suite == suite for k in (r.sub_metric, r.baseline) if k}
    if not (routed & set(want)) <= set(got):
        return None
    for key, value in got.items():
        if key not in want or not _close(value, want[key]):
            raise ValueError(
                f"{suite}: summary_columns' finish gives {key} = {value!r} on all the records but "
                f"summarize gives {want.get(key, '(no such key)')!r}; they must agree (to 1e-9)"
            )
    return _Columns(names, task_sums, cols.finish, want)


def _groups_by_task(
    summarize: Callable[[list[dict[str, Any]]], Mapping[str, float | None]],
    tasks: list[list[dict[str, Any]]],
) -> bool:
    """Whether ``summarize`` tells a task drawn twice from two tasks: its result on the tasks
    with the first half of them repeated, against the same with each repeat under a task id
    of its own (``<id>#1``). When both agree, the bootstrap gives such a ``summarize`` the
    drawn records as they are (no copies)."""
    half = tasks[: (len(tasks) + 1) // 2]
    records = [rec for task in tasks for rec in task]
    same_ids = summarize(records + [rec for task in half for rec in task])
    own_ids = summarize(records + [dict(rec, task_id=f"{rec['task_id']}#1") for task in half for rec in task])
    return dict(same_ids) != dict(own_ids)


def _as_distinct_tasks(
    draws: list[int], tasks: list[list[dict[str, Any]]], flat: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """The records of the drawn tasks, in draw order, a task drawn again under a task id of
    its own (``<id>#<k>`` for its k-th repeat), so a ``summarize`` that groups trials by task
    id counts each draw as one task. ``flat``: each task's one record, when every task has
    exactly one."""
    import operator

    import numpy as np

    idx = np.asarray(draws, dtype=np.int64)
    order = np.argsort(idx, kind="stable")
    ranked = idx[order]
    pos = np.arange(len(idx))
    starts = np.maximum.accumulate(np.where(np.r_[True, ranked[1:] != ranked[:-1]], pos, 0))
    repeat = np.empty_like(idx)
    repeat[order] = pos - starts
    again = np.flatnonzero(repeat).tolist()
    if flat is not None:
        got = operator.itemgetter(*draws)(flat)
        recs = list(got) if len(draws) > 1 else [got]
        for j in again:
            recs[j] = dict(recs[j], task_id=f"{recs[j]['task_id']}#{int(repeat[j])}")
        return recs
    picked: list[list[dict[str, Any]]] = [tasks[i] for i in draws]
    for j in again:
        k = int(repeat[j])
        picked[j] = [dict(rec, task_id=f"{rec['task_id']}#{k}") for rec in picked[j]]
    return [rec for task in picked for rec in task]


def bootstrap_egi(
    records_by_suite: Mapping[str, Sequence[dict[str, Any]]],
    summarize: Mapping[str, Callable[[list[dict[str, Any]]], Mapping[str, float | None]]],
    routing: RoutingConfig,
    *,
    weights: Mapping[str, float],
    floors: Mapping[str, float],
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    summary_columns: Mapping[str, SummaryColumnsHook] | None = None,
    notices: list[dict[str, str]] | None = None,
    covered: Sequence[str] | None = None,
) -> dict[str, tuple[float, float] | None]:
    """Percentile-bootstrap confidence intervals for EGI and each bucket.

    Tasks are resampled with replacement within each (suite, category) stratum, all trials
    of a task together; each resample is summarised and routed like the real run. Resample
    ``r`` draws, stratum by stratum in sorted (suite, category) order, as many tasks as the
    stratum has, each by ``randrange(len(stratum))`` of one ``random.Random(seed)`` stream;
    the draws are taken from that stream with numpy (:class:`_RandrangeStream`), so the
    intervals are the same as drawing them one by one.

    A task drawn k times counts k times. A suite with a ``summary_columns`` hook (see
    :class:`pytest_egi.suite.SummaryColumns`) whose ``finish`` covers its routed sub-metrics
    is summarised without its records: each task's column sums, times the number of times
    each resample drew it, for all resamples as one matrix product, then ``finish`` per
    resample. Any other suite's ``summarize`` is called per resample on the drawn records, a
    task drawn again under a task id of its own (``<id>#<k>``) when that changes what
    ``summarize`` gives (it groups trials by task id; :func:`_groups_by_task`).

    Args:
        records_by_suite: suite -> its scored records (``task_id``, ``category``, ...).
        summarize: suite -> its ``summarize``.
        routing: the routing table (which sub-metrics count, into which bucket).
        weights: bucket weights (sum to 1).
        floors: bucket floors on 0-100 (the intervals do not depend on them).
        resamples: number of resamples.
        seed: seed of the draws.
        level: the interval's coverage (0.95: the 2.5th to 97.5th percentile).
        summary_columns: suite -> its ``summary_columns`` hook, for the suites that have one.
        notices: when given, a suite whose ``summary_columns`` is wrong (the errors below) is
            summarised with ``summarize`` instead, and ``{"suite": ..., "warning": ...}`` saying
            so is appended here (a data warning: the run's report is not lost to a suite's bug).
        covered: the buckets the run itself covers (:attr:`EgiResult.covered`); None: found
            by summarising every suite's records once.

    Returns:
        ``{"EGI": (lo, hi), "M1": (lo, hi), ...}`` on 0-100; None where the statistic was
        undefined in more than half of the resamples (e.g. an empty bucket). ``"EGI"`` is the
        interval of the run's own figure: of the full EGI when the run covers all six
        buckets, else of its partial value (an interval of a partial figure, to be labelled
        partial: egi.json's ``partial_ci95``); a resample counts toward it only when it covers
        the same buckets as the run (a figure over other buckets is another figure).

    Raises:
        ValueError: without ``notices``, a suite's ``summary_columns`` has not one row per
            record, or its ``finish`` disagrees with its ``summarize`` on all the records (the
            message names the suite).
    """
    return prepare_bootstrap(
        records_by_suite, summarize, routing, weights=weights, summary_columns=summary_columns,
        notices=notices, covered=covered,
    ).run(resamples=resamples, seed=seed, level=level)


@dataclass
class BootstrapPlan:
    """What :func:`bootstrap_egi`'s resampling needs, made from the records by
    :func:`prepare_bootstrap` without importing numpy. It holds the records of the suites
    summarised on every resample only: a fast suite (``summary_columns``) is held as its
    tasks' column sums, so its records can be let go of before :meth:`run` (the session end
    frees the run's records before numpy is imported and the resamples are drawn).

    Attributes:
        strata: ``(suite, stratum size, offset of the stratum in the suite's tasks)`` in
            sorted (suite, category) order: the order of the draws.
        n_tasks: suite -> its number of tasks.
        fast: suite -> its column sums per task and ``finish``.
        slow_tasks: suite -> its tasks (each a list of its records), for the suites
            summarised with ``summarize`` on every resample.
        by_task: slow suite -> whether its ``summarize`` groups trials by task id.
        flat: slow suite -> each task's one record, when every task has one.
        summarize: suite -> its ``summarize``.
        routing: the routing table.
        weights: bucket weights.
        covered: the buckets the run covers: a resample's EGI figure counts only when it
            covers the same ones (see :func:`bootstrap_egi`).
    """

    strata: list[tuple[str, int, int]]
    n_tasks: dict[str, int]
    fast: dict[str, _Columns]
    slow_tasks: dict[str, list[list[dict[str, Any]]]]
    by_task: dict[str, bool]
    flat: dict[str, list[dict[str, Any]]]
    summarize: Mapping[str, Callable[[list[dict[str, Any]]], Mapping[str, float | None]]]
    routing: RoutingConfig
    weights: Mapping[str, float]
    covered: tuple[str, ...] = ()

    def run(
        self, *, resamples: int = 1000, seed: int = 0, level: float = 0.95,
        rows_out: list[tuple[float | None, dict[str, float | None]]] | None = None,
        subs_out: list[dict[str, Mapping[str, float | None]]] | None = None,
    ) -> dict[str, tuple[float, float] | None]:
        """The intervals (:func:`bootstrap_egi`'s return value); numpy is imported here.
        ``rows_out``, when given, gets each resample's ``(EGI figure or None, {bucket: value
        or None})`` in draw order (paired comparisons, per-suite variance: ``pytest_egi.scoring.gate``);
        ``subs_out`` each resample's ``{suite: {sub-metric: value or None}}`` (paired
        sub-metric differences, ``egi-bench compare``). The matrix products run on one BLAS
        thread (:func:`pytest_egi.scoring.blas.one_blas_thread`: the same values, half the CPU
        time on two cores)."""
        from pytest_egi.scoring.blas import one_blas_thread

        stream = _RandrangeStream(seed)  # imports numpy, whose BLAS the block below finds
        with one_blas_thread():
            return self._run(stream, resamples, level, rows_out, subs_out)

    def _run(
        self, stream: _RandrangeStream, resamples: int, level: float,
        rows_out: list[tuple[float | None, dict[str, float | None]]] | None,
        subs_out: list[dict[str, Mapping[str, float | None]]] | None,
    ) -> dict[str, tuple[float, float] | None]:
        import operator

        fast, slow_tasks, by_task, flat, summarize = (
            self.fast, self.slow_tasks, self.by_task, self.flat, self.summarize)  # fmt: skip
        np = stream._np
        sums_of = {  # (tasks, m) views of the plain doubles, no copy
            suite: np.frombuffer(cols.task_sums, dtype=np.float64).reshape(-1, len(cols.names))
            if cols.names else np.zeros((self.n_tasks[suite], 0))
            for suite, cols in fast.items()
        }
        widest = max((self.n_tasks[s] for s in fast), default=1)
        chunk = max(1, min(resamples, _CHUNK_CELLS // widest))
        by_bucket = _routes_by_bucket(self.routing)
        samples: dict[str, list[float]] = defaultdict(list)
        done = 0
        while done < resamples:
            size_now = min(chunk, resamples - done)
            subs_of: list[dict[str, Mapping[str, float | None]]] = [{} for _ in range(size_now)]
            cells: dict[str, list[Any]] = defaultdict(list)  # fast suite -> draws + row * tasks
            for row in range(size_now):
                picks: dict[str, list[Any]] = defaultdict(list)
                for suite, size, offset in self.strata:
                    if suite in fast:
                        first = offset + row * self.n_tasks[suite]
                        cells[suite].append(stream.below_array(size, size, first))
                    else:
                        picks[suite].extend(stream.below(size, size, offset))
                for suite, idx in picks.items():
                    if by_task[suite]:
                        recs = _as_distinct_tasks(idx, slow_tasks[suite], flat.get(suite))
                    elif suite in flat:
                        got = operator.itemgetter(*idx)(flat[suite])
                        recs = list(got) if len(idx) > 1 else [got]
                    else:
                        recs = [rec for i in idx for rec in slow_tasks[suite][i]]
                    subs_of[row][suite] = summarize[suite](recs)
            for suite, parts in cells.items():
                cols, n_tasks = fast[suite], self.n_tasks[suite]
                counts = np.bincount(np.concatenate(parts), minlength=size_now * n_tasks)
                sums = counts.reshape(size_now, n_tasks).astype(np.float64) @ sums_of[suite]
                for row, values in enumerate(sums.tolist()):
                    subs_of[row][suite] = cols.finish(dict(zip(cols.names, values, strict=True)))
            for subs in subs_of:
                if subs_out is not None:
                    subs_out.append(subs)
                egi, bucket_values = _egi_figures(subs, by_bucket, self.weights)
                same = all((bucket_values[b] is not None) == (b in self.covered) for b in BUCKETS)
                if egi is not None and same:
                    samples["EGI"].append(egi)
                if rows_out is not None:
                    rows_out.append((egi if same else None, bucket_values))
                for b, value in bucket_values.items():
                    if value is not None:
                        samples[b].append(value)
            done += size_now
        return {key: percentile_interval(samples.get(key, []), level, resamples) for key in ("EGI", *BUCKETS)}


def percentile_interval(values: Sequence[float], level: float, draws: int) -> tuple[float, float] | None:
    """The percentile interval of a statistic's bootstrap values: the ``(1 - level) / 2`` and
    ``(1 + level) / 2`` order statistics (floor and ceiling of the rank), on the statistic's
    own scale.

    Args:
        values: the statistic over the resamples where it was defined.
        level: the coverage (0.95: the 2.5th to 97.5th percentile).
        draws: the number of resamples drawn.

    Returns:
        ``(lo, hi)``; None when the statistic was defined in fewer than half of the ``draws``.
    """
    vals = sorted(values)
    if not vals or len(vals) < draws / 2:
        return None
    alpha = (1.0 - level) / 2.0
    return vals[int(math.floor(alpha * (len(vals) - 1)))], vals[int(math.ceil((1 - alpha) * (len(vals) - 1)))]


def prepare_bootstrap(
    records_by_suite: Mapping[str, Sequence[dict[str, Any]]],
    summarize: Mapping[str, Callable[[list[dict[str, Any]]], Mapping[str, float | None]]],
    routing: RoutingConfig,
    *,
    weights: Mapping[str, float],
    summary_columns: Mapping[str, SummaryColumnsHook] | None = None,
    notices: list[dict[str, str]] | None = None,
    covered: Sequence[str] | None = None,
) -> BootstrapPlan:
    """The :class:`BootstrapPlan` of :func:`bootstrap_egi` (the same arguments, less the
    resampling's): the strata, each fast suite's column sums per task, the slow suites'
    tasks. Plain Python (numpy is not imported).

    Raises:
        ValueError: as :func:`bootstrap_egi`.
    """
    strata: dict[tuple[str, str], list[list[dict[str, Any]]]] = defaultdict(list)
    for suite, records in records_by_suite.items():
        trials: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for rec in records:
            trials[rec["task_id"]].append(rec)
        for task_records in trials.values():
            strata[(suite, task_records[0]["category"])].append(task_records)
        del trials  # (its dict, one entry per task, is not needed from here on)
    order = sorted(strata.items())
    del strata
    # per suite: its tasks in stratum order, and where each stratum starts in that list
    tasks_of: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)
    plan: list[tuple[str, int, int]] = []  # (suite, stratum size, offset in the suite's tasks)
    for (suite, _cat), tasks in order:
        plan.append((suite, len(tasks), len(tasks_of[suite])))
        tasks_of[suite].extend(tasks)
    del order
    fast: dict[str, _Columns] = {}
    for suite, hook in (summary_columns or {}).items():
        if suite in tasks_of:
            recs = records_by_suite[suite]
            try:
                got = _suite_columns(suite, hook, recs, tasks_of[suite], summarize[suite], routing)
            except ValueError as exc:
                if notices is None:
                    raise
                notices.append({"suite": suite, "warning": (
                    f"{exc}; the confidence intervals used summarize on every resample instead "
                    "(fix the suite's summary_columns)")})  # fmt: skip
                got = None
            if got is not None:
                fast[suite] = got
    n_tasks = {s: len(tasks) for s, tasks in tasks_of.items()}
    slow_tasks = {s: tasks for s, tasks in tasks_of.items() if s not in fast}
    by_task = {s: _groups_by_task(summarize[s], tasks) for s, tasks in slow_tasks.items()}
    flat = {s: [t[0] for t in tasks] for s, tasks in slow_tasks.items() if all(len(t) == 1 for t in tasks)}
    if covered is None:  # the run's own coverage, from all of its records
        whole = {s: fast[s].whole if s in fast else summarize[s](list(recs))
                 for s, recs in records_by_suite.items() if recs}  # fmt: skip
        values = _egi_figures(whole, _routes_by_bucket(routing), weights)[1]
        covered = [b for b in BUCKETS if values[b] is not None]
    return BootstrapPlan(plan, n_tasks, fast, slow_tasks, by_task, flat, summarize, routing, weights,
                         tuple(covered))


def pass_hat_k(outcomes: Mapping[str, Sequence[bool]], k: int) -> float | None:
    """pass^k: the chance that k trials drawn without replacement all succeed, averaged over
    tasks (tau-bench, "pass^k" reliability metric): mean over tasks of C(c, k) / C(n, k),
    with n trials and c successes.

    Args:
        outcomes: task id -> success of each trial.
        k: 1 <= k; tasks with fewer than k trials are skipped.

    Returns:
        A fraction in [0, 1], or None when no task has k trials.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    values = [
        math.comb(sum(trials), k) / math.comb(len(trials), k)
        for trials in outcomes.values()
        if len(trials) >= k
    ]
    return sum(values) / len(values) if values else None
