"""Tools offered to the model under test, and how their calls are executed.

A tool's mistakes are the model's: an unknown tool name, arguments that are not JSON or do
not fit the schema, or a :class:`ToolError` raised by the tool become an ``"Error: ..."``
observation the model sees (the original benchmarks' convention: tools never raise).
Any other exception is an environment failure and propagates, so the item is a pytest error.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

__all__ = ["Tool", "ToolError", "ToolOutcome", "Toolkit"]

ToolKind = Literal["read", "write", "submit"]


class ToolError(Exception):
    """Raised by a tool for a mistake in the model's call; shown to the model as ``Error: …``."""


@dataclass(frozen=True)
class Tool:
    """One function tool.

    Attributes:
        name: tool name as the model sees it.
        description: what the tool does (shown to the model).
        parameters: JSON schema of the arguments object.
        fn: the implementation, called with the arguments as keywords; returns the
            observation (str, or any JSON-safe value, which is JSON-encoded).
        kind: ``read``, ``write`` (changes the environment) or ``submit`` (ends the episode;
            its return value is the final answer).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    kind: ToolKind = "read"

    def schema(self) -> dict[str, Any]:
        """The OpenAI-format tool schema."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


class ToolOutcome(NamedTuple):
    """Result of executing one tool call.

    Attributes:
        content: the observation text returned to the model.
        submitted: True when a ``submit`` tool was called successfully.
        value: the submit tool's return value (the final answer) when submitted, else None.
        error: True when the call was a model mistake (unknown tool, bad arguments, ToolError).
    """

    content: str
    submitted: bool = False
    value: Any = None
    error: bool = False


@dataclass
class Toolkit:
    """The tools of one trial, with a call log for scoring tool use.

    Attributes:
        tools: the offered tools, by name.
        calls: every executed call as ``{"name", "arguments", "error"}`` (arguments parsed,
            or the raw string when it was not valid JSON), in order.
    """

    tools: dict[str, Tool]
    calls: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, *tools: Tool) -> Toolkit:
        """Build a toolkit from tools; names must be unique."""
        by_name: dict[str, Tool] = {}
        for t in tools:
            if t.name in by_name:
                raise ValueError(f"duplicate tool name {t.name!r}")
            by_name[t.name] = t
        return cls(tools=by_name)

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI-format schemas of all tools, in definition order."""
        return [t.schema() for t in self.tools.values()]

    def call(self, name: str, arguments: str | dict[str, Any] | None) -> ToolOutcome:
        """Execute one call; model mistakes become ``Error: …`` observations.

        Args:
            name: the tool name the model asked for.
            arguments: the JSON string from the wire (or an already-parsed dict).

        Raises:
            Exception: whatever the tool raised other than ToolError/argument mistakes
                (an environment failure).
        """
        parsed: Any
        if isinstance(arguments, dict):
            parsed = arguments
        else:
            try:
                parsed = json.loads(arguments) if arguments else {}
            except json.JSONDecodeError as exc:
                return self._mistake(name, arguments, f"arguments are not valid JSON ({exc.msg})")
        tool = self.tools.get(name)
        if tool is None:
            known = ", ".join(self.tools)
            return self._mistake(name, parsed, f"unknown tool '{name}'. Available tools: {known}")
        if not isinstance(parsed, dict):
            return self._mistake(name, parsed, "arguments must be a JSON object")
        try:
            inspect.signature(tool.fn).bind(**parsed)
        except TypeError as exc:
            return self._mistake(name, parsed, f"bad arguments for '{name}': {exc}")
        try:
            result = tool.fn(**parsed)
        except ToolError as exc:
            return self._mistake(name, parsed, str(exc))
        self.calls.append({"name": name, "arguments": parsed, "error": False})
        content = result if isinstance(result, str) else json.dumps(result, sort_keys=True)
        if tool.kind == "submit":
            return ToolOutcome(content=content, submitted=True, value=result)
        return ToolOutcome(content=content)

    def _mistake(self, name: str, arguments: Any, message: str) -> ToolOutcome:
        self.calls.append({"name": name, "arguments": arguments, "error": True})
        return ToolOutcome(content=f"Error: {message}", error=True)
