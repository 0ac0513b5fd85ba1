"""MCPEval per-task values, per-domain sub-metrics and upstream file layouts (reference §2.5),
with hand-computed values; the layouts are compared key for key with upstream's stored files."""

from __future__ import annotations

import fnmatch
import json
from typing import Any

import pytest

from suites.mcpeval.scorer import (
    DOMAIN_METRICS,
    TASK_VALUE_KEYS,
    compare_tool_calls,
    sub_metric_names,
    summarize_domain,
    summary_analysis_file,
    task_metrics_file,
    task_result_entry,
    task_values,
)
from tests.suites.mcpeval.upstream import UPSTREAM


def call(name: str, **params: Any) -> dict[str, Any]:
    return {"tool_name": name, "tool_parameters": params}


GT_A = [call("search", q="Paris"), call("details", id=7)]
PERFECT = [call("search", q="paris"), call("details", id=7)]
SHIFTED = [call("lookup"), call("search", q="Paris"), call("details", id=7)]
# early call: name 0, param 0, order LCS 2/2 = 1 -> overall 0.2 in both modes, both fail
WRONG_ARG = [call("search", q="Paris, France"), call("details", id=7)]
# strict: s = 0, 1 -> param 0.5 -> overall 0.4 + 0.2 + 0.2 = 0.8, fails;
# flexible: "paris" is in "paris, france" -> s = 1, 1 -> overall 1.0, succeeds


def test_task_values_of_a_comparison_and_of_no_prediction():
    v = task_values(compare_tool_calls(GT_A, WRONG_ARG), judge_trajectory=0.75)
    assert v == {
        "flexible_overall": 1.0,
        "strict_overall": pytest.approx(0.8),
        "flexible_success": 1.0,
        "strict_success": 0.0,
        "name": 1.0,
        "strict_param": 0.5,
        "flexible_param": 1.0,
        "order": 1.0,
        "no_answer": 0.0,
        "judge_trajectory": 0.75,
        "judge_completion": None,
    }
    assert list(v) == list(TASK_VALUE_KEYS)
    assert task_values(compare_tool_calls(GT_A, WRONG_ARG), no_answer=True)["no_answer"] == 1.0
    # no prediction: a failure with zero scores (deliberate difference: upstream skipped it)
    assert task_values(None) == {k: (None if k.startswith("judge_") else 0.0) for k in TASK_VALUE_KEYS}


def test_summarize_domain_hand_computed():
    values = [
        task_values(compare_tool_calls(GT_A, PERFECT), judge_trajectory=0.9, judge_completion=0.5),
        task_values(compare_tool_calls(GT_A, SHIFTED), judge_trajectory=None, judge_completion=0.7),
        task_values(compare_tool_calls(GT_A, WRONG_ARG), no_answer=True),
        task_values(None),  # no prediction: counts, with zeros
    ]
    out = summarize_domain("airbnb", values)
    assert list(out) == [f"airbnb.{m}" for m in DOMAIN_METRICS]
    assert out == {
        "airbnb.flexible_avg": pytest.approx((1 + 0.2 + 1 + 0) / 4),  # 0.55
        "airbnb.strict_avg": pytest.approx((1 + 0.2 + 0.8 + 0) / 4),  # 0.5
        "airbnb.flexible_success_rate": 0.5,  # perfect + wrong-arg
        "airbnb.strict_success_rate": 0.25,  # perfect only
        "airbnb.name_avg": 0.5,  # 1, 0, 1, 0
        "airbnb.strict_param_avg": pytest.approx((1 + 0 + 0.5 + 0) / 4),  # 0.375
        "airbnb.flexible_param_avg": 0.5,  # 1, 0, 1, 0
        "airbnb.order_avg": 0.75,  # 1, 1, 1, 0
        "airbnb.no_answer_rate": 0.25,  # the wrong-arg task ended with no answer (scored all the same)
        "airbnb.judge_trajectory_avg": 0.9,  # the missing verdicts are left out, never zeros
        "airbnb.judge_completion_avg": pytest.approx(0.6),  # (0.5 + 0.7) / 2
        "airbnb.judge_trajectory_n": 1.0,
        "airbnb.judge_completion_n": 2.0,
        "airbnb.n_tasks": 4.0,
    }


