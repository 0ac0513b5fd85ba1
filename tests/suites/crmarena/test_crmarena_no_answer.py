"""CRMArena: a trial with no answer fails, even against a "None" gold, in both strategies."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_egi.models.base import ContextWindowExceeded, ModelResponse, assistant_message, tool_call
from pytest_egi.suite import SuiteProfile, Task
from suites.crmarena import SUITE, CrmArenaOptions
from suites.crmarena.agent import format_answer, run_trial


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return SUITE.load_tasks(SuiteProfile(seed=42, per_category=6), CrmArenaOptions())


def _task_with_gold(tasks: list[Task], none_gold: bool) -> Task:
    return next(
        t
        for t in tasks
        if t.data["reward_metric"] == "exact_match" and (t.data["answer"] == [None]) is none_gold
    )


@pytest.mark.parametrize(
    "trajectory",
    [
        {"final_answer": None, "termination": "submitted", "finish_reason": "stop"},
        {"final_answer": "", "termination": "submitted", "finish_reason": "stop"},
        {"final_answer": "  \n", "termination": "submitted", "finish_reason": "stop"},
        # the right text, but the reply was cut off, the turns ran out or the context overflowed
        {"final_answer": "GOLD", "termination": "submitted", "finish_reason": "length"},
        {"final_answer": "GOLD", "termination": "max_turns", "finish_reason": "stop"},
        {"final_answer": "GOLD", "termination": "context_exceeded", "finish_reason": "stop"},
    ],
    ids=["none", "empty", "whitespace", "truncated", "max-turns", "context-exceeded"],
)
@pytest.mark.parametrize("none_gold", [True, False], ids=["gold-None", "gold-id"])
def test_no_answer_fails(tasks: list[Task], trajectory: dict[str, Any], none_gold: bool) -> None:
    task = _task_with_gold(tasks, none_gold)
    gold_text = format_answer(task.data["answer"])
    traj = {
        **trajectory,
        "final_answer": gold_text if trajectory["final_answer"] == "GOLD" else trajectory["final_answer"],
    }
    score = SUITE.score(task, traj, CrmArenaOptions())
    assert score.values == {"reward": 0.0} and score.success is False
    assert score.got == f"(no answer: {score.details['no_answer']})"
    # the same text as a complete answer is right
    answered = SUITE.score(
        task,
        {"final_answer": gold_text, "termination": "submitted", "finish_reason": "stop"},
        CrmArenaOptions(),
    )
    assert answered.values == {"reward": 1.0} and "no_answer" not in answered.details


def test_kqa_no_answer_scores_zero(tasks: list[Task]) -> None:
    task = next(t for t in tasks if t.category == "KQA")
    traj = {"final_answer": task.data["answer"][0], "termination": "submitted", "finish_reason": "length"}
    assert SUITE.score(task, traj, CrmArenaOptions()).values == {"reward": 0.0, "em": 0.0}


class _Overflowing:
    """Issues one query, then its context window overflows."""

    name = "scripted/overflowing"

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, messages: list[dict[str, Any]], tools: Any = None, **params: Any) -> ModelResponse:
        self.calls += 1
        if self.calls > 1:
            raise ContextWindowExceeded("maximum context length is 4096 tokens")
        query = "SELECT Id FROM Case LIMIT 1"
        if tools:
            call = tool_call("c1", "issue_soql_query", f'{{"query": "{query}"}}')
            return ModelResponse(message=assistant_message(None, [call]), finish_reason="tool_calls")
        text = f"<thought>look</thought><execute>{query}</execute>"
        return ModelResponse(message=assistant_message(text), finish_reason="stop")


class _CutOff:
    """Answers the gold at once, but the reply is cut off by the token limit."""

    name = "scripted/cut-off"

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def generate(self, messages: list[dict[str, Any]], tools: Any = None, **params: Any) -> ModelResponse:
        if tools:
            call = tool_call("c1", "respond", f'{{"content": "{self.answer}"}}')
            return ModelResponse(message=assistant_message(None, [call]), finish_reason="length")
        text = f"<respond>{self.answer}</respond>"
        return ModelResponse(message=assistant_message(text), finish_reason="length")


@pytest.mark.parametrize("strategy", ["react", "tool_call"])
def test_context_overflow_in_either_strategy_is_a_scored_failure(tasks: list[Task], strategy: str) -> None:
    options = CrmArenaOptions(strategy=strategy)
    task = _task_with_gold(tasks, none_gold=False)
    traj = run_trial(task, _Overflowing(), SUITE.org_for(task, options), options)
    assert (traj.termination, traj.final_answer, traj.turns) == ("context_exceeded", None, 1)
    score = SUITE.score(task, traj.to_dict(), options)
    assert score.values == {"reward": 0.0}
    assert score.details["termination"] == "context_exceeded"


@pytest.mark.parametrize("strategy", ["react", "tool_call"])
def test_cut_off_answer_in_either_strategy_fails(tasks: list[Task], strategy: str) -> None:
    options = CrmArenaOptions(strategy=strategy)
    task = _task_with_gold(tasks, none_gold=False)
    client = _CutOff(format_answer(task.data["answer"]))
    traj = run_trial(task, client, SUITE.org_for(task, options), options)
    assert (traj.termination, traj.final_answer, traj.finish_reason) == ("truncated", None, "length")
    assert SUITE.score(task, traj.to_dict(), options).values == {"reward": 0.0}
