"""Our Python MCP servers start as forks of one warm process (pytest_egi.mcp.forkserver): they
answer as spawned ones do, a restart does not import the SDK again, and every way a server,
its launcher, the fork server or their parent can end leaves no process behind."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_egi.mcp import forkserver
from pytest_egi.mcp.client import McpServer, McpServerError, ServerSpec, close_all
from suites._common.mcp_servers import PRELOAD, server_spec
from tests.helpers.mcp_processes import process_gone

pytestmark = pytest.mark.skipif(not forkserver.supported(), reason="the fork server needs Linux")

ROOT = Path(__file__).resolve().parents[2]
SPEC = server_spec("calculator", 4242, timeout_s=30.0)
MODULE = "suites._common.mcp_servers.calculator"


def gone(pid: int, within: float = 10.0) -> bool:
    """Whether ``pid`` is no process (or a zombie) within ``within`` seconds."""
    return process_gone(pid, within)


def children(pid: int) -> list[int]:
    """The live (not zombie) children of ``pid``."""
    return sorted(child for child, state in forkserver.children_of(pid).items() if state not in ("Z", "X"))


def cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").decode().split("\0")


def the_fork_server() -> forkserver.ForkServer:
    (server,) = forkserver._servers.values()
    return server


@pytest.fixture
def server():
    srv = McpServer(SPEC)
    yield srv
    close_all()


def test_a_forked_server_answers_as_a_spawned_one_and_restarts_without_a_new_fork_server(server):
    server.start()
    assert cmdline(server.pid)[1:5] == ["-I", "-S", forkserver.__file__, "launch"]
    assert cmdline(server.pid)[-4:] == ["-m", MODULE, "--seed", "4242"]
    zygote = the_fork_server()
    (fork,) = children(zygote.pid)
    assert cmdline(fork) == [f"{Path(sys.executable).name} -m {MODULE} --seed 4242 (forked)"]
    forked = [
        server.call_tool("calculate", {"expression": e}) for e in ("(1250.5 - 1100) / 1100 * 100", "1/0")
    ]
    with McpServer(dataclasses.replace(SPEC, preload=())) as spawned:
        assert cmdline(spawned.pid)[1:] == ["-m", MODULE, "--seed", "4242"]
        assert [t.name for t in spawned.list_tools()] == [t.name for t in server.list_tools()]
        assert forked == [spawned.call_tool("calculate", {"expression": e}) for e in
                          ("(1250.5 - 1100) / 1100 * 100", "1/0")]  # fmt: skip
    assert forked[1].is_error and forked[1].text == "Error executing tool calculate: division by zero"
    server.close()
    assert gone(fork) and children(zygote.pid) == []
    server.start()
    assert the_fork_server() is zygote and zygote.alive()  # the SDK was imported once
    assert server.call_tool("calculate", {"expression": "6*7"}).text == "42"


def test_a_killed_launcher_is_a_dead_server_at_once_and_its_fork_is_killed(server):
    assert server.call_tool("calculate", {"expression": "1+1"}).text == "2"
    (fork,) = children(the_fork_server().pid)
    launcher = server.pid
    os.kill(launcher, signal.SIGKILL)
    assert gone(launcher)
    # no wait for the fork: the launcher's pipes were the connection
    with pytest.raises(McpServerError, match=r"failed on tools/call 'calculate': Connection closed"):
        server.call_tool("calculate", {"expression": "2+2"})
    assert gone(fork)
    assert server.call_tool("calculate", {"expression": "3+3"}).text == "6"
    assert server.pid != launcher


def test_a_fork_that_dies_ends_its_launcher(server):
    assert server.call_tool("calculate", {"expression": "1+1"}).text == "2"  # used in this item
    (fork,) = children(the_fork_server().pid)
    os.kill(fork, signal.SIGKILL)
    assert gone(server.pid)
    with pytest.raises(McpServerError, match="Connection closed"):
        server.call_tool("calculate", {"expression": "2+2"})


def test_a_dead_fork_server_is_replaced_and_its_forks_end_with_it(server):
    assert server.call_tool("calculate", {"expression": "1+1"}).text == "2"  # used in this item
    zygote = the_fork_server()
    (fork,) = children(zygote.pid)
    launcher = server.pid
    os.kill(zygote.pid, signal.SIGKILL)
    assert gone(fork) and gone(launcher) and gone(zygote.pid)  # the launcher kills its fork
    with pytest.raises(McpServerError):
        server.call_tool("calculate", {"expression": "2+2"})
    assert server.call_tool("calculate", {"expression": "2+2"}).text == "4"
    assert the_fork_server() is not zygote


def test_close_all_leaves_no_process_and_no_socket(server):
    server.start()
    zygote = the_fork_server()
    (fork,) = children(zygote.pid)
    launcher, folder = server.pid, Path(zygote.socket_path).parent
    close_all()
    assert gone(launcher, 0) and gone(fork, 0) and gone(zygote.pid, 0)
    assert forkserver._servers == {} and not folder.exists()


def test_the_fork_server_and_its_forks_die_with_their_parent(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys
        sys.path[:0] = [{str(ROOT)!r}]
        from pytest_egi.mcp.client import McpServer
        from pytest_egi.mcp import forkserver
        from suites._common.mcp_servers import server_spec
        server = McpServer(server_spec("calculator", 4243))
        server.start()
        (zygote,) = forkserver._servers.values()
        print(server.pid, zygote.pid, zygote.socket_path, flush=True)
        sys.stdin.read()
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    launcher, zygote, socket_path = parent.stdout.readline().split()
    launcher, zygote = int(launcher), int(zygote)
    (fork,) = children(zygote)
    parent.kill()  # no close_all, no atexit
    parent.wait()
    assert gone(zygote) and gone(fork) and gone(launcher)
    assert not Path(socket_path).parent.exists()  # the fork server removed its folder


def test_a_server_module_that_cannot_be_found_fails_to_start_as_a_spawned_one_does(server):
    messages = []
    for preload in (PRELOAD, ()):
        broken = ServerSpec.of(
            "broken", sys.executable, ["-m", "no_such_egi_module", "--seed", "1"],
            env=dict(SPEC.env), timeout_s=10.0, preload=preload,
        )  # fmt: skip
        with pytest.raises(McpServerError) as info:
            McpServer(broken).start()
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith(
        f"MCP server 'broken' ({sys.executable} -m no_such_egi_module --seed 1) could not be started: "
    )
    assert messages[0].endswith(
        f"server stderr (last lines):\n{sys.executable}: No module named no_such_egi_module"
    )


def test_a_server_that_fails_at_import_shows_its_traceback(server, tmp_path):
    (tmp_path / "egi_failing_server.py").write_text("raise RuntimeError('no world for seed 1')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), dict(SPEC.env)["PYTHONPATH"]])}
    failing = ServerSpec.of("failing", sys.executable, ["-m", "egi_failing_server"], env=env, timeout_s=10.0,
                            preload=PRELOAD)  # fmt: skip
    with pytest.raises(McpServerError) as info:
        McpServer(failing).start()
    assert 'egi_failing_server.py", line 1, in <module>' in str(info.value)
    assert str(info.value).endswith("RuntimeError: no world for seed 1")


def test_egi_mcp_fork_0_spawns_every_server(server, monkeypatch):
    monkeypatch.setenv("EGI_MCP_FORK", "0")
    server.start()
    assert cmdline(server.pid)[1:] == ["-m", MODULE, "--seed", "4242"]
    assert forkserver._servers == {}


def test_preload_needs_a_python_m_command():
    with pytest.raises(ValueError) as info:
        ServerSpec.of("node", "node", ["server.js"], preload=PRELOAD)
    assert str(info.value) == (
        f"MCP server 'node': preload needs the command `{sys.executable} -m MODULE ...`, got `node server.js`"
    )