def test_summarize_domain_with_no_task_and_bad_values():
    empty = summarize_domain("sports", [])
    assert empty["sports.flexible_avg"] is None and empty["sports.n_tasks"] == 0.0
    assert empty["sports.judge_trajectory_n"] == 0.0
    with pytest.raises(ValueError) as err:
        summarize_domain("sports", [{"flexible_overall": 1.0}])
    assert str(err.value).startswith("sports task 1: values lack ['strict_overall', 'flexible_success'")
    bad = dict(task_values(None), order=None)
    with pytest.raises(ValueError) as err:
        summarize_domain("sports", [bad])
    assert str(err.value) == "sports task 1: values['order'] is None; only judge values may be"


def test_sub_metric_names():
    names = sub_metric_names(["airbnb", "yfinance"])
    assert len(names) == 2 * len(DOMAIN_METRICS)
    assert {"airbnb.flexible_avg", "yfinance.flexible_avg", "yfinance.n_tasks"} <= names


def _entries() -> list[dict[str, Any]]:
    return [
        task_result_entry("t1", GT_A, PERFECT),
        task_result_entry("t2", GT_A, SHIFTED),
        task_result_entry("t3", GT_A, WRONG_ARG),
        task_result_entry("t4", [call("get", id=1), call("get", id=2), call("list")], [call("get", id=1)]),
        task_result_entry("t5", GT_A, None),  # no prediction
    ]


def test_task_result_entry_of_no_prediction():
    entry = task_result_entry("t5", GT_A, None)
    assert entry["no_prediction"] is True and entry["prediction_calls"] == []
    assert entry["evaluation"]["task_id"] == "t5"
    assert entry["evaluation"]["flexible"] == {
        "success": False,
        "overall_score": 0.0,
        "tool_name_score": 0.0,
        "param_match_score": 0.0,
        "order_score": 0.0,
    }
    assert entry["evaluation"]["missing_tools"] == ["search", "details"]
    # an empty ground truth with no prediction is a failure too (an empty prediction succeeds)
    assert task_result_entry("e", [], None)["evaluation"]["strict"]["success"] is False
    assert task_result_entry("e", [], [])["evaluation"]["strict"]["success"] is True


def test_summary_analysis_hand_computed():
    out = summary_analysis_file(_entries())
    # t4: GT get,get,list vs get(id=1): name 1/3, strict s = 1 -> param 1, LCS 1/3;
    # overall 0.4/3 + 0.4 + 0.2/3 = 0.6
    assert out["summary"] == {
        "total_tasks": 5,
        "tasks_with_matching_tools": 4,  # missing < n for all but t5 (t4 misses only list)
        "exact_match": {
            "tasks_with_complete_success": 1,
            "average_name_match_score": pytest.approx((1 + 0 + 1 + 1 / 3 + 0) / 5),
            "average_param_match_score": pytest.approx((1 + 0 + 0.5 + 1 + 0) / 5),
            "average_order_match_score": pytest.approx((1 + 1 + 1 + 1 / 3 + 0) / 5),
            "average_overall_score": pytest.approx((1 + 0.2 + 0.8 + 0.6 + 0) / 5),
        },
        "flexible_match": {
            "tasks_with_complete_success": 2,
            "average_name_match_score": pytest.approx((1 + 0 + 1 + 1 / 3 + 0) / 5),
            "average_param_match_score": pytest.approx((1 + 0 + 1 + 1 + 0) / 5),
            "average_order_match_score": pytest.approx((1 + 1 + 1 + 1 / 3 + 0) / 5),
            "average_overall_score": pytest.approx((1 + 0.2 + 1 + 0.6 + 0) / 5),
        },
        "weights": {"name": 0.4, "params": 0.4, "order": 0.2},
        "thresholds": {"flexible_param": 0.6, "flexible_order": 0.5},
    }
    assert out["parameter_mismatches"] == {"search": {"q": 1}}
    assert out["tool_usage"] == {
        "ground_truth_tools": {"search": 4, "details": 4, "get": 2, "list": 1},
        "prediction_tools": {"search": 3, "details": 3, "lookup": 1, "get": 1},
        "missing_tools": {"list": 1, "search": 1, "details": 1},
        "extra_tools": {"lookup": 1},
    }
    assert out["success_patterns"]["by_tool_count"] == {
        "strict": {"success": {"2": 1, "3": 0}, "failure": {"2": 3, "3": 1}},
        "flexible": {"success": {"2": 2, "3": 0}, "failure": {"2": 2, "3": 1}},
    }
    assert out["success_patterns"]["by_tool_combination"]["strict"] == {
        "success": {"1x search, 1x details": 1},
        "failure": {"1x search, 1x details": 3, "2x get, 1x list": 1},
    }
    assert out["success_patterns"]["by_tool"] == {
        "search": {"success_rate": 0.25, "total_tasks": 4, "successful_tasks": 1},
        "details": {"success_rate": 0.25, "total_tasks": 4, "successful_tasks": 1},
        "get": {"success_rate": 0.0, "total_tasks": 2, "successful_tasks": 0},
        "list": {"success_rate": 0.0, "total_tasks": 1, "successful_tasks": 0},
    }
    assert out["evaluation_config"] == {
        "weights": out["summary"]["weights"],
        "thresholds": out["summary"]["thresholds"],
    }
    json.dumps(out)  # JSON-ready


