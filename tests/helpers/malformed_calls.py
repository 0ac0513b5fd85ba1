"""Malformed tool calls as a model sends them, for the scripted OpenAI-compatible server.

:data:`SHAPES` are the ways a model's function call goes wrong in the field (arguments that are
not JSON, a JSON array, string or number, null arguments, a null / empty / unknown tool name,
a call with no id). :class:`MalformedAgent` is a reply function for
:class:`tests.helpers.openai_server.OpenAIServer`: in every conversation that offers tools it
sends one malformed call per turn, each shape once (the n-th conversation starts at the n-th
shape, so an agent that stops at its first malformed call still meets every shape over enough
conversations), then answers in text; a request without tools gets the text answer at once.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any

from tests.helpers.openai_server import Reply, chat_reply

__all__ = ["FINAL_TEXT", "SHAPES", "TOOL", "MalformedAgent", "malformed_call"]

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
``arguments``, as the wire carries them (None: the field is null; for ``id``: left out)."""


def malformed_call(shape: str, tool: str) -> dict[str, Any]:
    """The wire form of one malformed call (``tool`` replaces :data:`TOOL`)."""
    spec = SHAPES[shape]
    name = tool if spec["name"] == TOOL else spec["name"]
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": spec["arguments"]}}
    if spec["id"] is not None:
        call["id"] = spec["id"]
    return call


class MalformedAgent:
    """A reply function sending every shape of :data:`SHAPES`, one per turn, then text.

    A conversation is known by its first user message; the n-th new one starts at shape
    ``n mod len(SHAPES)``. Thread-safe (the server answers on several threads).

    Attributes:
        sent: shape -> how many times it was sent.
        tool_requests: how many requests offered tools.
    """

    def __init__(self) -> None:
        self.sent: Counter[str] = Counter()
        self.tool_requests = 0
        self._starts: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Reply:
        messages = request.get("messages") or []
        tools = request.get("tools") or []
        done = sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls"))
        first = next((m for m in messages if m.get("role") == "user"), {})
        key = json.dumps(first.get("content"), sort_keys=True)
        with self._lock:
            start = self._starts.setdefault(key, len(self._starts))
            if tools:
                self.tool_requests += 1
            if not tools or done >= len(SHAPES):
                return chat_reply(FINAL_TEXT)
            shape = list(SHAPES)[(start + done) % len(SHAPES)]
            self.sent[shape] += 1
        name = (tools[0].get("function") or {}).get("name") or "tool"
        return chat_reply(None, tool_calls=[malformed_call(shape, name)])
