"""UserBench suite: metric formulas on hand-made reward lists, the agent loop's protocol, the
reference policies (oracle at the per-task maximum, null 0, noisy monotone), options and the
draft switch."""

from __future__ import annotations

import importlib
import json

import pytest

import suites.userbench as userbench
from pytest_egi.models.base import ModelResponse, Usage, assistant_message, tool_call
from pytest_egi.models.offline import Noise, NullClient, PolicyClient
from pytest_egi.suite import SuiteProfile
from suites.userbench import SUITE_DRAFT as SUITE
from suites.userbench import UserbenchOptions
from suites.userbench.agent import NOT_EXECUTED, format_action, run_trial
from suites.userbench.env import Messages
from suites.userbench.scorer import normalized_score, reference_micro_avg, summarize_env, task_metrics

ENVS = ["travel22", "travel33", "travel44", "travel233", "travel333", "travel334", "travel444", "travel2222"]


def _tasks(per_category=6, envs=ENVS):
    return SUITE.load_tasks(SuiteProfile(seed=42, categories=envs, per_category=per_category), None)


def _run(task, p, options=None):
    noise = Noise(p, f"42|userbench|{task.id}|1")
    client = PolicyClient(
        f"egi/noisy-{p}" if p else "egi/oracle", SUITE.reference_policy(task, options, noise), noise
    )
    traj = run_trial(task, client, options)
    return traj, SUITE.score(task, traj.to_dict(), options)


# -- metric formulas ----------------------------------------------------------------------
def test_task_metrics_on_hand_made_rewards():
    assert task_metrics([0.2, 0.2, 1.0, 0.0]) == {
        "micro_avg": 0.35,
        "micro_max": 1.0,
        "number_of_1": 1.0,
        "number_of_08": 0.0,
    }
    m = task_metrics([0.2, 0.8, 0.8, 1.0, 0.0])
    assert (m["micro_avg"], m["number_of_1"], m["number_of_08"]) == (pytest.approx(0.56), 1.0, 2.0)
    # exact float equality, as upstream: 0.8000001 is not a correct pick
    assert task_metrics([0.8000001, 1.0000001])["number_of_08"] == 0.0
    assert task_metrics([0.8000001, 1.0000001])["number_of_1"] == 0.0
    # a rollout with no scored turn is upstream's [0]
    assert task_metrics([]) == {"micro_avg": 0.0, "micro_max": 0.0, "number_of_1": 0.0, "number_of_08": 0.0}


def test_summarize_env_means_over_tasks():
    values = [
        {
            **task_metrics([0.2, 1.0]),
            "normalized_score": 0.5,
            "active_rate": 0.5,
            "passive_rate": 0.0,
            "all_best": 0.0,
        },
        {
            **task_metrics([0.0]),
            "normalized_score": 0.0,
            "active_rate": 0.0,
            "passive_rate": 0.25,
            "all_best": 0.0,
        },
        {
            **task_metrics([0.8, 1.0, 0.0, 0.2]),
            "normalized_score": 1.0,
            "active_rate": 1.0,
            "passive_rate": 0.0,
            "all_best": 1.0,
        },
    ]
    out = summarize_env("travel22", values)
    assert out["travel22.micro_avg"] == pytest.approx((0.6 + 0.0 + 0.5) / 3)
    assert out["travel22.micro_max"] == pytest.approx(2.0 / 3)
    assert out["travel22.avg_number_of_1"] == pytest.approx(2 / 3)
    assert out["travel22.avg_number_of_08"] == pytest.approx(1 / 3)
    assert out["travel22.normalized_score"] == 0.5
    assert out["travel22.active_elicitation_rate"] == 0.5
    assert out["travel22.passive_elicitation_rate"] == pytest.approx(0.25 / 3)
    assert (out["travel22.best_rate"], out["travel22.tasks"]) == (pytest.approx(1 / 3), 3.0)
    assert summarize_env("travel33", [])["travel33.micro_avg"] is None


def test_normalized_score_per_aspect_max_over_answer_turns():
    turns = [
        {"choice": "search", "content": "x", "reward": 0.2},
        {"choice": "answer", "content": "H3", "reward": 0.0},
        {"choice": "answer", "content": "H5", "reward": 0.8},
        {"choice": "answer", "content": "[answer] F2", "reward": 1.0},  # the prefix does not hide the aspect
        {"choice": "answer", "content": "", "reward": 0.0},
    ]
    assert normalized_score(turns, "travel22") == pytest.approx(0.9)
    assert normalized_score(turns, "travel2222") == pytest.approx(0.45)


def test_reference_micro_avg_formula():
    task = {"dimensions": ["flight", "hotel"], "preferences": [{}] * 4}
    assert reference_micro_avg(task) == pytest.approx(3.2 / 8)
    # five aspects would need a retry after the forced failure of the 5th search
    five = {"dimensions": ["a"] * 5, "preferences": [{}] * 10}
    assert reference_micro_avg(five) == pytest.approx((1.0 + 2.0 + 5.0) / (6 + 10 + 5))


# -- reference policies ---------------------------------------------------------------------
@pytest.mark.parametrize("task", _tasks(), ids=lambda t: t.id)
def test_oracle_reaches_the_maximum_the_task_allows(task):
    traj, score = _run(task, 0.0)
    assert score.success, score.got
    assert score.values["micro_avg"] == pytest.approx(reference_micro_avg(task.data))
    a, p = len(task.data["dimensions"]), len(task.data["preferences"])
    rewards = traj.info["userbench"]["rewards"]
    assert sorted(rewards) == sorted([0.2] * (a + p) + [1.0] * a)
    assert (score.values["active_rate"], score.values["passive_rate"], score.values["normalized_score"]) == (
        1.0,
        0.0,
        1.0,
    )
    assert traj.termination == "submitted" and traj.info["userbench"]["ended"] == "terminated"


