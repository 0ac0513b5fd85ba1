"""A synchronous client for MCP servers run as real subprocesses over stdio.

The official ``mcp`` SDK is async. One background thread per process runs an event loop
(an anyio blocking portal); every :class:`McpServer` lives on it, and the scaffolds call
it synchronously. Each server is one subprocess spoken to over stdin/stdout through the
SDK's ``stdio_client`` transport and client session (``mcp.Client``), exactly as a
deployed agent would.

Lifetime (DESIGN §9.4, "real parts"):

- A server starts on first use (``list_tools`` / ``call_tool``), or with :meth:`McpServer.start`.
- :func:`shared_server` hands out one server per :class:`ServerSpec` per process, so an
  xdist worker starts each server once and every task on that worker reuses it.
- :func:`close_all` stops every running server of the process; the plugin calls it at
  ``pytest_unconfigure`` (only when this module was imported: the plugin itself never imports
  it) and it is registered with :mod:`atexit` when the first server starts. Stopping follows
  the SDK's shutdown sequence: close the server's stdin, wait 2 s, SIGTERM the process
  group, SIGKILL after 2 s more. A server whose parent dies sees EOF on stdin and exits.
- Stopping never blocks for long, whatever state a server or the event loop is in. A start
  cut short by a ``KeyboardInterrupt`` (a second Ctrl-C or SIGTERM, ``pytest_egi.run.interrupt``)
  leaves a half-started server that :func:`close_all` stops like a running one; a stop that
  has not finished within :data:`_STOP_S` is cancelled, and its process group killed; the
  event loop's remaining tasks are cancelled, and a loop that does not end within
  :data:`_PORTAL_STOP_S` is abandoned (its thread is a daemon).

A server in an unknown state is never reused. The plugin calls
:func:`begin_item` before each EGI item, outside the item's timeout; it stops and starts afresh
every process-wide server that needs it, so the item gets a server in a known state:

- **A call that times out or is cut short.** A request the server does not answer within
  ``spec.timeout_s`` raises :class:`McpServerError` (the item errors) and the server is stopped
  at once; a call cut short while its request is in flight (pytest-timeout's ``Failed``, a
  Ctrl-C: any exception that is not an :class:`Exception`) marks the server *unknown-state*
  and goes on at once. The server may still be working on that request, or be stuck in it, so
  it is never asked anything again: before the next item (or at its next use, whichever comes
  first) it is stopped, bounded (:meth:`McpServer.close`: SIGTERM to its process group, up to
  :data:`_TERM_S` seconds' wait, then SIGKILL), and started afresh.
- **A server that died between items.** Its death is found before the next item (or at its
  first use in an item, when the plugin does not call :func:`begin_item`): it is cleaned up and
  started afresh, and the item goes on with the fresh server (nothing of the item had reached
  the dead one, so nothing is lost; a stateful server's world is the seeded one, as a trial's
  reset makes it anyway). A server that dies *after* an item's first use of it (``list_tools``
  or ``call_tool``) raises :class:`McpServerError` at the item's next call (the item errors:
  what it did there is lost).

Arguments are made encodable before they are sent (:func:`encodable`): a lone UTF-16
surrogate (``"\\ud800"``, which a model's JSON can carry and UTF-8 cannot) becomes U+FFFD, so
text that cannot be encoded never breaks the server connection; the caller keeps what the
model sent.

Failures, in the terms of :mod:`pytest_egi.agents.tools`:

- **The model's mistake** (unknown tool, arguments that fail the tool's input schema, an id
  that does not exist): the server answers with an error *result* (``isError: true``), or,
  for servers following the spec's protocol-error wording, a JSON-RPC ``-32602`` (invalid
  params) error. Both come back from :meth:`McpServer.call_tool` as a :class:`ToolResult`
  with ``is_error`` True, whose ``text`` the model reads (:class:`McpToolkit` turns it into
  a :class:`McpToolError` observation).
- **An environment fault** (the server cannot start, dies, times out, answers with any other
  JSON-RPC error such as ``-32603`` internal error, or breaks the protocol): the server is
  stopped and :class:`McpServerError` is raised; the item becomes a pytest error, never an
  observation. The next call starts the server again.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import json
import os
import re
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest_egi.mcp as _package
from pytest_egi.agents.tools import Tool, ToolError, Toolkit, ToolOutcome
from pytest_egi.mcp import forkserver
from pytest_egi.mcp.schema import McpToolSpec, ToolNames

__all__ = [
    "McpServer",
    "McpServerError",
    "McpToolError",
    "McpToolkit",
    "ServerSpec",
    "ToolResult",
    "begin_item",
    "close_all",
    "encodable",
    "release_scope",
    "running_servers",
    "shared_server",
]

INVALID_PARAMS = -32602
"""JSON-RPC "invalid params": the spec's protocol error for an unknown tool or bad arguments."""

