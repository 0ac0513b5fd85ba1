"""Stopping MCP servers and the event loop never blocks: a start cut short by a Ctrl-C, a
portal task that never ends, a server whose stop never finishes, and a whole serial session
that gets its second SIGTERM while a suite's server is starting (it exits 2 at once).

Every wait here is bounded (``_bounded``), so a regression fails instead of hanging the run.
The stuck server (``stuck_server.py``) reports over a local socket that it has received the
request it never answers, so the tests interrupt the client exactly there, without timing.
"""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from pytest_egi.mcp import client
from pytest_egi.mcp.client import McpServer, ServerSpec, _child_pids, close_all, running_servers
from tests.mcp.test_client import ECHO, alive
from tests.toy_project import ROUTING, SUITE_INIT, TEST_MODULE

STUCK = str(Path(__file__).with_name("stuck_server.py"))
BOUND_S = 20.0
"""Seconds a test waits for what must return "at once" before it counts as hung: below the
stuck server's request timeout (60 s), after which the old client would have got free."""


def _bounded(fn: Callable[[], object], seconds: float = BOUND_S) -> float:
    """Run ``fn`` in a daemon thread; its wall seconds. Fails when it has not returned within
    ``seconds`` (the thread is left behind) or raised."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    begin = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{fn} still blocked after {seconds} s"
    assert errors == []
    return time.monotonic() - begin


def _loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "egi-mcp-loop"]


def _raise_keyboard_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt("interrupted by the test")


def _start_interrupted(server: McpServer, listener: socket.socket) -> int:
    """Start ``server`` in this (the main) thread and raise KeyboardInterrupt in it as soon as the
    stuck server has received the request it never answers; the server's pid."""
    pid: list[int] = []

    def interrupt() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while chunk := conn.recv(64):
                data += chunk
        pid.append(int(data))
        signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1)

    previous = signal.signal(signal.SIGUSR1, _raise_keyboard_interrupt)
    try:
        helper = threading.Thread(target=interrupt, daemon=True)
        helper.start()
        with pytest.raises(KeyboardInterrupt, match="interrupted by the test"):
            server.start()
        helper.join(BOUND_S)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert pid, "the stuck server never reported"
    return pid[0]


@pytest.fixture
def listener():
    sock = socket.create_server(("127.0.0.1", 0))
    sock.settimeout(BOUND_S)
    yield sock
    sock.close()


@pytest.mark.parametrize(("stage", "stubborn"), [
    ("initialize", False),  # cut short in the handshake
    ("tools/list", False),  # cut short after the handshake, listing the tools
    ("tools/list", True),  # and the server ignores the end of stdin and SIGTERM
])
def test_a_start_cut_short_by_ctrl_c_is_stopped_by_close_all(listener, stage, stubborn):
    port = str(listener.getsockname()[1])
    args = [STUCK, stage, port, *(["--stubborn"] if stubborn else [])]
    server = McpServer(ServerSpec.of("stuck", sys.executable, args, timeout_s=60))
    pid = _start_interrupted(server, listener)
    assert alive(pid)
    assert not server.running and running_servers() == [server]  # close_all will stop it
    seconds = _bounded(close_all)
    # stdin closed: a well-behaved server exits at once; a stubborn one is killed by the
    # SDK's escalation (SIGTERM after 2 s, SIGKILL 2 s later)
    assert seconds < (8 if stubborn else 3)
    assert not alive(pid) and pid not in _child_pids()
    assert running_servers() == [] and _loop_threads() == []
    # the server starts again on its next use (the stuck one hangs again: only check it spawns)
    server.close()  # idempotent


def test_close_all_cancels_a_portal_task_that_never_ends():
    portal = client._get_portal()
    forever = portal.start_task_soon(anyio.sleep_forever)
    assert _bounded(close_all) < 3
    assert forever.cancelled()
    assert _loop_threads() == []


