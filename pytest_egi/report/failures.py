"""Why tasks failed, counted: per suite and per bucket (egi.json ``failure_kinds``, the terminal).

Each failed record carries ``failure_kind`` (:data:`pytest_egi.outcomes.FAILURE_KINDS`, set by
its suite's scorer). :func:`failure_counts` counts them per suite; :func:`bucket_failure_counts`
per bucket, through the routing: a failed trial counts in each bucket one of whose routed
sub-metrics it feeds (the sub-metrics its suite's ``summarize`` defines from that record alone,
e.g. a Benchforce hospital session that did not finish feeds ``hospital.accuracy_all`` (M1)
and ``hospital.finished_rate`` (M2), not ``hospital.accuracy_finished`` (M5)).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pytest_egi.outcomes import FAILURE_KINDS

__all__ = ["UNKNOWN_KIND", "bucket_failure_counts", "failure_counts", "failure_kinds_line", "kinds_text",
           "ordered"]

UNKNOWN_KIND = "unknown"
"""The count key of a failed record with no ``failure_kind`` (a run written before the field
existed, read back without ``--rescore``)."""


def ordered(counts: Mapping[str, int]) -> dict[str, int]:
    """``counts`` with its kinds in the vocabulary's order (:data:`FAILURE_KINDS`), then any
    other key (``unknown``) sorted; zero counts left out."""
    rank = {k: i for i, k in enumerate(FAILURE_KINDS)}
    keys = sorted((k for k, v in counts.items() if v), key=lambda k: (rank.get(k, len(rank)), k))
    return {k: int(counts[k]) for k in keys}


def _kind(record: Mapping[str, Any]) -> str:
    return record.get("failure_kind") or UNKNOWN_KIND


def failure_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Failed records per suite and failure kind.

    Args:
        records: a run's records, any statuses (only ``failed`` ones count: a passed record
            has no failure kind and an errored one is infrastructure).

    Returns:
        ``{suite: {kind: n}}``, suites sorted, kinds in :func:`ordered`'s order; a suite with
        no failed record is absent. A failed record without ``failure_kind`` counts as
        :data:`UNKNOWN_KIND`.
    """
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for rec in records:
        if rec.get("status") == "failed":
            out[rec["suite"]][_kind(rec)] += 1
    return {suite: ordered(out[suite]) for suite in sorted(out)}


def bucket_failure_counts(
    records: Iterable[Mapping[str, Any]],
    summarize: Mapping[str, Callable[[list[dict[str, Any]]], Mapping[str, Any]]],
    routes: Iterable[Any],
) -> dict[str, dict[str, int]]:
    """Failed records per bucket and failure kind, through the routing.

    A failed record counts once in each bucket that has a route from one of the sub-metrics
    its suite's ``summarize([record])`` gives a value (not None). ``summarize`` is called once
    per (suite, category, shape of ``values``), the shape telling each value apart as absent,
    None, zero or non-zero (what decides whether a sub-metric is defined: Benchforce's
    ``finished`` 0 or 1), so a run of thousands of failures costs a few calls per category. A
    suite whose ``summarize`` is not given, or raises on one record alone, adds that record to
    no bucket.

    Args:
        records: a run's records (only ``failed`` ones count).
        summarize: suite name -> its ``summarize``.
        routes: the routing's routes (``.suite``, ``.sub_metric``, ``.bucket``).

    Returns:
        ``{bucket: {kind: n}}``, buckets sorted, kinds in :func:`ordered`'s order; a bucket
        no failed record feeds is absent.
    """
    route_buckets: dict[tuple[str, str], set[str]] = defaultdict(set)
    for route in routes:
        route_buckets[(route.suite, route.sub_metric)].add(route.bucket)
    routed_suites = {suite for suite, _ in route_buckets}
    out: dict[str, Counter[str]] = defaultdict(Counter)
    fed_by_shape: dict[tuple[Any, ...], frozenset[str]] = {}
    for rec in records:
        suite = rec.get("suite")
        if rec.get("status") != "failed" or suite not in routed_suites or suite not in summarize:
            continue
        shape = (suite, rec.get("category"), _shape(rec.get("values") or {}))
        buckets = fed_by_shape.get(shape)
        if buckets is None:
            try:
                fed = summarize[suite]([dict(rec)])
            except Exception:  # noqa: BLE001 - a summarize that needs more than one record
                fed = {}
            buckets = fed_by_shape[shape] = frozenset(
                b for name, value in fed.items() if value is not None
                for b in route_buckets.get((suite, name), ()))  # fmt: skip
        for bucket in buckets:
            out[bucket][_kind(rec)] += 1
    return {b: ordered(out[b]) for b in sorted(out)}


def _shape(values: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    """Each value of a record as absent-or-None (0), zero (1) or anything else (2), by key."""
    return tuple(sorted((k, 0 if v is None else 1 if v == 0 else 2) for k, v in values.items()))


def kinds_text(counts: Mapping[str, int]) -> str:
    """``2 wrong_answer, 6 turn_limit``: the counts in the vocabulary's order (:func:`ordered`),
    as every terminal line that counts failure kinds writes them."""
    return ", ".join(f"{n} {kind}" for kind, n in ordered(counts).items())


def failure_kinds_line(counts: Mapping[str, int] | None) -> list[str]:
    """The terminal's line for one suite: ``  failed by kind: 2 wrong_answer, 6 turn_limit``
    (:func:`kinds_text`); no line when nothing failed.

    Args:
        counts: the suite's ``{kind: n}`` (``SuiteSummary.failure_kinds``), or None.
    """
    if not counts:
        return []
    return ["  failed by kind: " + kinds_text(counts)]
