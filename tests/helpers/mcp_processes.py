"""Server processes in acceptance runs: the live ones a checkout started (the MCP suites'
servers, Benchforce's environment server), and a plugin that kills MCP servers in the middle of
a run (both MCP suites' acceptance tests use it)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

_KILLER = """
import os, signal, time
import pytest

TASK_ID = {task_id!r}
SERVER = {server!r}


def gone(pid):
    try:
        with open(f"/proc/{{pid}}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    if item.nodeid.endswith(f"[{{TASK_ID}}]"):
        from pytest_egi.mcp.client import running_servers
        for server in running_servers():
            if SERVER is None or server.spec.name == SERVER:
                os.kill(server.pid, signal.SIGKILL)
                deadline = time.monotonic() + 10
                while not gone(server.pid) and time.monotonic() < deadline:
                    time.sleep(0.01)
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
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            env = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        ours = str(root).encode() in env and (seed is None or str(seed).encode() in cmd)
        if ours and mark is not None:
            ours = mark in env.split(b"\0")
        if ours and any(m in cmd for m in wanted):
            found.append(int(entry))
    return found


def killer_plugin(task_id: str, server: str | None = None) -> str:
    """Source of a pytest plugin (for ``pytester.makepyfile``) that, as the call phase of the
    item whose node id ends with ``[<task_id>]`` starts, SIGKILLs the running MCP servers
    (only the one whose spec is named ``server``, when given) and waits up to 10 s for each
    to be gone."""
    return _KILLER.format(task_id=task_id, server=server)