_STDERR_TAIL = 2000
"""Characters of the server's stderr quoted in a :class:`McpServerError`."""

_STOP_S = 10.0
"""Seconds a server's stop may take (the SDK's sequence takes at most about 5) before its task
is cancelled and its process group killed (SIGKILL)."""

_PORTAL_STOP_S = 5.0
"""Seconds :func:`close_all` waits for the event loop to end once its tasks are cancelled;
past them the loop's (daemon) thread is left to the interpreter's exit."""

_TERM_S = 2.0
"""Seconds an unknown-state server gets to exit after SIGTERM before its process group is
killed (SIGKILL); the SDK's own escalation waits as long."""

_SURROGATE = re.compile("[\ud800-\udfff]")


class McpServerError(RuntimeError):
    """An MCP server failed (an environment fault: the item is an error, never scored).

    Raised when the server cannot be spawned, exits or closes the connection, does not
    answer within the spec's timeout, or answers a request with a JSON-RPC error other than
    invalid params. The server has been stopped when this is raised; the next call starts it
    again. The message names the server, its command line, what failed and the last lines
    the server wrote to stderr.

    Attributes:
        server: the server's :attr:`ServerSpec.name`.
        code: the JSON-RPC error code when the server (or the SDK, e.g. ``-32000`` connection
            closed, ``-32001`` request timeout) gave one, else None.
    """

    one_line_report = True
    """The item's pytest report is this message alone (the message names the server, what
    failed and its stderr; the SDK's traceback adds nothing)."""

    def __init__(self, message: str, *, server: str, code: int | None = None) -> None:
        super().__init__(message)
        self.server = server
        self.code = code


class McpToolError(ToolError):
    """An MCP error result, shown to the model verbatim (the server already words it for
    the model, e.g. ``Unknown tool: get_teamz``)."""

    @property
    def observation(self) -> str:
        """The server's error text, unchanged."""
        return str(self)


@dataclass(frozen=True)
class ServerSpec:
    """How to start one stdio MCP server.

    Attributes:
        name: a short name for messages and tool-name prefixes (``airbnb``).
        command: the executable (usually ``sys.executable``).
        args: its arguments (``("-m", "package.server", "--seed", "42")``).
        env: extra environment variables, merged over the SDK's safe default environment
            (``HOME``, ``PATH``, ``SHELL``, ``TERM``, ``USER``, ``LOGNAME``; nothing else is
            inherited, so pass ``PYTHONPATH`` when the server module needs it).
        cwd: working directory of the server process (None: the caller's).
        timeout_s: seconds a request (including start-up's handshake) may take before the
            server counts as hung (an :class:`McpServerError`).
        preload: for a server run as ``sys.executable -m MODULE ARGS...``: modules a warm
            process imports once, so the server starts as a fork of it instead of a fresh
            Python (:mod:`pytest_egi.mcp.forkserver`; ``("mcp.server.mcpserver",)`` saves the
            SDK's import, about 1.8 s of CPU per start). Empty: always spawned.
    """

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    timeout_s: float = 60.0
    preload: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        name: str,
        command: str,
        args: Iterable[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        timeout_s: float = 60.0,
        preload: Iterable[str] = (),
    ) -> ServerSpec:
        """Build a spec from ordinary containers (the spec itself is frozen and hashable).

        Raises:
            ValueError: ``preload`` given for a command that is not ``sys.executable -m ...``.
        """
        spec = cls(
            name=name,
            command=command,
            args=tuple(str(a) for a in args),
            env=tuple(sorted((env or {}).items())),
            cwd=None if cwd is None else str(cwd),
            timeout_s=timeout_s,
            preload=tuple(preload),
        )
        if spec.preload and (
            spec.command != sys.executable or spec.args[:1] != ("-m",) or len(spec.args) < 2
        ):
            raise ValueError(
                f"MCP server {name!r}: preload needs the command `{sys.executable} -m MODULE ...`, "
                f"got `{spec.command_line()}`"
            )
        return spec

    def command_line(self) -> str:
        """The command line, for messages."""
        return " ".join([self.command, *self.args])


