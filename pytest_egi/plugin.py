"""pytest-egi: pytest hooks only, each handing off to the module named after its concern.

- options and their parsers: :mod:`pytest_egi.options`
- run settings: :mod:`pytest_egi.run.settings` (precedence: routing.yaml < ini file
  (``egi_*`` keys) < command line)
- the run folder and its lock: :mod:`pytest_egi.run.folder`
- collection and parametrization, with the data checks: :mod:`pytest_egi.collect.parametrize`
- one item from start-up to record: :mod:`pytest_egi.run.items`; fixtures:
  :mod:`pytest_egi.run.fixtures`
- the session's report: :mod:`pytest_egi.report.session` (the controller's collector),
  :mod:`pytest_egi.report.header`

Objects only a feature needs are registered only when it is on: the controller's session (a
model), the xdist hooks (:mod:`pytest_egi.collect.xdist`), the JSON junit property and suite
properties (:mod:`pytest_egi.report.junit`), pytest-json-report's record and summary
(:mod:`pytest_egi.report.jsonreport`), the model gateway (:mod:`pytest_egi.run.gateway`).
Without ``--egi-model`` (or ``egi_model`` in the ini file) the plugin still parametrizes
suite tests so ``--collect-only`` lists them; running them is a usage error (exit status 4,
:func:`pytest_egi.run.fixtures.no_model_refusal`), and no report is written.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

# Only light modules at import time: an installed plugin must cost next to nothing in a pytest
# run that does not use it. Configuration models (pydantic), the routing file, model clients,
# the recorder and the reports are imported inside the hooks and fixtures of a configured run.
from pytest_egi import options
from pytest_egi.collect import parametrize
from pytest_egi.collect import xdist as egi_xdist
from pytest_egi.run import items
from pytest_egi.run.fixtures import egi, egi_case, egi_model, egi_task, no_model_warning
from pytest_egi.run.folder import release_lock
from pytest_egi.run.interrupt import install_for, uninstall_for, wrap_up_for
from pytest_egi.run.settings import resolve_settings, share_builds, stop_sharing
from pytest_egi.run.state import SESSION_KEY, SETTINGS_KEY

__all__ = ["egi", "egi_case", "egi_model", "egi_task"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``egi`` option group and its ini mirrors."""
    options.add_options(parser)
    from pytest_egi.collect.budget import add_budget_options
    from pytest_egi.collect.target import add_target_options
    from pytest_egi.scoring.gate import add_gate_options

    add_gate_options(parser.getgroup("egi"))
    add_budget_options(parser.getgroup("egi"))
    add_target_options(parser.getgroup("egi"))


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """Redo pytest's choice of rootdir and ini file now that the ``--egi-*`` options are known
    (:func:`pytest_egi.options.redetermine_rootdir`)."""
    options.redetermine_rootdir(early_config, parser, args)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> Any:
    """With ``-n`` and no ``--dist``, an EGI session distributes with ``worksteal``
    (:func:`pytest_egi.collect.xdist.choose_worksteal`); runs before xdist's own hook."""
    egi_xdist.choose_worksteal(config)
    return (yield)


