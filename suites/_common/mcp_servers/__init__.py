"""Local MCP servers over seeded synthetic worlds, shared by the MCP suites.

One module per domain; each is a real MCP server written with the official ``mcp`` SDK
(``MCPServer``), runnable as ``python -m suites._common.mcp_servers.<module> --seed N``
(stdio), with the original benchmark's tool names, parameters and result shapes:

- ``airbnb``: ``airbnb_search``, ``airbnb_listing_details``
- ``healthcare``: ``fda_drug_lookup``, ``pubmed_search``, ``health_topics_search``,
  ``clinical_trials_search``, ``medical_terminology_lookup``
- ``sports``: ``get_teams``, ``get_players``, ``get_games``, ``get_game``
- ``national_parks``: ``findParks``, ``getParkDetails``, ``getAlerts``, ``getVisitorCenters``,
  ``getCampgrounds``, ``getEvents``
- ``finance``: the nine yfinance tools (``get_historical_stock_prices`` ... ``get_recommendations``)
  (``--open-world``: a generated company for any real ticker, as MCP-Universe's tasks need)
- ``calculator``: ``calculate``
- ``search``: ``search`` (MCP-Universe's google-search) and ``fetch``: ``fetch`` (its fetch
  server), over one seeded corpus of invented web pages (:mod:`.web_corpus`)
- ``repository``: an in-memory GitHub with upstream github-mcp-server's tools (``get_me``,
  ``search_repositories``, ``create_repository`` ... ``search_code``); stateful, with hidden
  harness tools (``egi_snapshot_state``, ``egi_reset_state``, ``delete_repository``) that
  :data:`TOOLS` does not list
- ``maps``: MCP-Universe's google-maps tools (``maps_geocode``, ``maps_reverse_geocode``,
  ``maps_search_places``, ``maps_place_details``, ``maps_distance_matrix``, ``maps_elevation``,
  ``maps_directions``)

(The key of :data:`SERVERS` is also the module name.)

``airbnb``, ``healthcare``, ``sports``, ``national_parks`` and ``finance`` also take
``--open-world``: a well-formed query the seeded world cannot answer (a real city, drug,
player, park or ticker) is answered from records generated from (seed, query) alone, so the
same query gets the same answer in every process; see each module.

Every world is built deterministically from the seed and a fixed "today", 2025-06-05
(:data:`~suites._common.mcp_servers._base.TODAY`). Each module also exposes
``build_world(seed)`` (plain data, no SDK import: task generators read the same world the
server serves) and ``build_server(seed)`` (an in-process server, for the SDK's in-memory
transport in tests).

Error convention: the model's mistakes (unknown tool, arguments failing the input schema, an
unknown id or a bad value) are MCP error results; a bug in a tool is a JSON-RPC internal error,
which :mod:`pytest_egi.mcp.client` raises as an environment fault (see ``_base``).
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["SERVERS", "TOOLS", "build_server", "server_spec"]

SERVERS: dict[str, str] = {
    "airbnb": "suites._common.mcp_servers.airbnb",
    "healthcare": "suites._common.mcp_servers.healthcare",
    "sports": "suites._common.mcp_servers.sports",
    "national_parks": "suites._common.mcp_servers.national_parks",
    "finance": "suites._common.mcp_servers.finance",
    "calculator": "suites._common.mcp_servers.calculator",
    "search": "suites._common.mcp_servers.search",
    "fetch": "suites._common.mcp_servers.fetch",
    "repository": "suites._common.mcp_servers.repository",
    "maps": "suites._common.mcp_servers.maps",
}
"""Domain → module of its server."""

TOOLS: dict[str, tuple[str, ...]] = {
    "airbnb": ("airbnb_search", "airbnb_listing_details"),
    "healthcare": (
        "fda_drug_lookup",
        "pubmed_search",
        "health_topics_search",
        "clinical_trials_search",
        "medical_terminology_lookup",
    ),
    "sports": ("get_teams", "get_players", "get_games", "get_game"),
    "national_parks": (
        "findParks",
        "getParkDetails",
        "getAlerts",
        "getVisitorCenters",
        "getCampgrounds",
        "getEvents",
    ),
    "finance": (
        "get_historical_stock_prices",
        "get_stock_info",
        "get_yahoo_finance_news",
        "get_stock_actions",
        "get_financial_statement",
        "get_holder_info",
        "get_option_expiration_dates",
        "get_option_chain",
        "get_recommendations",
    ),
    "calculator": ("calculate",),
    "search": ("search",),
    "fetch": ("fetch",),
    "repository": (
        "get_me",
        "search_repositories",
        "create_repository",
        "fork_repository",
        "create_branch",
        "list_branches",
        "list_commits",
        "get_file_contents",
        "create_or_update_file",
        "push_files",
        "delete_file",
        "create_issue",
        "get_issue",
        "list_issues",
        "update_issue",
        "add_issue_comment",
        "get_issue_comments",
        "search_issues",
        "create_pull_request",
        "get_pull_request",
        "list_pull_requests",
        "merge_pull_request",
        "search_code",
    ),
    "maps": (
        "maps_geocode",
        "maps_reverse_geocode",
        "maps_search_places",
        "maps_place_details",
        "maps_distance_matrix",
        "maps_elevation",
        "maps_directions",
    ),
}
"""Domain → its model-visible tool names, in listing order (a stateful server's harness tools,
:data:`suites.mcp_universe.env.servers.HIDDEN_TOOLS`, are served but not listed here)."""

_ROOT = Path(__file__).resolve().parents[3]
"""The folder holding the ``suites`` package (put on the server's ``PYTHONPATH``)."""


def _module(domain: str) -> Any:
    if domain not in SERVERS:
        raise KeyError(f"unknown MCP server domain {domain!r}; known: {', '.join(SERVERS)}")
    return importlib.import_module(SERVERS[domain])


def build_server(domain: str, seed: int) -> Any:
    """The domain's server object, in-process (for the SDK's in-memory transport).

    Raises:
        KeyError: unknown domain.
    """
    return _module(domain).build_server(seed)


PRELOAD = ("mcp.server.mcpserver", "suites._common.mcp_servers._base")
"""What the servers' fork server imports once (``ServerSpec.preload``): the SDK's server side
(about 1.8 s of CPU and 55-65 MB in each fresh Python) and the servers' shared base."""


def server_spec(
    domain: str,
    seed: int,
    timeout_s: float = 60.0,
    *,
    name: str | None = None,
    extra_args: tuple[str, ...] = (),
) -> Any:
    """How to start the domain's server as a stdio subprocess of this Python.

    Args:
        domain: a key of :data:`SERVERS`.
        seed: the world's seed.
        timeout_s: per-request timeout of the client.
        name: the spec's name (tool-name prefix and messages); default the domain. A suite
            that mirrors another benchmark's server names passes them here (``yfinance``).
        extra_args: further command-line arguments of the server module.

    Returns:
        A :class:`pytest_egi.mcp.ServerSpec` running ``python -m <module> --seed <seed>
        <extra_args>`` with the ``suites`` package on ``PYTHONPATH``.

    Raises:
        KeyError: unknown domain.
    """
    from pytest_egi.mcp.client import ServerSpec

    if domain not in SERVERS:
        raise KeyError(f"unknown MCP server domain {domain!r}; known: {', '.join(SERVERS)}")
    path = os.pathsep.join([str(_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return ServerSpec.of(
        name or domain,
        sys.executable,
        ["-m", SERVERS[domain], "--seed", str(seed), *extra_args],
        env={"PYTHONPATH": path},
        timeout_s=timeout_s,
        preload=PRELOAD,
    )
