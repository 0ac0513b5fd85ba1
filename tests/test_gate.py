"""The confident release gate (pytest_egi.scoring.gate) with hand-computed values."""

from __future__ import annotations

import pytest

from pytest_egi.scoring.config import RoutingConfig
from pytest_egi.scoring.egi import compute_egi, prepare_bootstrap
from pytest_egi.scoring.gate import (
    BREACH,
    CLOSE,
    PASS,
    UNMEASURED,
    bucket_outcome,
    decide_gate,
    paired_differences,
    pessimistic_value,
    side_half_width,
    suite_variance_shares,
    tasks_to_settle,
    undecided_reason,
)

WEIGHTS = {"M1": 0.28, "M2": 0.22, "M3": 0.16, "M4": 0.14, "M5": 0.14, "M6": 0.06}
FLOORS = {"M2": 70.0, "M5": 70.0}


def _routing(routes: list[dict]) -> RoutingConfig:
    return RoutingConfig.model_validate({
        "version": 1,
        "buckets": {b: {"name": b, "weight": w, **({"floor": 70} if b in FLOORS else {})}
                    for b, w in WEIGHTS.items()},
        "suites": ["a", "b", "c"],
        "routes": routes,
        "modes": {"quick": {}, "deep": {}},
    })


def _route(suite: str, metric: str, bucket: str, weight: float = 1.0) -> dict:
    return {"suite": suite, "sub_metric": metric, "bucket": bucket, "transform": "fraction", "weight": weight}


@pytest.mark.parametrize(
    ("value", "interval", "pessimistic", "expected"),
    [
        (72.0, (71.0, 75.0), None, PASS),
        (72.0, (70.0, 75.0), None, PASS),  # the lower bound on the floor passes
        (65.0, (60.0, 69.9), None, BREACH),
        (71.0, (68.0, 74.0), None, CLOSE),
        (69.0, (66.0, 70.0), None, CLOSE),  # the upper bound on the floor is no breach
        (72.0, (71.0, 75.0), 69.0, CLOSE),  # the errored items, as failures, hold it back
        (72.0, (71.0, 75.0), 70.0, PASS),
        (69.9, None, None, BREACH),  # no interval: the point rule
        (70.0, None, None, PASS),
        (None, None, None, UNMEASURED),
    ],
)
def test_bucket_outcome(value, interval, pessimistic, expected):
    assert bucket_outcome(value, interval, 70.0, pessimistic) == expected


def test_side_half_width_is_on_the_floors_side():
    assert side_half_width(72.0, (66.0, 75.0), 70.0) == 6.0
    assert side_half_width(68.0, (66.0, 75.0), 70.0) == 7.0


def test_tasks_to_settle_by_hand():
    # h = 6, d = 3: r = d^2/h^2 = 0.25. Suite a: share 0.8 of 20 tasks; m > 0.8*20/(0.25-1+0.8)
    # - 20 = 300, so 301 (at 300: 36*(0.2 + 0.8*20/320) = 9 = d^2, not below). Suite b (share
    # 0.2): 0.25 - 1 + 0.2 < 0, so b alone cannot. Together: k > 36/9 - 1 = 3: a 61, b 31.
    got = tasks_to_settle(6.0, 3.0, {"a": (0.8, 20), "b": (0.2, 10)}, {"a": 100})
    assert got.alone == {"a": 301, "b": None}
    assert got.together == {"a": 61, "b": 31}
    assert got.room == {"a": 100}
    assert got.settleable
    # one suite, all the variance: 10 tasks, h = 4, d = 2: m > 10/0.25 - 10 = 30 -> 31
    one = tasks_to_settle(4.0, 2.0, {"a": (1.0, 10)})
    assert one.alone == {"a": 31} and one.together == {"a": 31}


def test_a_value_on_the_floor_cannot_be_settled():
    got = tasks_to_settle(5.0, 0.0, {"a": (1.0, 10)})
    assert not got.settleable and got.alone == {} and got.together == {}