def test_oracle_in_multi_choice_mode_and_options_parse_booleans():
    assert [UserbenchOptions(one_choice=v).one_choice for v in ("false", "0", "no", "true", "1", "yes")] == [
        False,
        False,
        False,
        True,
        True,
        True,
    ]
    task = _tasks(1, ["travel33"])[0]
    _, score = _run(task, 0.0, UserbenchOptions(one_choice="no"))
    assert score.success and score.values["micro_avg"] == pytest.approx(reference_micro_avg(task.data))


def test_null_scores_zero():
    for task in _tasks(2):
        traj = run_trial(task, NullClient(), None)
        score = SUITE.score(task, traj.to_dict(), None)
        assert (score.success, score.values["micro_avg"], score.values["micro_max"]) == (False, 0.0, 0.0)
        assert traj.info["userbench"]["ended"] == "no_tool_call" and traj.final_answer is None


def test_noisy_is_monotone():
    tasks = _tasks(8, ["travel22", "travel33", "travel44"])
    means = {
        p: sum(_run(t, p)[1].values["micro_avg"] for t in tasks) / len(tasks) for p in (0.0, 0.2, 0.5, 1.0)
    }
    assert means[0.0] > means[0.2] > means[0.5] >= means[1.0] >= 0.0
    assert means[0.0] == pytest.approx(sum(reference_micro_avg(t.data) for t in tasks) / len(tasks))


# -- agent loop protocol -------------------------------------------------------------------
class Scripted:
    """Replies from a list of assistant messages."""

    name = "scripted"

    def __init__(self, messages):
        self.messages = list(messages)

    def generate(self, messages, tools=None, **params):
        return ModelResponse(message=self.messages.pop(0), usage=Usage(calls=1), finish_reason="tool_calls")


def _call(i, choice, content, thought="t"):
    return tool_call(
        f"c{i}", "interact_with_env", json.dumps({"thought": thought, "choice": choice, "content": content})
    )


def test_format_action_is_upstreams_prefixing():
    assert format_action("search", "hotel in X") == "[search] hotel in X"
    assert format_action("answer", "[answer] H1") == "[answer] H1"
    assert format_action("finish", "[finish]") == "[finish]"
    assert format_action("talk", "hello") == "hello"


def test_loop_executes_only_the_first_call_and_stops_at_a_malformed_one():
    task = _tasks(1, ["travel22"])[0]
    client = Scripted(
        [
            assistant_message(None, [_call(1, "action", "Hello!"), _call(2, "answer", "A1")]),
            assistant_message(None, [_call(3, "talk", "hello")]),  # unknown choice: the env's format error
            assistant_message(None, [tool_call("c4", "interact_with_env", json.dumps({"choice": "action"}))]),
        ]
    )
    traj = run_trial(task, client, None)
    info = traj.info["userbench"]
    assert info["rewards"] == [0.0, 0.0] and info["ended"] == "malformed_call"
    tool_msgs = [m["content"] for m in traj.messages if m["role"] == "tool"]
    assert tool_msgs[1] == NOT_EXECUTED and tool_msgs[2] == Messages.FORMAT_WRONG
    assert tool_msgs[3] == "Error: arguments need string fields thought, content"
    assert traj.turns == 3 and traj.final_answer is None


def test_loop_truncates_at_max_turns_and_keeps_rewards():
    task = _tasks(1, ["travel22"])[0]
    q = "How many bedrooms does the apartment need?"
    client = Scripted([assistant_message(None, [_call(i, "action", q)]) for i in range(3)])
    traj = run_trial(task, client, UserbenchOptions(max_turns=3))
    info = traj.info["userbench"]
    assert info["rewards"] == [0.2, 0.0, 0.0] and info["ended"] == "truncated"
    assert traj.termination == "max_turns"
    score = SUITE.score(task, traj.to_dict(), None)
    assert score.values["micro_avg"] == pytest.approx(0.2 / 3) and not score.success


# -- suite contract ----------------------------------------------------------------------------
def test_load_tasks_sizes_and_unknown_category():
    assert len(SUITE.load_tasks(SuiteProfile(seed=42, categories=["travel2222"]), None)) == 17
    assert [t.id for t in _tasks(2, ["travel33"])] == ["travel33-001", "travel33-002"]
    with pytest.raises(ValueError, match=r"userbench: unknown categories \['travel55'\]"):
        SUITE.load_tasks(SuiteProfile(categories=["travel55"]), None)


def test_routed_and_diagnostic_keys():
    routed = SUITE.sub_metrics - SUITE.diagnostics
    assert routed == {"travel22.micro_avg", "travel33.micro_avg", "travel44.micro_avg"}


def test_suite_is_a_draft_unless_enabled(monkeypatch):
    monkeypatch.delenv("EGI_DRAFT_SUITES", raising=False)
    assert getattr(importlib.reload(userbench), "SUITE", None) is None
    monkeypatch.setenv("EGI_DRAFT_SUITES", "benchforce,userbench")
    assert importlib.reload(userbench).SUITE is userbench.SUITE_DRAFT
    monkeypatch.delenv("EGI_DRAFT_SUITES")
    importlib.reload(userbench)