@dataclass(frozen=True)
class ToolResult:
    """The result of one ``tools/call``, in plain builtins.

    Attributes:
        text: what the model reads: the text content blocks joined with newlines; when
            there is no text block, the structured content as JSON; else "".
        is_error: the server flagged the call as failed (``isError``), or refused it as
            invalid params; ``text`` then explains why.
        structured: the structured content (a JSON object) when the tool declares an output
            schema, else None.
        content: the content blocks in wire (camelCase) form.
    """

    text: str
    is_error: bool = False
    structured: Any = None
    content: list[dict[str, Any]] = field(default_factory=list)

    def json(self) -> Any:
        """The result as data: ``structured`` (unwrapping the SDK's ``{"result": value}``
        wrapper of non-object returns) or else ``text`` parsed as JSON.

        Raises:
            ValueError: the call failed, or the text is not JSON.
        """
        if self.is_error:
            raise ValueError(f"the call failed: {self.text}")
        if isinstance(self.structured, dict):
            if set(self.structured) == {"result"}:
                return self.structured["result"]
            return self.structured
        return json.loads(self.text)


# -- the process's event loop ------------------------------------------------------------

_lock = threading.RLock()
_portal_cm: Any = None
_portal: Any = None
_running: dict[int, McpServer] = {}
_shared: dict[ServerSpec, McpServer] = {}
_atexit_registered = False
_item = 0
"""How many items :func:`begin_item` has begun in this process (0: none, e.g. outside pytest)."""


def begin_item() -> None:
    """Tell the client that a new item begins (the plugin calls it before each EGI item, outside
    the item's timeout, so a restart here is not counted in the item's budget).

    Each process-wide server (:func:`shared_server`) that is in an unknown state, whose process
    died, or that a fault of the last item stopped, is stopped (bounded, see
    :meth:`McpServer.close`) and started afresh now; any other server left unknown-state is
    stopped. A start that fails here is left to the server's next use, which raises it to the
    item. Never raises.
    """
    global _item
    with _lock:
        _item += 1
        shared = list(_shared.values())
        others = [s for s in _running.values() if s.unknown_state is not None and s not in shared]
    for server in others:
        with contextlib.suppress(Exception):
            server.close()
    for server in shared:
        with contextlib.suppress(Exception):
            server.recover()


def encodable(value: Any) -> Any:
    """``value`` with every string (object keys included) made encodable as UTF-8: a lone
    UTF-16 surrogate becomes U+FFFD; a surrogate pair written as two code points becomes the
    character it encodes. Lists, tuples and dicts are copied when something changed; other
    values are returned as they are.

    Example: ``encodable({"q": "a\\ud800b"}) == {"q": "a\\ufffdb"}``.
    """
    if isinstance(value, str):
        if _SURROGATE.search(value) is None:
            return value
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {encodable(k): encodable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encodable(v) for v in value]
    return value


def _get_portal() -> Any:
    """The process's blocking portal (an event loop in a daemon thread), started on first use."""
    global _portal_cm, _portal, _atexit_registered
    with _lock:
        if _portal is None:
            from anyio.from_thread import start_blocking_portal

            _portal_cm = start_blocking_portal(name="egi-mcp-loop")
            _portal = _portal_cm.__enter__()
        if not _atexit_registered:
            atexit.register(close_all)
            _atexit_registered = True
        return _portal


def running_servers() -> list[McpServer]:
    """The servers of this process whose subprocess is running."""
    with _lock:
        return list(_running.values())


