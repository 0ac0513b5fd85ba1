"""Collection: each suite test function parametrized with the suite's tasks for the active
profile (:func:`parametrize`, with the data checks of :mod:`pytest_egi.collect.checks`), the
selection of a shard and of a resume's remaining items (:func:`select_items`), and the usage
errors found meanwhile, raised once collection is over with or without xdist."""

from __future__ import annotations

import functools
import os
import re
import tempfile
from typing import Any

import pytest

from pytest_egi.cache.shared import build_once, shared_dir
from pytest_egi.run.items import REMOTE_COLLECTED_KEY
from pytest_egi.run.settings import data_error, load_routing
from pytest_egi.run.state import SETTINGS_KEY, Case, RunSettings, case_of, loaded_tasks_of

__all__ = ["RESUMED_SKIPPED_KEY", "count_deselected", "deselected_count", "finish_collection", "parametrize",
           "select_items", "tag_usage_error"]

def _marker_name(text: str) -> str:
    return re.sub(r"\W", "_", text)


@functools.cache
def _suite_for_module(package: str) -> Any:
    from pytest_egi.suite import load_suite

    return load_suite(package)


def parametrize(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``egi_case`` with the suite's tasks for the active profile."""
    if "egi_case" not in metafunc.fixturenames:
        return
    from pytest_egi.scoring.config import check_routes_produced, validate_suite_options

    config = metafunc.config
    settings = config.stash[SETTINGS_KEY]
    package = metafunc.module.__package__ or ""
    suite = _suite_for_module(package)
    if settings.routing is None:
        load_routing(config, settings)
    assert settings.routing is not None
    if suite.name not in settings.routing.suites:
        return _refuse(metafunc, pytest.UsageError(
            f"suite {suite.name!r} ({package}) is not listed under 'suites' in {settings.routing_path}"
        ))
    profile = settings.routing.profile(settings.mode, suite.name)
    if settings.seed is not None:
        profile = profile.model_copy(update={"seed": settings.seed})
    try:
        _check_profile_keys(settings, suite, profile)
        check_routes_produced(
            settings.routing, settings.routing_path, suite.name, getattr(suite, "sub_metrics", None)
        )
        if suite.name not in settings.validated_options:
            settings.validated_options[suite.name] = validate_suite_options(
                suite.options_model, suite.name, settings.suite_options.get(suite.name, {})
            )
        options = settings.validated_options[suite.name]
        key = {"suite": suite.name, "version": getattr(suite, "version", None),
               "package": package, "profile": profile, "options": options}  # fmt: skip
        # one worker builds (or reads the cross-run task cache, pytest_egi/cache/taskcache.py), the
        # others unpickle (pytest_egi/cache/shared.py); the Task objects are unpickled only when an
        # item first needs one (LoadedTasks)
        from pytest_egi.cache.taskcache import CacheEntries, LoadedTasks, source_paths, task_cache_dir

        cache = CacheEntries(task_cache_dir(config), key, lambda: source_paths(suite, package, options))
        index = None if cache.has(f"tasks-{suite.name}") else task_index(suite, profile, options)
        if index is not None:  # a cold collection: the tasks are loaded when an item needs one
            tasks = LoadedTasks.deferred(index, functools.partial(
                _load_when_needed, config, suite, profile, options, cache, key, index))  # fmt: skip
        else:
            # under xdist built in a child process (isolate): the worlds load_tasks and the data
            # checks make stay there, out of the worker, which may run no item of the suite
            tasks = build_once(f"tasks-{suite.name}", key, functools.partial(
                _load_tasks, suite, profile, options, cache, bool(settings.model)), isolate=True)  # fmt: skip
    except (pytest.UsageError, ValueError, OSError) as exc:
        # bad suite options or bad user data: a usage error (exit 4), raised once collection
        # is over so pytest reports it cleanly (an xdist worker reports a collection error)
        error = exc if isinstance(exc, pytest.UsageError) else data_error(suite.name, settings, exc)
        return _refuse(metafunc, error)
    if not tasks and getattr(suite, "opt_in", None):
        # an opt-in suite whose tasks were not asked for collects nothing (its optional
        # routes are then left out of the EGI): the empty parametrization's placeholder item
        # is dropped in pytest_collection_modifyitems
        config.stash.setdefault(_OPTED_OUT_KEY, set()).add(metafunc.definition.nodeid)
        metafunc.parametrize("egi_case", [], indirect=True)
        return None
    if not tasks:
        return _refuse(metafunc, data_error(suite.name, settings, ValueError(
            f"no task to run: the suite loaded none for the {settings.mode} profile")))
    ids = tasks.ids
    if len(set(ids)) != len(ids):
        return _refuse(metafunc, pytest.UsageError(f"suite {suite.name}: duplicate task ids in load_tasks()"))
    resumed_version = next((v for (name, _, _), v in settings.resumed.items() if name == suite.name), None)
    if resumed_version is not None and resumed_version != getattr(suite, "version", None):
        return _refuse(metafunc, pytest.UsageError(
            f"--egi-resume: suite {suite.name} is version {suite.version} here, but the run's "
            f"records were made by version {resumed_version}; resume with the code the run was "
            "made with, or start a new run without --egi-resume"
        ))
    try:  # (deferred tasks: their data checks run when they are loaded, _load_when_needed)
        _check_data(config, settings, suite, tasks, options, profile, cache, checks=not tasks.pending)
    except (ValueError, OSError) as exc:
        return _refuse(metafunc, data_error(suite.name, settings, exc))
    for name in {suite.name, *tasks.categories}:
        config.addinivalue_line("markers", f"{_marker_name(name)}: egi suite or category")
    params = []
    # one mark object per name, shared by the items (not three new ones per item)
    suite_marks = (pytest.mark.egi, getattr(pytest.mark, _marker_name(suite.name)))
    marks_of = {c: (*suite_marks, getattr(pytest.mark, _marker_name(c))) for c in set(tasks.categories)}
    for index, category in enumerate(tasks.categories):
        for trial in range(1, settings.trials + 1):
            case = Case(suite, package, tasks, index, trial, settings.trials, options, profile.seed)
            params.append(pytest.param(case, id=case.id, marks=marks_of[category]))
    metafunc.parametrize("egi_case", params, indirect=True)


def _load_tasks(suite: Any, profile: Any, options: Any, cache: Any, checks: bool) -> Any:
    """The suite's ``LoadedTasks`` for ``profile`` and ``options``, from the task cache
    (``cache``, the suite's ``CacheEntries``) or loaded (and stored there). Under xdist this
    runs in a child process of the one worker that builds (``build_once(..., isolate=True)``),
    so when ``checks`` is true it also runs the suite's data checks on the loaded tasks and
    stores their result in the task cache, where :func:`_check_data` finds it: whatever
    worlds the tasks and the checks needed are made and dropped in that child. A check that
    refuses the data (ValueError, OSError) is left to :func:`_check_data`, which reports it.
    The tasks' pickles are then moved to a file of the session's shared folder
    (``LoadedTasks.spill``): every worker holds every suite's ids and categories, but only
    the pickles of the suites it runs items of, read when it first needs one."""
    from pytest_egi.cache.taskcache import LoadedTasks

    loaded = cache.get(f"tasks-{suite.name}", lambda: LoadedTasks(suite.load_tasks(profile, options)))
    directory = shared_dir()
    if directory is None:
        return loaded
    if checks and len(loaded) and cache.directory is not None:
        try:
            _cached_checks(suite, loaded, options, cache)
        except (ValueError, OSError):
            pass
    try:  # the workers get the ids and categories; each reads the pickles of the suites it runs
        fd, path = tempfile.mkstemp(dir=directory, prefix=f"tasks-{suite.name}-", suffix=".pickles")
        os.close(fd)
        loaded.spill(path)
    except OSError:
        pass  # an unusable shared folder: the tasks travel whole, as without sharing
    return loaded


def task_index(suite: Any, profile: Any, options: Any) -> list[tuple[str, str]] | None:
    """The suite's optional ``task_index(profile, options)``: the ``(id, category)`` of each
    task its ``load_tasks`` would return, or None (no hook, or the suite cannot tell without
    loading).

    Raises:
        pytest.UsageError: the hook returned something other than ``(id, category)`` pairs of
            strings (a bug of the suite; the message names the hook and the value).
    """
    hook = getattr(suite, "task_index", None)
    if hook is None:
        return None
    index = hook(profile, options)
    if index is None:
        return None
    pairs = []
    for entry in index:
        if not (isinstance(entry, tuple | list) and len(entry) == 2
                and isinstance(entry[0], str) and isinstance(entry[1], str)):  # fmt: skip
            raise pytest.UsageError(
                f"suite {suite.name}: task_index() must return (task id, category) pairs of "
                f"strings or None, but gave {entry!r}; fix the suite's task_index")
        pairs.append((entry[0], entry[1]))
    return pairs


def _load_when_needed(config: pytest.Config, suite: Any, profile: Any, options: Any, cache: Any, key: Any,
                      index: list[tuple[str, str]]) -> Any:  # fmt: skip
    """Load the tasks a cold collection listed by the suite's ``task_index`` only (the
    ``load`` of ``LoadedTasks.deferred``), when this process first needs one: in the one
    process of the session that builds them (:func:`~pytest_egi.cache.shared.build_once`, not
    in a child: this process runs the suite and keeps what it built), stored in the task
    cache for the next run; check them against ``index``, then run the data checks a warm
    collection would have run (their warnings join the run's, on an xdist worker through
    ``workeroutput``).

    Raises:
        TaskLoadError: ``load_tasks`` or a data check failed, or the loaded tasks are not the
            ones ``index`` listed (a bug of the suite): the message says which; every item of
            the suite in this process errors with it.
    """
    from pytest_egi.suite import TaskLoadError

    settings = config.stash[SETTINGS_KEY]
    try:
        tasks = build_once(f"tasks-{suite.name}", key, functools.partial(
            _load_tasks, suite, profile, options, cache, bool(settings.model)))  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - reported on every item of the suite
        raise TaskLoadError(f"{suite.name}: loading its tasks failed when its first item was about to run: "
                            f"{type(exc).__name__}: {exc}") from exc  # fmt: skip
    loaded = list(zip(tasks.ids, tasks.categories, strict=True))
    if loaded != index:
        pairs = zip(index, loaded, strict=False)
        at = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(index), len(loaded)))
        listed = index[at] if at < len(index) else "nothing"
        found = loaded[at] if at < len(loaded) else "nothing"
        raise TaskLoadError(
            f"{suite.name}: task_index() does not list the tasks load_tasks() returns (a bug of the suite): "
            f"{len(index)} listed against {len(loaded)} loaded; at position {at} the index has {listed} "
            f"and load_tasks {found}; fix: make task_index return exactly load_tasks' (id, category) pairs")
    try:
        _check_data(config, settings, suite, tasks, options, profile, cache)
    except (ValueError, OSError) as exc:
        raise TaskLoadError(f"{suite.name}: its data checks refused the tasks: {exc}") from exc
    return tasks


