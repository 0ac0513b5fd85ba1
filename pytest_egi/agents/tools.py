"""Tools offered to the model under test, and how their calls are executed.

The contract every suite follows, for tool calls and for text actions alike (the ReAct
``execute`` callable of :func:`pytest_egi.agents.loops.run_react_loop`):

- **A model mistake is an observation.** An unknown tool name, arguments that are not JSON,
  do not fit the tool's signature or its JSON schema, or a :class:`ToolError` (or subclass)
  raised by the tool becomes the text the model reads next (``ToolError.observation``,
  ``"Error: ..."`` by default); the episode goes on and is scored. A tool raises
  :class:`ToolError` only for input the model got wrong (a malformed query, an unknown
  field or object, a bad argument value), worded for the model, never naming a Python
  exception.
- **Anything else is an environment fault.** Any other exception (a database that cannot be
  read, an ``OSError``, a ``KeyError`` from a bug in the tool) propagates out of the loop with
  the trajectory so far attached; the plugin records the item as a pytest **error**, never
  scored and never shown to the model. Tools must therefore not catch broad exceptions to
  turn them into observation text.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

__all__ = ["Tool", "ToolError", "ToolOutcome", "Toolkit"]

ToolKind = Literal["read", "write", "submit"]


class ToolError(Exception):
    """Raised by a tool (or a ReAct ``execute``) for a mistake in the model's input.

    The loop shows :attr:`observation` to the model and the episode continues; every other
    exception is an environment fault and ends the item as an error (module docstring).
    Suites with their own error wording subclass it and override :attr:`observation`
    (CRMArena's ``SalesforceError`` reads ``"MALFORMED_QUERY: ..."``).
    """

    @property
    def observation(self) -> str:
        """The text the model reads: ``"Error: <message>"``."""
        return f"Error: {self}"


@dataclass(frozen=True)
class Tool:
    """One function tool.

    Attributes:
        name: tool name as the model sees it.
        description: what the tool does (shown to the model).
        parameters: JSON schema of the arguments object.
        fn: the implementation, called with the arguments as keywords; returns the
            observation (str, or any JSON-safe value, which is JSON-encoded). It raises
            :class:`ToolError` for a mistake in the model's input and lets every other
            exception propagate (an environment fault: the item errors).
        kind: ``read``, ``write`` (changes the environment) or ``submit`` (ends the episode;
            its return value is the final answer).
        validate: check the arguments against ``parameters`` (JSON Schema) before calling
            ``fn``; a mismatch is a model mistake. False only for a tool that documents how
            it coerces loosely typed arguments itself (it then never fails on their types).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    kind: ToolKind = "read"
    validate: bool = True

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
        """Execute one call; model mistakes become observations, faults propagate.

        Model mistakes (``ToolOutcome.error`` True, the call logged with ``"error": True``):
        unknown tool, arguments not JSON or not an object, arguments that do not bind to the
        tool's signature or fail its JSON schema, and a :class:`ToolError` from the tool
        (its ``observation`` is the content).

        Args:
            name: the tool name the model asked for.
            arguments: the JSON string from the wire (or an already-parsed dict).

        Raises:
            Exception: anything the tool raised other than :class:`ToolError` (an
                environment fault; the item becomes an error).
        """
        parsed, mistake = self._decode(name, arguments)
        if mistake is not None:
            return mistake
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
        if tool.validate:
            problem = _schema_problem(tool.parameters, parsed)
            if problem:
                return self._mistake(name, parsed, f"bad arguments for '{name}': {problem}")
        try:
            result = tool.fn(**parsed)
        except ToolError as exc:
            return self._mistake(name, parsed, exc.observation, prefixed=True)
        self.calls.append({"name": name, "arguments": parsed, "error": False})
        content = result if isinstance(result, str) else json.dumps(result, sort_keys=True)
        if tool.kind == "submit":
            return ToolOutcome(content=content, submitted=True, value=result)
        return ToolOutcome(content=content)

    def _decode(self, name: str, arguments: str | dict[str, Any] | None) -> tuple[Any, ToolOutcome | None]:
        """The call's arguments as parsed JSON (a dict passes through, empty means ``{}``), or
        the model's mistake when they are not valid JSON; shared by every toolkit's ``call``."""
        if isinstance(arguments, dict):
            return arguments, None
        try:
            return (json.loads(arguments) if arguments else {}), None
        except json.JSONDecodeError as exc:
            return None, self._mistake(name, arguments, f"arguments are not valid JSON ({exc.msg})")

    def _mistake(self, name: str, arguments: Any, message: str, prefixed: bool = False) -> ToolOutcome:
        self.calls.append({"name": name, "arguments": arguments, "error": True})
        return ToolOutcome(content=message if prefixed else f"Error: {message}", error=True)


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    from jsonschema.validators import validator_for  # imported on the first tool call only

    schema = json.loads(schema_json)
    return validator_for(schema)(schema)


def _schema_problem(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """The first way ``arguments`` break the JSON schema (jsonschema's wording, e.g.
    ``5 is not of type 'string' (at 'query')``), or None when they fit."""
    from jsonschema.exceptions import best_match

    error = best_match(_validator(json.dumps(schema, sort_keys=True)).iter_errors(arguments))
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    return error.message + (f" (at '{where}')" if where else "")
