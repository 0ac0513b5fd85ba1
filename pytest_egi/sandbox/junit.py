"""Reading a JUnit XML report (what ``pytest --junitxml`` writes) into test outcomes.

Test results in the sandbox come from this file, never from a process's stdout text: a
printed ``PASSED`` or ``ok`` proves nothing (LoCoBench's unit-test metric counted such
substrings, reference B8.3). The file may be written by untrusted code, so it is read with a
size cap and any malformed content is "no report" rather than an exception.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = ["MAX_JUNIT_BYTES", "JUnitCase", "JUnitReport", "parse_junit", "parse_junit_text"]

MAX_JUNIT_BYTES = 8_000_000
"""A report larger than this (bytes) is not read (an answer flooding the report is no report)."""
MAX_MESSAGE_CHARS = 500
"""Characters of a failure message kept per test case."""

Outcome = Literal["passed", "failed", "error", "skipped"]


@dataclass(frozen=True)
class JUnitCase:
    """One ``<testcase>``.

    Attributes:
        classname: the ``classname`` attribute (pytest: the dotted module path, plus the class).
        name: the ``name`` attribute (the test function, with its parameters).
        outcome: ``passed``, ``failed`` (a ``<failure>``), ``error`` (an ``<error>``: setup,
            teardown or collection) or ``skipped``.
        message: the failure, error or skip message (its ``message`` attribute, else the
            start of its text), at most :data:`MAX_MESSAGE_CHARS` characters; "" when passed.
    """

    classname: str
    name: str
    outcome: Outcome
    message: str = ""

    @property
    def nodeid(self) -> str:
        """``classname::name`` (``pkg.tests.test_x::test_y``)."""
        return f"{self.classname}::{self.name}"


@dataclass(frozen=True)
class JUnitReport:
    """All test cases of one report, in file order.

    Attributes:
        cases: the test cases.
        errors: the ``errors`` count of the report's test suites that no ``<testcase>`` holds
            (pytest reports a collection error of a whole file as a test case, so this is
            normally 0).
    """

    cases: tuple[JUnitCase, ...] = field(default_factory=tuple)
    errors: int = 0

    def count(self, outcome: Outcome) -> int:
        """How many cases ended with ``outcome``."""
        return sum(1 for c in self.cases if c.outcome == outcome)

    @property
    def passed(self) -> int:
        """Cases that passed."""
        return self.count("passed")

    @property
    def total(self) -> int:
        """Cases in the report (skipped ones included)."""
        return len(self.cases)


def _message(element: ET.Element) -> str:
    text = element.get("message") or (element.text or "").strip().splitlines()[0:1]
    if isinstance(text, list):
        text = text[0] if text else ""
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 3] + "..."


def _case(element: ET.Element) -> JUnitCase:
    outcome: Outcome = "passed"
    message = ""
    for child in element:
        tag = child.tag
        if tag in ("failure", "error", "skipped"):
            outcome = "failed" if tag == "failure" else tag  # type: ignore[assignment]
            message = _message(child)
            if tag != "skipped":
                break
    return JUnitCase(element.get("classname") or "", element.get("name") or "", outcome, message)


def parse_junit_text(text: str) -> JUnitReport | None:
    """Parse a JUnit XML document (``<testsuites>`` or a single ``<testsuite>``).

    Returns:
        The report, or None when ``text`` is not a JUnit XML document.
    """
    try:
        root = ET.fromstring(text)
    except (ET.ParseError, ValueError):
        return None
    suites = (
        [root]
        if root.tag == "testsuite"
        else list(root.iter("testsuite"))
        if root.tag == "testsuites"
        else []
    )
    if not suites:
        return None
    cases: list[JUnitCase] = []
    suite_errors = 0
    for suite in suites:
        own = [_case(tc) for tc in suite.findall("testcase")]
        cases.extend(own)
        try:
            declared = int(suite.get("errors") or 0)
        except ValueError:
            declared = 0
        suite_errors += max(0, declared - sum(1 for c in own if c.outcome == "error"))
    return JUnitReport(tuple(cases), suite_errors)


def parse_junit(path: str | Path) -> JUnitReport | None:
    """Parse the JUnit XML file at ``path``.

    Returns:
        The report; None when the file is missing, larger than :data:`MAX_JUNIT_BYTES`, not
        UTF-8 or not a JUnit XML document (the run wrote no usable report).
    """
    p = Path(path)
    try:
        if not p.is_file() or p.is_symlink() or p.stat().st_size > MAX_JUNIT_BYTES:
            return None
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return parse_junit_text(text)
