"""MCPEval static tool-call scoring, every rule of reference §2.4, with hand-computed values.

Notation: ground truth g₁…gₙ, prediction p₁…pₘ; weights 0.4 (name) / 0.4 (params) /
0.2 (order); flexible thresholds 0.6 (per-call params) / 0.5 (order).
"""

from __future__ import annotations

from typing import Any

import pytest

from suites.mcpeval.scorer import (
    compare_tool_calls,
    lcs_length,
    no_prediction_evaluation,
    normalize_value,
    param_score,
    resolve_thresholds,
    resolve_weights,
    values_equal,
)


def call(name: str, **params: Any) -> dict[str, Any]:
    return {"tool_name": name, "tool_parameters": params}


def scores(result: dict[str, Any], mode: str) -> tuple:
    r = result[mode]
    return (r["success"], r["overall_score"], r["tool_name_score"], r["param_match_score"], r["order_score"])


# --- value normalisation and equality ------------------------------------------------------


def test_normalisation_strips_lowercases_and_turns_bools_and_ints_into_floats():
    assert normalize_value("  Paris ") == "paris"
    assert normalize_value(True) == 1.0 and isinstance(normalize_value(True), float)
    assert normalize_value({" Key ": [1, "A "]}) == {"key": [1.0, "a"]}  # dict keys too
    assert normalize_value(None) is None


@pytest.mark.parametrize(
    ("gt", "pred", "strict", "flexible"),
    [
        ("Paris", "  paris ", True, True),  # strip + lower-case
        (True, 1, True, True),  # bool-as-number: True -> 1.0
        (False, 0.0, True, True),  # False -> 0.0
        (True, "true", False, False),  # a bool is a number, never the string "true"
        ("5", 5, False, False),  # a string never equals a number
        (1.0, 1.0000005, True, True),  # |Δ| = 5e-7 < 1e-6
        (0.0, 1e-6, False, True),  # |Δ| = 1e-6 is not < 1e-6 (strict bound exclusive)
        (0.0, 0.1875, False, True),  # |a| < 1: absolute |Δ| = 0.1875 < 0.2
        (0.0, 0.2, False, False),  # |Δ| = 0.2 is not < 0.2 (flexible bound exclusive)
        (0.5, 0.65, False, True),  # |a| < 1 -> absolute 0.15 < 0.2 (relative 0.23 would fail)
        (-0.5, 0.5, False, False),  # absolute 1.0
        (100, 81, False, True),  # relative 19 / 100 = 0.19 < 0.2
        (100, 80, False, False),  # relative 20 / 100 = 0.2, not < 0.2
        (100, 124, False, True),  # relative 24 / 124 = 0.194 < 0.2
        (100, 125, False, False),  # relative 25 / 125 = 0.2, not < 0.2
        (-100, -81, False, True),  # magnitudes: 19 / 100
        (True, 1.1, False, True),  # bool-as-number under tolerance: 0.1 / 1.1 = 0.09
        ("New York", "new york city", False, True),  # flexible: GT contained in prediction
        ("new york city", "New York", False, True),  # flexible: prediction contained in GT
        ("nyc", "new york", False, False),  # neither contains the other
        ("paris", "", False, True),  # an empty predicted string is contained in every string
        ([1, 2], [1.0000001, 2], False, False),  # nested numbers: plain equality, no tolerance
        ([100], [99], False, False),  # ... in flexible mode too (top-level 100 vs 99 would match)
        (["A", "b"], ["a", "B "], True, True),  # nested strings normalised
        ({"Lat": 1}, {"lat": 1.0}, True, True),  # nested dict keys normalised
        (None, None, True, True),
        (None, "", False, False),
    ],
)
def test_values_equal(gt, pred, strict, flexible):
    assert values_equal(gt, pred, flexible=False) is strict
    assert values_equal(gt, pred, flexible=True) is flexible


# --- per-call parameter score -------------------------------------------------------------