def close_all() -> None:
    """Stop every running (or half-started) server of this process and the event-loop thread.

    Safe to call repeatedly; servers start again on their next use. Called by the plugin at
    ``pytest_unconfigure`` and at interpreter exit. The servers are stopped at the same time
    (each waits for its process to exit), so stopping N servers takes about as long as one.
    Bounded: each server's stop takes at most :data:`_STOP_S` seconds (then its process group
    is killed), the loop's remaining tasks (a call a ``KeyboardInterrupt`` cut short) are
    cancelled, and the loop gets :data:`_PORTAL_STOP_S` seconds to end.
    """
    global _portal_cm, _portal
    servers = running_servers()
    if len(servers) > 1:
        stoppers = [_daemon(s.close, f"egi-mcp-close-{s.spec.name}") for s in servers]
        for thread in stoppers:
            thread.join(2 * _STOP_S + 1)  # close() is bounded by 2 * _STOP_S
    for server in servers:  # the one server, or any a failed thread left running
        if server in running_servers():
            server.close()
    with _lock:
        forkserver.stop_all()
    with _lock:
        portal, cm, _portal_cm, _portal = _portal, _portal_cm, None, None
    if cm is not None:
        # cancel what is left on the loop, then leave the portal's context (which joins the
        # loop's thread); in a daemon thread, so a task that ignores cancellation (or holds
        # the loop's thread) cannot block the caller
        _daemon(_stop_portal, "egi-mcp-stop", portal, cm).join(_PORTAL_STOP_S)


def _stop_portal(portal: Any, cm: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the loop already ended
        portal.call(portal.stop, True)
    cm.__exit__(None, None, None)


def _daemon(target: Any, name: str, *args: Any) -> threading.Thread:
    """``target(*args)`` in a new daemon thread, started."""
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    thread.start()
    return thread


def _kill_group(pid: int | None) -> None:
    """SIGKILL the process group of ``pid`` (a server is its group's leader), when ``pid`` is
    still a child of this process (so it cannot be an unrelated process that reused the id)."""
    if pid is not None and pid in _child_pids():
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie); True when it cannot be told
    (no ``/proc``)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[-1].split()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return bool(fields) and fields[0] not in ("Z", "X")


def _terminate_group(pid: int | None) -> None:
    """SIGTERM the process group of ``pid`` (a child of this process), wait up to
    :data:`_TERM_S` seconds for ``pid`` to exit, then SIGKILL the group."""
    if pid is None or pid not in _child_pids():
        return
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + _TERM_S
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    _kill_group(pid)  # what is left of the group (the server may ignore SIGTERM)


class _Connection:
    """One server's client context (``mcp.Client`` over ``stdio_client``), entered and left in
    one task on the portal's event loop, driven from other threads without ever blocking on the
    loop for longer than asked.

    Attributes:
        ready: resolves to the entered client once the handshake is over, or to the error
            that ended the task before then.
        done: set when the task is over (the transport is closed and its process stopped).
    """

    def __init__(self, portal: Any, client: Any) -> None:
        self.portal = portal
        self.ready: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.done = threading.Event()
        self._stop: Any = None
        self.task = portal.start_task_soon(self._run, client, name="egi-mcp-server")

    async def _run(self, client: Any) -> None:
        import anyio

        try:
            self._stop = anyio.Event()
            async with client as entered:
                self.ready.set_result(entered)
                await self._stop.wait()
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
            raise
        finally:
            self.done.set()

    def stop(self, timeout: float) -> bool:
        """Leave the client context (the SDK's shutdown: close stdin, then SIGTERM/SIGKILL),
        waiting at most ``timeout`` seconds; a context not entered yet (a start cut short) or
        not left by then is cancelled, with ``timeout`` seconds more.

        Returns:
            True when the task is over (the server process is stopped).
        """
        if self.done.is_set():
            return True
        if self.ready.done() and self.ready.exception() is None:
            # set the stop event on the loop; from a daemon thread, as the loop may be stuck
            _daemon(self._request_stop, "egi-mcp-stop-request")
            if self.done.wait(timeout):
                return True
        self.task.cancel()  # the portal cancels the task's scope on the loop (non-blocking)
        return self.done.wait(timeout)

    def _request_stop(self) -> None:
        with contextlib.suppress(Exception):  # the loop ended: the task is over anyway
            self.portal.call(self._stop.set)


