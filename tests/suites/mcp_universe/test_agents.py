"""MCP-Universe's ReAct and function-calling agents (reference §1.4) with scripted models."""

from __future__ import annotations

import json

import pytest

from pytest_egi.agents.loops import no_answer_reason
from pytest_egi.mcp.client import McpServerError, ToolResult
from pytest_egi.mcp.schema import McpToolSpec
from pytest_egi.models.base import ModelResponse, Usage, assistant_message, tool_call
from suites.mcp_universe.agent import (
    build_question,
    output_format_prompt,
    parse_react_reply,
    run_function_call,
    run_react,
)


class Scripted:
    """A model that replies from a list and records what it was sent."""

    name = "scripted"

    def __init__(self, replies):
        self.replies = list(replies)
        self.sent = []

    def generate(self, messages, tools=None, **params):
        self.sent.append((json.loads(json.dumps(messages)), tools))
        reply = self.replies.pop(0) if self.replies else ""
        message = reply if isinstance(reply, dict) else assistant_message(reply)
        return ModelResponse(
            message=message,
            usage=Usage(calls=1),
            finish_reason="tool_calls" if message.get("tool_calls") else "stop",
        )


class FakeServer:
    """A server whose ``calc`` tool adds two numbers (error on a missing one)."""

    def __init__(self, fault=False):
        self.fault = fault
        self.calls = []

    def list_tools(self):
        schema = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}
        return [McpToolSpec("calc", "add a and b", schema), McpToolSpec("egi_snapshot_state", "", {})]

    def call_tool(self, name, arguments=None):
        self.calls.append((name, arguments))
        if self.fault:
            raise McpServerError("the server died", server="math")
        if name != "calc":
            return ToolResult(text=f"Unknown tool: {name}", is_error=True)
        if "b" not in arguments:
            return ToolResult(text="Error: b is required " + "x" * 400, is_error=True)
        return ToolResult(text=str(arguments["a"] + arguments["b"]), is_error=False)


def action(a, b, server="math", tool="calc"):
    return json.dumps(
        {"thought": "add", "action": {"server": server, "tool": tool, "arguments": {"a": a, "b": b}}}
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"thought": "t", "answer": "42"}', ("answer", "42")),
        ('{"thought": "t", "answer": {"x": 1}}', ("answer", '{"x": 1}')),
        ('{"x": 1}', ("answer", '{"x": 1}')),
        ('```json\n{"thought": "t", "answer": "ok"}\n```', ("answer", "ok")),
        ('{"thought": "t", "extra": 5}', ("answer", '{"extra": 5}')),
        ('{"thought": "t", "result": "r"}', ("result", ("t", "r"))),
        ('{"thought": "t", "action": {"tool": "calc"}}', ("invalid_action", ("t", {"tool": "calc"}))),
        ('{"thought": "t", "action": "calc"}', ("invalid_action", ("t", "calc"))),
    ],
)
def test_parse_react_reply(text, expected):
    assert parse_react_reply(text) == expected


def test_parse_react_reply_errors():
    assert parse_react_reply("I think the answer is 4")[0] == "parse_error"
    assert parse_react_reply("{}")[0] == "format_error"
    assert parse_react_reply('{"thought": "only"}')[0] == "format_error"
    kind, payload = parse_react_reply(action(1, 2))
    assert kind == "action" and payload == {
        "server": "math",
        "tool": "calc",
        "arguments": {"a": 1, "b": 2},
        "thought": "add",
    }


def test_react_rebuilds_one_prompt_per_step_with_the_history():
    client = Scripted([action(2, 3), '{"thought": "done", "answer": "5"}'])
    server = FakeServer()
    traj, executed = run_react(client, {"math": server}, "Be exact.", "What is 2+3?", 20, {})
    assert (traj.final_answer, traj.termination, traj.turns) == ("5", "submitted", 2)
    assert server.calls == [("calc", {"a": 2, "b": 3})]
    assert executed == [{"server": "math", "name": "calc", "arguments": {"a": 2, "b": 3}, "result": "5"}]
    first, second = (msgs for msgs, _ in client.sent)
    assert len(first) == len(second) == 1 and first[0]["role"] == "user"
    assert "server: math, tool: calc" in first[0]["content"]
    assert "egi_snapshot_state" not in first[0]["content"]  # the harness's own tool is never listed
    assert "at most 20 steps" in first[0]["content"]
    assert "What you did so far" not in first[0]["content"]
    assert "Step 1:\nThought: add\nAction: Using tool `calc` in server `math`" in second[0]["content"]
    assert "Result: 5" in second[0]["content"]
    assert client.sent[0][1] is None  # a text protocol: no tools offered


