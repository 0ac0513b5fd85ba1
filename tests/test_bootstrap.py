"""Bootstrap confidence intervals: pinned values, and the vectorised draws against drawing
them one by one with ``random.Random`` (the scheme before the draws were vectorised)."""

from __future__ import annotations

import math
import random
from collections import defaultdict

import pytest

from pytest_egi.scoring.config import BUCKETS, RoutingConfig
from pytest_egi.scoring.egi import _RandrangeStream, bootstrap_egi, compute_egi
from pytest_egi.suite import SummaryColumns

WEIGHTS = {"M1": 0.28, "M2": 0.22, "M3": 0.16, "M4": 0.14, "M5": 0.14, "M6": 0.06}
FLOORS = {"M2": 70.0, "M5": 70.0}


def _routing() -> RoutingConfig:
    return RoutingConfig.model_validate(
        {
            "version": 1,
            "buckets": {b: {"name": b, "weight": w} for b, w in WEIGHTS.items()},
            "suites": ["a", "b"],
            "routes": [
                {"suite": "a", "sub_metric": "acc", "bucket": "M1", "transform": "fraction"},
                {"suite": "a", "sub_metric": "tool", "bucket": "M2", "transform": "fraction"},
                {"suite": "b", "sub_metric": "acc", "bucket": "M1", "transform": "fraction"},
                {"suite": "b", "sub_metric": "safe", "bucket": "M5", "transform": "fraction"},
            ],
            "modes": {"quick": {}, "deep": {}},
        }
    )


def _summarize(records):
    def mean(key):
        vals = [r["values"][key] for r in records if key in r["values"]]
        return sum(vals) / len(vals) if vals else None

    return {"acc": mean("acc"), "tool": mean("tool"), "safe": mean("safe")}


SUMMARIZE = {"a": _summarize, "b": _summarize}


def _bootstrap_one_by_one(records_by_suite, summarize, routing, *, weights, floors, resamples, seed,
                          level=0.95):  # fmt: skip
    """The bootstrap as it was written before its draws were vectorised (reference)."""
    rng = random.Random(seed)
    strata = defaultdict(list)
    for suite, records in records_by_suite.items():
        by_task = defaultdict(list)
        for rec in records:
            by_task[rec["task_id"]].append(rec)
        for task_records in by_task.values():
            strata[(suite, task_records[0]["category"])].append(task_records)
    samples = defaultdict(list)
    whole = {s: summarize[s](list(recs)) for s, recs in records_by_suite.items()}
    covered = compute_egi(whole, routing, weights=weights, floors=floors).covered
    for _ in range(resamples):
        resampled = defaultdict(list)
        for (suite, _cat), tasks in sorted(strata.items()):
            for _i in range(len(tasks)):
                resampled[suite].extend(tasks[rng.randrange(len(tasks))])
        subs = {s: summarize[s](recs) for s, recs in resampled.items()}
        result = compute_egi(subs, routing, weights=weights, floors=floors)
        # the run's own figure (the full EGI, or its partial value) over the run's buckets only
        if result.figure is not None and result.covered == covered:
            samples["EGI"].append(result.figure)
        for b, br in result.buckets.items():
            if br.value is not None:
                samples[b].append(br.value)
    out = {}
    alpha = (1.0 - level) / 2.0
    for key in ("EGI", *BUCKETS):
        vals = sorted(samples.get(key, []))
        if len(vals) < resamples / 2 or not vals:
            out[key] = None
            continue
        out[key] = (vals[int(math.floor(alpha * (len(vals) - 1)))],
                    vals[int(math.ceil((1 - alpha) * (len(vals) - 1)))])  # fmt: skip
    return out


def _rec(suite, task, category, trial=1, **values):
    return {"suite": suite, "task_id": task, "category": category, "trial": trial, "values": values}


HAND_MADE = {
    "a": [_rec("a", "a1", "x", acc=1.0, tool=1.0), _rec("a", "a2", "x", acc=0.0, tool=1.0),
          _rec("a", "a3", "x", acc=1.0, tool=0.0), _rec("a", "a4", "y", acc=0.0, tool=0.0),
          _rec("a", "a5", "y", acc=1.0, tool=1.0)],
    "b": [_rec("b", "b1", "z", acc=1.0, safe=1.0), _rec("b", "b2", "z", acc=1.0, safe=0.0),
          _rec("b", "b3", "z", acc=0.0, safe=1.0)],
}  # fmt: skip


