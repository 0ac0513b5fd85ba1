"""A pytest plugin for conformance runs (``-p tests.conformance.capture``): keeps every
``("egi", record)`` user property the controller receives, as received (before any JSON),
and pickles the list to the file named by ``EGI_CONFORMANCE_CAPTURE`` at session end.

A record that cannot be pickled is replaced by :class:`Unpicklable`, which the JSON-safety
check reports.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import pytest

_received: dict[str, Any] = {}


class Unpicklable:
    """Stands for a record that could not be pickled; ``text`` says why and shows its start."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"unpicklable record: {self.text}"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """The last ``egi`` user property of each item wins (as in the plugin's collector)."""
    for name, value in report.user_properties:
        if name == "egi":
            _received[report.nodeid] = value


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the received records, on the controller only."""
    path = os.environ.get("EGI_CONFORMANCE_CAPTURE")
    if not path or hasattr(session.config, "workerinput"):
        return
    kept = []
    for value in _received.values():
        try:
            pickle.dumps(value)
        except Exception as exc:
            value = Unpicklable(f"{type(exc).__name__}: {exc}: {value!r:.200}")
        kept.append(value)
    Path(path).write_bytes(pickle.dumps(kept))
