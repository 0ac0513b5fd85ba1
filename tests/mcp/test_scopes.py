"""Scopes of process-wide servers: ``release_scope`` stops the servers only that scope used
(the plugin's scope is a suite: its servers stop once a process has run its last item of it)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_egi.mcp import current_scope, enter_scope
from pytest_egi.mcp.client import ServerSpec, close_all, release_scope, running_servers, shared_server

ECHO = [str(Path(__file__).with_name("echo_server.py"))]
ONLY_A = ServerSpec.of("echo-scope-a", sys.executable, ECHO, timeout_s=10.0)
BOTH = ServerSpec.of("echo-scope-both", sys.executable, ECHO, timeout_s=10.0)


@pytest.fixture
def scoped():
    yield
    enter_scope(None)
    close_all()


def test_release_scope_stops_the_servers_only_that_scope_used(scoped):
    enter_scope("a")
    assert current_scope() == "a"
    only_a, both = shared_server(ONLY_A), shared_server(BOTH)
    only_a.call_tool("echo", {"text": "x"})
    both.call_tool("echo", {"text": "x"})
    enter_scope("b")
    both.call_tool("echo", {"text": "y"})
    assert only_a.scopes == {"a"} and both.scopes == {"a", "b"}

    assert release_scope("a") == [only_a]  # the other one is b's too
    assert not only_a.running and both.running and both.scopes == {"b"}
    assert only_a not in running_servers()

    first_pid = both.pid
    assert release_scope("b") == [both]
    assert not both.running and both.scopes == set()
    assert release_scope("b") == []  # nothing left of b

    # a stopped server starts again on its next use, in the scope of that use
    assert both.call_tool("echo", {"text": "z"}).text == "z"
    assert both.running and both.pid != first_pid and both.scopes == {"b"}


def test_a_server_started_outside_any_scope_is_never_released_by_one(scoped):
    enter_scope(None)
    server = shared_server(ONLY_A)
    server.start()
    assert server.scopes == set()
    assert release_scope("a") == []
    assert server.running


@pytest.mark.skipif(not __import__("pytest_egi.mcp.forkserver").mcp.forkserver.supported(),
                    reason="the fork server needs Linux")
def test_the_fork_server_stops_with_the_last_server_of_a_released_scope(scoped):
    """A forked server's fork server (the SDK's server side, about 50 MB) stops once no server
    of the process runs (before: it ran to the end of the session); the next server starts
    one again."""
    from pytest_egi.mcp import forkserver
    from suites._common.mcp_servers import server_spec

    enter_scope("a")
    calculator = shared_server(server_spec("calculator", 4243, timeout_s=30.0))
    calculator.start()
    (first,) = forkserver._servers.values()
    assert first.alive()
    enter_scope("b")
    echo = shared_server(ONLY_A)
    echo.call_tool("echo", {"text": "x"})
    assert release_scope("a") == [calculator]
    assert first.alive()  # b's server still runs
    assert release_scope("b") == [echo]
    assert not first.alive() and forkserver._servers == {}
    calculator.start()  # in scope b, with a new fork server
    (second,) = forkserver._servers.values()
    assert second is not first and second.alive()