def _cached_checks(suite: Any, tasks: Any, options: Any, cache: Any) -> list[tuple[str, dict[str, str]]]:
    """The suite's data checks on ``tasks`` (a ``LoadedTasks``: :func:`_run_checks` of the
    hooks it defines, ``constant_answer_check`` and ``data_warnings``), from the task cache
    entry ``checks-<suite>`` beside its tasks (``cache``), or run and stored there.

    Raises:
        ValueError, OSError: a check refused the data.
    """
    hooks = [(hook, check) for hook in ("constant_answer_check", "data_warnings")
             if (check := getattr(suite, hook, None)) is not None]  # fmt: skip
    return cache.get(f"checks-{suite.name}", lambda: _run_checks(hooks, tasks.all(), options))


def select_items(config: pytest.Config, items: list[pytest.Item]) -> None:
    """After every other selection (``-k``, ``-m``, ``--lf``, ...): keep this shard's part of
    the selected items (``--egi-shard K/N``, :func:`pytest_egi.run.runlog.shard_indices`), then
    drop the items the resumed run already has a complete record of (``--egi-resume``).

    Neither counts as deselection (the run is not a subset of its profile); the same items
    are kept in every process that collects, so xdist's workers agree."""
    opted_out = config.stash.get(_OPTED_OUT_KEY, None)
    if opted_out:  # an opt-in suite not asked for: no item at all (not even a skipped one)
        items[:] = [item for item in items if item.nodeid.partition("[")[0] not in opted_out]
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is None or not settings.model or (not settings.shard and not settings.resumed):
        return
    if settings.shard:
        from pytest_egi.run.runlog import shard_indices

        keys = []
        for item in items:
            case = case_of(item)
            keys.append((0, case.suite.name, case.category, case.task_id, case.trial)
                        if case is not None else (1, "", "", item.nodeid, 0))
        kept = shard_indices(keys, *settings.shard)
        items[:] = [items[i] for i in kept]
    if settings.resumed:
        remaining = []
        for item in items:
            case = case_of(item)
            if case is None or (case.suite.name, case.task_id, case.trial) not in settings.resumed:
                remaining.append(item)
        config.stash[RESUMED_SKIPPED_KEY] = len(items) - len(remaining)
        items[:] = remaining


