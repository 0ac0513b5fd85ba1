"""Server processes in acceptance runs: the live ones a checkout started (the MCP suites'
servers, Benchforce's environment server), and a plugin that kills MCP servers during a run,
mid-item or between items (both MCP suites' acceptance tests use it)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

_KILLER = """
import os, signal, time
import pytest
from pytest_egi.mcp import client as _client

TASK_ID = {task_id!r}
SERVER = {server!r}
WHEN = {when!r}

_original_call_tool = _client.McpServer.call_tool
_armed = []


def gone(pid):
    try:
        with open(f"/proc/{{pid}}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def kill(servers):
    for server in servers:
        pid = server.pid
        if pid is not None and (SERVER is None or server.spec.name == SERVER):
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while not gone(pid) and time.monotonic() < deadline:
                time.sleep(0.01)


def call_tool(self, name, arguments=None):
    if _armed and (SERVER is None or self.spec.name == SERVER):
        _armed.clear()
        kill([self])
    return _original_call_tool(self, name, arguments)


def pytest_configure(config):
    _client.McpServer.call_tool = call_tool


def pytest_unconfigure(config):
    _client.McpServer.call_tool = _original_call_tool


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    if item.nodeid.endswith(f"[{{TASK_ID}}]"):
        if WHEN == "between_items":
            kill(_client.running_servers())
        else:
            _armed.append(True)
"""


def server_pids(
    root: Path, seed: int | None, modules: Iterable[str], *, env_mark: str | None = None
) -> list[int]:
    """Pids of the live processes started from the checkout ``root`` (named in their
    environment) with one of ``modules`` (dotted server module names, e.g.
    ``suites._common.mcp_servers.airbnb``) as one argument; read from ``/proc`` (Linux). A
    process that ends while being read is skipped.

    Args:
        root: the checkout.
        seed: an argument the process must also have (the MCP servers get the run's seed);
            None: any.
        modules: the server modules.
        env_mark: a ``NAME=value`` entry the process's environment must hold (a server that
            takes no seed, like Benchforce's, is told apart from other runs' servers by a
            variable the test sets); None: any.
    """
    wanted = [m.encode() for m in modules]
    mark = env_mark.encode() if env_mark is not None else None
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            # a forked server's title is one string of space-separated words
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().rstrip(b"\0").replace(b" ", b"\0").split(b"\0")
            env = Path(f"/proc/{entry}/environ").read_bytes()
            if cmd[-1] == b"(forked)":
                # a fork of the MCP fork server: its title took the environment's place; the
                # fork server's own environment is the one it was started with
                parent = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1]
                env = Path(f"/proc/{parent}/environ").read_bytes()
        except OSError:
            continue
        ours = str(root).encode() in env and (seed is None or str(seed).encode() in cmd)
        if ours and mark is not None:
            ours = mark in env.split(b"\0")
        if ours and any(m in cmd for m in wanted):
            found.append(int(entry))
    return found


def killer_plugin(task_id: str, server: str | None = None, when: str = "mid_item") -> str:
    """Source of a pytest plugin (for ``pytester.makepyfile``) that SIGKILLs MCP servers during
    the item whose node id ends with ``[<task_id>]`` (only the server whose spec is named
    ``server``, when given) and waits up to 10 s for each to be gone.

    ``when``: ``"mid_item"``, as the item sends its first ``tools/call`` (after it listed the
    server's tools: a server that dies during an item; the item errors); ``"between_items"``,
    as the item's call phase starts, before it uses any server (a server that died between
    items: the item gets a fresh one)."""
    if when not in ("mid_item", "between_items"):
        raise ValueError(f"when must be 'mid_item' or 'between_items', not {when!r}")
    return _KILLER.format(task_id=task_id, server=server, when=when)


def process_gone(pid: int, within: float = 10.0) -> bool:
    """True once ``pid`` is no process, or a zombie its new parent has yet to reap (polled
    every 0.05 s for up to ``within`` seconds); False when it still runs after that."""
    deadline = time.monotonic() + within
    while True:
        try:
            os.kill(pid, 0)
            stat = Path(f"/proc/{pid}/stat").read_text()
        except (ProcessLookupError, FileNotFoundError):
            return True
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