def pytest_configure(config: pytest.Config) -> None:
    """Resolve settings; on the controller with a model, settle the run folder and register the
    session (the collector); register what the features in use need."""
    config.addinivalue_line("markers", "egi: an EGI benchmark task (one task, one trial)")
    settings = config.stash[SETTINGS_KEY] = resolve_settings(config)
    if getattr(config.option, "egi_budget", None) is not None and settings.model:
        from pytest_egi.collect.budget import register_budget

        register_budget(config, settings)
    if getattr(config.option, "egi_target_ci", None) is not None and settings.model:
        from pytest_egi.collect.target import register_target

        register_target(config, settings)
    if getattr(config.option, "xmlpath", None) and not hasattr(config, "workerinput"):
        from pytest_egi.report.junit import JunitXmlJson

        # registered before the session: its tryfirst pytest_sessionfinish then runs after the
        # session's (the later registered runs first), which writes egi.json
        config.pluginmanager.register(JunitXmlJson(), "egi-junitxml")
    if settings.model and not hasattr(config, "workerinput"):
        from pytest_egi.report.session import EgiSession
        from pytest_egi.run.folder import resolve_run_dir
        from pytest_egi.run.gateway import start_model_gateway
        from pytest_egi.run.settings import check_report_dir, check_servers

        check_report_dir(config, settings)
        resumed_records = resolve_run_dir(config, settings)
        check_servers(settings)
        session = config.stash[SESSION_KEY] = EgiSession(settings, config, resumed_records)
        config.pluginmanager.register(session, "egi-session")
        start_model_gateway(config, settings)
    if not settings.model and not hasattr(config, "workerinput") and not config.option.collectonly:
        from pytest_egi.run.fixtures import NoModelCheck

        config.pluginmanager.register(NoModelCheck(), "egi-no-model")
    if settings.model:
        install_for(config, getattr(config.stash.get(SESSION_KEY, None), "interrupt", None))
    if config.pluginmanager.hasplugin("xdist"):
        egi_xdist.register(config)
    if getattr(config.option, "json_report", False):
        from pytest_egi.report.jsonreport import register as register_json_report

        register_json_report(config)
    share_builds(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Unregister the collector; stop what this process started (signal handlers, the run
    folder's lock, the shared dir, MCP servers, its trajectory store; the gateway stops itself)."""
    uninstall_for(config)
    release_lock(config)
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        del config.stash[SESSION_KEY]
        config.pluginmanager.unregister(session)
    stop_sharing(config)
    # MCP servers this process started (a suite's, on first use) stop with the session; the
    # client module is looked up, never imported here, so a run without MCP pays nothing
    mcp_client = sys.modules.get("pytest_egi.mcp.client")
    if mcp_client is not None:
        mcp_client.close_all()
    trajectories = sys.modules.get("pytest_egi.trajectories")  # this process's trajectory stores
    if trajectories is not None:
        trajectories.close_all()


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    """Model, mode, routing file and hash, seed, run directory, and the run's shape
    (:func:`pytest_egi.report.header.header_lines`)."""
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is None or not settings.model or settings.routing is None:
        return None
    from pytest_egi.report.header import header_lines

    return header_lines(config, settings)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``egi_case`` with the suite's tasks for the active profile."""
    if "egi_case" in metafunc.fixturenames:
        parametrize.parametrize(metafunc)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """On an xdist worker, tag a usage error's failed collection report for the controller."""
    report = yield
    parametrize.tag_usage_error(collector, report)
    return report


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """After every other selection: drop opted-out suites' placeholders, keep this shard's
    items, drop the items a resumed run has (:func:`pytest_egi.collect.parametrize.select_items`)."""
    parametrize.select_items(config, items)


def pytest_deselected(items: list[pytest.Item]) -> None:
    """Count deselected items (``-k``, ``-m``, ``--lf``, ``--sw``, ``--deselect``)."""
    parametrize.count_deselected(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Raise the first usage error of collection (exit status 4), hand a worker's collected
    items to the controller, then do the one-time start-up before the first item."""
    parametrize.finish_collection(session)
    items.start_up(session)


def pytest_report_collectionfinish(config: pytest.Config, items: list[pytest.Item]) -> str | None:
    """After pytest's "collected N items": how many of them a shard or a resume runs."""
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is None or not settings.model or (not settings.shard and not settings.resumed):
        return None
    from pytest_egi.report.header import collection_line

    return collection_line(config, settings, items)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Any:
    """When the items are over (run, stopped or interrupted), a further Ctrl-C no longer
    interrupts: the run's report is being written (``pytest_egi.run.interrupt``)."""
    try:
        return (yield)
    finally:
        wrap_up_for(session.config)


@pytest.hookimpl(tryfirst=True, specname="pytest_runtest_protocol")
def _start_no_item_after_a_stop(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """An item not yet started when a stop was asked for is not run at all."""
    return items.stop_before_start(item)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Prepare the item outside its timeout (the outermost wrapper: before pytest-timeout's
    timer); afterwards honour a stop asked for while it ran, drop what it held, and release its
    suite when this process has run its last item of it."""
    items.before_item(item)
    result = yield
    items.after_item(item, nextitem)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Turn harness/provider exceptions into ``error`` records; skips into ``skipped`` ones."""
    report = yield
    items.complete_report(item, call, report)
    return report


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """After every other plugin (on an xdist worker: after xdist sent the report to the
    controller), drop the trajectory text a report carried, if it still holds it."""
    items.drop_raw(report)


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    """Show harness/provider failures in the call phase (and worker crashes) as ERROR."""
    return items.error_status(report)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Without a model, say loudly that the benchmark items were skipped (not a green run)."""
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is not None and not settings.model:
        no_model_warning(terminalreporter)