def test_pessimistic_value_counts_errored_items_as_failures():
    routing = _routing([_route("a", "x", "M5"), _route("b", "y", "M5"), _route("c", "z", "M5")])
    res = compute_egi({"a": {"x": 0.8}, "b": {"y": 0.6}}, routing, weights=WEIGHTS, floors=FLOORS,
                      ran={"a", "b", "c"})
    m5 = res.buckets["M5"]
    assert m5.value == 70.0
    counts = {"a": {"passed": 6, "failed": 2, "error": 2}, "b": {"passed": 5, "failed": 5}}
    # a: 80 * 8/10 = 64; b: no error, 60; mean 62
    assert pessimistic_value(m5, counts, routing) == 62.0
    # c ran and every item errored: its route counts 0 -> (64 + 60 + 0) / 3
    counts["c"] = {"error": 4}
    assert pessimistic_value(m5, counts, routing) == pytest.approx(41.333333)
    # no error anywhere: the value itself
    assert pessimistic_value(m5, {"a": {"passed": 1}, "b": {"failed": 1}}, routing) == 70.0


def _result(m2: float | None, m5: float | None):
    routing = _routing([_route("a", "x", "M2"), _route("b", "y", "M5")])
    subs = {}
    if m2 is not None:
        subs["a"] = {"x": m2 / 100}
    if m5 is not None:
        subs["b"] = {"y": m5 / 100}
    return compute_egi(subs, routing, weights=WEIGHTS, floors=FLOORS, ran=set(subs)), routing


COUNTS = {"a": {"passed": 8, "failed": 2}, "b": {"passed": 7, "failed": 3}}


def test_decide_gate_three_verdicts():
    res, routing = _result(80.0, 72.0)
    ready = decide_gate(res, {"M2": (75.0, 85.0), "M5": (70.5, 77.0)}, counts=COUNTS, routing=routing)
    assert ready.verdict == "READY"
    assert ready.reason == "every floored bucket's interval at or above its floor"
    assert {b: c["outcome"] for b, c in ready.buckets.items()} == {"M2": PASS, "M5": PASS}

    close = decide_gate(res, {"M2": (75.0, 85.0), "M5": (66.0, 78.0)}, counts=COUNTS, routing=routing,
                        shares={"M5": {"b": (1.0, 10)}})
    assert close.verdict == "UNDECIDED" and close.undecided == ["M5"]
    assert close.reason == "M5 72.0 [66.0, 78.0] too close to call at floor 70"
    # h = 72 - 66 = 6, d = 2: r = 1/9, m > 10*9 - 10 = 80 -> 81
    assert close.suggestions == [{"bucket": "M5", "distance": 2.0, "half_width": 6.0, "settleable": True,
                                  "alone": {"b": 81}, "together": {"b": 81}, "room": {}, "errored": {}}]
    assert undecided_reason(type("A", (), {"gate_decision": close})()) == (
        "release gate undecided at 95%: M5 72.0 [66.0, 78.0] too close to call at floor 70 (more tasks "
        "would likely settle it; --egi-gate-undecided pass lets it through)")
    close.undecided_passes = True
    assert undecided_reason(type("A", (), {"gate_decision": close})()) is None

    res, routing = _result(60.0, 72.0)
    breach = decide_gate(res, {"M2": (55.0, 66.0), "M5": (66.0, 78.0)}, counts=COUNTS, routing=routing)
    assert breach.verdict == "NOT READY"  # a breach outranks a bucket too close to call
    assert breach.reason == "M2 60.0 [55.0, 66.0] below floor 70"

    res, routing = _result(None, 72.0)
    unmeasured = decide_gate(res, {"M5": (71.0, 78.0)}, counts=COUNTS, routing=routing)
    assert (unmeasured.verdict, unmeasured.reason) == ("NOT READY", "M2 not measured (floor 70)")


def test_decide_gate_without_intervals_says_so_and_uses_the_point_values():
    res, routing = _result(80.0, 69.0)
    got = decide_gate(res, {}, counts=COUNTS, routing=routing, bootstrap=0)
    assert got.verdict == "NOT READY" and got.reason == "M5 69.0 below floor 70"
    assert got.no_interval == "no interval for M2 M5 (--egi-bootstrap 0): judged on the point value"
    assert got.lines()[:2] == [
        "release gate: NOT READY (confident, 95% intervals) — M5 69.0 below floor 70",
        "  no interval for M2 M5 (--egi-bootstrap 0): judged on the point value",
    ]


