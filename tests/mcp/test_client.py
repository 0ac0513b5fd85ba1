"""The stdio MCP client: real subprocess servers, typed faults, restarts, no process left behind.

One echo server (``echo_server.py``) is shared by the module; each spawn costs ~0.7 s.
"""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_egi.mcp.client import (
    McpServer,
    McpServerError,
    McpToolError,
    McpToolkit,
    ServerSpec,
    ToolResult,
    _child_pids,
    close_all,
    running_servers,
    shared_server,
)

ECHO = ServerSpec.of("echo", sys.executable, [str(Path(__file__).with_name("echo_server.py"))], timeout_s=5.0)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def server():
    srv = McpServer(ECHO)
    srv.start()
    yield srv
    srv.close()


def test_tools_are_listed_with_their_schemas(server):
    tools = {t.name: t for t in server.list_tools()}
    assert list(tools) == ["echo", "add", "lookup", "ns.dotted", "no_args", "internal", "exit_now", "sleep"]
    assert tools["add"].input_schema["required"] == ["a", "b"]
    assert tools["no_args"].input_schema["properties"] == {}
    assert server.pid in _child_pids() and alive(server.pid)


def test_a_call_returns_text_and_structured_content(server):
    result = server.call_tool("add", {"a": 2, "b": 40})
    assert result == ToolResult(
        text="42", structured={"result": 42}, content=[{"type": "text", "text": "42"}]
    )
    assert result.json() == 42
    assert server.call_tool("lookup", {"id": "a1"}).json() == {"id": "a1", "value": 42}


def test_bad_calls_are_error_results_the_model_can_read(server):
    assert server.call_tool("nope", {}) == ToolResult(
        text="Unknown tool: nope", is_error=True, content=[{"type": "text", "text": "Unknown tool: nope"}]
    )
    missing = server.call_tool("lookup", {"id": "zz"})
    assert missing.is_error and missing.text == "Error executing tool lookup: no record with id 'zz'"
    invalid = server.call_tool("add", {"a": "two", "b": 1})
    assert invalid.is_error
    assert invalid.text.startswith("Error executing tool add: 1 validation error for addArguments\na\n")
    assert "Input should be a valid integer" in invalid.text
    with pytest.raises(ValueError, match="the call failed: Unknown tool: nope"):
        server.call_tool("nope", {}).json()


def test_a_protocol_error_from_the_server_is_an_environment_fault(server):
    with pytest.raises(McpServerError) as info:
        server.call_tool("internal", {})
    assert info.value.code == -32603 and info.value.server == "echo"
    assert str(info.value).startswith(
        f"MCP server 'echo' ({ECHO.command_line()}) failed on tools/call 'internal': "
        "database unavailable (JSON-RPC error -32603)"
    )
    assert not server.running  # stopped; the next call starts it again
    assert server.call_tool("echo", {"text": "back"}).text == "back"


