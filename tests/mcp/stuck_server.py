"""A stdio MCP server that never answers one request (run as a script).

``python stuck_server.py STAGE PORT [--stubborn]``: the server speaks raw JSON-RPC lines. It
answers ``initialize`` (unless STAGE is ``initialize``) and never answers the request whose
method is STAGE (``initialize`` or ``tools/list``); any other request is refused as an
unknown method. On receiving that request it connects to
``127.0.0.1:PORT`` and sends its pid, so a test knows, without timing, that the client is now
blocked on it. It then keeps reading stdin and exits when stdin closes, as a well-behaved
server does; with ``--stubborn`` it ignores both the end of stdin and SIGTERM (only SIGKILL
ends it).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading


def _answer(response: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **response}) + "\n")
    sys.stdout.flush()


def main() -> None:
    stage, port = sys.argv[1], int(sys.argv[2])
    stubborn = "--stubborn" in sys.argv[3:]
    if stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method == stage:
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(str(os.getpid()).encode())
        elif method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "stuck", "version": "0"},
            }
            _answer({"id": message["id"], "result": result})
        elif "id" in message:  # e.g. the newer ``server/discover``: the client falls back at once
            error = {"code": -32601, "message": f"Method not found: {method}"}
            _answer({"id": message["id"], "error": error})
    if stubborn:  # stdin closed: stay anyway
        threading.Event().wait()


if __name__ == "__main__":
    main()
