"""MCPEval's optional LLM judge (reference §2.6): prompt builders and the strict verdict parser.
No network: replies are given as text."""

from __future__ import annotations

import json

import pytest

from suites.mcpeval.scorer import (
    COMPLETION_ASPECTS,
    TRAJECTORY_ASPECTS,
    completion_judge_messages,
    parse_judge_verdict,
    summarize_domain,
    task_values,
    trajectory_judge_messages,
)

TASK = {
    "id": "t1",
    "name": "Cheapest stay",
    "description": "Find the cheapest listing in Porto for 2 adults, 2025-07-01 to 2025-07-04.",
    "goal": "Report the cheapest listing.",
}
CONVERSATION = [
    {"role": "user", "content": "Cheapest stay: find the cheapest listing in Porto ..."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "airbnb_search", "arguments": '{"location": "Porto"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"searchResults": []}'},
    {"role": "assistant", "content": "No listing found."},
]
TRAJ = {
    "planning": 1,
    "execution_flow": 0.5,
    "tool_selection": 1.0,
    "tool_usage": 0.75,
    "adaptability": 1.0,
    "efficiency": 0.25,
    "context_awareness": 0.0,
}
COMP = {"requirement_coverage": 0.5, "accuracy": 1.0, "completeness": 0.25, "usefulness": 0.25}


def test_trajectory_prompt():
    system, user = trajectory_judge_messages(TASK, CONVERSATION)
    assert (system["role"], user["role"]) == ("system", "user")
    for aspect in TRAJECTORY_ASPECTS:
        assert f"- {aspect}: " in system["content"]
        assert f'  "{aspect}": <number from 0.0 to 1.0>,\n' in system["content"]
    assert "deserves 0.9-1.0" in system["content"]  # the smooth-run adaptability rule
    assert user["content"].startswith("Task description:\n" + TASK["description"] + "\n\n")
    assert json.dumps(CONVERSATION, ensure_ascii=False, indent=2) in user["content"]
    assert "Reference tool calls" not in user["content"]
    _, with_ref = trajectory_judge_messages(
        TASK, CONVERSATION, expected_tool_calls=[{"tool_name": "airbnb_search", "tool_parameters": {}}]
    )
    # the ground truth comes after the model's own trajectory, never in its place
    body = with_ref["content"]
    ref = [{"tool_name": "airbnb_search", "tool_parameters": {}}]
    assert body.endswith(
        json.dumps(CONVERSATION, ensure_ascii=False, indent=2)
        + "\n\nReference tool calls (one correct way to do the task):\n"
        + json.dumps(ref, ensure_ascii=False, indent=2)
    )
    assert json.dumps(CONVERSATION, ensure_ascii=False, indent=2) in body


def test_completion_prompt():
    system, user = completion_judge_messages(TASK, "No listing found.", expected_answer="Casa Azul, 81 EUR")
    for aspect in COMPLETION_ASPECTS:
        assert f"- {aspect}: " in system["content"]
    assert user["content"] == (
        "Task description:\n" + TASK["description"] + "\n\n"
        "The agent's final response:\nNo listing found.\n\n"
        "Reference answer (written by a verifier run):\nCasa Azul, 81 EUR"
    )
    _, blank = completion_judge_messages({"goal": "Report the cheapest listing."}, "  ", CONVERSATION)
    assert blank["content"].startswith(
        "Task description:\nReport the cheapest listing.\n\n"
        "The agent's final response:\n(no final response)\n\n"
    )
    with pytest.raises(ValueError) as err:
        completion_judge_messages({"name": "x"}, "answer")
    assert str(err.value) == "judge prompt: the task has neither a 'description' nor a 'goal' text"


def test_parse_trajectory_verdict():
    verdict = parse_judge_verdict(json.dumps({**TRAJ, "comments": "ok", "overall": 0.1}), "trajectory")
    # overall = (1 + 0.5 + 1 + 0.75 + 1 + 0.25 + 0) / 7 = 4.5 / 7; the judge's own overall is ignored
    assert verdict == {
        "aspects": {k: float(v) for k, v in TRAJ.items()},
        "overall": pytest.approx(4.5 / 7),
        "comments": "ok",
    }


def test_parse_completion_verdict_in_a_fenced_block():
    reply = "Here is my grading:\n```json\n" + json.dumps(COMP) + "\n```\nThanks."
    # (0.5 + 1 + 0.25 + 0.25) / 4 = 0.5
    assert parse_judge_verdict(reply, "completion") == {"aspects": COMP, "overall": 0.5, "comments": ""}


@pytest.mark.parametrize(
    "reply",
    [
        None,
        "",
        "The agent did well: 0.9 overall.",
        json.dumps([COMP]),  # not an object
        json.dumps({k: v for k, v in COMP.items() if k != "accuracy"}),  # an aspect missing
        json.dumps({**COMP, "accuracy": 1.2}),  # out of range
        json.dumps({**COMP, "accuracy": -0.1}),
        json.dumps({**COMP, "accuracy": True}),  # a bool is not a score
        json.dumps({**COMP, "accuracy": "0.8"}),  # a string is not a score
        json.dumps({**COMP, "accuracy": None}),
        '{"requirement_coverage": 0.5, "accuracy": NaN, "completeness": 1, "usefulness": 1}',
        json.dumps({**COMP, "comments": ["not", "text"]}),
        "```json\n" + json.dumps(COMP) + "\n```\n```json\n" + json.dumps(COMP) + "\n```",  # two blocks
        "Verdict: " + json.dumps(COMP),  # an object in prose, not fenced
        '```json\n{"requirement_coverage": 0.5,\n```',  # truncated
    ],
)
def test_unparsable_verdict_is_missing_not_zero(reply):
    assert parse_judge_verdict(reply, "completion") is None


def test_trajectory_keys_do_not_satisfy_completion():
    assert parse_judge_verdict(json.dumps(TRAJ), "completion") is None
    with pytest.raises(ValueError) as err:
        parse_judge_verdict(json.dumps(TRAJ), "overall")  # type: ignore[arg-type]
    assert str(err.value) == "judge verdict kind must be 'trajectory' or 'completion', got 'overall'"


def test_missing_verdicts_stay_out_of_the_domain_means():
    ok = parse_judge_verdict(json.dumps(COMP), "completion")
    bad = parse_judge_verdict("no idea", "completion")
    values = [
        task_values(None, judge_completion=ok["overall"]),
        task_values(None, judge_completion=bad and bad["overall"]),
    ]
    out = summarize_domain("healthcare", values)
    # 0.5 from the one verdict; the unparsable one is not averaged in as 0 (which would give 0.25)
    assert out["healthcare.judge_completion_avg"] == 0.5
    assert out["healthcare.judge_completion_n"] == 1.0
    assert out["healthcare.judge_trajectory_avg"] is None
