"""``--junitxml``: each test case's ``egi`` property written as JSON (registered only with
``--junitxml``, on the controller)."""

from __future__ import annotations

import pytest

__all__ = ["JunitXmlJson"]


class JunitXmlJson:
    """With ``--junitxml``, the ``egi`` property of each test case is the record as JSON.

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