def test_decide_gate_errored_items_hold_a_pass_back():
    res, routing = _result(80.0, 72.0)
    counts = {"a": {"passed": 8, "failed": 2}, "b": {"passed": 7, "failed": 3, "error": 1}}
    got = decide_gate(res, {"M2": (75.0, 85.0), "M5": (71.0, 77.0)}, counts=counts, routing=routing)
    # M5 with the errored item as a failure: 72 * 10/11 = 65.45 < 70
    assert got.buckets["M5"]["pessimistic"] == pytest.approx(65.454545)
    assert got.verdict == "UNDECIDED"
    assert got.suggestions[0]["errored"] == {"b": 1}
    assert any("only the errored items keep it from passing" in line for line in got.lines())


def _records(suite: str, correct: list[int]) -> list[dict]:
    return [{"suite": suite, "task_id": f"{suite}-{i}", "category": "c", "trial": 1, "status": "passed",
             "values": {"correct": float(v)}} for i, v in enumerate(correct)]


def _summarize(metric: str):
    def summarize(records):
        return {metric: sum(r["values"]["correct"] for r in records) / len(records)}
    return summarize


def test_suite_variance_shares_put_the_variance_where_the_tasks_vary():
    routing = _routing([_route("a", "x", "M5"), _route("b", "y", "M5")])
    recs = {"a": _records("a", [1] * 10), "b": _records("b", [1, 0] * 5)}
    summarize = {"a": _summarize("x"), "b": _summarize("y")}
    plan = prepare_bootstrap(recs, summarize, routing, weights=WEIGHTS)
    res = compute_egi({"a": {"x": 1.0}, "b": {"y": 0.5}}, routing, weights=WEIGHTS, floors=FLOORS)
    shares = suite_variance_shares(plan, res.buckets["M5"], resamples=200, seed=1)
    # a's tasks all succeed: no variance of its own; all of it is b's
    assert shares == {"a": (0.0, 10), "b": (1.0, 10)}


def test_suite_variance_shares_split_by_route_weight():
    # the same spread in both suites, a's route weighted 3: its share is 9 times b's (weights
    # squared: 0.75^2 vs 0.25^2), up to the resampling noise of two independent bootstraps
    routing = _routing([_route("a", "x", "M5", 3.0), _route("b", "y", "M5")])
    recs = {"a": _records("a", [1, 0] * 20), "b": _records("b", [1, 0] * 20)}
    summarize = {"a": _summarize("x"), "b": _summarize("y")}
    plan = prepare_bootstrap(recs, summarize, routing, weights=WEIGHTS)
    res = compute_egi({"a": {"x": 0.5}, "b": {"y": 0.5}}, routing, weights=WEIGHTS, floors=FLOORS)
    shares = suite_variance_shares(plan, res.buckets["M5"], resamples=2000, seed=3)
    assert shares["a"][0] == pytest.approx(0.9, abs=0.02)
    assert shares["b"][0] == pytest.approx(0.1, abs=0.02)


def test_paired_differences_by_hand():
    rows_a = [(50.0, {"M1": 50.0, "M5": None}), (52.0, {"M1": 52.0, "M5": None}),
              (54.0, {"M1": 54.0, "M5": None})]
    rows_b = [(55.0, {"M1": 51.0, "M5": None}), (60.0, {"M1": 53.0, "M5": None}),
              (56.0, {"M1": 55.0, "M5": None})]
    got = paired_differences(rows_a, rows_b, level=0.5)
    # EGI differences 5, 8, 2 -> sorted 2, 5, 8; alpha 0.25: floor(0.5) = 0 -> 2, ceil(1.5) = 2 -> 8
    assert got["EGI"] == (2.0, 8.0)
    assert got["M1"] == (1.0, 1.0)  # the same +1 on every paired resample: no spread at all
    assert got["M5"] is None


def test_suggestion_lines_when_no_suite_alone_settles_it():
    from pytest_egi.scoring.gate import _suggestion_lines

    s = {"bucket": "M5", "settleable": True, "distance": 2.0, "half_width": 9.0, "errored": {},
         "alone": {"a": None, "b": None}, "together": {"a": 30, "b": 12}, "room": {}}
    assert _suggestion_lines(s) == [
        "  to settle M5, every suite of M5 grown alike: 30 more of a + 12 more of b"
    ]
    s["alone"] = {"a": 40, "b": None}
    assert _suggestion_lines(s) == [
        "  to settle M5 (interval ±9.0 on the floor's side, value 2.0 from the floor): ~40 more tasks of a; "
        "b alone cannot",
        "  or, every suite of M5 grown alike: 30 more of a + 12 more of b",
    ]
