"""Eigent scoring by hand: per-task values, the sub-metrics, upstream's CSV, model_kwargs."""

from __future__ import annotations

import csv
import io

import pytest

from pytest_egi.scoring.config import Route, RoutingConfig
from pytest_egi.scoring.egi import compute_egi
from pytest_egi.suite import Task
from suites.eigent import SUITE
from suites.eigent.models import model_kwargs_decision
from suites.eigent.scorer import results_csv


def _task(name: str, difficulty: str, tags: list[str], checkers: int = 1, graders: int = 1) -> Task:
    scripts = [
        {"type": "checker", "script": f"bench/checker/{name}{'' if k == 0 else f'_{k}'}.py", "path": "/x"}
        for k in range(checkers)
    ]
    scripts += [{"type": "grader", "script": f"bench/grader/{name}.py", "path": "/x"} for _ in range(graders)]
    config = {
        "metadata": {"difficulty": difficulty, "tags": tags},
        "data": {"name": name, "question": "q", "env": {}},
        "tests": {},
    }
    return Task(
        id=f"bench.{name}",
        category=difficulty,
        data={"config": config, "scripts": scripts, "order": [0, f"{name}.json"]},
    )


def _trajectory(final: str | None, results: list[dict], termination: str = "text_answer") -> dict:
    """What a model's trial leaves: its tool calls, its own closing words, the script results."""
    return {
        "messages": [
            {"role": "system", "content": "..."},
            {"role": "user", "content": "Write totals.csv ..."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "write_file",
                            "arguments": '{"path": "totals.csv", "content": "a,b\\n"}',
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "wrote totals.csv (4 bytes)"},
            {"role": "assistant", "content": final},
        ],
        "final_answer": final,
        "termination": termination,
        "turns": 2,
        "finish_reason": "stop",
        "tool_calls": [],
        "usage": {},
        "info": {"eigent": {"results": results, "model": "openai/gpt-4o-mini"}},
    }


def _checker(script: str, passed: bool) -> dict:
    return {
        "type": "checker",
        "script": script,
        "passed": passed,
        "completed": None,
        "total": None,
        "output": "PASS" if passed else "FAIL: header is ['Region', 'Total']",
    }


def _grader(script: str, completed: int, total: int) -> dict:
    return {
        "type": "grader",
        "script": script,
        "passed": None,
        "completed": completed,
        "total": total,
        "output": f"MISS [2]: header\n{completed}/{total}",
    }


def _record(task: Task, traj: dict) -> dict:
    score = SUITE.score(task, traj, SUITE.options_model())
    return {
        "category": task.category,
        "values": score.values,
        "details": score.details,
        "success": score.success,
        "trial": 1,
        "model": "openai/gpt-4o-mini",
    }


def test_sub_metrics_by_hand_on_a_models_trials():
    a = _task("0", "easy", ["csv", "research"], checkers=2)
    b = _task("1", "hard", ["csv"])
    c = _task("2", "hard", ["coding"])
    ra = _record(
        a,
        _trajectory(
            "I've written totals.csv with one row per region.",
            [
                _checker("bench/checker/0.py", True),
                _checker("bench/checker/0_1.py", False),
                _grader("bench/grader/0.py", 3, 4),
            ],
        ),
    )
    rb = _record(
        b,
        _trajectory(
            "Done — the CSV is in place.",
            [_checker("bench/checker/1.py", True), _grader("bench/grader/1.py", 7, 7)],
        ),
    )
    # the turn limit ran out: no answer, so nothing counts, whatever the folder holds
    rc = _record(
        c,
        _trajectory(
            None,
            [_checker("bench/checker/2.py", True), _grader("bench/grader/2.py", 2, 10)],
            termination="max_turns",
        ),
    )
    assert ra["values"] == {
        "passed": 0.0,
        "checkers_passed": 1.0,
        "checkers_total": 2.0,
        "milestones_completed": 3.0,
        "milestones_total": 4.0,
    }
    assert ra["success"] is False and rb["success"] is True and rc["success"] is False
    assert rc["values"]["checkers_passed"] == 0.0 and rc["values"]["milestones_completed"] == 0.0
    s = SUITE.summarize([ra, rb, rc])
    # checker runs: a 1/2, b 1/1, c 0/1 (no answer) -> 2/4; milestones: 3+7+0 over 4+7+10 = 10/21
    assert s["checker_pass_rate"] == pytest.approx(2 / 4)
    assert s["milestone_completion"] == pytest.approx(10 / 21)
    assert s["task_pass_rate"] == pytest.approx(1 / 3)
    assert s["easy.checker_pass_rate"] == pytest.approx(1 / 2)
    assert s["hard.checker_pass_rate"] == pytest.approx(1 / 2)
    assert s["hard.milestone_completion"] == pytest.approx(7 / 17)
    assert "medium.checker_pass_rate" not in s
    assert s["tag.csv.checker_pass_rate"] == pytest.approx(2 / 3)
    assert s["tag.csv.milestone_completion"] == pytest.approx(10 / 11)
    assert s["tag.coding.milestone_completion"] == 0.0
    assert s["tag.research.checker_pass_rate"] == pytest.approx(1 / 2)


def test_results_csv_is_upstreams_format():
    text = results_csv(
        [
            (
                "0",
                "openai/gpt-4o",
                [_grader("benchmark/grader/0.py", 7, 7), _checker("benchmark/checker/0.py", True)],
            ),
            (
                "1",
                "openai/gpt-4o",
                [_checker("benchmark/checker/1.py", False), _grader("benchmark/grader/1.py", 0, 7)],
            ),
        ]
    )
    # upstream main.py: csv.writer defaults (CRLF), checker rows before grader rows per benchmark
    assert text == (
        "benchmark,model,type,script,result\r\n"
        "0,openai/gpt-4o,checker,benchmark/checker/0.py,PASS\r\n"
        "0,openai/gpt-4o,grader,benchmark/grader/0.py,7/7\r\n"
        "1,openai/gpt-4o,checker,benchmark/checker/1.py,FAIL\r\n"
        "1,openai/gpt-4o,grader,benchmark/grader/1.py,0/7\r\n"
    )