def test_strict_param_score_counts_equal_ground_truth_keys():
    gt = {"a": 1, "b": "x", "c": None}
    pred = {"a": 1.0, "b": "y", "d": 5}  # extra key d is ignored
    # a equal, b unequal, c absent: 1 / 3
    assert param_score(gt, pred, flexible=False) == (1 / 3, {"b": ["x", "y"]})
    assert param_score({}, {"z": 1}, flexible=False) == (1.0, {})  # no GT parameter: 1


def test_flexible_param_score_counts_important_keys_with_half_credit():
    gt = {"a": 1, "b": "x", "c": None, "d": "", "e": [], "f": {}, "g": "kept"}
    pred = {"a": 1, "b": "y", "c": 3}
    # important = a, b, g (c None, d/e/f empty): a 1 + b 0.5 (present, unequal) + g 0 (absent)
    # = 1.5 / 3 = 0.5
    assert param_score(gt, pred, flexible=True) == (0.5, {"b": ["x", "y"], "c": [None, 3]})
    # no important key: 1, whatever is predicted
    assert param_score({"c": None, "d": ""}, {}, flexible=True) == (1.0, {})
    # 0 and False are important (not empty): absent -> 0 / 2
    assert param_score({"n": 0, "flag": False}, {}, flexible=True) == (0.0, {})


def test_lcs():
    assert lcs_length(["a", "b", "c"], ["x", "a", "c", "b", "c"]) == 3
    assert lcs_length(["a", "b"], ["b", "a"]) == 1
    assert lcs_length([], ["a"]) == 0


# --- whole comparisons ---------------------------------------------------------------------

GT3 = [call("search", q="Paris"), call("details", id=7), call("book", id=7, guests=2)]


def test_perfect_prediction():
    r = compare_tool_calls(
        GT3, [call("search", q="paris"), call("details", id=7.0), call("book", id=7, guests=2)]
    )
    assert scores(r, "strict") == (True, 1.0, 1.0, 1.0, 1.0)
    assert scores(r, "flexible") == (True, 1.0, 1.0, 1.0, 1.0)
    assert r["counts"] == {
        "ground_truth_tool_count": 3,
        "prediction_tool_count": 3,
        "tool_count_match": True,
        "name_only_matches": 3,
        "exact_matches": 3,
    }
    assert r["param_matches"] == {"search": 1.0, "details": 1.0, "book": 1.0}


def test_early_inserted_call_shifts_every_position():
    pred = [call("lookup", q="x"), *GT3]
    r = compare_tool_calls(GT3, pred)
    # pairs (search,lookup) (details,search) (book,details): no name match -> name 0, param 0;
    # LCS(search details book, lookup search details book) = 3 -> order 3/3 = 1;
    # overall = 0.4·0 + 0.4·0 + 0.2·1 = 0.2
    assert scores(r, "strict") == (False, pytest.approx(0.2), 0.0, 0.0, 1.0)
    assert scores(r, "flexible") == (False, pytest.approx(0.2), 0.0, 0.0, 1.0)
    assert (r["missing_tools"], r["extra_tools"]) == ([], ["lookup"])
    assert r["param_matches"] == {} and r["counts"]["name_only_matches"] == 0


def test_trailing_extra_calls_reusing_ground_truth_names_are_not_penalised():
    r = compare_tool_calls(GT3, [*GT3, call("search", q="Lyon")])
    # positions 1-3 all match with s = 1; LCS = 3 -> order 1; no extra tool name
    assert scores(r, "strict") == (True, 1.0, 1.0, 1.0, 1.0)
    assert r["counts"]["tool_count_match"] is False and r["extra_tools"] == []


def test_trailing_extra_call_of_a_new_tool_fails_strict_only():
    r = compare_tool_calls(GT3, [*GT3, call("cancel", id=7)])
    # scores as a perfect run (1.0), but "cancel" is an extra tool: strict fails, flexible passes
    assert scores(r, "strict") == (False, 1.0, 1.0, 1.0, 1.0)
    assert scores(r, "flexible") == (True, 1.0, 1.0, 1.0, 1.0)
    assert r["extra_tools"] == ["cancel"]