def test_close_all_returns_while_the_event_loop_is_stuck_and_kills_the_server(monkeypatch):
    """A task that blocks the event-loop thread itself: nothing on the loop can run, so the
    server's stop cannot finish; its process group is killed and the loop thread abandoned."""
    monkeypatch.setattr(client, "_STOP_S", 0.5)
    monkeypatch.setattr(client, "_PORTAL_STOP_S", 0.5)
    server = McpServer(ECHO)
    server.start()
    pid = server.pid
    release = threading.Event()
    portal = client._get_portal()
    portal.start_task_soon(release.wait)  # a synchronous call: it runs on (and holds) the loop thread
    try:
        assert _bounded(close_all) < 5
        assert not alive(pid)  # killed: the loop could not even close its stdin
        assert running_servers() == [] and not server.running
    finally:
        release.set()
    for thread in _loop_threads():  # freed: the loop ends (the portal was asked to stop)
        thread.join(BOUND_S)
    assert _loop_threads() == []
    server.start()  # a new loop and a new process
    assert server.call_tool("echo", {"text": "again"}).text == "again"
    close_all()


# -- a whole session: two SIGTERMs while a suite's server is starting ------------------------

REPO = Path(__file__).resolve().parents[2]
SESSION_CONFTEST = """
import sys
from pytest_egi.mcp.client import ServerSpec, shared_server

SPEC = ServerSpec.of("stuck", sys.executable, [{stuck!r}, "tools/list", {port!r}], timeout_s=120)


def pytest_runtest_call(item):
    shared_server(SPEC).list_tools()  # blocks: the server never lists its tools
"""


def _toy_project(root: Path, port: int) -> Path:
    """The toy suite, whose every item first starts the stuck server (``SESSION_CONFTEST``)."""
    toy = root / "toysuites" / "toy"
    toy.mkdir(parents=True)
    (root / "routing.yaml").write_text(ROUTING)
    (root / "conftest.py").write_text(SESSION_CONFTEST.format(stuck=STUCK, port=str(port)))
    (root / "toysuites" / "__init__.py").write_text("")
    (toy / "__init__.py").write_text(SUITE_INIT)
    (toy / "test_toy.py").write_text(TEST_MODULE)
    return root


def _lines(stream, into: queue.Queue) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


def test_a_second_sigterm_while_a_server_starts_ends_the_serial_session_at_once(tmp_path, listener):
    project = _toy_project(tmp_path / "p", listener.getsockname()[1])
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    environ["PYTHONUNBUFFERED"] = "1"  # each line reaches the pipe as it is written
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "toysuites", "--egi-model", "egi/oracle",
         "--egi-mode", "quick", "--egi-run-id", "S"],
        cwd=project, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )
    output: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stdout, output), daemon=True).start()
    server_pid = None
    lines: list[str] = []
    try:
        listener.settimeout(120)  # the session's start-up (a loaded machine can be slow)
        conn, _ = listener.accept()  # the first item is blocked on the server's tools/list
        with conn:
            server_pid = int(conn.makefile().read())
        os.kill(proc.pid, signal.SIGTERM)
        while not any(line.startswith("egi: SIGTERM: finishing the items in flight") for line in lines):
            line = output.get(timeout=BOUND_S)  # the first SIGTERM was handled
            assert line is not None, "".join(lines)
            lines.append(line)
        os.kill(proc.pid, signal.SIGTERM)
        begin = time.monotonic()
        status = proc.wait(60)  # below the server's request timeout: a hang shows as one
        seconds = time.monotonic() - begin
        while (line := output.get(timeout=BOUND_S)) is not None:
            lines.append(line)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        if server_pid is not None and alive(server_pid):
            os.killpg(server_pid, signal.SIGKILL)
    text = "".join(lines)
    assert status == 2, text
    assert seconds < 5, text  # the server is well-behaved: it exits when its stdin closes
    assert "KeyboardInterrupt: a second SIGTERM: stopped at once" in text
    assert lines[-1].startswith("=") and "no tests ran" in lines[-1]
    assert not alive(server_pid)
