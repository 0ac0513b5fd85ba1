"""The harness side of the Benchforce server: the server process (one per worker) and a
synchronous session client.

- :class:`ServerProcess` starts ``python -m suites.benchforce.env.server`` as a real subprocess,
  reads its port, and stops it in bounded time (close stdin, wait, SIGTERM and SIGKILL to its
  process group: :func:`pytest_egi.processes.stop_process`). :func:`shared_server` gives each
  process one, started by ``Suite.prepare`` before the first item (outside every item's time
  budget). **A server in an unknown state is never reused**: after a session's environment
  fault the server is stopped (:func:`suites.benchforce.agent.run_trial`), and the next session
  starts a fresh one, as it does when it finds the server dead or not answering its handshake.
  :func:`stop_servers` stops it at session end (the test module's session fixture, and
  :mod:`atexit` as backstop).
- :class:`EnvSession` is one Benchforce session over its own WebSocket connection. Every reply
  is awaited at most ``timeout_s``. **The server dying, closing the connection, not answering
  in time or answering a protocol error raises** :class:`EnvironmentFault`: an environment
  fault (the item errors), never an observation the model is scored on.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from suites.benchforce.env.protocol import ProtocolError, decode, encode

__all__ = ["EnvSession", "EnvironmentFault", "ServerProcess", "shared_server", "stop_servers"]

ROOT = Path(__file__).resolve().parents[3]
START_TIMEOUT_S = 30.0


class EnvironmentFault(RuntimeError):
    """The environment server failed (died, timed out, broke the protocol): the item is an
    error, never scored. The message says all there is to say, so the item's report is that
    one line (``one_line_report``), not a traceback through the WebSocket client."""

    one_line_report = True


class ServerProcess:
    """One server subprocess (module docstring).

    Attributes:
        transcript_dir: where the server writes per-session transcripts (a fresh temporary
            folder per start, removed at stop, unless given).
        port: the listening port while running, else None.
        starts: how many times it was started (a restart after a death counts).
    """

    def __init__(self, transcript_dir: Path | None = None) -> None:
        self._given_dir = transcript_dir
        self.transcript_dir: Path | None = transcript_dir
        self.proc: subprocess.Popen[str] | None = None
        self.port: int | None = None
        self.starts = 0
        self._lock = threading.RLock()
        self._atexit = False

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs."""
        return self.proc.pid if self.alive() and self.proc is not None else None

    @property
    def url(self) -> str:
        """``ws://127.0.0.1:<port>`` (starts the server when it is not running)."""
        self.start()
        return f"ws://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        """True while the subprocess runs."""
        return self.proc is not None and self.proc.poll() is None

    def dead_after(self, seconds: float) -> bool:
        """True when the subprocess has exited (waiting up to ``seconds`` for it to); a
        SIGKILL is delivered asynchronously, so a just-killed server may still look alive."""
        if self.proc is None:
            return True
        try:
            self.proc.wait(seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def start(self) -> None:
        """Start the subprocess unless it runs; a dead one is reaped and started again.

        Raises:
            EnvironmentFault: it exited or printed no port within 30 s.
        """
        with self._lock:
            if self.alive():
                return
            self.stop()
            if self._given_dir is None:
                self.transcript_dir = Path(tempfile.mkdtemp(prefix="benchforce-transcripts-"))
            env = dict(
                os.environ,
                PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            )
            cmd = [
                sys.executable,
                "-m",
                "suites.benchforce.env.server",
                "--transcript-dir",
                str(self.transcript_dir),
            ]
            self.proc = subprocess.Popen(
                cmd,
                cwd=ROOT,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            self.starts += 1
            line = self._first_line()
            try:
                self.port = int(json.loads(line)["port"])
            except (ValueError, KeyError, TypeError):
                err = self._stderr()
                self.stop()
                raise EnvironmentFault(
                    f"benchforce server did not start (first line {line!r}); stderr: {err}"
                ) from None
            if not self._atexit:
                atexit.register(self.stop)
                self._atexit = True

    def transcript(self, session_id: str) -> list[dict[str, Any]] | None:
        """The frames the server wrote for ``session_id`` so far
        (``<transcript_dir>/<session_id>/transcript.jsonl``, one ``{"seq", "direction", "role",
        "message"}`` a line), read from disk: what is known of a session whose server died
        before ``session.end`` returned it. A last line cut off by the death is left out.
        None when there is no such file (the session never started, or the folder is gone)."""
        if self.transcript_dir is None:
            return None
        path = self.transcript_dir / session_id / "transcript.jsonl"
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        frames = []
        for line in text.splitlines():
            try:
                frames.append(json.loads(line))
            except json.JSONDecodeError:
                break  # the frame being written when the server died
        return frames

    def _first_line(self) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        out: list[str] = []
        reader = threading.Thread(target=lambda: out.append(self.proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(START_TIMEOUT_S)
        return out[0] if out else ""

    def _stderr(self) -> str:
        if self.proc is None or self.proc.stderr is None or self.alive():
            return ""
        with contextlib.suppress(OSError, ValueError):
            return self.proc.stderr.read()[-2000:]
        return ""

    def stop(self, graceful: bool = True) -> None:
        """Stop the subprocess in bounded time (:func:`pytest_egi.processes.stop_process`):
        close its stdin and wait 2 s (skipped when ``graceful`` is False, for a server known
        to be stuck), SIGTERM its process group and wait 2 s, then SIGKILL the group (at most
        about 9 s in all, whatever the server does). Its temporary transcript folder is
        removed. Safe to call repeatedly."""
        from pytest_egi.processes import stop_process

        with self._lock:
            proc, self.proc, self.port = self.proc, None, None
            if proc is None:
                return
            stop_process(proc, group=True, graceful=graceful)
            if self._given_dir is None and self.transcript_dir is not None:
                # our own temporary folder: every transcript is also in its trajectory
                shutil.rmtree(self.transcript_dir, ignore_errors=True)

    def restart(self) -> None:
        """Stop the subprocess without waiting for it to end on its own, and start a fresh
        one: a server in an unknown state (it stopped answering, broke the protocol) is never
        reused.

        Raises:
            EnvironmentFault: the fresh one did not start (see :meth:`start`).
        """
        with self._lock:
            self.stop(graceful=False)
            self.start()


_shared: ServerProcess | None = None
_shared_lock = threading.Lock()


def shared_server() -> ServerProcess:
    """This process's server (one per process, so one per xdist worker); not started until
    first use or :meth:`ServerProcess.start`."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ServerProcess()
        return _shared


