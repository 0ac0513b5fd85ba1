"""MCP-Universe's server names → the local servers that play them.

The agent sees upstream's server names (function-calling tools are ``<server>__<tool>``, the
ReAct prompt lists ``server`` / ``tool``), so a task file's ``mcp_servers`` and ``cleanups``
name servers as upstream does. Each is one of the shared local servers of
:mod:`suites._common.mcp_servers`, started once per process.
"""

from __future__ import annotations

from typing import Any

__all__ = ["HIDDEN_TOOLS", "SERVER_MODULES", "server_for"]

SERVER_MODULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "yfinance": ("finance", ("--open-world",)),
    "calculator": ("calculator", ()),
    "google-maps": ("maps", ()),
    "github": ("repository", ()),
    "google-search": ("search", ()),
    "fetch": ("fetch", ()),
}
"""Upstream server name → (local server domain, extra command-line arguments)."""

HIDDEN_TOOLS: frozenset[str] = frozenset({"egi_snapshot_state", "egi_reset_state", "delete_repository"})
"""The harness's own tools of the stateful servers (state snapshot, reset, cleanup): never
listed to the model (:class:`pytest_egi.mcp.McpToolkit` ``hidden``)."""


def server_for(name: str, seed: int) -> Any:
    """The process-wide server playing upstream server ``name`` (started on first use).

    Raises:
        KeyError: a server name no local server plays.
    """
    from pytest_egi.mcp import shared_server
    from suites._common.mcp_servers import server_spec

    if name not in SERVER_MODULES:
        known = ", ".join(SERVER_MODULES)
        raise KeyError(f"no local server plays MCP-Universe server {name!r}; known: {known}")
    domain, extra = SERVER_MODULES[name]
    return shared_server(server_spec(domain, seed, name=name, extra_args=extra))
