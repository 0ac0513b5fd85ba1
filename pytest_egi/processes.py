"""Stopping a server subprocess in bounded time (shared by every harness-side server).

A server the harness started (a suite's environment server, the model gateway) must stop
however it is stuck: one that hangs in a handler, ignores SIGTERM or left children behind
must not keep the session waiting. :func:`stop_process` never waits without a bound: it
asks the process to end (closing its stdin, then SIGTERM), waits a bounded time after each
step, and finally SIGKILLs the process's whole group. The MCP client bounds its own stop
the same way (``pytest_egi.mcp.client``: close, bounded wait, kill the group).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

__all__ = ["STOP_GRACE_S", "STOP_KILL_S", "STOP_TERM_S", "stop_process"]

STOP_GRACE_S = 2.0
"""Seconds a process gets to exit after its stdin is closed (a server that serves until
its stdin closes ends cleanly here)."""
STOP_TERM_S = 2.0
"""Seconds a process gets to exit after SIGTERM."""
STOP_KILL_S = 5.0
"""Seconds to wait for the process to be reaped after SIGKILL (the kernel delivers it
asynchronously; a process in uninterruptible sleep can take longer, and is then left)."""


def _leads_group(proc: subprocess.Popen) -> bool:
    """True when the running ``proc`` leads its own process group (started with
    ``start_new_session=True``), so signalling the group cannot reach this process."""
    try:
        return os.getpgid(proc.pid) == proc.pid != os.getpgid(0)
    except OSError:  # already exited and reaped
        return False


def _signal(proc: subprocess.Popen, sig: int, group: bool) -> None:
    with contextlib.suppress(OSError):
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)


def _wait(proc: subprocess.Popen, seconds: float) -> bool:
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def stop_process(
    proc: subprocess.Popen,
    *,
    group: bool | None = None,
    graceful: bool = True,
    grace_s: float = STOP_GRACE_S,
    term_s: float = STOP_TERM_S,
    kill_s: float = STOP_KILL_S,
) -> bool:
    """Stop ``proc`` and everything in its process group, waiting at most
    ``grace_s + term_s + kill_s`` seconds (about 9 s by default) in all.

    Steps: close its stdin and wait ``grace_s`` (skipped when ``graceful`` is False: a
    process known to be stuck is not waited for); SIGTERM (and SIGCONT, so a stopped process
    acts on it) and wait ``term_s``; SIGKILL and
    wait ``kill_s``. The signals go to the process's group when it leads one
    (``start_new_session=True``), so its children stop with it; after the process exited
    on its own, whatever is left of its group is SIGKILLed. Its stdout and stderr pipes are
    closed. Safe to call on a process that already exited.

    Args:
        proc: a child of this process.
        group: whether ``proc`` was started as the leader of its own process group
            (``start_new_session=True``); None asks the system while it runs. Say so when it
            is known: a leader already reaped cannot be asked, and its children are then
            only reached through this.
        graceful: close stdin and wait ``grace_s`` before signalling.
        grace_s, term_s, kill_s: the bounded waits, in seconds.

    Returns:
        True when the process exited and was reaped; False when it was still there after
        SIGKILL and ``kill_s`` (it is then left to the kernel; the caller goes on).
    """
    if group is None:
        group = _leads_group(proc)
    if proc.poll() is None:
        with contextlib.suppress(OSError, ValueError):
            if proc.stdin is not None:
                proc.stdin.close()
        done = graceful and _wait(proc, grace_s)
        if not done:
            _signal(proc, signal.SIGTERM, group)
            _signal(proc, signal.SIGCONT, group)  # a stopped (frozen) process acts on it only now
            done = _wait(proc, term_s)
        if not done:
            _signal(proc, signal.SIGKILL, group)
            _wait(proc, kill_s)
    if group:  # children left in the group (the leader may already be gone)
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        with contextlib.suppress(OSError, ValueError):
            if stream is not None:
                stream.close()
    return proc.poll() is not None
