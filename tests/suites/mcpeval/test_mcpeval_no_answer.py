"""MCPEval scores the calls the model made whatever its final reply (reference §2.4: upstream's
``analyze`` reads only ``tool_calls``); a missing answer is a diagnostic, never a zero.

The trajectories come from the shared function-calling loop driven by a scripted model that
words its calls as a model does (a city with its country, an extra flag, a forgotten
checkout), then ends the three ways that leave no answer: a blank reply, a reply cut off by
the token limit, and the turn limit.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_egi.agents.loops import run_tool_loop
from pytest_egi.agents.tools import Tool, Toolkit
from pytest_egi.models.base import ModelResponse, assistant_message, tool_call
from pytest_egi.suite import Task
from suites.mcpeval import SUITE

GOLD = [
    {
        "tool_name": "airbnb_search",
        "tool_parameters": {
            "location": "Lisbon",
            "checkin": "2025-07-01",
            "checkout": "2025-07-05",
            "adults": 2,
        },
    },
    {
        "tool_name": "airbnb_listing_details",
        "tool_parameters": {"id": "48213377", "checkin": "2025-07-01", "checkout": "2025-07-05", "adults": 2},
    },
]
TASK = Task(
    id="airbnb-hand",
    category="airbnb",
    data={
        "id": "airbnb-hand",
        "name": "Top stay in Lisbon",
        "tool_calls": GOLD,
        "seed": 42,
        "max_turns": 20,
        "description": "Search Airbnb stays in Lisbon for 2 adults from 2025-07-01 to 2025-07-05, then show "
        "the details of the first listing for the same dates and guests.",
    },
)

SEARCH = {
    "location": "Lisbon, Portugal",
    "checkin": "2025-07-01",
    "checkout": "2025-07-05",
    "adults": 2,
    "ignoreRobotsText": True,
}
DETAILS = {"id": "48213377", "checkin": "2025-07-01", "adults": 2}  # the model forgot the checkout

# Upstream's formulas (§2.4) by hand, n = m = 2, both names matched in place:
#   flexible: s1 = 4/4 ("lisbon" is in "lisbon, portugal"; the extra flag is ignored),
#             s2 = (id 1 + checkin 1 + checkout absent 0 + adults 1) / 4 = 0.75,
#             param = (1 + 0.75) / 2 = 0.875, name = 2/2, order = LCS 2 / 2 = 1,
#             overall = 0.4 * 1 + 0.4 * 0.875 + 0.2 * 1 = 0.95; success (every s >= 0.6).
#   strict:   s1 = 3/4 (the location differs), s2 = 3/4, overall = 0.4 + 0.4 * 0.75 + 0.2 = 0.9;
#             no success.
FLEXIBLE = 0.4 * 1 + 0.4 * ((1 + 0.75) / 2) + 0.2 * 1
STRICT = 0.4 * 1 + 0.4 * 0.75 + 0.2 * 1


class Scripted:
    """A model replying with the given responses in order."""

    def __init__(self, *replies: ModelResponse) -> None:
        self.replies = list(replies)

    def generate(self, messages: list[dict[str, Any]], tools: Any = None, **params: Any) -> ModelResponse:
        return self.replies.pop(0)


def _call(n: int, name: str, args: dict[str, Any]) -> ModelResponse:
    message = assistant_message(None, [tool_call(f"call_{n}", name, json.dumps(args))])
    return ModelResponse(message=message, finish_reason="tool_calls")


def _toolkit() -> Toolkit:
    anything = {"type": "object", "additionalProperties": True}
    return Toolkit.of(
        Tool("airbnb_search", "Search stays", anything, lambda **a: {"searchResults": [{"id": "48213377"}]}),
        Tool("airbnb_listing_details", "Details", anything, lambda **a: {"details": []}),
    )


def _trajectory(ending: str) -> dict[str, Any]:
    replies = [_call(1, "airbnb_search", SEARCH), _call(2, "airbnb_listing_details", DETAILS)]
    if ending == "blank":
        replies.append(ModelResponse(message=assistant_message(" \n"), finish_reason="stop"))
    elif ending == "length":
        cut = "Here are the details of the top-rated stay in Lisbon: a sunny loft near the old"
        replies.append(ModelResponse(message=assistant_message(cut), finish_reason="length"))
    elif ending == "answered":
        replies.append(
            ModelResponse(message=assistant_message("The top stay is a sunny loft."), finish_reason="stop")
        )
    max_turns = 2 if ending == "max_turns" else 20
    messages = [{"role": "user", "content": TASK.data["description"]}]
    return run_tool_loop(Scripted(*replies), messages, _toolkit(), max_turns=max_turns).to_dict()


@pytest.mark.parametrize(
    ("ending", "termination", "why"),
    [
        ("blank", "text_answer", "empty reply (None)"),
        ("length", "truncated", "the final reply was cut off by the token limit (truncated)"),
        ("max_turns", "max_turns", "the turn limit ran out (max_turns)"),
    ],
)
def test_correct_calls_without_a_final_answer_are_scored_by_hand(ending, termination, why):
    traj = _trajectory(ending)
    assert traj["termination"] == termination and traj["final_answer"] is None
    score = SUITE.score(TASK, traj, None)
    assert score.values["flexible_overall"] == pytest.approx(FLEXIBLE) == pytest.approx(0.95)
    assert score.values["strict_overall"] == pytest.approx(STRICT) == pytest.approx(0.9)
    assert score.values["flexible_param"] == 0.875 and score.values["strict_param"] == 0.75
    assert score.values["name"] == 1.0 and score.values["order"] == 1.0
    assert score.values["flexible_success"] == 1.0 and score.values["strict_success"] == 0.0
    assert score.success is True  # upstream's success rule: flexible success
    assert score.values["no_answer"] == 1.0  # the missing answer: a diagnostic
    assert score.details["no_answer"] == why
    assert score.got[-1] == f"no final answer: {why}"


def test_the_same_calls_with_an_answer_score_the_same():
    score = SUITE.score(TASK, _trajectory("answered"), None)
    assert score.values["flexible_overall"] == pytest.approx(0.95)
    assert score.values["no_answer"] == 0.0 and "no_answer" not in score.details


def test_no_answer_rate_is_a_declared_diagnostic_of_summarize():
    records = [
        {"category": "airbnb", "status": "passed", "values": SUITE.score(TASK, _trajectory(e), None).values}
        for e in ("blank", "length", "max_turns", "answered")
    ]
    out = SUITE.summarize(records)
    assert out["airbnb.no_answer_rate"] == 0.75
    assert out["airbnb.flexible_avg"] == pytest.approx(0.95)
    assert "airbnb.no_answer_rate" in SUITE.sub_metrics and "airbnb.no_answer_rate" in SUITE.diagnostics
