"""An MCP server in an unknown state is never reused (pytest_egi/mcp/client.py): a tool call
that hangs past its timeout and a server that died between items, injected as they happen in
the field (a real stdio server stuck in a tool, a server SIGKILLed), through a whole pytest
session of a toy suite, serially and under ``-n 2``; and tool arguments that cannot be encoded
never break the connection.

The toy suite (``tests/toy_project.py``) looks each item's code up on a real stdio MCP server
(``hang_server.py``, one per process); the item named by ``TOY_HANG_TASK`` first calls the
server's ``hang`` tool, which blocks the server's event loop (nothing is answered after it).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from pytest_egi.mcp import client
from pytest_egi.mcp.client import McpServer, McpServerError, McpToolkit, ServerSpec, encodable
from tests.helpers.mcp_processes import killer_plugin
from tests.mcp.test_client import ECHO, alive
from tests.toy_project import SUITE_INIT, make_toy_project

HANG = str(Path(__file__).with_name("hang_server.py"))

MCP_TOY = (
    SUITE_INIT.replace('return {"code": code_of(task.data["seed"], item)}', "return mcp_code(task, item)")
    + """
import sys
from pytest_egi.mcp.client import ServerSpec, shared_server

SPEC = ServerSpec.of("hang", sys.executable, [os.environ["TOY_HANG_SERVER"], os.environ["TOY_PID_DIR"]],
                     timeout_s=float(os.environ["TOY_MCP_TIMEOUT"]))


def _prepare(self, tasks, options):  # started before the first item, outside its timeout
    shared_server(SPEC).start()


ToySuite.prepare = _prepare


def mcp_code(task, item):
    server = shared_server(SPEC)
    if task.id == os.environ.get("TOY_HANG_TASK"):
        server.call_tool("hang", {})
    return server.call_tool("code", {"seed": task.data["seed"], "item": item}).json()
"""
)
assert "mcp_code(task, item)" in MCP_TOY.split("import sys")[0]

ITEMS = ["alpha-0", "alpha-1", "alpha-2", "beta-0", "beta-1", "beta-2"]
"""The toy suite's quick items."""


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str], *extra: str,
         hang: str | None = None, request_timeout: float = 60.0, conftest: str = "",
         ) -> tuple[pytest.RunResult, dict, list[int]]:  # fmt: skip
    """Run the toy suite's quick profile with ``egi/oracle`` (``conftest``: the project's
    conftest, e.g. a fault injector); its result, the records by task id and the pids of every
    hang server it started."""
    pid_dir = pytester.path / "pids"
    pid_dir.mkdir(exist_ok=True)
    monkeypatch.setenv("TOY_HANG_SERVER", HANG)
    monkeypatch.setenv("TOY_PID_DIR", str(pid_dir))
    monkeypatch.setenv("TOY_MCP_TIMEOUT", str(request_timeout))
    if hang:
        monkeypatch.setenv("TOY_HANG_TASK", hang)
    make_toy_project(pytester, package="mcptoy", init=MCP_TOY)
    pytester.makeconftest(conftest)  # (an xdist worker loads it too)
    result = pytester.runpytest(
        "mcptoy", "-p", "no:cacheprovider", "--egi-model", "egi/oracle", "--egi-mode", "quick",
        "--egi-report-dir", "out", "--egi-bootstrap", "0", *workers, *extra,
    )  # fmt: skip
    lines = next(pytester.path.glob("out/*/records.jsonl")).read_text().splitlines()
    records = {r["task_id"]: r for r in map(json.loads, lines)}
    return result, records, [int(p.name) for p in pid_dir.iterdir()]


def _none_alive(pids: list[int]) -> bool:
    deadline = time.monotonic() + 10  # an xdist worker's servers stop as the worker exits
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(p) for p in pids)


WORKERS = pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "n2"])


@WORKERS
def test_after_a_tool_call_cut_short_by_the_item_timeout_every_later_item_gets_a_fresh_server(
    pytester, monkeypatch, workers
):
    """pytest-timeout ends the item stuck in the tool (an error, not a scored failure); the
    stuck server is never asked again: every later item passes on a fresh one. The old client
    kept the stuck server, and every later item on that process timed out in turn."""
    result, records, pids = _run(pytester, monkeypatch, workers, "--timeout", "20", hang="alpha-0")
    assert records["alpha-0"]["status"] == "error"
    assert "Timeout" in records["alpha-0"]["error"]
    assert {t: records[t]["status"] for t in ITEMS[1:]} == dict.fromkeys(ITEMS[1:], "passed")
    result.assert_outcomes(passed=5, errors=1)
    assert len(pids) >= 2 and _none_alive(pids)  # a fresh one after the stuck one; none left


@WORKERS
def test_after_a_request_timeout_every_later_item_gets_a_fresh_server(pytester, monkeypatch, workers):
    """The client's own request timeout: the item errors with the server named (never an
    observation for the model), the server is stopped, the later items pass."""
    result, records, pids = _run(pytester, monkeypatch, workers, hang="alpha-0", request_timeout=3.0)
    assert records["alpha-0"]["status"] == "error"
    assert "McpServerError: MCP server 'hang'" in records["alpha-0"]["error"]
    assert "failed on tools/call 'hang'" in records["alpha-0"]["error"]
    assert {t: records[t]["status"] for t in ITEMS[1:]} == dict.fromkeys(ITEMS[1:], "passed")
    result.assert_outcomes(passed=5, errors=1)
    assert len(pids) >= 2 and _none_alive(pids)


