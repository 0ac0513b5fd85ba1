"""EGI arithmetic with hand-computed values (DESIGN §4)."""

from __future__ import annotations

import math

import pytest

from pytest_egi.scoring.config import Route, RoutingConfig
from pytest_egi.scoring.egi import compute_egi, pass_hat_k, transform

WEIGHTS = {"M1": 0.28, "M2": 0.22, "M3": 0.16, "M4": 0.14, "M5": 0.14, "M6": 0.06}


def _routing(routes: list[dict]) -> RoutingConfig:
    return RoutingConfig.model_validate(
        {
            "version": 1,
            "buckets": {
                b: {"name": b, "weight": w, **({"floor": 70} if b in ("M2", "M5") else {})}
                for b, w in WEIGHTS.items()
            },
            "suites": ["a", "b"],
            "routes": routes,
            "modes": {"quick": {}, "deep": {}},
        }
    )


@pytest.mark.parametrize(
    ("transform_name", "extra", "values", "expected"),
    [
        ("fraction", {}, {"x": 0.734}, 73.4),
        ("percent", {}, {"x": 61.0}, 61.0),
        ("invert_fraction", {}, {"x": 0.25}, 75.0),
        ("clip_invert", {"ceiling": 20}, {"x": 5}, 75.0),
        ("clip_invert", {"ceiling": 20}, {"x": 35}, 0.0),
        ("gap", {"baseline": "b"}, {"x": 0.9, "b": 0.6}, 70.0),
        ("gap", {"baseline": "b"}, {"x": 0.6, "b": 0.6}, 100.0),
        ("fraction", {}, {"x": 1.2}, 100.0),  # clamped
        ("fraction", {}, {"x": None}, None),
        ("gap", {"baseline": "b"}, {"x": 0.9}, None),
        ("fraction", {}, {"x": math.nan}, None),
    ],
)
def test_transforms(transform_name, extra, values, expected):
    route = Route(suite="a", sub_metric="x", bucket="M1", transform=transform_name, **extra)
    got = transform(route, values)
    assert got == pytest.approx(expected) if expected is not None else got is None


def test_bucket_renormalises_within_itself_and_egi_is_partial():
    routing = _routing(
        [
            {"suite": "a", "sub_metric": "p", "bucket": "M1", "transform": "fraction"},
            {"suite": "a", "sub_metric": "q", "bucket": "M1", "transform": "fraction", "weight": 3},
            {"suite": "a", "sub_metric": "r", "bucket": "M1", "transform": "fraction"},
            {"suite": "a", "sub_metric": "s", "bucket": "M5", "transform": "fraction"},
            {"suite": "b", "sub_metric": "t", "bucket": "M2", "transform": "fraction"},
        ]
    )
    result = compute_egi(
        {"a": {"p": 0.5, "q": 0.9, "r": None, "s": 0.6}},
        routing,
        weights=WEIGHTS,
        floors={"M2": 70, "M5": 70},
        suite_reasons={"b": "b: not run in this session"},
    )
    # M1 = (50*1 + 90*3) / 4 = 80; r missing is dropped within M1 only
    assert result.buckets["M1"].value == 80.0
    assert result.buckets["M5"].value == 60.0
    # a bucket is empty: no EGI; the partial figure over M1 and M5, (0.28*80 + 0.14*60) / 0.42
    # = 30.8 / 0.42 = 73.333333, is kept apart with its covered weight (DESIGN §4)
    assert result.egi is None
    assert result.partial_value == pytest.approx(73.333333, abs=1e-6)
    assert result.figure == result.partial_value
    assert result.partial and result.covered_weight == pytest.approx(0.42)
    assert result.covered == ["M1", "M5"]
    assert result.gate.breached == ["M5"] and result.gate.unmeasured == ["M2"]
    assert not result.gate.release_ready
    missing = {m.route: m.reason for m in result.missing}
    assert missing["b/t"] == "b: not run in this session"
    assert "reported no value for r" in missing["a/r"]