RESUMED_SKIPPED_KEY = pytest.StashKey[int]()
"""config.stash: collected items not run because the resumed run has their record."""


def _check_data(
    config: pytest.Config, settings: RunSettings, suite: Any, tasks: Any, options: Any, profile: Any,
    cache: Any, *, checks: bool = True,
) -> None:
    """Warn about the tasks a suite loaded (``tasks``, a ``LoadedTasks``): a category of the
    profile with no task at all (a user's task file may hold only some), the tasks it cannot
    run or could not load (:func:`_not_run_warnings`), and the suite's optional
    ``constant_answer_check`` and ``data_warnings``, whose results are kept in the task cache
    beside the tasks (``cache``, the suite's ``CacheEntries``: same key), so a warm collection
    neither runs them nor unpickles the tasks. Several warnings of one category make one line.
    The warnings go to ``settings.data_warnings`` (an xdist worker also hands them to the
    controller in ``workeroutput``, read back in ``XdistHooks.pytest_testnodedown``). With
    ``checks`` false only the absent categories are looked for (tasks not loaded yet: the
    rest runs when they are, :func:`_load_when_needed`)."""
    if not settings.model:
        return
    from pytest_egi.collect.checks import data_warning_entries, merge_data_warnings

    loaded = set(tasks.categories)
    absent = {
        c: f"{c}: no task of this category was loaded, so its sub-metrics are missing "
        "(the task data holds none)"
        for c in (profile.categories or suite.categories) if c not in loaded
    }
    merge_data_warnings(settings.data_warnings, data_warning_entries(suite.name, absent))
    found = _cached_checks(suite, tasks, options, cache) if checks else []
    combined: dict[str, str] = {}  # one line per category: the core's, then each hook's
    for _hook, warnings in found:
        for category, line in warnings.items():
            combined[category] = f"{combined[category]}; {line}" if category in combined else line
    merge_data_warnings(settings.data_warnings, data_warning_entries(suite.name, combined))
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["egi_data_warnings"] = list(settings.data_warnings)