@WORKERS
def test_a_server_killed_between_items_is_restarted_for_the_next_item(pytester, monkeypatch, workers):
    """SIGKILLed before alpha-2 uses it: alpha-2 finds it dead at its first call and gets a
    fresh server (nothing of the item had reached the dead one); every item passes. The old
    client sent alpha-2's call to the dead server, and the item errored."""
    killer = killer_plugin("alpha-2", when="between_items")
    result, records, pids = _run(pytester, monkeypatch, workers, conftest=killer)
    assert {t: records[t]["status"] for t in ITEMS} == dict.fromkeys(ITEMS, "passed")
    result.assert_outcomes(passed=6)
    assert len(pids) == (3 if workers else 2)  # serially: the first server and the fresh one
    assert _none_alive(pids)


# -- the client alone -----------------------------------------------------------------------


def test_a_server_cut_short_mid_call_is_unknown_state_and_replaced_at_its_next_use(tmp_path):
    """A call interrupted while the server is stuck in it (as pytest-timeout interrupts it) marks
    the server unknown-state at once; its next use stops it (SIGTERM, bounded) and starts a
    fresh one; the next item's start stops it even before that."""
    import signal

    class Cut(BaseException):
        pass

    def cut(signum: int, frame: object) -> None:
        raise Cut()

    spec = ServerSpec.of("hang", sys.executable, [HANG, str(tmp_path)], timeout_s=60)
    server = McpServer(spec)
    try:
        server.start()
        stuck = server.pid
        previous = signal.signal(signal.SIGALRM, cut)
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        try:
            with pytest.raises(Cut):
                server.call_tool("hang", {})
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        assert (
            server.unknown_state == "tools/call 'hang' was cut short by Cut while the server was answering it"
        )
        assert alive(stuck)
        begin = time.monotonic()
        assert server.call_tool("echo", {"text": "fresh"}).text == "fresh"
        assert time.monotonic() - begin < 30  # not the 60 s request timeout of the stuck one
        assert server.pid != stuck and not alive(stuck) and server.starts == 2
        assert server.recoveries == [
            "tools/call 'hang' was cut short by Cut while the server was answering it"
        ]
        # begin_item stops an unknown-state server before the next item uses it
        server.unknown_state = "marked by the test"
        again = server.pid
        client.begin_item()
        assert not alive(again) and not server.running and server.unknown_state is None
    finally:
        server.close()
    assert len(list(tmp_path.iterdir())) == 2


def test_a_dead_server_is_restarted_at_its_first_use_in_an_item_but_not_after_it():
    server = McpServer(ECHO)
    try:
        client.begin_item()
        server.list_tools()  # used in this item
        old = server.pid
        os.kill(old, 9)
        while alive(old):
            time.sleep(0.01)
        with pytest.raises(McpServerError, match="Connection closed"):
            server.call_tool("echo", {"text": "x"})  # the item's work on it is lost: an error
        assert server.recoveries == []
        server.call_tool("echo", {"text": "y"})  # started again
        client.begin_item()
        dead = server.pid
        os.kill(dead, 9)
        while alive(dead):
            time.sleep(0.01)
        assert server.call_tool("echo", {"text": "z"}).text == "z"  # the next item: a fresh server
        assert server.recoveries == [f"its process (pid {dead}) had died since its last use"]
        assert server.starts == 3
    finally:
        server.close()


# -- arguments that cannot be encoded ---------------------------------------------------------


def test_encodable_replaces_lone_surrogates_and_joins_pairs():
    assert encodable("a\ud800b") == "a\ufffdb"
    assert encodable("\ud83d\ude00") == "\U0001f600"  # a pair written as two code points
    assert encodable({"k\udcff": ["x\ud800", 1, None, {"n": 2.5}]}) == {
        "k\ufffd": ["x\ufffd", 1, None, {"n": 2.5}]
    }
    plain = {"text": "héllo"}
    assert encodable(plain) == plain and encodable("ok") == "ok"


def test_a_lone_surrogate_in_tool_arguments_never_breaks_the_connection():
    """Through the real stdio server: the call completes (the server reads U+FFFD), the server
    stays up (same process, no restart) and the next call works; the toolkit keeps what the
    model sent. The old client broke the connection (a server fault)."""
    with McpServer(ECHO) as server:
        pid = server.pid
        assert server.call_tool("echo", {"text": "a\ud800b"}).text == "a\ufffdb"
        assert server.pid == pid and alive(pid) and server.starts == 1
        assert server.call_tool("add", {"a": 2, "b": 3}).text == "5"
        kit = McpToolkit.of_servers(server)
        outcome = kit.call("echo", '{"text": "x\\ud800y"}')  # the JSON a model wrote
        assert not outcome.error and outcome.content == "x\ufffdy"
        assert kit.calls == [
            {"name": "echo", "arguments": {"text": "x\ud800y"}, "error": False, "server": "echo"}
        ]
        assert server.pid == pid and server.starts == 1