# computed with the one-by-one draws (``_bootstrap_one_by_one``) before they were vectorised
PINNED_EGI = (40.0, 83.958333)
PINNED_M1 = (26.666667, 90.0)
PINNED_M2 = (20.0, 100.0)
PINNED_M5 = (0.0, 100.0)


def test_interval_of_a_hand_made_record_set_is_pinned():
    got = bootstrap_egi(HAND_MADE, SUMMARIZE, _routing(), weights=WEIGHTS, floors=FLOORS,
                        resamples=200, seed=42)  # fmt: skip
    assert got == {
        "EGI": pytest.approx(PINNED_EGI, abs=1e-9),
        "M1": pytest.approx(PINNED_M1, abs=1e-9),
        "M2": pytest.approx(PINNED_M2, abs=1e-9),
        "M3": None,
        "M4": None,
        "M5": pytest.approx(PINNED_M5, abs=1e-9),
        "M6": None,
    }


def _random_records(rng: random.Random, sizes: dict[tuple[str, str], int], trials: int):
    out = defaultdict(list)
    for (suite, cat), n in sizes.items():
        for i in range(n):
            for t in range(1, trials + 1):
                out[suite].append(_rec(suite, f"{cat}{i}", cat, t, acc=float(rng.random() < 0.7),
                                       tool=rng.random(), safe=float(rng.random() < 0.4)))  # fmt: skip
    return dict(out)


@pytest.mark.parametrize(
    ("sizes", "trials", "seed"),
    [
        ({("a", "x"): 1, ("a", "y"): 2, ("b", "z"): 3}, 1, 0),
        ({("a", "x"): 16, ("a", "y"): 17, ("b", "z"): 33, ("b", "w"): 1}, 1, 7),
        ({("a", "x"): 100, ("b", "z"): 64}, 3, 42),
        ({("a", "x"): 5000}, 1, 3),
    ],
)
def test_vectorised_draws_give_the_one_by_one_intervals(sizes, trials, seed):
    records = _random_records(random.Random(seed), sizes, trials)
    kwargs = dict(weights=WEIGHTS, floors=FLOORS, resamples=60, seed=seed)
    new = bootstrap_egi(records, SUMMARIZE, _routing(), **kwargs)
    old = _bootstrap_one_by_one(records, SUMMARIZE, _routing(), **kwargs)
    assert new.keys() == old.keys()
    for key, interval in old.items():
        if interval is None:
            assert new[key] is None, key
        else:
            assert new[key] == pytest.approx(interval, abs=1e-9), key


@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 17, 1000, 4096, 5001])
def test_stream_draws_are_randrange_draws(n):
    rng = random.Random(11)
    expected = [rng.randrange(n) for _ in range(3 * n + 40)]
    stream = _RandrangeStream(11)
    got = [*stream.below(n, 3), *stream.below(n, 3 * n + 37)]
    assert got == expected
    # the stream's position afterwards is the generator's: the next draw matches too
    assert stream.below(n, 1) == [rng.randrange(n)]


# --- the fast path: a suite's summary_columns hook -------------------------------------------

KEYS = ("acc", "tool", "safe")


def _columns(records, keys=KEYS):
    """The toy ``_summarize`` as column sums: per key its sum and how many records have it."""
    names = tuple(f"{k}.{p}" for k in keys for p in ("sum", "n"))
    rows = [[x for k in keys for x in ((r["values"][k], 1.0) if k in r["values"] else (0.0, 0.0))]
            for r in records]  # fmt: skip

    def finish(sums):
        return {k: sums[f"{k}.sum"] / sums[f"{k}.n"] if sums[f"{k}.n"] else None for k in keys}

    return SummaryColumns.from_rows(names, rows, finish)


def _assert_same_intervals(got, want, tol=1e-6):
    assert got.keys() == want.keys()
    for key, interval in want.items():
        if interval is None:
            assert got[key] is None, key
        else:
            assert got[key] == pytest.approx(interval, abs=tol), key


