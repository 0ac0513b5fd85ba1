"""Model Context Protocol plumbing any suite can use (the core names no benchmark).

- :mod:`pytest_egi.mcp.client`: :class:`McpServer` (one stdio server subprocess behind a
  synchronous API), :func:`shared_server` (one per spec per process, started on first use),
  :func:`close_all`, :func:`begin_item` (before each item: a server in an unknown state or
  dead is started afresh), :func:`encodable` (arguments made encodable before they are sent),
  :class:`McpToolkit` (the function-calling loop's tools, executed on the
  servers), and the two failure types :class:`McpToolError` (the model's mistake, an
  observation) and :class:`McpServerError` (an environment fault, the item errors).
- :mod:`pytest_egi.mcp.schema`: MCP tool definitions → OpenAI / LiteLLM ``tools`` (name rules,
  empty schemas, the reverse name map). Pure; imports nothing heavy.

Importing this package is free: the names are loaded on first access, and the ``mcp`` SDK
(with anyio and pydantic) only when a server starts. :func:`enter_scope` and
:func:`current_scope` (defined here, not in the client) name what the servers started or used
from then on belong to: the plugin enters a suite's scope before each of its items, and
:func:`release_scope` stops the servers of a scope once the process is done with it.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "McpServer",
    "McpServerError",
    "McpToolError",
    "McpToolSpec",
    "McpToolkit",
    "ServerSpec",
    "ToolNames",
    "ToolResult",
    "begin_item",
    "close_all",
    "current_scope",
    "encodable",
    "enter_scope",
    "openai_name",
    "openai_parameters",
    "openai_tool",
    "release_scope",
    "running_servers",
    "shared_server",
]

_scope: str | None = None


def enter_scope(name: str | None) -> None:
    """Make ``name`` (a suite's name; None: no scope) the scope of the servers started or used
    from now on in this process (:func:`pytest_egi.mcp.client.release_scope`)."""
    global _scope
    _scope = name


def current_scope() -> str | None:
    """The scope :func:`enter_scope` set last in this process (None: none)."""
    return _scope

_WHERE = {
    "McpToolSpec": "schema",
    "ToolNames": "schema",
    "openai_name": "schema",
    "openai_parameters": "schema",
    "openai_tool": "schema",
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{_WHERE.get(name, 'client')}")
    return getattr(module, name)
