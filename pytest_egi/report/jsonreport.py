"""pytest-json-report (``--json-report``): each test's entry carries its record under
``metadata.egi``, and the report's ``summary.egi`` carries the run's result (EGI, its interval,
the six buckets, the release gate: :func:`pytest_egi.report.summary.egi_summary`).

Registered only when the json-report plugin is loaded and ``--json-report`` is given
(:func:`register`), on the controller and on every xdist worker: its hooks are pytest-json-
report's own hookspecs, which pytest would report as unknown hooks without it."""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["JsonReportEgi", "register"]

PLUGIN_NAME = "egi-json-report"


def register(config: pytest.Config) -> None:
    """Register :class:`JsonReportEgi` when pytest-json-report is loaded (not disabled by
    ``-p no:pytest_jsonreport``) and its ``--json-report`` option is given."""
    if not config.pluginmanager.hasplugin("pytest_jsonreport"):
        return
    if not getattr(config.option, "json_report", False):
        return
    if config.pluginmanager.get_plugin(PLUGIN_NAME) is None:
        config.pluginmanager.register(JsonReportEgi(config), PLUGIN_NAME)


class JsonReportEgi:
    """The hooks pytest-json-report calls (its ``pytest_json_runtest_metadata`` and
    ``pytest_json_modifyreport`` hookspecs)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_json_runtest_metadata(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        """``{"egi": record}`` once the item's record is final (its teardown report), in the
        process that ran the item (an xdist worker sends it with the report); the record as
        junit's ``egi`` property and ``records.jsonl`` hold it (with its ``timing``)."""
        if call.when != "teardown":
            return None
        from pytest_egi.run.state import ITEM_KEY

        state = item.stash.get(ITEM_KEY, None)
        record = state.record if state is not None else None
        return {"egi": dict(record)} if record is not None else None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """On the controller, before pytest-json-report reads the report: an item whose xdist
        worker crashed has no metadata from that worker (its report is made by xdist, with
        ``when="???"``); its error record (the session's) becomes its ``metadata.egi``."""
        if report.when != "???":
            return
        record = next((v for n, v in report.user_properties if n == "egi" and isinstance(v, dict)), None)
        if record is not None:
            extra = getattr(report, "_json_report_extra", None) or {}
            extra.setdefault("metadata", {})["egi"] = dict(record)
            report._json_report_extra = extra  # type: ignore[attr-defined]

    def pytest_json_modifyreport(self, json_report: dict[str, Any]) -> None:
        """On the controller: ``summary.egi`` is the run's result, read from the egi.json the
        EGI session wrote; when pytest-json-report builds its report before the session has
        written it (both hooks are ``tryfirst``: their order is their plugins' registration
        order), :meth:`pytest_sessionfinish` adds it and saves the report again."""
        self._add_summary(json_report)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """After every ``pytest_sessionfinish`` (egi.json written, the JSON report saved): add
        the summary the report lacks and save it again, to the same file."""
        plugin = getattr(self.config, "_json_report", None)
        report = getattr(plugin, "report", None)
        if hasattr(self.config, "workerinput") or not isinstance(report, dict):
            return
        if "egi" in report.get("summary", {}):
            return
        if self._add_summary(report) and self.config.option.json_report_file:
            try:
                plugin.save_report(self.config.option.json_report_file)
            except OSError:  # pytest-json-report's own save said so already, or will
                pass

    def _add_summary(self, json_report: dict[str, Any]) -> bool:
        """Put the run's result in ``json_report["summary"]["egi"]``; False when no egi.json
        was written (yet, or at all: no EGI item ran, a usage error)."""
        from pytest_egi.report.summary import read_summary
        from pytest_egi.run.state import SESSION_KEY

        egi_session = self.config.stash.get(SESSION_KEY, None)
        if egi_session is None:
            return False
        summary = read_summary(getattr(egi_session, "written", None) or {})
        if summary is None:
            return False
        json_report.setdefault("summary", {})["egi"] = summary
        return True