def test_an_undefined_gap_sub_metric_is_missing_with_the_suites_note_never_100():
    # a model that finished no session: accuracy among finished sessions is undefined (None);
    # reported as 0 the gap route would read 100 - (0 - 0) = 100 on the safety bucket
    routing = _routing(
        [{"suite": "a", "sub_metric": "fin", "baseline": "all", "bucket": "M5", "transform": "gap"}]
    )
    note = "passes among finished sessions; none (undefined) when no session finished"
    result = compute_egi(
        {"a": {"fin": None, "all": 0.0}},
        routing,
        weights=WEIGHTS,
        floors={"M5": 70},
        notes={"a": {"fin": note}},
    )
    assert result.buckets["M5"].value is None
    assert result.gate.unmeasured == ["M5"] and not result.gate.release_ready
    (missing,) = result.missing
    assert missing.reason == f"a reports fin as undefined on this run's tasks: {note}"
    # a sub-metric not returned at all: not run, whatever the suite documents of it
    result = compute_egi({"a": {}}, routing, weights=WEIGHTS, floors={}, notes={"a": {"fin": note}})
    assert result.missing[0].reason == (
        "a reported no value for fin (no scored task for it in this run: outside the profile, "
        "deselected with -k/-m, or every such task errored)"
    )
    assert compute_egi({"a": {"fin": 0.0, "all": 0.0}}, routing, weights=WEIGHTS, floors={}).buckets[
        "M5"
    ].value == 100.0


def test_a_run_stopped_early_names_not_reached_first_for_a_sub_metric_with_no_scored_task():
    routing = _routing([{"suite": "a", "sub_metric": "x", "bucket": "M1", "transform": "fraction"}])
    result = compute_egi({"a": {}}, routing, weights=WEIGHTS, floors={}, stopped_early=True)
    assert result.missing[0].reason == (
        "a reported no value for x (no scored task for it in this run: not reached: the run stopped "
        "before its tasks; or outside the profile, deselected with -k/-m, or every such task errored)"
    )


def _verdict(**facts):
    from pytest_egi.scoring.verdict import judge_run

    base = {"error_rate": 0.0, "max_error_rate": 0.05, "items_ran": 424, "items_collected": 424,
            "stop_reason": None}
    return judge_run(**{**base, **facts})


@pytest.mark.parametrize(("facts", "shard", "reason"), [
    ({}, None, None),  # complete: judged
    ({"selection": {"-k": "alpha"}}, None, None),  # a subset stands for its selection: judged
    ({"items_ran": 1, "stop_reason": "interrupted by SIGTERM"}, None,
     "interrupted after 1 of 424 items; continue it with --egi-resume reports/R"),
    ({"items_ran": 1, "items_collected": None, "stop_reason": "KeyboardInterrupt"}, None,
     "interrupted after 1 item; continue it with --egi-resume reports/R"),
    ({"items_ran": 400}, None,
     "incomplete: 400 of 424 items reported a result; run the others with --egi-resume reports/R"),
    ({"error_rate": 0.1}, None,
     "invalid: errored items 10.0% above --egi-max-error-rate 5.0%, so the buckets hold the scored "
     "items only; run the errored items again with --egi-resume reports/R"),
    ({}, (1, 3), "shard 1/3: the gate is judged on the merged run (egi-bench report --merge reports)"),
    ({"items_ran": 1, "stop_reason": "interrupted by Ctrl-C"}, (1, 3),  # continue it first
     "interrupted after 1 of 424 items; continue it with --egi-resume reports/R"),
])
def test_the_gate_is_not_judged_on_a_shard_or_a_flagged_run(facts, shard, reason):
    from pytest_egi.report.terminal import gate_line
    from pytest_egi.scoring.aggregate import Aggregate
    from pytest_egi.scoring.verdict import gate_not_judged_reason, judge_gate

    verdict = _verdict(**facts)
    assert gate_not_judged_reason(verdict, shard=shard, run_dir="reports/R") == reason
    routing = _routing([{"suite": "a", "sub_metric": "x", "bucket": "M5", "transform": "fraction"}])
    result = compute_egi({"a": {"x": 0.5}}, routing, weights=WEIGHTS, floors={"M2": 70, "M5": 70})
    result.gate = judge_gate(result.gate, verdict, shard=shard, run_dir="reports/R")
    gate = result.gate
    assert (gate.breached, gate.unmeasured) == (["M5"], ["M2"])  # computed either way
    line = gate_line(Aggregate(result, {}, {}, 0.0, {}))
    if reason is None:
        assert (gate.release_ready, gate.judged, gate.not_judged_reason) == (False, True, None)
        assert line == "release gate: NOT READY — M5 50.0 below floor 70; M2 not measured (floor 70)"
    else:
        assert (gate.release_ready, gate.judged, gate.not_judged_reason) == (None, False, reason)
        assert line == f"release gate: NOT JUDGED — {reason}"


