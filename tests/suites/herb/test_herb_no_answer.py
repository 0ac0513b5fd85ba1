"""HERB: a trial with no answer fails and is never an abstention; an explicit one still is."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_egi.models.base import ContextWindowExceeded, ModelResponse, assistant_message, tool_call
from pytest_egi.suite import Task
from suites.herb import SUITE, HerbOptions
from suites.herb.agent import run_trial
from tests.suites.herb.helpers import record

NO_ANSWER_TRAJECTORIES = {
    "none": {"final_answer": None, "termination": "text_answer", "finish_reason": "stop"},
    "empty": {"final_answer": "", "termination": "text_answer", "finish_reason": "stop"},
    "whitespace": {"final_answer": " \n\t", "termination": "text_answer", "finish_reason": "stop"},
    "empty-submit": {"final_answer": {"answer": "", "entities": []}, "termination": "submitted"},
    # a cut-off reply is no answer even when its text reads like a refusal
    "truncated": {"final_answer": "I don't know", "termination": "submitted", "finish_reason": "length"},
    "max-turns": {"final_answer": None, "termination": "max_turns", "finish_reason": "tool_calls"},
    "context-exceeded": {
        "final_answer": None,
        "termination": "context_exceeded",
        "finish_reason": "tool_calls",
    },
}


def _first(tasks: list[Task], category: str) -> Task:
    return next(t for t in tasks if t.category == category)


@pytest.mark.parametrize("kind", sorted(NO_ANSWER_TRAJECTORIES))
def test_no_answer_on_an_unanswerable_question_is_not_an_abstention(
    quick_tasks: list[Task], kind: str
) -> None:
    task = _first(quick_tasks, "unanswerable")
    score = SUITE.score(task, NO_ANSWER_TRAJECTORIES[kind], HerbOptions())
    assert score.values == {"abstained": 0.0}
    assert score.success is False and score.details["abstained"] is False
    assert score.got.startswith("(no answer: ")


@pytest.mark.parametrize("category", ["content", "person", "url", "pr", "company"])
@pytest.mark.parametrize(
    ("termination", "finish_reason"),
    [("submitted", "length"), ("max_turns", "tool_calls"), ("context_exceeded", "tool_calls")],
)
def test_the_right_answer_without_a_proper_ending_scores_zero(
    quick_tasks: list[Task], category: str, termination: str, finish_reason: str
) -> None:
    """The gold itself, in a reply cut off by the token limit or left when turns ran out or
    the context overflowed, is no answer (before: scored as full marks)."""
    task = _first(quick_tasks, category)
    gold = task.data["ground_truth"]
    final = {"answer": gold, "entities": [], "answerable": True} if category == "content" else {
        "answer": ", ".join(gold), "entities": list(gold), "answerable": True}  # fmt: skip
    key = "content" if category == "content" else "f1"
    complete = {"final_answer": final, "termination": "submitted", "finish_reason": "tool_calls"}
    assert SUITE.score(task, complete, HerbOptions()).values == {key: 100.0 if key == "content" else 1.0}
    cut = {"final_answer": final, "termination": termination, "finish_reason": finish_reason}
    score = SUITE.score(task, cut, HerbOptions())
    assert score.values == {key: 0.0} and not score.success


@pytest.mark.parametrize(
    "final",
    [
        "I don't know.",
        "I don’t know.",
        {"answer": "Not in the sources.", "entities": [], "answerable": False},
    ],
)
def test_an_explicit_abstention_still_counts(quick_tasks: list[Task], final: Any) -> None:
    task = _first(quick_tasks, "unanswerable")
    trajectory = {"final_answer": final, "termination": "text_answer", "finish_reason": "stop"}
    score = SUITE.score(task, trajectory, HerbOptions())
    assert score.values == {"abstained": 1.0} and score.success


class _Silent:
    """Searches once, then replies with no content at all (content None, finish_reason stop)."""

    name = "scripted/silent"

    def generate(self, messages: list[dict[str, Any]], tools: Any = None, **params: Any) -> ModelResponse:
        if not any(m["role"] == "tool" for m in messages):
            call = tool_call("c1", "retrieve_all", json.dumps({"input": messages[1]["content"]}))
            return ModelResponse(message=assistant_message(None, [call]), finish_reason="tool_calls")
        return ModelResponse(message=assistant_message(None), finish_reason="stop")


class _Overflowing:
    """Searches once, then its context window overflows."""

    name = "scripted/overflowing"

    def generate(self, messages: list[dict[str, Any]], tools: Any = None, **params: Any) -> ModelResponse:
        if not any(m["role"] == "tool" for m in messages):
            call = tool_call("c1", "retrieve_all", json.dumps({"input": messages[1]["content"]}))
            return ModelResponse(message=assistant_message(None, [call]), finish_reason="tool_calls")
        raise ContextWindowExceeded("prompt is too long: 33000 tokens > 32768 maximum")


@pytest.mark.parametrize(
    ("client", "termination", "turns"),
    [(_Silent(), "text_answer", 2), (_Overflowing(), "context_exceeded", 1)],
)
def test_a_model_that_never_answers_has_null_rate_zero(
    quick_tasks: list[Task], opts: HerbOptions, client: Any, termination: str, turns: int
) -> None:
    """Before: a model that never answered scored null_rate 1.0 (None was "I don't know.")."""
    tasks = [t for t in quick_tasks if t.category in ("unanswerable", "person")]
    records = []
    for task in tasks:
        traj = run_trial(task, client, opts)
        assert (traj.termination, traj.final_answer, traj.turns) == (termination, None, turns)
        records.append(record(task, SUITE.score(task, traj.to_dict(), opts)))
    assert not any(r["status"] == "passed" for r in records)
    out = SUITE.summarize(records)
    assert out["null_rate"] == 0.0 and out["person_f1"] == 0.0
    assert out["n_unanswerable"] == 40