def test_extra_file_orders_rows_as_upstream_sorted_dataset_files():
    t10, t2 = _task("10", "easy", []), _task("2", "easy", [])
    t10.data["order"][1], t2.data["order"][1] = "10.json", "2.json"
    r10 = _record(t10, _trajectory("ok", [_checker("bench/checker/10.py", True)]))
    r2 = _record(t2, _trajectory("ok", [_checker("bench/checker/2.py", False)]))
    text = SUITE.extra_files([r2, r10])["results.csv"]
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert [r[0] for r in rows[1:]] == ["10", "2"]  # sorted(glob) puts 10.json before 2.json
    assert rows[1][1] == "openai/gpt-4o-mini"


@pytest.mark.parametrize(
    ("kwargs", "model", "status", "run"),
    [
        (None, "openai/gpt-4o-mini", None, None),
        (
            {"model_platform": "openai", "model_type": "gpt-4o"},
            "openai/gpt-4o-mini",
            "honoured",
            "openai/gpt-4o",
        ),
        (
            {"model_platform": "openai", "model_type": "gpt-4o"},
            "anthropic/claude-x",
            "ignored",
            "anthropic/claude-x",
        ),
        ({"model_platform": "openai", "model_type": "gpt-4o"}, "gpt-4o-mini", "ignored", "gpt-4o-mini"),
        ({"model_platform": "egi", "model_type": "oracle"}, "egi/oracle", "ignored", "egi/oracle"),
    ],
)
def test_model_kwargs_honoured_only_for_the_model_under_tests_provider(kwargs, model, status, run):
    got = model_kwargs_decision(kwargs, model)
    if status is None:
        assert got is None
    else:
        assert (got["status"], got["run"]) == (status, run) and got["reason"]


def _routing(optional: bool) -> RoutingConfig:
    buckets = {
        b: {"name": b, "weight": w}
        for b, w in zip(
            ["M1", "M2", "M3", "M4", "M5", "M6"], [0.28, 0.22, 0.16, 0.14, 0.14, 0.06], strict=True
        )
    }
    return RoutingConfig.model_validate(
        {
            "version": 1,
            "buckets": buckets,
            "suites": ["a", "eigent"],
            "routes": [
                {"suite": "a", "sub_metric": "x", "bucket": "M1", "transform": "fraction"},
                {
                    "suite": "eigent",
                    "sub_metric": "checker_pass_rate",
                    "bucket": "M1",
                    "transform": "fraction",
                    "optional": optional,
                },
            ],
            "modes": {"quick": {}, "deep": {}},
        }
    )


def test_an_optional_route_of_a_suite_that_did_not_run_is_not_missing():
    routing = _routing(optional=True)
    weights = {b: bk.weight for b, bk in routing.buckets.items()}
    res = compute_egi({"a": {"x": 0.5}}, routing, weights=weights, floors={}, ran={"a"})
    assert [m.route for m in res.missing] == []
    assert res.buckets["M1"].value == 50.0
    # it ran (every item errored): then it is missing, with its reason
    res = compute_egi(
        {"a": {"x": 0.5}},
        routing,
        weights=weights,
        floors={},
        ran={"a", "eigent"},
        suite_reasons={"eigent": "eigent: no scored item (2 errored, 0 skipped)"},
    )
    assert [(m.route, m.reason) for m in res.missing] == [
        ("eigent/checker_pass_rate", "eigent: no scored item (2 errored, 0 skipped)")
    ]
    # a route not marked optional stays missing when its suite did not run (unchanged)
    res = compute_egi({"a": {"x": 0.5}}, _routing(optional=False), weights=weights, floors={}, ran={"a"})
    assert [m.route for m in res.missing] == ["eigent/checker_pass_rate"]


def test_a_suites_routes_are_all_optional_or_none():
    data = _routing(True).model_dump()
    data["routes"].append(
        Route(
            suite="eigent", sub_metric="milestone_completion", bucket="M3", transform="fraction"
        ).model_dump()
    )
    with pytest.raises(
        ValueError,
        match=r"route 2 \(eigent/checker_pass_rate\)\.optional: the routes of eigent disagree on 'optional'",
    ):
        RoutingConfig.model_validate(data)


def test_honoured_model_kwargs_run_the_named_model_with_the_same_provider_settings():
    from pytest_egi.models.litellm_client import LiteLLMClient
    from suites.eigent.models import choose_client

    client = LiteLLMClient("openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1").for_trial(2, "ns")
    task = _task("0", "easy", [])
    same, decision = choose_client(task, client)
    assert same is client and decision is None
    asks = Task(
        id=task.id,
        category=task.category,
        data={
            **task.data,
            "config": {
                **task.data["config"],
                "model_kwargs": {"model_platform": "openai", "model_type": "gpt-4o"},
            },
        },
    )
    switched, decision = choose_client(asks, client)
    assert (switched.name, switched.trial, switched.namespace) == ("openai/gpt-4o", 2, "ns")
    assert (
        switched.core.api_base == "http://127.0.0.1:9/v1" and switched.core.settings is client.core.settings
    )
    assert decision["status"] == "honoured"
    other = LiteLLMClient("anthropic/claude-x").for_trial(1, "")
    kept, decision = choose_client(asks, other)
    assert kept is other and decision["status"] == "ignored"
    assert decision["reason"] == "the model under test 'anthropic/claude-x' is not from provider 'openai'"
