"""A tiny stdio MCP server for the client tests (run as a script: ``python echo_server.py``).

Tools: ``echo(text)``; ``add(a, b)``; ``lookup(id)`` (only id "a1" exists: an error result
otherwise); ``ns.dotted`` (a name OpenAI does not accept); ``no_args()``; ``internal()``
(answers with a JSON-RPC internal error); ``exit_now()`` (the process dies mid-call);
``sleep(seconds)``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from mcp import MCPError
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

app = MCPServer("echo", log_level="WARNING")


@app.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def lookup(id: str) -> dict:
    """Look up a record by id."""
    if id != "a1":
        raise ToolError(f"no record with id {id!r}")
    return {"id": id, "value": 42}


@app.tool(name="ns.dotted")
def dotted() -> str:
    """A tool whose name has a dot."""
    return "dotted ok"


@app.tool()
def no_args() -> str:
    """Takes nothing."""
    return "nothing"


@app.tool()
def internal() -> str:
    """Fails with a protocol-level internal error."""
    raise MCPError(code=-32603, message="database unavailable")


@app.tool()
def exit_now() -> str:
    """Kill the server process."""
    os._exit(3)


@app.tool()
def sleep(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "awake"


if __name__ == "__main__":
    app.run()
    # reached only when stdin closed (a SIGTERM or SIGKILL ends the process before this line)
    if os.environ.get("EGI_ECHO_EXIT_MARK"):
        Path(os.environ["EGI_ECHO_EXIT_MARK"]).write_text("stdin closed", encoding="utf-8")