def test_react_tool_errors_are_observations_cut_to_300_characters():
    client = Scripted(
        [
            json.dumps({"thought": "t", "action": {"server": "math", "tool": "calc", "arguments": {"a": 1}}}),
            '{"thought": "t", "answer": "x"}',
        ]
    )
    traj, executed = run_react(client, {"math": FakeServer()}, "", "q", 5, {})
    history = client.sent[1][0][0]["content"]
    note = history.split("Result: ", 1)[1].split("\n\n")[0]
    assert note.startswith("Error: b is required") and len(note) == 300
    assert executed == [] and traj.tool_calls[0]["error"] is True


def test_react_unknown_server_and_hidden_tool_never_reach_a_server():
    server = FakeServer()
    client = Scripted(
        [
            action(1, 2, server="nope"),
            action(1, 2, tool="egi_snapshot_state"),
            '{"thought": "t", "answer": "x"}',
        ]
    )
    run_react(client, {"math": server}, "", "q", 5, {})
    assert server.calls == []
    last = client.sent[2][0][0]["content"]
    assert "Result: Error: no server named 'nope'; servers: math" in last
    assert "Result: Error: unknown tool 'egi_snapshot_state'" in last


def test_react_parse_failures_burn_steps_and_the_budget_ends_with_no_answer():
    client = Scripted(["not json"] * 3)
    traj, _ = run_react(client, {"math": FakeServer()}, "", "q", 3, {})
    assert (traj.turns, traj.termination, traj.final_answer) == (3, "max_turns", None)
    assert traj.info["invalid_actions"] == 3
    assert no_answer_reason(traj) == "the turn limit ran out (max_turns)"
    assert "Error: I could not parse my last reply as JSON" in client.sent[2][0][0]["content"]


def test_react_server_fault_is_an_error_with_the_partial_trajectory():
    client = Scripted([action(1, 2)])
    with pytest.raises(McpServerError) as info:
        run_react(client, {"math": FakeServer(fault=True)}, "", "q", 5, {})
    assert info.value.partial_trajectory["termination"] == "error"
    assert info.value.partial_trajectory["turns"] == 1


def test_react_cut_off_answer_is_no_answer():
    class CutOff(Scripted):
        def generate(self, messages, tools=None, **params):
            r = super().generate(messages, tools, **params)
            return ModelResponse(message=r.message, usage=r.usage, finish_reason="length")

    traj, _ = run_react(
        CutOff(['{"thought": "t", "answer": "partial"}']), {"math": FakeServer()}, "", "q", 5, {}
    )
    assert (traj.termination, traj.final_answer) == ("truncated", None)


def test_function_calling_names_tools_server__tool_and_counts_steps_down():
    from suites.mcp_universe.env.servers import server_for

    calc = server_for("calculator", 42)
    client = Scripted(
        [
            assistant_message(
                None, [tool_call("c1", "calculator__calculate", json.dumps({"expression": "6*7"}))]
            ),
            "The result is 42.",
        ]
    )
    traj, executed = run_function_call(client, {"calculator": calc}, "Be exact.", "6 times 7?", 20, {})
    assert (traj.final_answer, traj.termination, traj.turns) == ("The result is 42.", "text_answer", 2)
    tools = client.sent[0][1]
    assert [t["function"]["name"] for t in tools] == ["calculator__calculate"]
    assert client.sent[0][0][0] == {"role": "system", "content": "Be exact."}
    assert client.sent[1][0][-1] == {"role": "user", "content": "19 steps remaining."}
    assert executed[0]["server"] == "calculator" and executed[0]["name"] == "calculate"
    assert executed[0]["result"].strip() in ("42", "42.0")


def test_output_format_instruction_is_appended_after_a_blank_line():
    task = {"question": "How much?", "output_format": {"total value": "[NUMBER]"}}
    q = build_question(task)
    assert q.startswith("How much?\n\nGive the final answer as JSON that follows this format:\n{\n")
    assert '"total value": "[NUMBER]"' in q and "no code fences" in q
    assert build_question({"question": "Plain"}) == "Plain"
    assert output_format_prompt("  Answer in one word. ") == "Answer in one word."
