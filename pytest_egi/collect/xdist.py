"""The plugin's side of pytest-xdist, registered only when xdist is installed: the run's
identity handed to every worker, workers' usage errors and data warnings gathered on the
controller (:class:`XdistHooks`), and the suite-affine scheduler
(:mod:`pytest_egi.collect.scheduling`)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pytest_egi.run.state import SETTINGS_KEY

__all__ = ["RECORD_ON_THE_WIRE", "WORKSTEAL_KEY", "XdistHooks", "choose_worksteal", "decode_records",
           "encode_records", "register", "worksteal_chosen"]

RECORD_ON_THE_WIRE = "egi-json"
"""The ``user_properties`` name under which a worker's report carries its record to the
controller as one JSON text (:func:`encode_records`) instead of the ``("egi", record)`` dict."""


WORKSTEAL_KEY = pytest.StashKey[bool]()
"""config.stash: True when the plugin chose ``--dist worksteal`` (:func:`choose_worksteal`)."""


def choose_worksteal(config: pytest.Config) -> None:
    """With ``-n`` and no ``--dist``, an EGI session distributes with ``worksteal``, which
    the plugin's scheduler then refines (``pytest_egi.collect.scheduling``: whole suites per worker).

    Benchmark tasks take very uneven time (one call, or twenty at the turn limit), and
    xdist's default ``load`` queues several tasks per worker ahead of time, so a worker can
    sit on a queue of long tasks while the others idle. ``worksteal`` lets an idle worker take
    half of another's queue. Runs before xdist's own hook, which would turn ``no`` into
    ``load``; an explicit ``--dist`` (or ``-d``) is always kept.
    """
    opt = config.option
    if (getattr(opt, "numprocesses", None) and getattr(opt, "dist", None) == "no"
            and not getattr(opt, "distload", False) and not hasattr(config, "workerinput")
            and (getattr(opt, "egi_model", None) or config.getini("egi_model"))):
        opt.dist = "worksteal"
        config.stash[WORKSTEAL_KEY] = True


def worksteal_chosen(config: pytest.Config) -> bool:
    """Whether the plugin chose the distribution (``-n`` without ``--dist``): then the
    suite-affine scheduler places the items."""
    return config.stash.get(WORKSTEAL_KEY, False)


def register(config: pytest.Config) -> None:
    """Register :class:`XdistHooks` (``egi-xdist``) and the scheduler's hooks (``egi-scheduling``)."""
    from pytest_egi.collect.scheduling import SchedulerHooks
    from pytest_egi.run.items import suite_name

    config.pluginmanager.register(XdistHooks(config), "egi-xdist")
    chosen = lambda: worksteal_chosen(config)  # noqa: E731  (-n without --dist)
    config.pluginmanager.register(SchedulerHooks(chosen, suite_name), "egi-scheduling")


def encode_records(properties: list[Any]) -> list[Any] | None:
    """A worker's report's ``user_properties`` with each ``("egi", record)`` entry turned
    into ``(RECORD_ON_THE_WIRE, <the record's JSON text>)``; None when there is none.

    execnet serializes nested dicts in Python, one call per key and value (about 70 us
    for a small record, both ways), and a record travels twice per item (its call and its
    teardown report); one string costs a C-speed ``json.dumps`` and one write. A record that
    is not plain JSON (json raises) travels as it is."""
    if not any(entry[0] == "egi" for entry in properties):
        return None
    out = []
    for name, value in properties:
        if name == "egi" and isinstance(value, dict):
            try:
                name, value = RECORD_ON_THE_WIRE, json.dumps(value, allow_nan=True)
            except (TypeError, ValueError):
                pass
        out.append((name, value))
    return out


def decode_records(properties: list[Any]) -> list[Any] | None:
    """The inverse of :func:`encode_records` on the controller: ``("egi", record)`` entries
    again (lists where the worker had tuples, as the journal has them); None when the
    report carries no encoded record."""
    if not any(entry[0] == RECORD_ON_THE_WIRE for entry in properties):
        return None
    return [("egi", json.loads(value)) if name == RECORD_ON_THE_WIRE else (name, value)
            for name, value in properties]


class XdistHooks:
    """Hand every worker the controller's run id (so all write into one run directory; the
    model gateway's socket, when there is one, is handed by :mod:`pytest_egi.run.gateway`); on
    the controller, collect the workers' data warnings and turn a worker's usage error into the
    session's (exit status 4, as in a serial run)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.worker = hasattr(config, "workerinput")

    @pytest.hookimpl(tryfirst=True)
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A worker's collection report carrying a usage error (bad ``--egi-opt``, a broken
        task file, ...) ends the session with that message and exit status 4, before any
        item is scheduled (xdist schedules only once every worker finished collecting)."""
        message = getattr(report, "egi_usage_error", None)
        if message and not self.worker:
            dsession = self.config.pluginmanager.getplugin("dsession")
            if getattr(dsession, "sched", None) is not None:
                dsession.triggershutdown()  # the workers exit now, not at xdist's kill timeout
            raise pytest.UsageError(message)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        settings = node.config.stash[SETTINGS_KEY]
        node.workerinput["egi_run_id"] = settings.run_id
        node.workerinput["egi_run_dir"] = str(Path(settings.run_dir).resolve())
        node.workerinput["egi_shard"] = list(settings.shard) if settings.shard else None
        node.workerinput["egi_resumed"] = [[*key, version] for key, version in settings.resumed.items()]
        if settings.shared_dir is None:  # once per session, for all workers
            settings.shared_dir = Path(tempfile.mkdtemp(prefix="egi-shared-"))
        node.workerinput["egi_shared_dir"] = str(settings.shared_dir)

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(self, config: pytest.Config, report: Any) -> Any:
        """On a worker, the report's record goes to the controller as one JSON text
        (:func:`encode_records`); the report itself keeps its dict."""
        data = yield
        if self.worker and isinstance(data, dict) and data.get("user_properties"):
            encoded = encode_records(data["user_properties"])
            if encoded is not None:
                data = dict(data, user_properties=encoded)
        return data

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_from_serializable(self, config: pytest.Config, data: dict[str, Any]) -> None:
        """On the controller, before pytest rebuilds a worker's report: its records back to
        ``("egi", record)`` dicts (:func:`decode_records`)."""
        if not self.worker and isinstance(data, dict) and data.get("user_properties"):
            decoded = decode_records(data["user_properties"])
            if decoded is not None:
                data["user_properties"] = decoded

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """On a worker, once xdist sent the report to the controller (and every plugin here
        saw it): the record leaves it, and the report leaves the worker's terminal, which
        writes to ``/dev/null`` (xdist's worker) and would keep every report to the end
        (about 2.3 KB per item, three reports each): memory must not grow with the number of
        items."""
        if not self.worker:
            return
        if any(p[0] == "egi" for p in report.user_properties):
            report.user_properties[:] = [p for p in report.user_properties if p[0] != "egi"]
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        for reports in getattr(terminal, "stats", {}).values():
            if reports and reports[-1] is report:  # (appended last to its category)
                reports.pop()
                break

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """Gather the data warnings a worker found while loading tasks
        (``pytest_egi.collect.parametrize._check_data``)."""
        found = (getattr(node, "workeroutput", None) or {}).get("egi_data_warnings")
        if found:
            from pytest_egi.collect.checks import merge_data_warnings

            merge_data_warnings(node.config.stash[SETTINGS_KEY].data_warnings, found)
