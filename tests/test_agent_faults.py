"""The tool-execution contract every suite follows (``pytest_egi.agents.tools``): a mistake in
the model's input is an observation the model reads; any other exception is an environment
fault that ends the item as an error, with the trajectory so far and never shown to the model.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from pytest_egi.agents.loops import Action, run_react_loop, run_tool_loop
from pytest_egi.agents.tools import Tool, ToolError, Toolkit
from pytest_egi.models.base import ModelResponse, Usage, assistant_message, tool_call


class Scripted:
    """A model that replies with the given assistant messages in order."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)

    def generate(self, messages: list[dict[str, Any]], tools: Any = None, **params: Any) -> ModelResponse:
        return ModelResponse(message=self.replies.pop(0), usage=Usage(calls=1))


class CodeError(ToolError):
    """A suite's own wording for model mistakes."""

    @property
    def observation(self) -> str:
        return f"BAD_CODE: {self}"


def _kit(lookup) -> Toolkit:
    return Toolkit.of(
        Tool("lookup", "Look up an item",
             {"type": "object", "properties": {"item": {"type": "integer"}}, "required": ["item"]},
             lookup),
        Tool("submit", "Submit", {"type": "object", "properties": {"code": {"type": "string"}}},
             lambda code: code, kind="submit"),
    )  # fmt: skip


def _lookup(item: int) -> dict[str, str]:
    if item < 0:
        raise ToolError(f"item {item} does not exist; items are numbered from 0")
    if item == 99:
        raise CodeError("item 99 is retired")
    return {"code": f"C{item}"}


def test_model_mistakes_are_observations():
    kit = _kit(_lookup)
    assert kit.call("lookup", '{"item": -1}').content == (
        "Error: item -1 does not exist; items are numbered from 0"
    )
    assert kit.call("lookup", {"item": 99}).content == "BAD_CODE: item 99 is retired"
    # arguments that break the JSON schema never reach the tool (it would raise TypeError)
    assert kit.call("lookup", '{"item": "three"}').content == (
        "Error: bad arguments for 'lookup': 'three' is not of type 'integer' (at 'item')"
    )
    assert kit.call("lookup", "{}").content == (
        "Error: bad arguments for 'lookup': missing a required argument: 'item'"
    )
    assert kit.call("lookup", '{"item": 3}').content == '{"code": "C3"}'
    assert [c["error"] for c in kit.calls] == [True, True, True, True, False]


def test_a_tool_may_opt_out_of_schema_checks():
    kit = Toolkit.of(Tool("echo", "Echo", {"type": "object", "properties": {"x": {"type": "integer"}}},
                          lambda x: f"got {x!r}", validate=False))  # fmt: skip
    assert kit.call("echo", '{"x": "seven"}').content == "got 'seven'"


@pytest.mark.parametrize(
    "fault",
    [
        sqlite3.DatabaseError("database disk image is malformed"),
        OSError(5, "Input/output error"),
        KeyError("index_by_id"),
    ],
)
def test_environment_fault_propagates_from_a_tool_call(fault):
    def lookup(item: int) -> Any:
        raise fault

    kit = _kit(lookup)
    with pytest.raises(type(fault)):
        kit.call("lookup", '{"item": 1}')
    assert kit.calls == []  # a fault is no call the model made


def test_tool_loop_fault_ends_the_item_with_the_trajectory_so_far():
    def lookup(item: int) -> Any:
        if item == 2:
            raise sqlite3.OperationalError("unable to open database file")
        return {"code": f"C{item}"}

    client = Scripted(
        assistant_message(None, [tool_call("c1", "lookup", '{"item": 1}')]),
        assistant_message(None, [tool_call("c2", "lookup", '{"item": 2}')]),
    )
    with pytest.raises(sqlite3.OperationalError) as info:
        run_tool_loop(client, [{"role": "user", "content": "codes of 1 and 2?"}], _kit(lookup), max_turns=5)
    partial = info.value.partial_trajectory
    assert partial["turns"] == 2 and partial["final_answer"] is None
    assert [m["role"] for m in partial["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert partial["messages"][2]["content"] == '{"code": "C1"}'
    assert "unable to open" not in json.dumps(partial["messages"])
    # the calls made before the fault are kept with it (the faulting call is not logged)
    assert partial["tool_calls"] == [{"name": "lookup", "arguments": {"item": 1}, "error": False}]


def _parse(text: str) -> Action:
    kind, _, payload = text.partition(":")
    return Action(kind, payload) if kind in ("execute", "respond") else Action("invalid")  # type: ignore[arg-type]


def test_react_execute_mistake_is_an_observation_and_a_fault_propagates():
    def execute(query: str) -> str:
        if query == "typo":
            raise ToolError("unknown command 'typo'")
        if query == "crash":
            raise sqlite3.DatabaseError("file is not a database")
        return f"rows for {query}"

    client = Scripted(
        assistant_message("execute:typo"),
        assistant_message("execute:list"),
        assistant_message("execute:crash"),
    )
    with pytest.raises(sqlite3.DatabaseError) as info:
        run_react_loop(client, [{"role": "user", "content": "go"}], parse=_parse, execute=execute,
                       max_turns=5, invalid_format_message="use execute: or respond:")  # fmt: skip
    partial = info.value.partial_trajectory
    assert [m["content"] for m in partial["messages"] if m["role"] == "user"] == [
        "go", "Error: unknown command 'typo'", "rows for list"]  # fmt: skip
    assert partial["turns"] == 3 and partial["tool_calls"] == [
        {"name": "execute", "arguments": {"query": "typo"}},
        {"name": "execute", "arguments": {"query": "list"}},
    ]
    assert "not a database" not in json.dumps(partial["messages"])


def test_a_call_without_a_name_or_an_id_is_an_observation_paired_with_its_result():
    """A null tool name runs as the unknown tool ``""`` (not the text ``"None"``), and a call
    with no id gets ``call_<turn>_<k>`` in the stored message and in its tool result."""
    nameless = {"id": "c1", "type": "function", "function": {"name": None, "arguments": "{}"}}
    idless = {"type": "function", "function": {"name": "lookup", "arguments": '{"item": 4}'}}
    client = Scripted(assistant_message(None, [nameless, idless]), assistant_message("C4"))
    traj = run_tool_loop(client, [{"role": "user", "content": "code of 4?"}], _kit(_lookup), max_turns=5)
    assert traj.final_answer == "C4"
    assert traj.tool_calls == [
        {"name": "", "arguments": {}, "error": True},
        {"name": "lookup", "arguments": {"item": 4}, "error": False},
    ]
    calls = traj.messages[1]["tool_calls"]
    assert [c["id"] for c in calls] == ["c1", "call_1_2"]
    unknown = "Error: unknown tool ''. Available tools: lookup, submit"
    assert traj.messages[2] == {"role": "tool", "tool_call_id": "c1", "content": unknown}
    assert traj.messages[3] == {"role": "tool", "tool_call_id": "call_1_2", "content": '{"code": "C4"}'}
    assert "id" not in idless  # the model's own message object is left alone
