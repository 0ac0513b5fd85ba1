"""One item from the process's start-up to its record: the one-time start-up before the first
item (model clients warmed, suites' ``prepare``), what happens around each item's protocol
(its task unpickled, a stop honoured), the model clients of a trial, and the record attached
to each report (``pytest_runtest_makereport``)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from pytest_egi.cache.shared import shared_dir, stop_requested
from pytest_egi.run.settings import data_error
from pytest_egi.run.state import ITEM_KEY, SETTINGS_KEY, Case, RunSettings, case_of, item_state

__all__ = ["REMOTE_COLLECTED_KEY", "after_item", "before_item", "client_for", "complete_report", "drop_raw",
           "error_status", "item_problem", "release_suite", "start_up", "stop_before_start",
           "suite_name"]

REMOTE_COLLECTED_KEY = pytest.StashKey[dict]()
"""config.stash on an xdist worker on another host: the node ids of the EGI items it collected
and its deselected count, sent with its first setup report (``complete_report``)."""


# --- one-time start-up, outside every item's (pytest-timeout) budget -------------------------


def start_up(session: pytest.Session) -> None:
    """Everything slow that happens once per process, done before the first item runs.

    In each process that runs items (the serial session, or each xdist worker after it
    collected): every LiteLLM client of the run (model under test, judge, simulator) imports
    LiteLLM here, or waits until the model gateway has, and checks its generation
    parameters; then each suite with collected items that defines the optional hook
    ``prepare(tasks, options)`` builds its world for those tasks: here in a serial session,
    and on an xdist worker just before the first of that suite's items the worker is given
    (:func:`before_item`; a worker collects every item but runs only some, so it
    builds no world and starts no server for a suite it never runs). Inside an item, a
    pytest-timeout budget would count this work, and a timeout firing during an import would
    leave the module half imported for every later item.

    Raises:
        pytest.UsageError: a suite's ``prepare`` refused its data (ValueError, OSError).
    """
    config = session.config
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is None or not settings.model or not session.items:
        return
    if config.option.collectonly:
        return  # nothing will run: no world to build, no server to start
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return  # an xdist controller runs no item
    cases = [c for c in (case_of(item) for item in session.items) if c is not None]
    if not cases:
        return
    from pytest_egi.models import parse_offline_model

    provider = settings.provider
    for role, model in (("model", settings.model),
                        ("judge", getattr(provider, "judge_model", None)),
                        ("simulator", getattr(provider, "simulator_model", None))):
        if model and parse_offline_model(model) is None:
            client = client_for(config, settings, model, None, role)
            core = getattr(client, "core", None)
            if core is not None:
                core.warm()
                core.check_params({})
    by_suite: dict[str, list[Case]] = {}
    for case in cases:
        by_suite.setdefault(case.suite.name, []).append(case)
    config.stash[_GROUPS_KEY] = by_suite
    pending = {name: group for name, group in by_suite.items()
               if getattr(group[0].suite, "prepare", None) is not None}
    if hasattr(config, "workerinput"):
        config.stash[_UNPREPARED_KEY] = pending
        return
    # serially every item is known: each suite is released after its very last one
    config.stash[_LAST_ITEM_KEY] = {suite_name(item): item.nodeid for item in session.items}
    config.stash[_UNPREPARED_KEY] = {}
    for name in pending:
        _prepare_suite(config, settings, pending[name])


_UNPREPARED_KEY = pytest.StashKey[dict]()
"""config.stash in a process that runs items: suite name -> its collected cases, for the
suites whose ``prepare`` has not run yet in this process, or must run again because the suite
was released (:func:`before_item`, :func:`release_suite`). Serially, empty once the start-up
prepared every suite."""

_GROUPS_KEY = pytest.StashKey[dict]()
"""config.stash in a process that runs items: suite name -> its collected cases (every suite
with an item), for :func:`release_suite`."""

_LAST_ITEM_KEY = pytest.StashKey[dict]()
"""config.stash in a serial session: suite name -> the node id of its last item (the suite is
released when that item ends). Absent on an xdist worker, which releases a suite when its next
item is of another suite (:func:`after_item`)."""

_RELEASED_KEY = pytest.StashKey[list]()
"""config.stash in a process that runs items: the suites released so far, in order (each at
most once)."""


def _prepare_suite(config: pytest.Config, settings: RunSettings, group: list[Case]) -> None:
    """Run a suite's ``prepare`` with the runnable tasks of ``group`` (its collected cases;
    ``Task.runnable``).

    ``CannotRun`` skips every item of the suite and any other exception errors each of them
    (:func:`item_problem`), with the reason: a failed ``prepare`` is reported on the items it
    concerns, never as a crash of the session.

    Raises:
        pytest.UsageError: ``prepare`` refused its data (ValueError, OSError).
    """
    from pytest_egi.suite import CannotRun

    suite = group[0].suite
    tasks = []
    for case in group:
        try:
            task = case.task
        except Exception:  # noqa: BLE001 - that item reports it (before_item)
            continue
        if task.runnable:
            tasks.append(task)
    tasks = list({t.id: t for t in tasks}.values())
    if not tasks:
        return
    try:
        suite.prepare(tasks, group[0].options)
    except (ValueError, OSError) as exc:
        raise data_error(suite.name, settings, exc) from None
    except CannotRun as exc:
        config.stash.setdefault(_SUITE_PROBLEMS_KEY, {})[suite.name] = exc
    except Exception as exc:  # noqa: BLE001 - reported on every item of the suite
        from pytest_egi.suite import TaskLoadError

        config.stash.setdefault(_SUITE_PROBLEMS_KEY, {})[suite.name] = TaskLoadError(
            f"{suite.name}: prepare failed, so none of its tasks can run: {type(exc).__name__}: {exc}")


_SUITE_PROBLEMS_KEY = pytest.StashKey[dict]()
"""config.stash: suite name -> the exception its ``prepare`` raised (``CannotRun``, or a
``TaskLoadError`` saying what failed), reported on each of its items."""


_TASK_PROBLEM_KEY = pytest.StashKey[BaseException]()
"""item.stash: what went wrong getting the item's task before it ran (an unpickling
failure), raised in its setup."""


def item_problem(item: pytest.Item, case: Case) -> None:
    """Report, in the item's setup, what the core found before the item ran: its task could
    not be unpickled or loaded (``Task.load_error``: the item errors alone), the suite cannot
    run it (``Task.cannot_run``, or ``CannotRun`` from the suite's ``prepare``: skipped with
    ``cannot run: <reason>``), or the suite's ``prepare`` failed (the item errors).

    Raises:
        TaskLoadError: the item errors with the reason.
        pytest.skip.Exception: the item is skipped with the reason.
    """
    from pytest_egi.suite import CannotRun, TaskLoadError

    problem = item.stash.get(_TASK_PROBLEM_KEY, None)
    if isinstance(problem, TaskLoadError):  # the suite's tasks could not be loaded (deferred)
        raise TaskLoadError(str(problem))
    if problem is not None:
        raise TaskLoadError(f"{case.suite.name}: task {case.task_id!r} could not be read back "
                            f"before its item ran: {type(problem).__name__}: {problem}")
    task = case.task
    if task.load_error is not None:
        raise TaskLoadError(task.load_error)
    if task.cannot_run is not None:
        pytest.skip(f"cannot run: {task.cannot_run}")
    suite_problem = item.config.stash.get(_SUITE_PROBLEMS_KEY, {}).get(case.suite.name)
    if isinstance(suite_problem, CannotRun):
        pytest.skip(f"cannot run: {suite_problem.reason}")
    if suite_problem is not None:
        raise suite_problem


def suite_name(item: pytest.Item) -> str | None:
    """The name of the item's suite, or None for an item that is not an EGI task."""
    case = case_of(item)
    return None if case is None else case.suite.name