def test_swapped_order():
    r = compare_tool_calls([call("a"), call("b")], [call("b"), call("a")])
    # no positional name match; LCS = 1 -> order 1/2; overall 0.2·0.5 = 0.1
    assert scores(r, "strict") == (False, pytest.approx(0.1), 0.0, 0.0, 0.5)
    assert scores(r, "flexible") == (False, pytest.approx(0.1), 0.0, 0.0, 0.5)


def test_repeated_tool_keys_and_mixed_modes():
    gt = [call("get", x=1), call("list"), call("get", x=2)]
    pred = [call("get", x=1), call("list"), call("get", x=3)]
    r = compare_tool_calls(gt, pred)
    # strict s = 1, 1, 0 -> param 2/3; overall 0.4 + 0.4·2/3 + 0.2 = 0.8667
    assert scores(r, "strict") == (False, pytest.approx(0.6 + 0.8 / 3), 1.0, pytest.approx(2 / 3), 1.0)
    # flexible: 2 vs 3 -> relative 1/3 ≥ 0.2 -> unequal, half credit: s = 1, 1, 0.5 -> 2.5/3;
    # 0.5 < 0.6 -> flexible fails; overall 0.4 + 0.4·0.8333 + 0.2 = 0.9333
    assert scores(r, "flexible") == (
        False,
        pytest.approx(0.6 + 0.4 * 2.5 / 3),
        1.0,
        pytest.approx(2.5 / 3),
        1.0,
    )
    assert r["param_matches"] == {"get_0": 1.0, "list": 1.0, "get_2": 0.0}
    assert r["param_mismatches"] == {"get_2": {"x": [2, 3]}}
    assert r["counts"]["exact_matches"] == 2


def test_flexible_param_threshold_edge():
    gt = [call("t", a=1, b=2, c=3, d=4, e=5)]
    # a, b match; c, d present but wrong (0.5 each); e absent: (1+1+0.5+0.5+0)/5 = 0.6 ≥ 0.6
    at = compare_tool_calls(gt, [call("t", a=1, b=2, c=30, d=40)])
    assert scores(at, "flexible") == (True, pytest.approx(0.4 + 0.24 + 0.2), 1.0, pytest.approx(0.6), 1.0)
    # strict: a, b equal of 5 keys -> 0.4; fails
    assert scores(at, "strict") == (False, pytest.approx(0.4 + 0.16 + 0.2), 1.0, pytest.approx(0.4), 1.0)
    # c also absent: (1+1+0.5)/5 = 0.5 < 0.6
    below = compare_tool_calls(gt, [call("t", a=1, b=2, d=40)])
    assert scores(below, "flexible") == (False, pytest.approx(0.4 + 0.2 + 0.2), 1.0, pytest.approx(0.5), 1.0)


def test_substring_match_passes_flexible_only():
    r = compare_tool_calls([call("search", location="Lisbon")], [call("search", location="Lisbon, Portugal")])
    # strict s = 0/1 -> overall 0.4 + 0 + 0.2 = 0.6; flexible s = 1 -> 1.0
    assert scores(r, "strict") == (False, pytest.approx(0.6), 1.0, 0.0, 1.0)
    assert scores(r, "flexible") == (True, 1.0, 1.0, 1.0, 1.0)
    assert r["param_mismatches"] == {"search": {"location": ["Lisbon", "Lisbon, Portugal"]}}


def test_bool_as_number_in_a_call():
    r = compare_tool_calls([call("f", pets=1, n=0)], [call("f", pets=True, n=False)])
    assert scores(r, "strict") == (True, 1.0, 1.0, 1.0, 1.0)


def test_empty_ground_truth_and_empty_prediction():
    # n = m = 0: every score 1 and both successes (§2.4 conventions)
    r = compare_tool_calls([], [])
    assert scores(r, "strict") == (True, 1.0, 1.0, 1.0, 1.0)
    assert scores(r, "flexible") == (True, 1.0, 1.0, 1.0, 1.0)