def release_scope(scope: str) -> list[McpServer]:
    """Stop the process-wide servers (:func:`shared_server`) used in ``scope`` and in no other
    scope still held (:func:`pytest_egi.mcp.enter_scope`: the plugin's scope is a suite, and
    it calls this once the process has run its last item of that suite); a server another
    scope used too only forgets ``scope``. A stopped server starts again on its next use, as
    after :meth:`McpServer.close`. When no server of the process is left running, its fork
    servers stop too (:func:`pytest_egi.mcp.forkserver.stop_all`; about 50 MB, the SDK's
    server side, while no suite needs it): a later suite's first server starts one again
    (about 2 s). Never raises.

    Returns:
        The servers stopped (those that were running).
    """
    with _lock:
        shared = list(_shared.values())
    stopped = []
    for server in shared:
        if scope not in server.scopes:
            continue
        server.scopes.discard(scope)
        if not server.scopes and server.running:
            with contextlib.suppress(Exception):
                server.close()
            stopped.append(server)
    if stopped and not running_servers():
        with _lock, contextlib.suppress(Exception):
            forkserver.stop_all()
    return stopped


def shared_server(spec: ServerSpec) -> McpServer:
    """The process-wide server for ``spec``: the same object on every call, started on first
    use, stopped by :func:`close_all` (under xdist: once per worker)."""
    with _lock:
        server = _shared.get(spec)
        if server is None:
            server = _shared[spec] = McpServer(spec)
        return server


# -- one server --------------------------------------------------------------------------