def test_a_killed_server_raises_the_typed_error_and_the_next_call_restarts_it(server):
    server.call_tool("echo", {"text": "used"})  # killed after a use in this item: its work is lost
    old_pid, starts = server.pid, server.starts
    os.kill(old_pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while alive(old_pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    closed = r"failed on tools/call 'echo': Connection closed \(JSON-RPC error -32000\)"
    with pytest.raises(McpServerError, match=closed):
        server.call_tool("echo", {"text": "hi"})
    assert not server.running and server.pid is None
    assert server.call_tool("echo", {"text": "hi"}).text == "hi"
    assert server.starts == starts + 1 and server.pid != old_pid and alive(server.pid)


def test_a_server_that_exits_mid_call_raises_the_typed_error(server):
    with pytest.raises(McpServerError, match="failed on tools/call 'exit_now'") as info:
        server.call_tool("exit_now", {})
    assert info.value.code == -32000
    assert server.call_tool("add", {"a": 1, "b": 1}).text == "2"


def test_a_hung_server_times_out_as_an_environment_fault():
    spec = ServerSpec.of("echo", ECHO.command, ECHO.args, timeout_s=0.3)
    with McpServer(spec) as srv:
        pid = srv.pid
        with pytest.raises(McpServerError) as info:
            srv.call_tool("sleep", {"seconds": 1.0})
        assert info.value.code == -32001  # request timeout
    assert not alive(pid)


def test_a_server_that_cannot_start_names_its_command_and_stderr(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("import sys\nsys.stderr.write('boom: missing config file\\n')\nsys.exit(2)\n")
    srv = McpServer(ServerSpec.of("broken", sys.executable, [str(script)], timeout_s=5))
    with pytest.raises(McpServerError) as info:
        srv.start()
    message = str(info.value)
    assert message.startswith(f"MCP server 'broken' ({sys.executable} {script}) could not be started: ")
    assert message.endswith("server stderr (last lines):\nboom: missing config file")
    assert not srv.running and srv not in running_servers()
    with pytest.raises(McpServerError, match="could not be started: .*No such file"):
        McpServer(ServerSpec.of("missing", str(tmp_path / "no-such-binary"))).start()


def test_close_and_close_all_stop_the_processes(server, tmp_path):
    srv = shared_server(ECHO)
    assert shared_server(ECHO) is srv
    assert shared_server(ServerSpec.of("echo", ECHO.command, ECHO.args, timeout_s=6.0)) is not srv
    marked = ServerSpec.of(
        "echo", ECHO.command, ECHO.args, timeout_s=5.0, env={"EGI_ECHO_EXIT_MARK": str(tmp_path / "exit")}
    )
    other = shared_server(marked)
    srv.start()
    server.start()
    other.start()
    pids = [srv.pid, server.pid, other.pid]
    assert {srv, server, other} <= set(running_servers())
    close_all()
    # the server ran past its stdio loop: it exited on stdin EOF, not by SIGTERM escalation
    assert (tmp_path / "exit").read_text(encoding="utf-8") == "stdin closed"
    assert running_servers() == []
    assert not any(alive(p) for p in pids) and not set(pids) & _child_pids()
    srv.close()  # idempotent


def test_toolkit_maps_names_and_executes_every_call_on_the_server(server):
    kit = McpToolkit.of_servers(server)
    names = [s["function"]["name"] for s in kit.schemas()]
    assert names == ["echo", "add", "lookup", "ns_dotted", "no_args", "internal", "exit_now", "sleep"]
    no_args = next(s for s in kit.schemas() if s["function"]["name"] == "no_args")
    assert no_args["function"]["parameters"]["properties"] == {}
    assert kit.call("ns_dotted", "{}").content == "dotted ok"
    unknown = kit.call("get_teamz", '{"x": 1}')
    assert unknown.error and unknown.content == "Unknown tool: get_teamz"
    bad = kit.call("lookup", {"id": "zz"})
    assert bad.error and bad.content == "Error executing tool lookup: no record with id 'zz'"
    not_json = kit.call("echo", "{oops")
    assert not_json.error and not_json.content.startswith("Error: arguments are not valid JSON")
    assert kit.calls == [
        {"name": "ns.dotted", "arguments": {}, "error": False, "server": "echo"},
        {"name": "get_teamz", "arguments": {"x": 1}, "error": True, "server": "echo"},
        {"name": "lookup", "arguments": {"id": "zz"}, "error": True, "server": "echo"},
        {"name": "echo", "arguments": "{oops", "error": True},
    ]
    assert [r.is_error for r in kit.results] == [False, True, True]
    assert McpToolError("Unknown tool: x").observation == "Unknown tool: x"
    with pytest.raises(McpServerError):
        kit.call("internal", "{}")


INNER_TEST = textwrap.dedent(
    """
    import os, sys
    from pytest_egi.mcp.client import ServerSpec, shared_server

    SPEC = ServerSpec.of("echo", sys.executable, [{echo!r}])

    def test_uses_a_server():
        server = shared_server(SPEC)
        assert server.call_tool("echo", {{"text": "x"}}).text == "x"
        with open({out!r}, "a") as fh:
            fh.write(f"{{server.pid}}\\n")
    """
)


def test_no_server_is_left_behind_after_an_in_process_session(pytester):
    out = pytester.path / "pids.txt"
    pytester.makepyfile(test_inner=INNER_TEST.format(echo=ECHO.args[0], out=str(out)))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    (pid,) = [int(p) for p in out.read_text().split()]
    # this process is still running (no atexit yet): the plugin's unconfigure stopped it
    assert not alive(pid) and pid not in _child_pids()