def _run_checks(
    hooks: list[tuple[str, Any]], tasks: list[Any], options: Any
) -> list[tuple[str, dict[str, str]]]:
    """The suite's data checks on its runnable tasks (``Task.runnable``: a task it cannot run
    or that failed to load is not checked). A check that raises anything but bad data
    (ValueError, OSError: a usage error) becomes a warning naming it, not a crashed
    collection."""
    runnable = [t for t in tasks if t.runnable]
    out: list[tuple[str, dict[str, str]]] = [("core", _not_run_warnings(tasks))]
    for hook, check in hooks:
        try:
            out.append((hook, check(runnable, options)))
        except (ValueError, OSError):
            raise
        except Exception as exc:  # noqa: BLE001 - a check's bug must not stop the run
            out.append((hook, {"(all)": f"the suite's {hook} failed, its warnings are missing: "
                                        f"{type(exc).__name__}: {exc}"}))
    return out


def _not_run_warnings(tasks: list[Any]) -> dict[str, str]:
    """Per category, the tasks the core will not run: ``cannot_run`` (skipped) and
    ``load_error`` (each errors alone), counted, with the first one's reason."""
    out: dict[str, str] = {}
    by_category: dict[str, list[Any]] = {}
    for task in tasks:
        by_category.setdefault(task.category, []).append(task)
    for category, members in by_category.items():
        lines = []
        skipped = [t for t in members if t.load_error is None and t.cannot_run is not None]
        if skipped:
            lines.append(f"{len(skipped)} of {len(members)} task(s) cannot run and are skipped "
                         f"(first: {skipped[0].id}: {skipped[0].cannot_run})")
        broken = [t for t in members if t.load_error is not None]
        if broken:
            lines.append(f"{len(broken)} of {len(members)} task(s) could not be loaded and error "
                         f"alone (first: {broken[0].id})")
        if lines:
            out[category] = f"{category}: " + "; ".join(lines)
    return out


def _refuse(metafunc: pytest.Metafunc, error: pytest.UsageError) -> None:
    """A usage error found while parametrizing a suite ends the session with exit status 4 and
    ``error``'s message alone, with or without xdist.

    Serial: kept and raised once collection is over (``pytest_collection_finish``), so
    pytest prints it as a usage error, not as a collection error. On an xdist worker: raised
    (a failed collection report) and tagged for the controller, which ends the session with
    it (:func:`tag_usage_error` here, ``XdistHooks.pytest_collectreport`` there).
    """
    config = metafunc.config
    if hasattr(config, "workerinput"):
        config.stash.setdefault(_WORKER_USAGE_ERRORS_KEY, []).append(str(error))
        raise error
    config.stash.setdefault(_USAGE_ERRORS_KEY, []).append(error)
    metafunc.parametrize("egi_case", [], indirect=True)