@pytest.mark.parametrize(
    ("sizes", "trials", "seed"),
    [
        ({("a", "x"): 1, ("a", "y"): 2, ("b", "z"): 3}, 1, 0),
        ({("a", "x"): 16, ("a", "y"): 17, ("b", "z"): 33, ("b", "w"): 1}, 1, 7),
        ({("a", "x"): 100, ("b", "z"): 64}, 3, 42),
        ({("a", "x"): 3000}, 1, 3),
    ],
)
def test_fast_path_gives_the_summarize_intervals(sizes, trials, seed):
    records = _random_records(random.Random(seed), sizes, trials)
    kwargs = dict(weights=WEIGHTS, floors=FLOORS, resamples=80, seed=seed)
    calls = []

    def hook(recs):
        calls.append(len(recs))
        return _columns(recs)

    fast = bootstrap_egi(records, SUMMARIZE, _routing(), summary_columns={"a": hook, "b": hook}, **kwargs)
    slow = bootstrap_egi(records, SUMMARIZE, _routing(), **kwargs)
    assert sorted(calls) == sorted(len(v) for v in records.values())  # once per suite
    _assert_same_intervals(fast, slow)
    _assert_same_intervals(fast, _bootstrap_one_by_one(records, SUMMARIZE, _routing(), **kwargs))


def test_fast_path_matches_the_pinned_interval():
    got = bootstrap_egi(HAND_MADE, SUMMARIZE, _routing(), weights=WEIGHTS, floors=FLOORS, resamples=200,
                        seed=42, summary_columns={"a": _columns, "b": _columns})  # fmt: skip
    assert got["EGI"] == pytest.approx(PINNED_EGI, abs=1e-9)
    assert got["M2"] == pytest.approx(PINNED_M2, abs=1e-9)


def test_a_suite_without_the_hook_or_whose_hook_gives_none_uses_summarize():
    records = _random_records(random.Random(5), {("a", "x"): 20, ("b", "z"): 12}, 2)
    kwargs = dict(weights=WEIGHTS, floors=FLOORS, resamples=50, seed=5)
    slow = bootstrap_egi(records, SUMMARIZE, _routing(), **kwargs)
    calls = {"a": 0, "b": 0}

    def counted(suite):
        def summarize(recs):
            calls[suite] += 1
            return _summarize(recs)

        return summarize

    summarize = {s: counted(s) for s in calls}
    only_a = bootstrap_egi(records, summarize, _routing(), summary_columns={"a": _columns}, **kwargs)
    _assert_same_intervals(only_a, slow)
    # a: once, to check finish on all its records (that result also gives the run's own
    # coverage); b: twice to see whether it groups trials by task id (_groups_by_task), then
    # once per resample, and once more on all its records for the run's own coverage
    # (``covered`` not given: the session's aggregate passes it)
    assert calls == {"a": 1, "b": 53}
    calls.update(a=0, b=0)
    hooks = {"a": _columns, "b": lambda r: None}
    none_for_b = bootstrap_egi(records, summarize, _routing(), summary_columns=hooks, **kwargs)
    _assert_same_intervals(none_for_b, slow)
    assert calls == {"a": 1, "b": 53}


def test_a_finish_leaving_out_a_routed_sub_metric_falls_back_to_summarize():
    records = _random_records(random.Random(9), {("a", "x"): 20, ("b", "z"): 12}, 1)
    kwargs = dict(weights=WEIGHTS, floors=FLOORS, resamples=50, seed=9)
    calls = []

    def summarize_a(recs):
        calls.append(len(recs))
        return _summarize(recs)

    # "a" routes acc and tool; a finish without tool would leave M2 empty if it were used
    got = bootstrap_egi(records, {"a": summarize_a, "b": _summarize}, _routing(),
                        summary_columns={"a": lambda r: _columns(r, ("acc", "safe"))}, **kwargs)  # fmt: skip
    assert got["M2"] is not None
    # once to check finish, twice in _groups_by_task, once for the run's coverage, 50 resamples
    assert len(calls) == 54
    _assert_same_intervals(got, bootstrap_egi(records, SUMMARIZE, _routing(), **kwargs))


def test_columns_with_the_wrong_row_count_raise_naming_the_suite():
    def short(recs):
        cols = _columns(recs)
        return SummaryColumns(cols.names, cols.values[:-1], cols.finish)

    with pytest.raises(ValueError) as err:
        bootstrap_egi(HAND_MADE, SUMMARIZE, _routing(), weights=WEIGHTS, floors=FLOORS, resamples=10,
                      summary_columns={"b": short})  # fmt: skip
    assert str(err.value) == (
        "b: summary_columns gave values of shape (2, 6) for 3 records and 6 column names; it must "
        "be (3, 6), one row per record"
    )