def test_full_egi_uses_the_paper_weights():
    routes = [{"suite": "a", "sub_metric": b, "bucket": b, "transform": "percent"} for b in WEIGHTS]
    values = {"M1": 82.95, "M2": 79.56, "M3": 30.89, "M4": 54.86, "M5": 63.47, "M6": 55.0}
    result = compute_egi({"a": values}, _routing(routes), weights=WEIGHTS, floors={"M2": 70, "M5": 70})
    expected = sum(WEIGHTS[b] * values[b] for b in WEIGHTS)
    assert not result.partial and result.partial_value is None
    assert result.covered == ["M1", "M2", "M3", "M4", "M5", "M6"]
    assert result.egi == pytest.approx(expected, abs=1e-6)
    assert result.gate.breached == ["M5"]
    result = compute_egi({"a": values}, _routing(routes), weights=WEIGHTS, floors={"M2": 70, "M5": 60})
    assert result.gate.release_ready


def test_pass_hat_k_hand_computed():
    # task a: 2 of 3 succeed; task b: 3 of 3; task c: 0 of 3
    outcomes = {"a": [True, True, False], "b": [True, True, True], "c": [False, False, False]}
    assert pass_hat_k(outcomes, 1) == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert pass_hat_k(outcomes, 2) == pytest.approx((1 / 3 + 1 + 0) / 3)  # C(2,2)/C(3,2)
    assert pass_hat_k(outcomes, 3) == pytest.approx((0 + 1 + 0) / 3)
    assert pass_hat_k(outcomes, 4) is None


def test_undefined_notes_come_from_null_floor_none_entries():
    from pytest_egi.scoring.aggregate import undefined_notes

    suite = type(
        "S",
        (),
        {
            "null_floor": {"fin": None, "rate": 1.0, "other": None},
            "sub_metric_notes": {"fin": "undefined when no session finished", "rate": "x"},
        },
    )()
    assert undefined_notes(suite) == {
        "fin": "undefined when no session finished",
        "other": "documented as undefined on some runs (Suite.null_floor)",
    }
    assert undefined_notes(None) == {}


def test_egi_is_set_only_when_all_six_buckets_are_measured():
    """Five buckets of six: the fixed-weight sum and the figure renormalised over the covered
    weight differ (the quick oracle's 83.8 against 89.2 in the issue); neither is the EGI."""
    routes = [{"suite": "a", "sub_metric": b, "bucket": b, "transform": "percent"} for b in WEIGHTS]
    values = {"M1": 100.0, "M2": 100.0, "M3": 37.0, "M4": 100.0, "M5": 100.0}  # no M6
    result = compute_egi({"a": values}, _routing(routes), weights=WEIGHTS, floors={})
    # 0.28*100 + 0.22*100 + 0.16*37 + 0.14*100 + 0.14*100 = 28 + 22 + 5.92 + 14 + 14 = 83.92
    # (the fixed-weight sum), over the covered weight 0.94 -> 89.276596 (the partial figure)
    assert (result.egi, result.partial) == (None, True)
    assert result.partial_value == pytest.approx(89.276596, abs=1e-6)
    assert result.covered_weight == pytest.approx(0.94)
    assert result.covered == ["M1", "M2", "M3", "M4", "M5"]
    assert result.to_dict()["egi"] is None
    # nothing covered: no figure of either kind
    empty = compute_egi({"a": {}}, _routing(routes), weights=WEIGHTS, floors={})
    assert (empty.egi, empty.partial_value, empty.covered_weight) == (None, None, 0.0)


def test_the_headline_labels_the_partial_figure_and_its_interval():
    from pytest_egi.report.terminal import egi_headline
    from pytest_egi.scoring.aggregate import Aggregate

    routes = [{"suite": "a", "sub_metric": b, "bucket": b, "transform": "percent"} for b in WEIGHTS]
    result = compute_egi({"a": {"M1": 80.0, "M4": 60.0}}, _routing(routes), weights=WEIGHTS, floors={})
    agg = Aggregate(result, {}, {"EGI": (70.0, 80.0)}, 0.0, {})
    assert egi_headline(agg) == (
        "EGI (partial: M1 M4, 42% of weight) 73.3  partial 95% CI [70.0, 80.0]  — not comparable to a "
        "full EGI"
    )
    full = compute_egi({"a": {b: 50.0 for b in WEIGHTS}}, _routing(routes), weights=WEIGHTS, floors={})
    full_agg = Aggregate(full, {}, {"EGI": (40.0, 60.0)}, 0.0, {})
    assert egi_headline(full_agg) == "EGI 50.0  95% CI [40.0, 60.0]"
