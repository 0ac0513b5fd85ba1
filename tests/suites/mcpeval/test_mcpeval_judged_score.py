"""MCPEval with an LLM judge: the suite's score asks for both upstream gradings (§2.6)."""

from __future__ import annotations

import json
from typing import Any

from pytest_egi.judges import LLMJudge
from pytest_egi.models.base import ModelResponse, Usage, assistant_message
from pytest_egi.suite import SuiteProfile
from suites.mcpeval import SUITE, McpevalOptions
from suites.mcpeval.scorer import COMPLETION_ASPECTS, TRAJECTORY_ASPECTS


class ScriptedJudge:
    """A judge model that answers from a list and records what it was asked."""

    name = "scripted-judge"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.asked: list[list[dict[str, Any]]] = []
        self.invalidated = 0

    def generate(self, messages, tools=None, **params) -> ModelResponse:
        self.asked.append(messages)
        return ModelResponse(assistant_message(self.replies.pop(0)), Usage(calls=1))

    def invalidate_last(self) -> None:
        self.invalidated += 1


def _oracle_trajectory(task) -> dict[str, Any]:
    gold = task.data["tool_calls"]
    return {
        "messages": [{"role": "user", "content": task.data["description"]}],
        "final_answer": "done",
        "termination": "text_answer",
        "turns": len(gold) + 1,
        "finish_reason": "stop",
        "tool_calls": [{"name": c["tool_name"], "arguments": c["tool_parameters"], "error": False}
                       for c in gold],
        "usage": {},
        "info": {},
    }


def test_judge_verdicts_are_reported_and_an_unusable_one_is_missing_not_zero():
    options = McpevalOptions()
    task = SUITE.load_tasks(SuiteProfile(seed=42, categories=["airbnb"], limit=1), options)[0]
    trajectory_scores = dict.fromkeys(TRAJECTORY_ASPECTS, 0.5) | {"planning": 1.0}
    judge_client = ScriptedJudge(
        json.dumps(trajectory_scores | {"comments": "fine"}),
        "I think it went well",  # no JSON: asked again, three times in all
        "still no verdict",
        json.dumps(dict.fromkeys(COMPLETION_ASPECTS, 2.0)),  # out of [0, 1]: unusable
    )
    judge = LLMJudge(judge_client)
    score = SUITE.score(task, _oracle_trajectory(task), options, judge=judge)
    assert score.success is True and score.values["flexible_overall"] == 1.0
    # 1.0 + 6 x 0.5 over 7 aspects
    assert score.values["judge_trajectory"] == (1.0 + 6 * 0.5) / 7
    assert score.values["judge_completion"] is None
    assert score.details["judge"]["completion"] is None
    assert len(judge_client.asked) == 4 and judge_client.invalidated == 3
    assert judge.usage.calls == 4
    # without a judge (and on rescoring) the judge values stay missing
    plain = SUITE.score(task, _oracle_trajectory(task), options)
    assert (plain.values["judge_trajectory"], plain.values["judge_completion"]) == (None, None)
    summary = SUITE.summarize([{"category": "airbnb", "values": score.values}])
    assert summary["airbnb.judge_trajectory_avg"] == (1.0 + 6 * 0.5) / 7
    assert summary["airbnb.judge_completion_avg"] is None