class McpServer:
    """One stdio MCP server subprocess behind a synchronous API.

    Thread-safe (calls are serialised). Not started until first use.

    Attributes:
        spec: how the server is started.
        pid: the server process id while running (Linux; None elsewhere or when stopped).
        startup_s: wall seconds of the last start (spawn + handshake + tool listing).
        starts: how many times the server was started (a restart after a fault counts).
        unknown_state: why the server is in an unknown state (a call cut short while its
            request was in flight), or None; such a server is stopped before it is used again.
        recoveries: why the server was stopped and started afresh outside a fault of the
            current call (an unknown state, a process that died between items), in order.
        scopes: the scopes (:func:`pytest_egi.mcp.enter_scope`) it was started or used in
            since :func:`release_scope` last forgot them.
    """

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.pid: int | None = None
        self.startup_s: float | None = None
        self.starts = 0
        self.unknown_state: str | None = None
        self.recoveries: list[str] = []
        self.scopes: set[str] = set()
        self._used_in = -1  # the item (module ``_item``) of the last use
        self._restart_due = False  # stopped by a fault: begin_item starts it again
        self._lock = threading.RLock()
        self._conn: _Connection | None = None
        self._client: Any = None
        self._tools: list[McpToolSpec] | None = None
        self._errlog_path: str | None = None
        self._errlog: Any = None

    def __repr__(self) -> str:
        state = f"pid {self.pid}" if self.running else "stopped"
        return f"<McpServer {self.spec.name} ({state})>"

    def __enter__(self) -> McpServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def running(self) -> bool:
        """Whether the subprocess was started and not stopped (it may have died since)."""
        return self._client is not None

    def start(self) -> None:
        """Spawn the server, run the MCP handshake and list its tools (no-op when running).

        A start cut short by a ``KeyboardInterrupt`` (or any other exception that is not an
        :class:`Exception`) leaves the server half-started and listed in
        :func:`running_servers`, so :meth:`close` / :func:`close_all` stop it; the
        interruption goes on at once.

        Raises:
            McpServerError: the command cannot be run, or the server exits or does not
                answer the handshake within ``spec.timeout_s``.
        """
        with self._lock:
            if self.unknown_state is not None:
                self.recoveries.append(self.unknown_state)
                self.close()
            if self._client is not None:
                return
            if self._conn is not None:  # a start cut short: stop what is left of it first
                self.close()
            from mcp import Client, StdioServerParameters
            from mcp.client.stdio import stdio_client

            portal = _get_portal()
            command, args = self._command()
            params = StdioServerParameters(
                command=command, args=args, env=dict(self.spec.env), cwd=self.spec.cwd
            )
            fd, self._errlog_path = tempfile.mkstemp(prefix=f"egi-mcp-{self.spec.name}-", suffix=".stderr")
            os.close(fd)
            # O_APPEND: the server writes at the end whatever this process reads
            self._errlog = open(self._errlog_path, "a", encoding="utf-8")  # noqa: SIM115
            client = Client(
                stdio_client(params, errlog=self._errlog), read_timeout_seconds=self.spec.timeout_s
            )
            begin = time.perf_counter()
            before = _child_pids()
            argv = [command, *args]
            conn = _Connection(portal, client)
            try:
                entered = conn.ready.result()
                listed = portal.call(entered.list_tools)
            except Exception as exc:
                if not conn.stop(_STOP_S):
                    _kill_group(_find_child(before, argv))
                message = self._fault_message("could not be started", exc)
                self._release()
                raise McpServerError(message, server=self.spec.name, code=_code(exc)) from exc
            except BaseException:  # KeyboardInterrupt: keep what was started for close()
                self._conn, self.pid = conn, _find_child(before, argv)
                with _lock:
                    _running[id(self)] = self
                raise
            self._conn, self._client = conn, entered
            self._tools = [McpToolSpec.from_sdk(t) for t in listed.tools]
            self.pid = _find_child(before, argv)
            self.startup_s = time.perf_counter() - begin
            self.starts += 1
            _note_scope(self)
            self._restart_due = False
            with _lock:
                _running[id(self)] = self

    def _command(self) -> tuple[str, list[str]]:
        """The command and arguments to spawn: the spec's own, or, for a spec that names
        modules to ``preload``, a launcher that forks it from this process's fork server
        (:mod:`pytest_egi.mcp.forkserver`). A fork server that cannot be started is warned
        about and the server is spawned. Call with ``self._lock`` held."""
        if self.spec.preload:
            from mcp.client.stdio import get_default_environment

            if forkserver.supported():
                env = get_default_environment() | dict(self.spec.env)
                try:
                    with _lock:
                        server = forkserver.shared(env, self.spec.preload)
                except forkserver.ForkServerError as exc:
                    warnings.warn(f"{exc}; MCP server {self.spec.name!r} is spawned instead", stacklevel=2)
                else:
                    return sys.executable, server.launcher(self.spec.args)
        return self.spec.command, list(self.spec.args)

    def list_tools(self) -> list[McpToolSpec]:
        """The server's tools, in listing order (listed once per start).

        Raises:
            McpServerError: the server could not be started.
        """
        with self._lock:
            self._ready()
            assert self._tools is not None
            return list(self._tools)

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Execute one tool call on the server (starting it when needed).

        Args:
            name: the MCP tool name.
            arguments: the arguments object (the server validates it); sent as
                :func:`encodable` makes it (a lone surrogate becomes U+FFFD).

        Returns:
            The result; ``is_error`` True for a call the server refused (unknown tool, bad
            arguments, a missing id...), whose ``text`` says why.

        Raises:
            McpServerError: the server could not be started, died, timed out or failed
                (it is stopped; the next call starts it again).
            BaseException: an interruption while the request was in flight (pytest-timeout,
                Ctrl-C) goes on at once; the server is then unknown-state (module docstring).
        """
        with self._lock:
            self._ready()
            sent_name, sent = encodable(name), encodable(dict(arguments or {}))
            try:
                result = _get_portal().call(self._client.call_tool, sent_name, sent)
            except Exception as exc:
                code = _code(exc)
                if code == INVALID_PARAMS:
                    return ToolResult(text=str(getattr(exc, "message", exc)), is_error=True)
                message = self._fault_message(f"failed on tools/call {name!r}", exc)
                self.close()
                self._restart_due = True
                raise McpServerError(message, server=self.spec.name, code=code) from exc
            except BaseException as exc:
                self.unknown_state = (
                    f"tools/call {name!r} was cut short by {type(exc).__name__} while the server "
                    "was answering it"
                )
                raise
            return _result(result)

    def recover(self) -> bool:
        """Before an item: stop and start afresh a server that is unknown-state, whose process
        died, or that a fault stopped (``call_tool`` raised :class:`McpServerError`); a server
        never started, or stopped by :meth:`close`, is left as it is.

        Returns:
            True when the server was (re)started.

        Raises:
            McpServerError: it could not be started.
        """
        with self._lock:
            if self.unknown_state is not None:
                pass  # start() records and stops it
            elif self._client is not None and self.pid is not None and not _alive(self.pid):
                self.recoveries.append(f"its process (pid {self.pid}) had died since its last use")
                self.close()
            elif not (self._client is None and self._restart_due):
                return False
            self.start()
            return True

    def _ready(self) -> None:
        """Start the server when needed, for a use in the current item. A server left
        unknown-state is stopped and started afresh; a server whose process died is started
        afresh at its first use in an item (not after it: an item that used it errors at the
        call that finds it dead). Call with ``self._lock`` held.

        Raises:
            McpServerError: the server could not be started.
        """
        if (
            self._client is not None
            and self._used_in != _item
            and self.pid is not None
            and not _alive(self.pid)
        ):
            self.recoveries.append(f"its process (pid {self.pid}) had died since its last use")
            self.close()
        self.start()
        self._used_in = _item
        _note_scope(self)

    def close(self) -> None:
        """Stop the server (close stdin, then SIGTERM/SIGKILL its process group if it lingers),
        or what a start cut short left of it. An unknown-state server is not asked to stop: its
        process group gets SIGTERM, then SIGKILL after :data:`_TERM_S` seconds.

        Bounded: a stop not over within :data:`_STOP_S` seconds is cancelled, and one still
        not over :data:`_STOP_S` seconds later has its process group killed (SIGKILL).
        Idempotent; a later call starts it again.
        """
        with self._lock:
            conn, self._conn, self._client = self._conn, None, None
            self._restart_due = False
            if self.unknown_state is not None:
                _terminate_group(self.pid)
                self.unknown_state = None
            if conn is not None and not conn.stop(_STOP_S):
                _kill_group(self.pid)
            self._release()

    def stderr_tail(self, chars: int = _STDERR_TAIL) -> str:
        """The last ``chars`` characters the running server wrote to stderr ("" when none)."""
        if not self._errlog_path:
            return ""
        try:
            text = Path(self._errlog_path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return text[-chars:]

    def _release(self) -> None:
        self.pid = None
        self._tools = None
        with _lock:
            _running.pop(id(self), None)
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None
        if self._errlog_path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._errlog_path)
            self._errlog_path = None

    def _fault_message(self, what: str, exc: BaseException) -> str:
        detail = str(getattr(exc, "message", "") or exc) or type(exc).__name__
        code = _code(exc)
        if code is not None:
            detail = f"{detail} (JSON-RPC error {code})"
        tail = self.stderr_tail().strip()
        stderr = f"\nserver stderr (last lines):\n{tail}" if tail else "\nthe server wrote nothing to stderr"
        return f"MCP server {self.spec.name!r} ({self.spec.command_line()}) {what}: {detail}{stderr}"


def _note_scope(server: McpServer) -> None:
    """Add the current scope (:func:`pytest_egi.mcp.current_scope`), if any, to ``server.scopes``."""
    scope = _package.current_scope()
    if scope is not None:
        server.scopes.add(scope)


def _code(exc: BaseException) -> int | None:
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    return code if isinstance(code, int) else None


def _result(result: Any) -> ToolResult:
    """A :class:`ToolResult` from the SDK's ``CallToolResult``."""
    blocks = [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in result.content]
    texts = [b["text"] for b in blocks if b.get("type") == "text"]
    structured = getattr(result, "structured_content", None)
    if texts:
        text = "\n".join(texts)
    elif structured is not None:
        text = json.dumps(structured, sort_keys=True)
    else:
        text = ""
    return ToolResult(text=text, is_error=bool(result.is_error), structured=structured, content=blocks)


