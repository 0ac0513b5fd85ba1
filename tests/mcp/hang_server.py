"""A stdio MCP server that can hang its whole event loop (run as a script).

``python hang_server.py PID_DIR``: on start it writes an empty file named after its pid into
``PID_DIR`` (so a test can check that every server it started is gone at the end). Tools:
``echo(text)``; ``code(seed, item)`` (the toy suite's code of an item, see
``tests/toy_project.py``); ``hang()``, which blocks the server's event loop for an hour, so
that no later request is answered either (what a server stuck in a tool looks like to the
client; SIGTERM ends it).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer

app = MCPServer("hang", log_level="WARNING")


@app.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


@app.tool()
def code(seed: int, item: int) -> dict:
    """The code of an item (the toy suite's formula)."""
    return {"code": f"C{(seed * 31 + item * 17) % 1000:03d}"}


@app.tool()
async def hang() -> str:
    """Block the event loop (a synchronous sleep inside a coroutine): nothing is answered."""
    time.sleep(3600)
    return "never"


if __name__ == "__main__":
    Path(sys.argv[1], str(os.getpid())).touch()
    app.run()