def before_item(item: pytest.Item) -> None:
    """Unpickle the item's task (and, for a suite whose tasks share objects, every task of
    it on its first item: :class:`~pytest_egi.cache.taskcache.LoadedTasks`; for tasks a cold
    collection listed by their ``task_index`` only, load them all); tell the MCP client an
    item begins (:func:`pytest_egi.mcp.client.begin_item`: an unknown-state server is stopped,
    a dead one restarted at its first use); on an xdist worker, also run
    the ``prepare`` of the item's suite when it has not run yet in this process (see
    :func:`start_up`). Called before pytest-timeout starts the item's timer
    (``pytest_runtest_protocol``, outermost wrapper).

    Raises:
        pytest.UsageError: the suite's ``prepare`` refused its data.
    """
    case = case_of(item)
    if case is not None:
        try:
            case.task  # noqa: B018 - unpickled here, outside the item's timeout
        except Exception as exc:  # noqa: BLE001 - this item's problem: its setup reports it
            item.stash[_TASK_PROBLEM_KEY] = exc
        # the MCP servers this item starts or uses are the suite's (released with it); those
        # left in an unknown state are stopped, dead ones restarted at their next use
        # (pytest_egi/mcp/client.py); the client is looked up, never imported here
        from pytest_egi.mcp import enter_scope

        enter_scope(case.suite.name)
        mcp_client = sys.modules.get("pytest_egi.mcp.client")
        if mcp_client is not None:
            mcp_client.begin_item()
    pending = item.config.stash.get(_UNPREPARED_KEY, None)
    if not pending:
        return
    if case is None or case.suite.name not in pending or _stop_reason_now(item.config):
        return  # (an item not started after a stop needs no world)
    item.config.stash.get(_SUITE_PROBLEMS_KEY, {}).pop(case.suite.name, None)  # (a released suite's)
    _prepare_suite(item.config, item.config.stash[SETTINGS_KEY], pending.pop(case.suite.name))


