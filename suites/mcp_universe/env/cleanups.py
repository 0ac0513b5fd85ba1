"""Task cleanups as upstream runs them (reference §1.3; upstream ``Task.reset``).

A task's ``cleanups`` entry ``{server, tool, cleanup_func, cleanup_args}`` undoes every traced
call of ``tool`` on ``server``: for each such call, newest first, ``cleanup_func`` is called on
``server`` with ``cleanup_args`` filled from that call. A string argument starting with ``$``
is a path:

- ``$<name>``: the original call's argument ``<name>`` (``{"repo": "$name"}`` after
  ``create_repository(name="x")`` gives ``{"repo": "x"}``);
- ``$return``: the original call's result, then ``-> get(key)``, ``-> array(i)`` and ``-> json``
  steps (``$return -> get(content) -> array(0) -> get(text) -> json -> get(name)``). A result
  given as text is seen as the MCP result ``{"content": [{"type": "text", "text": ...}],
  "isError": false}``, so upstream's paths apply unchanged.

Any other value is passed as it is. An entry with an empty ``tool`` runs once, with its
arguments unfilled. As upstream, a cleanup whose arguments cannot be filled (an unknown
argument, a bad path) or whose call the server refuses is recorded and skipped; the other
cleanups still run. Unlike upstream, a failure of the server itself (``call_tool`` raising) is
not swallowed: it propagates, so an infrastructure fault is an error, never a silent leftover.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CleanupOutcome", "fill_cleanup_args", "run_cleanups"]


@dataclass(frozen=True)
class CleanupOutcome:
    """One cleanup that ran (or could not).

    Attributes:
        server, tool: the cleanup call (``github``, ``delete_repository``).
        arguments: the filled arguments (None when they could not be filled).
        undoes: the traced call it undoes (``{"name", "arguments"}``), None for an entry with
            an empty ``tool``.
        ok: the call was made and the server did not flag an error.
        detail: the server's error text, or why the arguments could not be filled ("" when ok).
    """

    server: str
    tool: str
    arguments: dict[str, Any] | None
    undoes: dict[str, Any] | None
    ok: bool
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (kept in the task's details)."""
        return {
            "server": self.server,
            "tool": self.tool,
            "arguments": self.arguments,
            "undoes": self.undoes,
            "ok": self.ok,
            "detail": self.detail,
        }


class CleanupArgError(ValueError):
    """A ``cleanup_args`` value that cannot be filled from the traced call."""


_STEP = re.compile(r"^([A-Za-z_]+)\s*(?:\((.*)\))?$")


def _as_result(result: Any) -> Any:
    """The traced result as upstream's ``$return`` sees it (an MCP ``CallToolResult`` dump)."""
    if isinstance(result, str):
        return {"content": [{"type": "text", "text": result}], "isError": False}
    if hasattr(result, "content") and hasattr(result, "is_error"):  # pytest_egi.mcp ToolResult
        out = {"content": list(result.content), "isError": bool(result.is_error)}
        if getattr(result, "structured", None) is not None:
            out["structuredContent"] = result.structured
        return out
    return result


def _result_text(result: Any) -> str:
    if hasattr(result, "text"):
        return str(result.text)
    if isinstance(result, dict):
        blocks = result.get("content") or []
        return "\n".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict)) or json.dumps(result)
    return str(result)


def _fill(value: Any, call: Mapping[str, Any]) -> Any:
    if isinstance(value, dict):
        return {k: _fill(v, call) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, call) for v in value]
    if not isinstance(value, str) or "$" not in value:
        return value
    text = value.strip()
    if not text.startswith("$"):
        raise CleanupArgError(f"format error in cleanup_args: {value!r} (a reference must start with '$')")
    steps = [s.strip() for s in text.split("->") if s.strip()]
    source = steps[0][1:]
    arguments = call.get("arguments") or {}
    if source == "return":
        current = _as_result(call.get("result"))
    elif source in arguments:
        current = arguments[source]
    else:
        raise CleanupArgError(
            f"cleanup_args refers to ${source}, which the call {call.get('name')!r} did not pass"
        )
    for step in steps[1:]:
        m = _STEP.match(step)
        name, arg = (m.group(1).lower(), (m.group(2) or "").strip()) if m else (step, "")
        try:
            if name == "get":
                current = current[arg]
            elif name == "array":
                current = current[int(arg)]
            elif name == "json":
                current = json.loads(current)
            else:
                raise CleanupArgError(f"unknown step {step!r} in cleanup_args {value!r} (get, array, json)")
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            if isinstance(exc, CleanupArgError):
                raise
            raise CleanupArgError(
                f"cleanup_args {value!r}: step {step!r} failed: {type(exc).__name__}: {exc}"
            ) from None
    return current


def fill_cleanup_args(cleanup_args: Any, call: Mapping[str, Any] | None) -> Any:
    """``cleanup_args`` with every ``$`` reference replaced from the traced ``call``
    (``{"name", "arguments", "result"}``); unchanged when ``call`` is None.

    Raises:
        CleanupArgError: a reference to an argument the call did not pass, or a path step
            that fails.
    """
    return cleanup_args if call is None else _fill(cleanup_args, call)


def run_cleanups(
    task_cleanups: Sequence[Mapping[str, Any]] | None,
    calls: Sequence[Mapping[str, Any]],
    call_tool: Callable[[str, str, dict[str, Any]], Any],
) -> list[CleanupOutcome]:
    """Undo the trial's traced tool calls as the task's ``cleanups`` say (module docstring).

    Args:
        task_cleanups: the task's ``cleanups`` list (None or empty: nothing to do).
        calls: the trial's tool calls in the order they were made, each ``{"server", "name",
            "arguments", "result"}`` (``result``: the result text, a
            :class:`pytest_egi.mcp.ToolResult` or a dict). Failed calls may be included; their
            cleanups then fail harmlessly and are recorded.
        call_tool: ``call_tool(server, tool, arguments)`` runs one call and returns its result;
            a result with a true ``is_error`` (or ``isError``) counts as refused.

    Returns:
        One outcome per cleanup attempted, newest traced call first, then the entries with an
        empty ``tool``.

    Raises:
        Exception: whatever ``call_tool`` raises (a server fault is not a refused cleanup).
    """
    outcomes: list[CleanupOutcome] = []
    configs = list(task_cleanups or [])

    def attempt(cfg: Mapping[str, Any], call: Mapping[str, Any] | None) -> None:
        server, tool = str(cfg.get("server") or ""), str(cfg.get("cleanup_func") or "")
        undoes = None if call is None else {"name": call.get("name"), "arguments": call.get("arguments")}
        try:
            args = fill_cleanup_args(cfg.get("cleanup_args") or {}, call)
        except CleanupArgError as exc:
            outcomes.append(CleanupOutcome(server, tool, None, undoes, False, str(exc)))
            return
        if not isinstance(args, dict):
            outcomes.append(
                CleanupOutcome(server, tool, None, undoes, False, "cleanup_args must be an object")
            )
            return
        result = call_tool(server, tool, args)
        refused = bool(getattr(result, "is_error", False)) or (
            isinstance(result, dict) and bool(result.get("isError"))
        )
        detail = _result_text(result) if refused else ""
        outcomes.append(CleanupOutcome(server, tool, args, undoes, not refused, detail))

    for call in reversed(list(calls)):
        for cfg in configs:
            if (
                cfg.get("tool")
                and call.get("server") == cfg.get("server")
                and call.get("name") == cfg.get("tool")
            ):
                attempt(cfg, call)
    for cfg in configs:
        if not cfg.get("tool"):
            attempt(cfg, None)
    return outcomes
