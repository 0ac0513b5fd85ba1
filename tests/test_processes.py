"""Stopping a server subprocess in bounded time (``pytest_egi.processes.stop_process``), and the
model gateway's stop that uses it: a process that ignores SIGTERM, one that is frozen, one that
survives SIGKILL (a stand-in: a real one is a process stuck in uninterruptible sleep), and the
children left in its process group."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

from pytest_egi.models.gateway import GatewayProcess
from pytest_egi.processes import stop_process
from tests.helpers.mcp_processes import process_gone

STUBBORN = (
    "import signal, subprocess, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
    "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'])\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(600)\n"
)
"""Ignores SIGTERM and its stdin, and leaves a child in its group that ignores SIGTERM too."""




def _in_thread(target, *args, **kwargs) -> tuple[threading.Thread, list, float]:
    """Run ``target`` in a daemon thread, joined for at most 30 s: (thread, [result], seconds)."""
    out: list = []
    thread = threading.Thread(target=lambda: out.append(target(*args, **kwargs)), daemon=True)
    began = time.monotonic()
    thread.start()
    thread.join(30)
    return thread, out, time.monotonic() - began


def _kill(*pids: int) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def test_a_process_that_ignores_sigterm_is_killed_with_its_group():
    proc = subprocess.Popen([sys.executable, "-c", STUBBORN], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, start_new_session=True)  # fmt: skip
    child = int(proc.stdout.readline())
    try:
        thread, out, took = _in_thread(stop_process, proc, grace_s=0.5, term_s=0.5, kill_s=5)
        assert not thread.is_alive() and out == [True]
        assert took < 8  # 0.5 s after stdin closes, 0.5 s after SIGTERM, then SIGKILL
        assert proc.returncode == -signal.SIGKILL
        assert process_gone(child)  # SIGKILL went to the whole group
        assert proc.stdout.closed
    finally:
        _kill(proc.pid, child)


def test_a_frozen_process_is_stopped_by_its_sigterm():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        thread, out, _ = _in_thread(stop_process, proc, graceful=False, term_s=5, kill_s=5)
        assert not thread.is_alive() and out == [True]
        assert proc.returncode == -signal.SIGTERM  # SIGCONT after SIGTERM: it acted on it
    finally:
        _kill(proc.pid)


class _Unkillable:
    """A stand-in for a child that survives SIGKILL (uninterruptible sleep): ``wait()``
    without a timeout never returns, ``wait(t)`` times out after ``t``."""

    pid = 2**22 + 1  # no such process; never signalled (group=False, send_signal is a no-op)
    stdin = stdout = stderr = None
    returncode = None

    def __init__(self) -> None:
        self.signals: list[int] = []

    def poll(self):
        return None

    def send_signal(self, sig: int) -> None:
        self.signals.append(sig)

    def terminate(self) -> None:
        self.signals.append(signal.SIGTERM)

    def kill(self) -> None:
        self.signals.append(signal.SIGKILL)

    def wait(self, timeout: float | None = None):
        if timeout is None:
            threading.Event().wait()  # forever
        time.sleep(timeout)
        raise subprocess.TimeoutExpired("stand-in", timeout)


def test_a_process_that_survives_sigkill_is_given_up_on_in_bounded_time():
    proc = _Unkillable()
    thread, out, took = _in_thread(stop_process, proc, group=False, grace_s=0.1, term_s=0.1, kill_s=0.1)
    assert not thread.is_alive() and out == [False]
    assert took < 5 and proc.signals == [signal.SIGTERM, signal.SIGCONT, signal.SIGKILL]


def test_the_gateway_stop_is_bounded(tmp_path):
    # its stop waited for the killed process without a timeout: a gateway stuck past SIGKILL
    # kept the session from ending
    directory = tmp_path / "gw"
    directory.mkdir()
    gateway = GatewayProcess(str(directory / "gateway.sock"), _Unkillable(), str(directory))  # type: ignore[arg-type]
    thread, _, _ = _in_thread(gateway.stop, 0.1)
    assert not thread.is_alive(), "GatewayProcess.stop still waiting after 30 s"
    assert not directory.exists()