def _stop_reason_now(config: pytest.Config) -> str | None:
    """Why this process must start no further item: a first Ctrl-C or SIGTERM it received, or (on an
    xdist worker) a stop the controller requested (``pytest_egi.cache.shared.request_stop``)."""
    from pytest_egi.run.interrupt import interrupt_reason

    reason = interrupt_reason()
    if reason is None and hasattr(config, "workerinput"):
        reason = stop_requested()
    return reason


# --- around each item's protocol ------------------------------------------------------------


def stop_before_start(item: pytest.Item) -> bool | None:
    """An item not yet started when a stop was asked for is not run at all (no report, no
    record: a resumed run runs it): True when it must not start."""
    reason = _stop_reason_now(item.config)
    if reason:
        item.session.shouldstop = reason
        return True
    return None


def after_item(item: pytest.Item, nextitem: pytest.Item | None = None) -> None:
    """After the item's protocol: stop after this item when a stop was asked for while it ran
    (a first Ctrl-C, or on an xdist worker the controller's early stop; xdist would otherwise
    run every queued item); drop what the reported item holds (its record, clients and
    recorder), so memory does not grow with the number of items; and when this process has
    run its last item of the item's suite, release the suite (:func:`release_suite`).

    Args:
        item: the item whose protocol ended.
        nextitem: the next item this process runs (pytest's ``nextitem``; None: none, or
            unknown). Serially a suite is released after its last item of the session; on an
            xdist worker, which cannot know what the controller sends later, when ``nextitem``
            is of another suite (an item of the suite given later prepares it again); a
            worker's last item releases nothing (the process ends).
    """
    reason = _stop_reason_now(item.config)
    if reason:
        item.session.shouldstop = reason
    state = item.stash.get(ITEM_KEY, None)
    if state is not None:  # reported: memory must not grow with the number of items
        del item.stash[ITEM_KEY]  # the record, the item's clients and recorder
        if state.record is not None:
            item.user_properties[:] = [p for p in item.user_properties if p[0] != "egi"]
    name = suite_name(item)
    if name is None or item.config.stash.get(_GROUPS_KEY, None) is None:
        return
    last = item.config.stash.get(_LAST_ITEM_KEY, None)
    if last is not None:  # serial: every item is known (the session's end is still to come)
        done = last.get(name) == item.nodeid
    else:  # a worker's last item (None): the process ends next, nothing is worth releasing
        done = nextitem is not None and suite_name(nextitem) != name
    if done:  # (after the session's last item nothing follows that the memory would serve)
        problem = release_suite(item.config, name, collect=nextitem is not None)
        if problem is not None:
            _warn(item, problem)