def test_a_finish_disagreeing_with_summarize_raises_naming_the_suite():
    def off(recs):
        cols = _columns(recs)
        return SummaryColumns(cols.names, cols.values, lambda sums: {**cols.finish(sums), "acc": 0.5})

    with pytest.raises(ValueError) as err:
        bootstrap_egi(HAND_MADE, SUMMARIZE, _routing(), weights=WEIGHTS, floors=FLOORS, resamples=10,
                      summary_columns={"a": off})  # fmt: skip
    assert str(err.value) == (
        "a: summary_columns' finish gives acc = 0.5 on all the records but summarize gives 0.6; "
        "they must agree (to 1e-9)"
    )


def test_with_notices_a_wrong_hook_is_reported_and_summarize_used_instead():
    def off(recs):
        cols = _columns(recs)
        return SummaryColumns(cols.names, cols.values, lambda sums: {**cols.finish(sums), "acc": 0.5})

    kwargs = dict(weights=WEIGHTS, floors=FLOORS, resamples=40, seed=3)
    notices: list[dict[str, str]] = []
    got = bootstrap_egi(HAND_MADE, SUMMARIZE, _routing(), summary_columns={"a": off}, notices=notices,
                        **kwargs)  # fmt: skip
    assert got == bootstrap_egi(HAND_MADE, SUMMARIZE, _routing(), **kwargs)
    assert notices == [{"suite": "a", "warning": (
        "a: summary_columns' finish gives acc = 0.5 on all the records but summarize gives 0.6; "
        "they must agree (to 1e-9); the confidence intervals used summarize on every resample "
        "instead (fix the suite's summary_columns)")}]  # fmt: skip


def _summarize_per_task(records):
    """The toy ``_summarize``'s ``acc``, but as a mean over task ids of each task's mean (as
    a suite that groups trials by task id computes it)."""
    by_task = defaultdict(list)
    for r in records:
        by_task[r["task_id"]].append(r["values"]["acc"])
    return {**_summarize(records), "acc": sum(sum(v) / len(v) for v in by_task.values()) / len(by_task)}


def test_a_task_drawn_twice_counts_twice_for_a_summarize_grouping_by_task_id():
    # one trial per task: the mean over tasks of per-task means is the plain mean, when every
    # draw is a task of its own (before: a task drawn twice was one task, and counted once)
    records = _random_records(random.Random(2), {("a", "x"): 30, ("b", "z"): 20}, 1)
    kwargs = dict(weights=WEIGHTS, floors=FLOORS, resamples=100, seed=2)
    by_task = {"a": _summarize_per_task, "b": _summarize_per_task}
    per_task = bootstrap_egi(records, by_task, _routing(), **kwargs)
    _assert_same_intervals(per_task, bootstrap_egi(records, SUMMARIZE, _routing(), **kwargs), tol=1e-9)


@pytest.mark.parametrize("seed", range(40))
def test_per_resample_figures_are_compute_egis(seed):
    """The bootstrap's lean per-resample EGI and bucket values equal :func:`compute_egi`'s,
    float for float, on the repository's routing with random, missing, None and NaN values."""
    from pathlib import Path

    from pytest_egi.scoring.config import apply_floors, apply_weights, load_routing
    from pytest_egi.scoring.egi import _egi_figures, _routes_by_bucket

    routing, _ = load_routing(Path(__file__).resolve().parents[1] / "routing.yaml")
    rng = random.Random(seed)
    subs = {}
    for suite in routing.suites:
        if rng.random() < 0.2:
            continue  # a suite that did not run
        keys = {k for r in routing.routes if r.suite == suite for k in (r.sub_metric, r.baseline) if k}
        subs[suite] = {k: rng.choice([None, math.nan, rng.random(), 100 * rng.random()]) if rng.random() < 0.2
                       else rng.random() for k in keys if rng.random() < 0.9}  # fmt: skip
    weights = apply_weights(routing, {})
    want = compute_egi(subs, routing, weights=weights, floors=apply_floors(routing, {}))
    egi, buckets = _egi_figures(subs, _routes_by_bucket(routing), weights)
    assert egi == want.figure  # the full EGI, or the partial value when a bucket is empty
    assert buckets == {b: br.value for b, br in want.buckets.items()}