def test_empty_ground_truth_with_calls():
    # n = 0 < m: name 0, param 0 (no match), order LCS 0 / max(0, 1) = 0 -> overall 0;
    # strict fails on the extra tool, flexible on order 0 < 0.5
    r = compare_tool_calls([], [call("a")])
    assert scores(r, "strict") == (False, 0.0, 0.0, 0.0, 0.0)
    assert scores(r, "flexible") == (False, 0.0, 0.0, 0.0, 0.0)
    # the order threshold is what fails it: with flexible_order 0 it succeeds
    # (with every GT position name-matched the order score is always 1, so this is the only
    # case where that threshold decides)
    loose = compare_tool_calls([], [call("a")], thresholds={"flexible_param": 0.6, "flexible_order": 0.0})
    assert scores(loose, "flexible") == (True, 0.0, 0.0, 0.0, 0.0)


def test_empty_prediction_and_no_prediction():
    r = compare_tool_calls([call("a"), call("a"), call("b")], [call("b")])
    assert r["missing_tools"] == ["a", "a"]  # every GT occurrence, in GT order
    assert scores(compare_tool_calls(GT3, []), "flexible") == (False, 0.0, 0.0, 0.0, 0.0)
    # no prediction (deliberate difference): zeros and failure even for an empty GT
    none = no_prediction_evaluation([])
    assert scores(none, "strict") == (False, 0.0, 0.0, 0.0, 0.0)
    assert scores(none, "flexible") == (False, 0.0, 0.0, 0.0, 0.0)
    assert no_prediction_evaluation(GT3)["missing_tools"] == ["search", "details", "book"]


def test_custom_weights_are_rescaled_like_upstreams_cli():
    assert resolve_weights({"name": 1, "params": 1, "order": 0}) == {"name": 0.5, "params": 0.5, "order": 0.0}
    assert resolve_weights({"name": 0.5, "params": 0.3, "order": 0.2}) == {
        "name": 0.5,
        "params": 0.3,
        "order": 0.2,
    }
    r = compare_tool_calls(
        [call("a"), call("b")], [call("b"), call("a")], weights={"name": 1, "params": 1, "order": 2}
    )
    # weights 0.25 / 0.25 / 0.5: 0.5·order 0.5 = 0.25
    assert r["strict"]["overall_score"] == pytest.approx(0.25)
    assert r["weights"] == {"name": 0.25, "params": 0.25, "order": 0.5}


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (
            {"name": 1, "params": 1},
            "weights: expected exactly the keys name, params, order; got ['name', 'params']",
        ),
        ({"name": -1, "params": 1, "order": 1}, "weights.name: expected a finite number >= 0, got -1"),
        ({"name": 0, "params": 0, "order": 0}, "weights: at least one weight must be > 0"),
        ({"name": True, "params": 1, "order": 1}, "weights.name: expected a finite number >= 0, got True"),
    ],
)
def test_bad_weights(weights, message):
    with pytest.raises(ValueError) as err:
        compare_tool_calls([], [], weights=weights)
    assert str(err.value) == message


def test_bad_thresholds():
    with pytest.raises(ValueError) as err:
        resolve_thresholds({"flexible_param": 1.5, "flexible_order": 0.5})
    assert str(err.value) == "thresholds.flexible_param: expected a number in [0, 1], got 1.5"


@pytest.mark.parametrize(
    ("gt", "pred", "message"),
    [
        (
            [{"tool_parameters": {}}],
            [],
            "ground truth tool call 1: 'tool_name' must be a non-empty string, got None",
        ),
        (
            [],
            [call("a"), {"tool_name": "b", "tool_parameters": "x=1"}],
            "prediction tool call 2 (b): 'tool_parameters' must be an object (use {} for a call without "
            "arguments), got str",
        ),
        (
            [],
            {"tool_name": "a"},
            "prediction: expected a list of tool calls ({'tool_name', 'tool_parameters'}), got dict",
        ),
        (["a"], [], "ground truth tool call 1: expected an object, got str"),
    ],
)
def test_malformed_calls_are_refused_with_the_position(gt, pred, message):
    with pytest.raises(ValueError) as err:
        compare_tool_calls(gt, pred)
    assert str(err.value) == message