def _warn(item: pytest.Item, message: str) -> None:
    """Show ``message`` in the session's warnings summary as a ``RuntimeWarning`` of ``item``
    (after its protocol, outside pytest's own capture of the item's warnings; an xdist worker
    hands it to the controller)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn(message, RuntimeWarning, stacklevel=1)
    item.ihook.pytest_warning_recorded.call_historic(
        kwargs={"warning_message": caught[0], "when": "runtest", "nodeid": item.nodeid, "location": None})


def release_suite(config: pytest.Config, name: str, *, collect: bool = True) -> str | None:
    """Let go of what this process holds for suite ``name`` once it has run its last item of
    it (:func:`after_item`): the suite's optional ``release(options)`` hook (what its
    ``prepare`` built, what its items cached), the MCP servers its items used and no other
    suite's did (:func:`pytest_egi.mcp.client.release_scope`), its Task objects (kept pickled:
    :meth:`~pytest_egi.cache.taskcache.LoadedTasks.unload`); then a garbage collection, and
    the C heap's free pages handed back to the system (glibc's ``malloc_trim``), unless
    ``collect`` is false (after the session's last item: a full collection walks every object
    of the session, about 0.2 M instructions per item run, for memory nothing would use). A later item
    of the suite in this process runs its ``prepare`` again first, and the suite is then kept
    to the end (released at most once per process: items of two suites that alternate do not
    rebuild a world each time).

    Returns:
        None; or, when the suite's ``release`` hook raised, the line saying so (naming the
        suite), which :func:`after_item` shows as a warning: the items have run, nothing of
        their records depends on it. Does nothing (None) for a suite with no item here.
    """
    groups = config.stash.get(_GROUPS_KEY, {})
    group = groups.get(name)
    released = config.stash.setdefault(_RELEASED_KEY, [])
    if not group or name in released:
        return None  # (a suite whose items came back after its release is kept from then on)
    suite = group[0].suite
    hook = getattr(suite, "release", None)
    problem = None
    if hook is not None:
        try:
            hook(group[0].options)
        except Exception as exc:  # noqa: BLE001 - the suite's items are over: a warning
            problem = f"{name}: release failed: {type(exc).__name__}: {exc}"
    mcp_client = sys.modules.get("pytest_egi.mcp.client")
    if mcp_client is not None:
        mcp_client.release_scope(name)
    for tasks in {id(case.tasks): case.tasks for case in group}.values():
        tasks.unload()
    if getattr(suite, "prepare", None) is not None:
        config.stash.setdefault(_UNPREPARED_KEY, {})[name] = group
    released.append(name)
    if collect:
        _collect_and_trim()
    return problem


def _collect_and_trim() -> None:
    """A full garbage collection, then glibc's ``malloc_trim(0)`` (where there is one): the
    freed memory of a released suite goes back to the system, not only to the allocator."""
    import gc

    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


_TRIM: list[Any] = []


def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None (another C library, or no ``ctypes``); looked up once."""
    if not _TRIM:
        found = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                found = ctypes.CDLL(None).malloc_trim
                found.argtypes, found.restype = [ctypes.c_size_t], ctypes.c_int
            except (OSError, AttributeError, ImportError):
                found = None
        _TRIM.append(found)
    return _TRIM[0]


def drop_raw(report: pytest.TestReport) -> None:
    """Drop the trajectory text a report carried, if it still holds it."""
    if getattr(report, "egi_raw", None) is not None:
        del report.egi_raw


# --- the model clients of a trial -----------------------------------------------------------


def client_for(
    config: pytest.Config, settings: RunSettings, model: str, case: Case | None, role: str = "model"
) -> Any:
    """The client for a trial (model under test) or for the run's judge / simulator."""
    from pytest_egi.models import make_client

    shared = config.stash.setdefault(_CLIENTS_KEY, {})
    key = f"{case.seed}|{case.suite.name}|{case.task.id}|{case.trial}" if case else ""
    return make_client(
        model,
        suite=case.suite if case else None,
        task=case.task if case else None,
        options=case.options if case else None,
        noise_key=key,
        api_base=settings.api_base if role == "model" else None,
        shared=shared,
        trial=case.trial if case else 1,
        provider=settings.provider,
        role=role,
    )


_CLIENTS_KEY = pytest.StashKey[dict]()


# --- the record of each report --------------------------------------------------------------