def test_a_summarize_not_grouping_by_task_id_gets_the_drawn_records_as_they_are():
    records = _random_records(random.Random(4), {("a", "x"): 30, ("b", "z"): 20}, 2)
    seen = []

    def summarize(recs):
        seen.append(all(r in records[r["suite"]] for r in recs))
        return _summarize(recs)

    bootstrap_egi(records, {"a": summarize, "b": summarize}, _routing(), weights=WEIGHTS, floors=FLOORS,
                  resamples=20, seed=4)  # fmt: skip
    # the two probes of each suite (one with copies), the run's coverage (all the records of
    # each), then 20 resamples of both without copies
    assert seen == [True, False, True, False, True, True] + [True] * 40


def test_the_interval_of_a_partial_figure_counts_only_resamples_covering_the_runs_buckets():
    """The run covers M1, M2 and M5 (one task of four has a safety value): its partial figure
    is (0.28*100 + 0.22*100 + 0.14*0) / 0.64 = 78.125. A resample that does not draw that task
    covers M1 and M2 only, and its figure, 100, is a figure over other buckets: it is left out
    of the interval (before, about (3/4)^4 = 32% of the resamples put 100 into it)."""
    records = {"a": [_rec("a", "a1", "x", acc=1.0, tool=1.0), _rec("a", "a2", "x", acc=1.0, tool=1.0)],
               "b": [_rec("b", "b1", "z", acc=1.0, safe=0.0)]
               + [_rec("b", f"b{k}", "z", acc=1.0) for k in (2, 3, 4)]}  # fmt: skip
    run = compute_egi({s: _summarize(recs) for s, recs in records.items()}, _routing(), weights=WEIGHTS,
                      floors=FLOORS)  # fmt: skip
    assert (run.covered, run.partial_value) == (["M1", "M2", "M5"], 78.125)
    got = bootstrap_egi(records, SUMMARIZE, _routing(), weights=WEIGHTS, floors=FLOORS, resamples=200,
                        seed=1)  # fmt: skip
    assert got["EGI"] == pytest.approx((78.125, 78.125))
    assert got["M5"] == pytest.approx((0.0, 0.0)) and got["M1"] == pytest.approx((100.0, 100.0))


# --- the matrix products on one BLAS thread (pytest_egi.scoring.blas) ------------------------


def _blas_controls():
    import numpy  # noqa: F401  (its OpenBLAS must be loaded to be found)

    from pytest_egi.scoring.blas import _thread_controls

    controls = _thread_controls()
    if not controls:
        pytest.skip("no OpenBLAS with thread controls loaded (numpy built against another BLAS)")
    return controls


def test_one_blas_thread_sets_one_and_puts_the_count_back_also_on_error():
    from pytest_egi.scoring.blas import one_blas_thread

    controls = _blas_controls()
    before = [get() for get, _ in controls]
    for _, put in controls:
        put(3)
    try:
        with one_blas_thread() as found:
            assert found == len(controls) >= 1
            assert [get() for get, _ in controls] == [1] * len(controls)
        assert [get() for get, _ in controls] == [3] * len(controls)
        with pytest.raises(RuntimeError), one_blas_thread():
            raise RuntimeError("boom")
        assert [get() for get, _ in controls] == [3] * len(controls)
    finally:
        for (_, put), count in zip(controls, before, strict=True):
            put(count)


def test_the_fast_path_draws_on_one_blas_thread_with_the_same_intervals():
    controls = _blas_controls()
    before = [get() for get, _ in controls]
    records = _random_records(random.Random(5), {("a", "x"): 400, ("b", "z"): 300}, 1)
    seen = []

    def hook(recs):
        cols = _columns(recs)
        finish = cols.finish

        def counting_finish(sums):
            seen.append(controls[0][0]())
            return finish(sums)

        return SummaryColumns(cols.names, cols.values, counting_finish)

    kwargs = dict(weights=WEIGHTS, floors=FLOORS, resamples=60, seed=5)
    for _, put in controls:
        put(2)
    try:
        got = bootstrap_egi(records, SUMMARIZE, _routing(), summary_columns={"a": hook, "b": hook}, **kwargs)
        assert [get() for get, _ in controls] == [2] * len(controls)  # put back afterwards
    finally:
        for (_, put), count in zip(controls, before, strict=True):
            put(count)
    assert len(seen) > 2 * 60 and set(seen[2:]) == {1}  # (the first two: the hook checked before)
    _assert_same_intervals(got, bootstrap_egi(records, SUMMARIZE, _routing(), **kwargs))
