"""Ctrl-C in two steps: the first stops the run after the items in flight, the second at once.

A deep run against a real model costs hours and money; a Ctrl-C that threw away the items
half done would waste them, and one that did not stop at all would leave no way out. So the
plugin replaces Python's default SIGINT handler (only that one: a handler someone else
installed is left alone) for the session:

- the first SIGINT calls the session's ``on_first`` (the controller stops scheduling, each
  process stops after its current item; see ``pytest_egi.plugin``) and returns, so the item
  in flight finishes and is recorded;
- the second restores the previous handler and raises ``KeyboardInterrupt`` where the
  program is, pytest's own interruption: whatever finished is already in the run's journal;
- once the items are over (:meth:`TwoStepInterrupt.wrap_up`), Ctrl-C is ignored while the
  report is written.

Under pytest-xdist a terminal's Ctrl-C reaches the controller and every local worker (one
process group); each handles it the same way.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["TwoStepInterrupt", "interrupt_reason"]

_requested: str | None = None


def interrupt_reason() -> str | None:
    """Why this process was asked to stop by a first Ctrl-C, or None."""
    return _requested


class TwoStepInterrupt:
    """Install with :meth:`install`, remove with :meth:`uninstall` (both idempotent).

    Args:
        reason: the stop reason recorded for the first Ctrl-C (``interrupted by Ctrl-C``).
        on_first: called (in the main thread, from the signal handler) on the first SIGINT.
    """

    def __init__(self, reason: str, on_first: Callable[[], None] | None = None) -> None:
        self.reason = reason
        self.on_first = on_first
        self.previous: Any = None
        self.installed = False
        self.wrapping_up = False

    def install(self) -> bool:
        """Take over SIGINT when Python's default handler holds it, in the main thread.

        Returns:
            True when installed.
        """
        if self.installed or threading.current_thread() is not threading.main_thread():
            return False
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return False
        self.previous = signal.signal(signal.SIGINT, self._handle)
        self.installed = True
        return True

    def wrap_up(self) -> None:
        """The items are over (the run loop ended): from now on a Ctrl-C is ignored, so it
        cannot cut the writing of the run's report short (that takes about a second)."""
        self.wrapping_up = True

    def uninstall(self) -> None:
        """Give SIGINT back to the handler that held it before, and forget a request."""
        global _requested
        if self.installed and signal.getsignal(signal.SIGINT) == self._handle:
            signal.signal(signal.SIGINT, self.previous)
        self.installed = False
        _requested = None

    def _handle(self, signum: int, frame: Any) -> None:
        global _requested
        if self.wrapping_up:
            return
        if _requested is not None:  # the second Ctrl-C: stop at once
            signal.signal(signal.SIGINT, self.previous)
            self.installed = False
            raise KeyboardInterrupt("a second Ctrl-C: stopped at once")
        _requested = self.reason
        if self.on_first is not None:
            self.on_first()