def _child_pids() -> set[int]:
    """Ids of this process's direct children (Linux ``/proc``; empty elsewhere)."""
    return set(forkserver.children_of(os.getpid()))


def _find_child(before: set[int], argv: list[str]) -> int | None:
    """The new child of this process whose command line is ``argv`` (None when not found)."""
    want = "\0".join(argv)
    for pid in sorted(_child_pids() - before):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmdline = fh.read().decode("utf-8", errors="replace").rstrip("\0")
        except OSError:
            continue
        if cmdline == want:
            return pid
    return None


# -- tools for the function-calling loop --------------------------------------------------


class McpToolkit(Toolkit):
    """A :class:`~pytest_egi.agents.tools.Toolkit` whose every call is executed on MCP servers.

    The model sees each server's tools (OpenAI names from :class:`ToolNames`; a valid MCP
    name is kept as is). Every call goes to the server, including an unknown tool name
    (sent under the name the model used) and arguments that break the schema: the server
    judges them, and its error result is what the model reads (a model mistake: the call is
    logged with ``"error": True``). Arguments that are not a JSON object never reach the
    server (the core's wording for that mistake). A server fault raises
    :class:`McpServerError` (the item errors).

    ``calls`` entries are ``{"name": <MCP tool name>, "arguments", "error", "server"}``.

    ``hidden`` tools (MCP names) are the harness's own (a state snapshot, a reset): they are
    not listed to the model, and a call to one is answered as an unknown tool without
    reaching the server.

    Attributes:
        servers: server name → server.
        names: the OpenAI ↔ MCP name map.
        results: the :class:`ToolResult` of every call that reached a server, in call order.
    """

    def __init__(
        self, servers: Mapping[str, McpServer], prefix: bool = False, hidden: Iterable[str] = ()
    ) -> None:
        self.servers = dict(servers)
        self.hidden = frozenset(hidden)
        listed = {n: [t for t in srv.list_tools() if t.name not in self.hidden]
                  for n, srv in self.servers.items()}  # fmt: skip
        self.names = ToolNames.build(listed, prefix=prefix)
        tools: dict[str, Tool] = {}
        for openai, (_, spec) in self.names.by_openai.items():
            tools[openai] = Tool(
                name=openai, description=spec.description, parameters={}, fn=_unused, validate=False
            )
        super().__init__(tools=tools)
        self._schemas = self.names.tools()
        self.results: list[ToolResult] = []

    @classmethod
    def of_servers(
        cls, *servers: McpServer, prefix: bool | None = None, hidden: Iterable[str] = ()
    ) -> McpToolkit:
        """A toolkit over ``servers`` (prefixed names by default when there are several)."""
        return cls({s.spec.name: s for s in servers}, prefix=len(servers) > 1 if prefix is None else prefix,
                   hidden=hidden)  # fmt: skip

    def schemas(self) -> list[dict[str, Any]]:
        """The OpenAI ``tools`` list (input schemas as the servers list them, normalised)."""
        return [dict(s) for s in self._schemas]

    def call(self, name: str, arguments: str | dict[str, Any] | None) -> ToolOutcome:
        """Execute one call on its server; see the class docstring for what becomes an
        observation and what raises.

        Raises:
            McpServerError: the server failed (an environment fault).
        """
        parsed, mistake = self._decode(name, arguments)
        if mistake is not None:
            return mistake
        if not isinstance(parsed, dict):
            return self._mistake(name, parsed, "arguments must be a JSON object")
        target = self.names.to_mcp(name)
        if target is None and (name in self.hidden or name.rsplit("__", 1)[-1] in self.hidden):
            return self._mistake(name, parsed, f"unknown tool {name!r}")
        if target is None:  # unknown: the server says so (in its own words)
            server_name, tool = next(iter(self.servers)), name
        else:
            server_name, tool = target
        result = self.servers[server_name].call_tool(tool, parsed)
        self.results.append(result)
        self.calls.append(
            {"name": tool, "arguments": parsed, "error": result.is_error, "server": server_name}
        )
        if result.is_error:
            return ToolOutcome(content=McpToolError(result.text).observation, error=True)
        return ToolOutcome(content=result.text)


def _unused(**_: Any) -> Any:  # McpToolkit.call never calls a Tool's fn
    raise AssertionError("MCP tools are executed by McpToolkit.call")
