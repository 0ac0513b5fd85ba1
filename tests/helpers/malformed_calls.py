"""Malformed tool calls as a model sends them, for the scripted OpenAI-compatible server.

:data:`SHAPES` are the ways a model's function call goes wrong in the field (arguments that are
not JSON, a JSON array, string or number, null arguments, a null / empty / unknown tool name,
a call with no id). :func:`malformed_agent` is a reply function for
:class:`tests.helpers.openai_server.OpenAIServer`: in every conversation that offers tools it
sends one malformed call per turn, each shape in turn, then answers in text; a request without
tools gets the text answer at once.
"""

from __future__ import annotations

from typing import Any

from tests.helpers.openai_server import Reply, chat_reply

__all__ = ["FINAL_TEXT", "SHAPES", "TOOL", "malformed_agent", "malformed_call", "shape_turns"]

TOOL = "<tool>"
"""Stands for the name of the first tool the request offers."""
FINAL_TEXT = "I could not complete the task."
"""The text answer after the malformed calls."""

SHAPES: dict[str, dict[str, Any]] = {
    "arguments_not_json": {"id": "call_1", "name": TOOL, "arguments": '{"city": '},
    "arguments_json_array": {"id": "call_2", "name": TOOL, "arguments": "[1,2]"},
    "arguments_json_string": {"id": "call_3", "name": TOOL, "arguments": '"Paris"'},
    "arguments_json_number": {"id": "call_4", "name": TOOL, "arguments": "42"},
    "arguments_null": {"id": "call_5", "name": TOOL, "arguments": None},
    "name_null": {"id": "call_6", "name": None, "arguments": "{}"},
    "name_empty": {"id": "call_7", "name": "", "arguments": "{}"},
    "name_unknown": {"id": "call_8", "name": "teleport_user", "arguments": '{"to": "Mars"}'},
    "no_id": {"id": None, "name": TOOL, "arguments": "{}"},
}
"""Shape name -> the call's id, function name (:data:`TOOL`: the request's first tool) and raw
``arguments`` string, as the wire carries them (None: the field is null, or for ``id`` absent)."""


def malformed_call(shape: str, tool: str) -> dict[str, Any]:
    """The wire form of one malformed call (``tool`` replaces :data:`TOOL`)."""
    spec = SHAPES[shape]
    call: dict[str, Any] = {
        "type": "function",
        "function": {"name": tool if spec["name"] == TOOL else spec["name"], "arguments": spec["arguments"]},
    }
    if spec["id"] is not None:
        call["id"] = spec["id"]
    return call


def shape_turns(request: dict[str, Any]) -> int:
    """How many assistant turns with tool calls the conversation already holds."""
    return sum(
        1 for m in request.get("messages") or [] if m.get("role") == "assistant" and m.get("tool_calls")
    )


def malformed_agent(shapes: tuple[str, ...] = tuple(SHAPES)) -> Any:
    """A reply function: the next shape of ``shapes`` while the request offers tools and some
    shape is left, else the text :data:`FINAL_TEXT`."""

    def reply(request: dict[str, Any]) -> Reply:
        tools = request.get("tools") or []
        done = shape_turns(request)
        if not tools or done >= len(shapes):
            return chat_reply(FINAL_TEXT)
        name = (tools[0].get("function") or {}).get("name") or "tool"
        return chat_reply(None, tool_calls=[malformed_call(shapes[done], name)])

    return reply
