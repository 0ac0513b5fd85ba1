"""MCPEval (Liu et al., 2025, arXiv 2507.12806): tool-call trajectory matching over MCP servers.

Not a suite yet: this package holds only the scoring module (:mod:`suites.mcpeval.scorer`).
It deliberately exposes no ``SUITE`` object, so the plugin and the conformance tests do not
discover it; the suite object, tasks, servers and agent loop are added in a later change.
"""