def _check_profile_keys(settings: RunSettings, suite: Any, profile: Any) -> None:
    """Reject profile keys the suite does not read (a typo must not run everything)."""
    declared = set(getattr(suite, "profile_keys", ()))
    unknown = sorted(set(profile.model_extra or {}) - declared)
    if unknown:
        known = sorted({"seed", "categories", "per_category", "limit", *declared})
        raise pytest.UsageError(
            f"invalid routing file {settings.routing_path}: modes.{settings.mode}.suites."
            f"{suite.name}.{unknown[0]}: unknown profile key for {suite.name}; "
            f"valid: {', '.join(known)}"
        )


_USAGE_ERRORS_KEY = pytest.StashKey[list]()
"""config.stash: the usage errors found while parametrizing, raised once collection is over."""
_WORKER_USAGE_ERRORS_KEY = pytest.StashKey[list]()
"""config.stash on an xdist worker: usage errors raised, whose collection reports are tagged."""
_OPTED_OUT_KEY = pytest.StashKey[set]()
"""Node ids (without parameters) of the test functions of opt-in suites given no task."""
_DESELECTED_KEY = pytest.StashKey[int]()
DESELECTED_SUITES_KEY = pytest.StashKey[set]()
"""The suites with a deselected item in this process (a serial session's whole collection)."""
"""config.stash: items deselected in this process's collection so far."""


def finish_collection(session: pytest.Session) -> None:
    """Raise the first usage error found while parametrizing suites (exit status 4); on an
    xdist worker, write the collected EGI items for the controller (``write_collected``)."""
    config = session.config
    errors = config.stash.get(_USAGE_ERRORS_KEY, [])
    if errors:
        raise errors[0]
    settings = config.stash.get(SETTINGS_KEY, None)
    if (settings is not None and not settings.model and not config.option.collectonly
            and not hasattr(config, "workerinput")):
        selected = sum(1 for item in session.items if case_of(item) is not None)
        if selected:
            from pytest_egi.run.fixtures import no_model_refusal

            raise pytest.UsageError(no_model_refusal(selected))
    for tasks in loaded_tasks_of(session.items):  # the data checks are done
        tasks.drop_objects()
    directory = shared_dir()
    if hasattr(config, "workerinput") and directory is not None and settings is not None and settings.model:
        from pytest_egi.records import RunDir, write_collected
        from pytest_egi.run.recorder import base_record

        items = {}
        for item in session.items:
            case = case_of(item)
            if case is not None:
                items[item.nodeid] = {
                    "record": base_record(item, case, settings),
                    "raw": RunDir.raw_name(case.suite.name, case.task_id, case.trial, case.trials),
                }
        write_collected(directory, items, deselected_count(config))
    elif hasattr(config, "workerinput") and settings is not None and settings.model:
        # a worker on another host: what it collected travels with its first setup report
        config.stash[REMOTE_COLLECTED_KEY] = {
            "items": [item.nodeid for item in session.items if case_of(item) is not None],
            "deselected": deselected_count(config),
        }


def deselected_count(config: pytest.Config) -> int:
    """Items deselected in this process's collection so far (see :func:`count_deselected`)."""
    return config.stash.get(_DESELECTED_KEY, 0)


def count_deselected(items: list[pytest.Item]) -> None:
    """``pytest_deselected``: count deselected items (``-k``, ``-m``, ``--lf``, ``--sw``, ``--deselect``)."""
    if items:
        stash = items[0].config.stash
        stash[_DESELECTED_KEY] = stash.get(_DESELECTED_KEY, 0) + len(items)
        suites = stash.setdefault(DESELECTED_SUITES_KEY, set())
        for item in items:
            case = case_of(item)
            if case is not None:
                suites.add(case.suite.name)


def tag_usage_error(collector: pytest.Collector, report: pytest.CollectReport) -> None:
    """On an xdist worker, tag the failed collection report of a usage error with its message
    (``egi_usage_error``, kept when xdist serializes the report) for the controller."""
    pending = collector.config.stash.get(_WORKER_USAGE_ERRORS_KEY, None)
    if pending and report.failed:
        report.egi_usage_error = pending.pop(0)