def stop_servers() -> None:
    """Stop this process's server if it runs (it starts again on next use)."""
    with _shared_lock:
        server = _shared
    if server is not None:
        server.stop()


class EnvSession:
    """One session with the server over one WebSocket connection (module docstring).

    Args:
        server: the server process (started if needed).
        session_id: upstream-style id, unique in the server.
        timeout_s: the longest wait for any reply.

    Raises:
        EnvironmentFault: from every method, when the server fails (module docstring).
    """

    def __init__(self, server: ServerProcess, session_id: str, timeout_s: float = 30.0) -> None:
        self.session_id = session_id
        self.timeout_s = timeout_s
        self._calls = 0
        self.ws = self._connect(server)

    def _connect(self, server: ServerProcess) -> Any:
        """Connect; a server found dead (it died after the last session) is started again,
        and one that is running but does not complete the handshake within ``timeout_s``
        (it hangs) is replaced by a fresh one; then the connection is tried once more."""
        from websockets.sync.client import connect

        for attempt in (1, 2):
            try:
                # entered as a context manager (websockets 17.1+ deprecates the bare form); closed in close()
                return connect(
                    server.url, open_timeout=self.timeout_s, close_timeout=1, max_size=100 * 2**20
                ).__enter__()
            except Exception as exc:  # OSError, TimeoutError, websockets' handshake errors
                if attempt == 1:
                    if not server.dead_after(1.0):
                        server.restart()  # running but not answering: never reused
                    continue
                raise EnvironmentFault(
                    f"cannot connect to the benchforce server: {type(exc).__name__}: {exc}"
                ) from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Close the connection (quietly: the server may already be gone)."""
        with contextlib.suppress(Exception):
            self.ws.close()

    def __enter__(self) -> EnvSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, role: str, packet: dict[str, Any]) -> dict[str, Any]:
        """Send one packet as ``role`` and return the reply packet.

        Raises:
            EnvironmentFault: connection closed, no reply within ``timeout_s``, or a protocol
                error reply (``{"status": "error"}``).
        """
        from websockets.exceptions import ConnectionClosed

        event = packet.get("event")
        try:
            self.ws.send(encode(self.session_id, role, packet))
            text = self.ws.recv(timeout=self.timeout_s)
        except TimeoutError:
            raise EnvironmentFault(
                f"the benchforce server did not answer {event!r} within {self.timeout_s:g} s"
            ) from None
        except ConnectionClosed as exc:
            raise EnvironmentFault(
                f"the benchforce server closed the connection during {event!r} ({exc})"
            ) from None
        except OSError as exc:
            raise EnvironmentFault(
                f"the benchforce server connection failed during {event!r}: {exc}"
            ) from None
        reply = json.loads(text)
        if isinstance(reply, dict) and reply.get("status") == "error":
            raise EnvironmentFault(f"the benchforce server refused {event!r}: {reply.get('error')}")
        try:
            _, _, out = decode(text)
        except ProtocolError as exc:
            raise EnvironmentFault(f"the benchforce server sent a bad frame after {event!r}: {exc}") from None
        return out

    def start(
        self, env: str, seed: int, entry: dict[str, Any], data_dir: str | None = None
    ) -> dict[str, Any]:
        """Open the session: the ``session.ready`` packet (policy, tools, now, hash)."""
        return self.request(
            "runner",
            {"event": "session.start", "env": env, "seed": seed, "entry": entry, "data_dir": data_dir},
        )

    def tool_call(self, name: str, arguments: Any, call_id: str | None = None) -> dict[str, Any]:
        """One tool call: the ``tool.result`` or ``tool.error`` packet."""
        if call_id is None:  # numbered per session, so a transcript never depends on the worker
            self._calls += 1
            call_id = f"call_{self._calls}"
        cid = call_id
        return self.request(
            "agent", {"event": "tool.call", "call_id": cid, "name": name, "arguments": arguments}
        )

    def say(self, role: str, text: str) -> None:
        """Log one utterance: ``user.message`` (role client) or ``agent.message`` (agent)."""
        event = "user.message" if role == "client" else "agent.message"
        self.request(role, {"event": event, "text": text})

    def user_exit(self, reason: str) -> None:
        """The user's ``exit_conversation`` call (``goal_met`` or ``gave_up``)."""
        self.request(
            "client",
            {
                "event": "user.exit",
                "reason": reason,
                "function_call": {"name": "exit_conversation", "arguments": {"reason": reason}},
            },
        )

    def state(self) -> dict[str, Any]:
        """The current ``state`` packet (projection and hash)."""
        return self.request("runner", {"event": "state.get"})

    def end(self, reason: str) -> dict[str, Any]:
        """End the session: ``session.ended`` (final projection, hash, transcript)."""
        return self.request("runner", {"event": "session.end", "reason": reason})
