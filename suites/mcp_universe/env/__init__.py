"""What MCP-Universe's agent acts on: :mod:`.servers` maps upstream's server names to the shared
local MCP servers (:mod:`suites._common.mcp_servers`); :mod:`.cleanups` runs a task's cleanups
on them after the trial, as upstream. Nothing is imported here."""
