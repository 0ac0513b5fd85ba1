"""execnet socket servers on 127.0.0.1, the remote end of ``pytest --tx socket=HOST:PORT``.

A pytest-xdist worker behind ``--tx socket=...`` runs inside the socket server's process,
in the folder the spec names (``//chdir=DIR``; xdist copies pytest itself there first). Two
kinds of server, each one process per server started here:

* ``respawn=False``: execnet's own server, ``python -m execnet.script.socketserver
  127.0.0.1:0`` (``execnet/script/socketserver.py`` in loop mode: one connection at a time,
  all in the server's own process). A worker killed by a signal takes the server with it,
  so xdist cannot replace that worker (its reconnection is refused).
* ``respawn=True``: the same execnet code (``bind_and_listen``,
  ``exec_from_one_connection``), but each connection is served by a forked child while the
  parent keeps the listening socket: a killed worker's replacement can connect at once, and
  each worker starts in a fresh process.

Run as ``-m``, not as the script file: the script's folder would come first on the
worker's ``sys.path``, where its ``socketserver.py`` hides the standard library's.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SocketServer", "group_alive", "socket_servers", "stop"]

RESPAWNING_SERVER = r"""
import os, signal, sys
from execnet.gateway_base import get_execmodel
from execnet.script import socketserver as server

child = 0


def stop(signum, frame):  # SIGTERM: kill and reap the child serving now, then exit
    if child:
        try:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
        except OSError:
            pass
    os._exit(0)


signal.signal(signal.SIGTERM, stop)
server.execmodel = get_execmodel("thread")
sock = server.bind_and_listen(sys.argv[1], server.execmodel)
print("listening", sock.getsockname(), flush=True)
while True:
    child = pid = os.fork()
    if pid == 0:  # the child serves one connection (one xdist worker), then exits
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        code = 0
        try:
            server.exec_from_one_connection(sock)
        except BaseException:
            code = 1
        finally:
            sys.stdout.flush()
            os._exit(code)
    os.waitpid(pid, 0)  # however the child ended (a worker killed by SIGKILL too)
"""

_LISTENING = re.compile(r"\('127\.0\.0\.1', (\d+)\)")


@dataclass
class SocketServer:
    """One started server: its process, port and output file (what its workers printed)."""

    process: subprocess.Popen
    port: int
    log: Path

    @property
    def spec(self) -> str:
        """The ``--tx`` value for this server, without ``//chdir=``."""
        return f"socket=127.0.0.1:{self.port}"


@contextmanager
def socket_servers(count: int, directory: Path, *, env: Mapping[str, str] | None = None,
                   respawn: bool = False, timeout_s: float = 15.0) -> Iterator[list[SocketServer]]:
    """Start ``count`` socket servers on free ports of 127.0.0.1; stop them on exit.

    Args:
        count: how many servers (one xdist worker each at a time).
        directory: the servers' working folder (a ``//chdir=`` relative to it) and where
            their output goes (``execnet-server-<i>.log``).
        env: the servers' environment (default: this process's).
        respawn: fork a child per connection (see the module docstring).
        timeout_s: seconds to wait for each server to listen.

    Each server is started in its own process group; on exit the whole group (the server
    and any child still running) is killed and waited for.

    Raises:
        RuntimeError: a server did not listen within ``timeout_s`` (its output is quoted).
    """
    servers: list[SocketServer] = []
    try:
        for i in range(count):
            log = Path(directory) / f"execnet-server-{i}.log"
            code = (["-c", RESPAWNING_SERVER] if respawn
                    else ["-m", "execnet.script.socketserver"])
            with log.open("w") as out:
                process = subprocess.Popen(
                    [sys.executable, "-u", *code, "127.0.0.1:0"], cwd=directory,
                    env=dict(env) if env is not None else None, stdout=out,
                    stderr=subprocess.STDOUT, start_new_session=True)
            servers.append(SocketServer(process, 0, log))
        for server in servers:
            server.port = _wait_for_port(server, timeout_s)
        yield servers
    finally:
        for server in servers:
            stop(server)


def _wait_for_port(server: SocketServer, timeout_s: float) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = _LISTENING.search(server.log.read_text())
        if found:
            return int(found.group(1))
        if server.process.poll() is not None:
            break
        time.sleep(0.02)
    raise RuntimeError(f"execnet socket server did not start: {server.log.read_text()[-2000:]}")


def stop(server: SocketServer) -> None:
    """Stop the server and reap it: SIGTERM first (a respawning server kills and reaps the
    child serving a worker), then SIGKILL to whatever is left of its process group."""
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(server.process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    server.process.wait(timeout=10)


def group_alive(server: SocketServer) -> bool:
    """Whether any process of the server's process group still exists."""
    try:
        os.killpg(server.process.pid, 0)
    except ProcessLookupError:
        return False
    return True
