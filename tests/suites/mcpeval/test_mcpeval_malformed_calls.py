"""A malformed tool call is the model's mistake: MCPEval scores it (a failure with its reason),
never errors the item. Each shape is given as the trajectory's call log holds it (what the
MCP toolkit logged for the wire call)."""

from __future__ import annotations

import pytest

from pytest_egi.suite import Task
from suites.mcpeval import SUITE
from suites.mcpeval.scorer import predicted_calls

GOLD = [{"tool_name": "airbnb_search", "tool_parameters": {"location": "Lisbon"}}]
TASK = Task(
    id="airbnb-m",
    category="airbnb",
    data={"id": "airbnb-m", "name": "n", "description": "d", "tool_calls": GOLD},
)


def _traj(name, arguments) -> dict:
    return {
        "final_answer": "Nothing found.",
        "termination": "text_answer",
        "finish_reason": "stop",
        "tool_calls": [{"name": name, "arguments": arguments, "error": True}],
    }


# GT n = 1. Same name, arguments unusable -> {}: name 1, flexible s = 0/1 (location absent),
# param 0, order 1 -> overall 0.4 + 0 + 0.2 = 0.6 (strict the same); no success (s < 0.6).
SAME_NAME = 0.4 * 1 + 0.4 * 0 + 0.2 * 1
# No usable name: name 0, param 0 (no name-matched position), order LCS 0 -> 0.


@pytest.mark.parametrize(
    ("name", "arguments", "overall", "note"),
    [
        (
            "airbnb_search",
            '{"city": ',
            SAME_NAME,
            "call 1 (airbnb_search): arguments are not a JSON object: '{\"city\": '",
        ),
        (
            "airbnb_search",
            [1, 2],
            SAME_NAME,
            "call 1 (airbnb_search): arguments are not a JSON object: '[1, 2]'",
        ),
        (
            "airbnb_search",
            "Paris",
            SAME_NAME,
            "call 1 (airbnb_search): arguments are not a JSON object: 'Paris'",
        ),
        ("airbnb_search", 42, SAME_NAME, "call 1 (airbnb_search): arguments are not a JSON object: '42'"),
        ("airbnb_search", None, SAME_NAME, "call 1 (airbnb_search): arguments are not a JSON object: 'null'"),
        (None, {}, 0.0, "call 1 (no name): no tool name (None)"),
        ("", {}, 0.0, "call 1 (no name): no tool name ('')"),
        ("teleport_user", {"to": "Mars"}, 0.0, None),
    ],
    ids=[
        "not-json",
        "json-array",
        "json-string",
        "json-number",
        "json-null",
        "name-null",
        "name-empty",
        "name-unknown",
    ],
)
def test_malformed_call_is_scored_as_a_failure_with_its_reason(name, arguments, overall, note):
    score = SUITE.score(TASK, _traj(name, arguments), None)
    assert score.success is False
    assert score.values["flexible_overall"] == pytest.approx(overall)
    assert score.values["strict_overall"] == pytest.approx(overall)
    entry = score.details["task_result"]
    assert entry["prediction_calls"] == [
        {
            "tool_name": name if isinstance(name, str) and name else "",
            "tool_parameters": arguments if isinstance(arguments, dict) else {},
        }
    ]
    if note is None:
        assert "malformed_calls" not in score.details
        assert entry["evaluation"]["extra_tools"] == ["teleport_user"]
    else:
        assert score.details["malformed_calls"] == [note]
        assert f"malformed {note}" in score.got


def test_predicted_calls_keep_every_call_in_order():
    log = [
        {"name": "a", "arguments": {"x": 1}},
        {"name": None, "arguments": "[oops"},
        {"name": "b", "arguments": {}},
    ]
    calls, notes = predicted_calls(log)
    assert calls == [
        {"tool_name": "a", "tool_parameters": {"x": 1}},
        {"tool_name": "", "tool_parameters": {}},
        {"tool_name": "b", "tool_parameters": {}},
    ]
    assert notes == ["call 2 (no name): no tool name (None); arguments are not a JSON object: '[oops'"]
