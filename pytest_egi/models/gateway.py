"""The model gateway: one process that makes every LiteLLM call of an xdist session.

Why: each pytest-xdist worker is a fresh interpreter. Importing LiteLLM costs about 3 s of
CPU per process and each completion a few ms more; with ``-n 16`` on a 2-core machine the
workers spent most of the run importing instead of waiting on the provider. With the gateway,
LiteLLM is imported once; workers send each attempt as one JSON line over a Unix socket and
get the :class:`~pytest_egi.models.transport.Attempt` back.

What stays in the workers: retries and backoff, the response cache, the shared rate limiter,
usage and pricing from a user price file. The gateway is stateless: one thread per worker
connection, each running ``litellm.completion`` (the same code as a serial run, through
:class:`~pytest_egi.models.transport.InProcessTransport`), so numbers are identical with or
without it. It inherits the controller's environment (provider keys, the loaded ``.env``),
never logs a request, and exits when its parent does.

Wire format: one JSON object per line each way. Requests: ``{"op": "complete", "kwargs":
{...}}`` (answer: an ``Attempt`` as dict), ``{"op": "params", "model": M, "params": {...}}``
(answer: :func:`~pytest_egi.models.params.check_params`'s dict) and ``{"op": "ping"}``, optionally with
``"wait_s"`` to wait that long for LiteLLM's import (answer: ``{"ok": true, "pid": ...,
"litellm_ready": bool}``).

Run by the plugin (:func:`start_gateway`); by hand: ``python -m pytest_egi.models.gateway
--socket /tmp/egi.sock``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_egi.models.retry import Failure
from pytest_egi.models.secrets import redact
from pytest_egi.models.transport import Attempt, InProcessTransport, import_litellm

__all__ = ["GatewayProcess", "make_server", "serve", "start_gateway"]

READY = "egi-gateway ready"


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        transport = self.server.transport  # type: ignore[attr-defined]
        for line in self.rfile:
            try:
                request = json.loads(line)
                op = request.get("op")
                if op == "complete":
                    answer = transport.attempt(request["kwargs"]).to_wire()
                elif op == "params":
                    answer = transport.check_params(str(request["model"]),
                                                    dict(request.get("params") or {}))
                elif op == "ping":
                    if request.get("wait_s"):
                        self.server.ready.wait(float(request["wait_s"]))  # type: ignore[attr-defined]
                    answer = {"ok": True, "pid": os.getpid(),
                              "litellm_ready": self.server.ready.is_set()}  # type: ignore[attr-defined]
                else:
                    answer = {"ok": False, "error": f"unknown op {op!r}"}
            except Exception as exc:  # noqa: BLE001 - answer, never kill the connection
                answer = Attempt(failure=Failure(False, "gateway"),
                                 error_text=redact(f"gateway: {type(exc).__name__}: {exc}")).to_wire()
            self.wfile.write((json.dumps(answer, separators=(",", ":")) + "\n").encode())
            self.wfile.flush()


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    allow_reuse_address = True


def _watch_parent(parent_pid: int, server: _Server) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != parent_pid:
            server.shutdown()
            return


def make_server(socket_path: str) -> socketserver.ThreadingUnixStreamServer:
    """A gateway server bound to ``socket_path`` (mode 0600; an existing file is replaced),
    not yet serving: call ``serve_forever()``, later ``shutdown()`` and ``server_close()``.

    LiteLLM is imported in a background thread right away; requests arriving meanwhile wait
    for the import. ``server.ready`` (a ``threading.Event``) is set once it is done.
    """
    if os.path.exists(socket_path):
        os.unlink(socket_path)
    server = _Server(socket_path, _Handler)
    os.chmod(socket_path, 0o600)
    server.transport = InProcessTransport()  # type: ignore[attr-defined]
    server.ready = threading.Event()  # type: ignore[attr-defined]

    def warm() -> None:
        try:
            import_litellm()
        finally:
            server.ready.set()  # type: ignore[attr-defined]

    threading.Thread(target=warm, daemon=True).start()
    return server


def serve(socket_path: str, parent_pid: int | None = None, ready_out: Any = None) -> None:
    """Serve completions on ``socket_path`` until shut down or the parent exits.

    Binds first and prints :data:`READY` to ``ready_out`` (default stdout) while LiteLLM
    is still being imported (see :func:`make_server`).

    Args:
        socket_path: where to bind (an existing file there is replaced).
        parent_pid: exit when this process is no longer our parent (None: never).
        ready_out: the stream for the ready line.
    """
    server = make_server(socket_path)
    if parent_pid is not None:
        threading.Thread(target=_watch_parent, args=(parent_pid, server), daemon=True).start()
    print(READY, file=ready_out or sys.stdout, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()


@dataclass
class GatewayProcess:
    """A running gateway started by :func:`start_gateway`.

    Attributes:
        socket_path: the Unix socket workers connect to.
        process: the gateway's ``subprocess.Popen``.
        directory: the private (0700) temp directory holding the socket.
    """

    socket_path: str
    process: subprocess.Popen
    directory: str

    def stop(self, timeout_s: float = 5.0) -> None:
        """Terminate the process's group, SIGKILL it after ``timeout_s`` seconds, wait a
        bounded time for it to be reaped (:func:`pytest_egi.processes.stop_process`: never an
        untimed wait), and remove its directory."""
        from pytest_egi.processes import stop_process

        stop_process(self.process, group=True, graceful=False, term_s=timeout_s)
        shutil.rmtree(self.directory, ignore_errors=True)


def start_gateway(timeout_s: float = 30.0) -> GatewayProcess:
    """Start a gateway subprocess of this interpreter and wait until it listens.

    The socket lives in a new 0700 temp directory (short path: Unix sockets allow ~100
    bytes). The child inherits ``os.environ``.

    Returns:
        The running :class:`GatewayProcess` (call ``stop()`` at session end).

    Raises:
        RuntimeError: the process exited or did not report ready within ``timeout_s``
            seconds (the message carries its stderr).
    """
    directory = tempfile.mkdtemp(prefix="egi-gw-")
    socket_path = str(Path(directory) / "gateway.sock")
    cmd = [sys.executable, "-m", "pytest_egi.models.gateway", "--socket", socket_path,
           "--parent-pid", str(os.getpid())]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env, start_new_session=True)
    gateway = GatewayProcess(socket_path, process, directory)
    ready: list[str] = []
    reader = threading.Thread(target=lambda: ready.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    if not ready or READY not in ready[0]:
        gateway.stop()
        err = process.stderr.read() if process.stderr is not None else ""
        raise RuntimeError(f"the model gateway did not start within {timeout_s:.0f} s: "
                           f"{err.strip()[-2000:] or 'no output'}")
    # stderr is not read any more: send it nowhere rather than let a full pipe block the child
    threading.Thread(target=_drain, args=(process.stderr,), daemon=True).start()
    return gateway


def _drain(stream: Any) -> None:
    with contextlib.suppress(OSError, ValueError):  # closed by stop() while reading
        for _ in stream:
            pass


def main(argv: list[str] | None = None) -> None:
    """``python -m pytest_egi.models.gateway --socket PATH [--parent-pid PID]``."""
    ap = argparse.ArgumentParser(description="pytest-egi model gateway (one LiteLLM for all workers)")
    ap.add_argument("--socket", required=True, help="Unix socket path to bind")
    ap.add_argument("--parent-pid", type=int, default=None, help="exit when this parent exits")
    args = ap.parse_args(argv)
    serve(args.socket, args.parent_pid)


if __name__ == "__main__":
    main()
