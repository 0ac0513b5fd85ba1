"""``--junitxml``: each test case's ``egi`` property written as JSON, and the run's result (EGI,
its interval, the six buckets, the release gate) as the test suite's properties (registered
only with ``--junitxml``, on the controller)."""

from __future__ import annotations

import json

import pytest

__all__ = ["JunitXmlJson", "suite_properties"]


def suite_properties(summary: dict[str, object]) -> list[tuple[str, str]]:
    """The ``<testsuite><properties>`` entries of a run: one per field of
    :func:`pytest_egi.report.summary.egi_summary`, named ``egi`` (the EGI) or ``egi_<field>``
    (``egi_ci95``, ``egi_M1`` .. ``egi_M6``, ``egi_M1_ci95``, ``egi_gate``, ``egi_gate_reason``,
    ``egi_run_dir``, ...): a text as it is (``NOT READY``, so a CI tool compares it as written),
    anything else as JSON (``92.373333``, ``null``, ``[36.4, 36.4]``, ``true``)."""
    return [(key if key.startswith("egi") else f"egi_{key}",
             value if isinstance(value, str) else json.dumps(value, sort_keys=True))
            for key, value in summary.items()]


class JunitXmlJson:
    """With ``--junitxml``, the ``egi`` property of each test case is the record as JSON, and
    the test suite's properties carry the run's result (:func:`suite_properties`).

    pytest's junitxml writes a user property as ``str(value)``, a Python repr for a dict.
    Before it sees a report (``tryfirst``), each ``egi`` record is wrapped in a
    :class:`~pytest_egi.records.JsonRecord` (still a dict for every other reader). Only on
    the controller: records cross xdist as plain dicts.
    """

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        from pytest_egi.records import JsonRecord

        if any(name == "egi" for name, _ in report.user_properties):
            report.user_properties = [
                (name, JsonRecord(value) if name == "egi" and isinstance(value, dict) else value)
                for name, value in report.user_properties
            ]

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Add the run's result to the XML's global properties: after the EGI session wrote
        egi.json (its ``tryfirst`` hook runs first: this object is registered before it) and
        before junitxml writes the file (its hook is not ``tryfirst``). Nothing when no
        egi.json was written (no EGI item ran, a usage error)."""
        from _pytest.junitxml import xml_key

        from pytest_egi.report.summary import read_summary
        from pytest_egi.run.state import SESSION_KEY

        xml = session.config.stash.get(xml_key, None)
        egi_session = session.config.stash.get(SESSION_KEY, None)
        if xml is None or egi_session is None:
            return
        summary = read_summary(getattr(egi_session, "written", None) or {})
        if summary is not None:
            for name, value in suite_properties(summary):
                xml.add_global_property(name, value)
