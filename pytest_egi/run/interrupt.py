"""Ctrl-C and SIGTERM in two steps: the first stops the run after the items in flight, the
second at once.

A deep run against a real model costs hours and money; a Ctrl-C that threw away the items
half done would waste them, and one that did not stop at all would leave no way out. A
SIGTERM (``kill PID``, a CI job's timeout, ``docker stop``, a Kubernetes pod's deletion, a
batch scheduler's preemption) is the same request from a program, so it is handled the same
way. The plugin replaces Python's default handler of each signal (only that one: a handler
someone else installed, or an inherited ignore, is left alone) for the session:

- the first SIGINT or SIGTERM calls the session's ``on_first`` with the stop reason
  (:data:`REASONS`: the controller stops scheduling, each process stops after its current
  item; see ``pytest_egi.run.items``) and returns, so the item in flight finishes and is
  recorded, and the run ends ``interrupted`` (exit status 2);
- the second (either signal) restores the previous handlers and raises ``KeyboardInterrupt``
  where the program is, pytest's own interruption: whatever finished is already in the run's
  journal, and the run still ends ``interrupted``; a third SIGTERM then ends the process at
  once, as Python's default does;
- once the items are over (:meth:`TwoStepInterrupt.wrap_up`), both are ignored while the
  report is written (about a second).

Under pytest-xdist a terminal's Ctrl-C reaches the controller and every local worker (one
process group); each handles it the same way. A SIGTERM sent to the controller alone reaches
the workers as the controller's stop request (``pytest_egi.cache.shared.request_stop``).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["INTERRUPT_KEY", "REASONS", "TwoStepInterrupt", "install_for", "interrupt_reason", "uninstall_for",
           "wrap_up_for"]

REASONS = {signal.SIGINT: "interrupted by Ctrl-C", signal.SIGTERM: "interrupted by SIGTERM"}
"""The stop reason recorded for the first of each signal (``egi.json``'s
``session.stop_reason``, ``run.json``'s ``stop_reason``, the EGI headline)."""

_DEFAULTS = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
_NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}

_requested: str | None = None


def interrupt_reason() -> str | None:
    """Why this process was asked to stop by a first Ctrl-C or SIGTERM (:data:`REASONS`), or None."""
    return _requested


class TwoStepInterrupt:
    """Install with :meth:`install`, remove with :meth:`uninstall` (both idempotent).

    Args:
        on_first: called (in the main thread, from the signal handler) on the first SIGINT or
            SIGTERM, with its stop reason (a value of :data:`REASONS`).
    """

    def __init__(self, on_first: Callable[[str], None] | None = None) -> None:
        self.on_first = on_first
        self.previous: dict[int, Any] = {}
        self.installed = False
        self.wrapping_up = False

    def install(self) -> bool:
        """Take over SIGINT and SIGTERM where Python's default handler holds them, in the
        main thread.

        Returns:
            True when at least one of them was taken over.
        """
        if self.installed or threading.current_thread() is not threading.main_thread():
            return False
        for signum, default in _DEFAULTS.items():
            if signal.getsignal(signum) is default:
                self.previous[signum] = signal.signal(signum, self._handle)
        self.installed = bool(self.previous)
        return self.installed

    def wrap_up(self) -> None:
        """The items are over (the run loop ended): from now on a Ctrl-C or SIGTERM is
        ignored, so it cannot cut the writing of the run's report short (about a second)."""
        self.wrapping_up = True

    def uninstall(self) -> None:
        """Give each signal back to the handler that held it before, and forget a request."""
        global _requested
        self._restore()
        _requested = None

    def _restore(self) -> None:
        for signum, previous in self.previous.items():
            if signal.getsignal(signum) == self._handle:
                signal.signal(signum, previous)
        self.previous = {}
        self.installed = False

    def _handle(self, signum: int, frame: Any) -> None:
        global _requested
        if self.wrapping_up:
            return
        if _requested is not None:  # the second signal: stop at once
            self._restore()
            raise KeyboardInterrupt(f"a second {_NAMES.get(signum, signum)}: stopped at once")
        _requested = REASONS[signal.Signals(signum)]
        if self.on_first is not None:
            self.on_first(_requested)


INTERRUPT_KEY = pytest.StashKey[TwoStepInterrupt]()
"""config.stash: the session's two-step Ctrl-C / SIGTERM handling (a run with a model)."""


def install_for(config: pytest.Config, on_first: Callable[[str], Any] | None) -> None:
    """Install the two-step handling for this session; ``on_first`` is the controller
    session's ``interrupt`` (None in a process without one, e.g. an xdist worker)."""
    interrupt = TwoStepInterrupt(on_first)
    interrupt.install()
    config.stash[INTERRUPT_KEY] = interrupt


def wrap_up_for(config: pytest.Config) -> None:
    """The items are over: a further Ctrl-C no longer interrupts (:meth:`TwoStepInterrupt.wrap_up`)."""
    interrupt = config.stash.get(INTERRUPT_KEY, None)
    if interrupt is not None:
        interrupt.wrap_up()


def uninstall_for(config: pytest.Config) -> None:
    """Give the signals back to the handlers they had before the session."""
    interrupt = config.stash.get(INTERRUPT_KEY, None)
    if interrupt is not None:
        del config.stash[INTERRUPT_KEY]
        interrupt.uninstall()
