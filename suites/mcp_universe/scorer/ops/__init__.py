"""Domain ops of MCP-Universe's evaluator language, one module per upstream server prefix.

Importing this package registers every op in :data:`suites.mcp_universe.scorer.evaluator.OPS`:

- :mod:`.yfinance`: ``yfinance.*`` (financial_analysis), truth recomputed from the finance world;
- :mod:`.google_maps`: ``google_maps.*`` (location_navigation), from the maps world;
- :mod:`.github`: ``github.*`` (repository_management), from the repository server's state
  snapshot taken when the agent finished (``ctx.state["github"]``);
- :mod:`.google_search`: ``google_search.llm_as_a_judge`` (web_search).
"""

from suites.mcp_universe.scorer.ops import github, google_maps, google_search, yfinance  # noqa: F401