def test_task_metrics_file_hand_computed():
    out = task_metrics_file(_entries())
    assert list(out) == ["task_results", "summary_metrics"]
    assert [e["task_id"] for e in out["task_results"]] == ["t1", "t2", "t3", "t4", "t5"]
    t4 = out["task_results"][3]["evaluation"]
    assert t4["param_matches"] == {"get_0": 1.0}  # "get" is called twice in the ground truth
    assert t4["missing_tools"] == ["list"]
    assert out["summary_metrics"] == summary_analysis_file(_entries())["summary"]
    json.dumps(out)


# --- key structure against upstream's files -------------------------------------------------

SUMMARY_DATA_KEYED = (
    "/parameter_mismatches",
    "/parameter_mismatches/*",
    "/tool_usage/*",
    "/success_patterns/by_tool_count/*/*",
    "/success_patterns/by_tool_combination/*/*",
    "/success_patterns/by_tool",
)
METRICS_DATA_KEYED = (
    "/task_results[]/evaluation/param_mismatches",
    "/task_results[]/evaluation/param_matches",
)
OPAQUE = (
    "*/tool_parameters",  # a call's arguments
    "/task_results[]/evaluation/param_mismatches/*",  # {param: [gt, pred]}
)


def _kind(x: Any) -> str:
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int | float):
        return "number"
    return "null" if x is None else type(x).__name__


def _paths(x: Any, data_keyed: tuple[str, ...], prefix: str = "") -> set[str]:
    """Every key path of ``x`` with its value kind; data-dependent keys (tool names, counts)
    become ``*``; opaque parts (arguments, mismatched values) are not descended."""
    if any(fnmatch.fnmatchcase(prefix, p) for p in OPAQUE):
        return {prefix + ":any"}
    if isinstance(x, dict):
        wild = any(fnmatch.fnmatchcase(prefix, p) for p in data_keyed)
        out = {prefix + ":dict"}
        for k, v in x.items():
            out |= _paths(v, data_keyed, f"{prefix}/{'*' if wild else k}")
        return out
    if isinstance(x, list):
        out = {prefix + ":list"}
        for v in x:
            out |= _paths(v, data_keyed, prefix + "[]")
        return out
    return {prefix + ":" + _kind(x)}


def _upstream(name: str) -> list[Any]:
    files = sorted(UPSTREAM.rglob(name))
    assert len(files) == 3
    return [json.loads(p.read_text(encoding="utf-8")) for p in files]


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason=f"upstream MCPEval files not found at {UPSTREAM}")
def test_summary_analysis_has_upstreams_keys_and_nesting():
    theirs = set().union(*(_paths(d, SUMMARY_DATA_KEYED) for d in _upstream("summary_analysis.json")))
    ours = _paths(summary_analysis_file(_entries()), SUMMARY_DATA_KEYED)
    # current upstream adds evaluation_config; the stored (older) files lack it
    assert ours - theirs == {
        "/evaluation_config:dict",
        "/evaluation_config/weights:dict",
        "/evaluation_config/weights/name:number",
        "/evaluation_config/weights/params:number",
        "/evaluation_config/weights/order:number",
        "/evaluation_config/thresholds:dict",
        "/evaluation_config/thresholds/flexible_param:number",
        "/evaluation_config/thresholds/flexible_order:number",
    }
    assert theirs - ours == set()


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason=f"upstream MCPEval files not found at {UPSTREAM}")
def test_task_metrics_has_upstreams_keys_and_nesting():
    theirs = set().union(*(_paths(d, METRICS_DATA_KEYED) for d in _upstream("task_metrics.json")))
    ours = _paths(task_metrics_file(_entries()), METRICS_DATA_KEYED)
    assert ours - theirs == {"/task_results[]/no_prediction:bool"}  # our flag on t5 only
    assert theirs - ours == set()
