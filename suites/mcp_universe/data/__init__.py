"""MCP-Universe's tasks: :mod:`.tasks` loads and checks task files (upstream's format) and
generates ours; :mod:`.domains` holds one module per domain with its task generator and
reference solver. Nothing is imported here."""