def complete_report(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """Turn harness/provider exceptions into ``error`` records and skips into ``skipped`` ones;
    put the trajectory file on its way (:func:`_write_or_send_raw`)."""
    case = case_of(item)
    settings = item.config.stash.get(SETTINGS_KEY, None)
    if case is None or settings is None or not settings.model:
        return
    _cannot_run_is_a_skip(item, call, report)
    _egi_report(item, call, report, case, settings)
    _escape_longrepr(report)
    state = item.stash.get(ITEM_KEY, None)
    raw = state.raw if state is not None else None
    if raw is not None:
        state.raw = None
        _write_or_send_raw(item, report, raw)
    if report.when == "setup" and hasattr(item.config, "workerinput") and shared_dir() is None:
        # a worker on another host cannot leave its collected items in the controller's
        # shared directory: the item's base record travels with its setup report, for the
        # error record the controller makes if this worker dies running it; the first one
        # also carries the node ids of the EGI items it collected (the run's plan)
        from pytest_egi.run.recorder import base_record

        report.egi_base = base_record(item, case, settings)  # type: ignore[attr-defined]
        collected = item.config.stash.get(REMOTE_COLLECTED_KEY, None)
        if collected is not None:
            del item.config.stash[REMOTE_COLLECTED_KEY]
            report.egi_collected = collected  # type: ignore[attr-defined]


def _write_or_send_raw(item: pytest.Item, report: pytest.TestReport, raw: tuple[str, str]) -> None:
    """Put the item's trajectory (``raw``: its name, its JSON text) on disk before its record
    reaches the journal.

    An xdist worker on the controller's host (it sees the controller's shared directory)
    appends it to its own store in the run directory (``raw/<worker>-<pid>.jsonl``:
    :mod:`pytest_egi.trajectories`) and names the place in the record (``raw_at``) before the
    report leaves, so the workers write in parallel and the controller, which takes every
    report in turn, is not held up writing them. Any other process hands it to the
    controller with the report (``report.egi_raw``), which appends it to its own store and
    names the place (``pytest_egi.report.session``): serially the controller is this process;
    a worker on another host cannot reach the run directory. A worker that cannot write (a
    full disk, a folder turned read-only) says so with the report (``report.egi_write_error``:
    path, error, errno); the controller then stops the run (``EgiSession._write_failed``).
    """
    workerinput = getattr(item.config, "workerinput", None) or {}
    run_dir = workerinput.get("egi_run_dir")
    if run_dir and shared_dir() is not None:
        from pytest_egi.trajectories import store_for

        store = store_for(run_dir, str(workerinput.get("workerid", "gw")))
        try:
            pointer = store.append(raw[1])
        except OSError as exc:  # a full disk, a folder turned read-only: the controller stops the run
            report.egi_write_error = [  # type: ignore[attr-defined]
                str(exc.filename or store.path), exc.strerror or str(exc), exc.errno]
        else:
            name_place(report, pointer)
    else:
        report.egi_raw = list(raw)  # type: ignore[attr-defined]


def name_place(report: pytest.TestReport, pointer: str) -> None:
    """Set ``raw_at`` (where the trajectory is stored) on the record(s) the report carries."""
    for name, value in report.user_properties:
        if name == "egi" and isinstance(value, dict):
            value["raw_at"] = pointer


def _cannot_run_is_a_skip(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """``CannotRun`` raised by the suite while the item ran (its ``reference_policy``, its
    own code) skips the item with ``cannot run: <reason>``."""
    excinfo = call.excinfo
    if excinfo is None or not report.failed:
        return
    from pytest_egi.suite import CannotRun

    if excinfo.errisinstance(CannotRun):
        line = item.location[1]
        report.outcome = "skipped"
        report.longrepr = (str(item.path), (line or 0) + 1, f"Skipped: cannot run: {excinfo.value.reason}")


def _escape_longrepr(report: pytest.TestReport) -> None:
    """A failure text holding a lone surrogate (text that is not valid Unicode, e.g. from a
    model's reply) is replaced by its escaped form (``\\ud800``): neither the terminal nor
    an xdist worker's channel to the controller (UTF-8 only) may choke on it."""
    from pytest_egi.models.replies import escape_text, has_lone_surrogate

    longrepr = report.longrepr
    if longrepr is None or report.passed:
        return
    if isinstance(longrepr, tuple):  # a skip: (path, line, reason)
        report.longrepr = tuple(escape_text(p) if isinstance(p, str) else p for p in longrepr)
        return
    text = longrepr if isinstance(longrepr, str) else str(longrepr)
    if has_lone_surrogate(text):
        report.longrepr = escape_text(text)


def _egi_report(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport,
                case: Case, settings: RunSettings) -> None:
    """Attach the item's record to ``report``: the one ``egi.record`` made (turned into an
    error when the test then raised), or an ``error`` / ``skipped`` record."""
    from pytest_egi.run.recorder import base_record, keep_raw, store_record, trajectory_fields, trial_usage

    state = item_state(item)
    existing = state.record
    excinfo = call.excinfo
    if existing is not None and report.when == "call":
        existing.setdefault("timing", {})["call_s"] = round(report.duration, 6)
    if existing is not None:
        model_failure = (
            excinfo is not None
            and existing["status"] == "failed"
            and excinfo.errisinstance(pytest.fail.Exception)
        )
        if excinfo is not None and report.when == "call" and not model_failure:
            existing.update(status="error", success=None, failure_kind=None, error=_error_text(excinfo))
            _shorten_error(report, item, excinfo, existing["error"])
            report.user_properties = [p for p in report.user_properties if p[0] != "egi"]
            report.user_properties.append(("egi", existing))
        return
    if report.skipped:
        record = base_record(item, case, settings)
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        record.update(status="skipped", error=reason)
    elif report.failed:
        record = base_record(item, case, settings)
        record.update(status="error", error=_error_text(excinfo),
                      error_kind=getattr(excinfo.value, "kind", None) if excinfo else None)
        record.update(trial_usage(state.client, state.recorder))
        _shorten_error(report, item, excinfo, record["error"])
        partial = getattr(excinfo.value, "partial_trajectory", None) if excinfo else None
        record.update(trajectory_fields(partial, errored=True))
        if partial is not None:
            record["raw_path"] = keep_raw(
                item,
                case,
                {"task": case.task.data, "trajectory": partial, "error": record["error"]},
            )
    elif report.when == "call":
        record = base_record(item, case, settings)
        record.update(status="error", error="the test returned without calling egi.record()")
        report.outcome = "failed"
        report.longrepr = f"{item.nodeid}: {record['error']}"
    else:
        return
    store_record(item, record)
    report.user_properties.append(("egi", state.record))


def _error_text(excinfo: Any) -> str:
    """The one-line failure reason of an errored item (``ExceptionType: message``), redacted
    and cut to :data:`~pytest_egi.run.recorder.MAX_RENDER` characters without ever cutting its
    fix hint (``exc.hint``, or a parenthesised group ending the message:
    :func:`~pytest_egi.run.recorder.shorten`)."""
    from pytest_egi.models.secrets import redact
    from pytest_egi.run.recorder import shorten

    if excinfo is None:
        return "unknown error"
    hint = getattr(excinfo.value, "hint", None)
    return redact(shorten(f"{excinfo.type.__name__}: {excinfo.value}",
                          hint=hint if isinstance(hint, str) else None))


def _shorten_error(report: pytest.TestReport, item: pytest.Item, excinfo: Any, text: str) -> None:
    """Provider failures and faults of an external process that say all there is to say
    (an exception class with ``one_line_report = True``, e.g. an MCP server that died) get a
    one-line report: a traceback through an SDK's internals shows call arguments, API keys
    among them, and nothing the user can act on. Any other traceback is kept but redacted."""
    from pytest_egi.models.base import ProviderError
    from pytest_egi.models.secrets import redact

    if excinfo is not None and (excinfo.errisinstance(ProviderError)
                                or getattr(excinfo.value, "one_line_report", False)):
        report.longrepr = f"{item.nodeid}: {text}"
    elif report.longrepr is not None:
        report.longrepr = redact(str(report.longrepr))


def error_status(report: pytest.TestReport) -> Any:
    """Show harness/provider failures in the call phase (and worker crashes, whose report
    xdist makes with ``when="???"``) as ERROR, not FAILED: in the progress line, the
    ``ERRORS`` section and the short test summary (asked after the record has left the
    report, which then carries ``egi_error``)."""
    if report.when in ("call", "???") and report.failed:
        if getattr(report, "egi_error", False):  # its record has left it (the short summary)
            return "error", "E", "ERROR"
        for name, value in report.user_properties:
            if name == "egi" and isinstance(value, dict) and value.get("status") == "error":
                return "error", "E", "ERROR"
    return None
