"""The run's settings: resolved once per process from the command line, the ini file and
routing.yaml (precedence: routing.yaml < ini file (``egi_*`` keys) < command line), and the
checks made on them before anything runs (a writable report folder, reachable model servers).
Also the session's share of one-time builds across xdist workers (:mod:`pytest_egi.cache.shared`)
and the usage error for bad suite data (:func:`data_error`)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pytest_egi.cache.shared import configure as configure_shared
from pytest_egi.options import parse_fraction, parse_mode, parse_model, parse_suite_option
from pytest_egi.run.state import SETTINGS_KEY, RunSettings

__all__ = ["check_report_dir", "check_servers", "data_error", "load_routing", "packaged_routing",
           "resolve_settings", "share_builds", "stop_sharing"]

SUITES_PACKAGE = "suites"
"""The package holding one subpackage per suite (``suites/<name>/``), as the checkout lays it out
and the wheel installs it."""


def packaged_routing() -> Path | None:
    """The default routing file shipped with the suites package (``suites/routing.yaml``; in a
    checkout a link to its ``routing.yaml``): what a run uses when neither ``--egi-routing``
    nor the ini key ``egi_routing`` names a file and the rootdir has no ``routing.yaml``, such as
    ``egi-bench run`` in a folder of its own. None when the package is not importable or ships
    no such file. Finds the package without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(SUITES_PACKAGE)
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / "routing.yaml"
        if path.is_file():
            return path
    return None


def resolve_settings(config: pytest.Config) -> RunSettings:
    """This process's :class:`~pytest_egi.run.state.RunSettings` (on an xdist worker the run id,
    shard and resumed items come from the controller's ``workerinput``); with a model, the
    routing file is loaded and the provider settings resolved."""
    opt = config.option
    rootdir = Path(config.rootpath)
    model = opt.egi_model or config.getini("egi_model") or None
    if model:
        parse_model(model)
    mode = opt.egi_mode or parse_mode(config.getini("egi_mode") or "quick")
    given = opt.egi_routing or config.getini("egi_routing")
    routing_path = Path(given or "routing.yaml")
    if not routing_path.is_absolute():
        base = Path(config.invocation_params.dir) if opt.egi_routing else rootdir
        routing_path = base / routing_path
    if not given and not routing_path.exists():  # outside a checkout: the installed default
        routing_path = packaged_routing() or routing_path
    report_dir = Path(opt.egi_report_dir or config.getini("egi_report_dir") or rootdir / "reports")
    if not report_dir.is_absolute():
        report_dir = Path(config.invocation_params.dir) / report_dir
    max_error_rate = opt.egi_max_error_rate
    if max_error_rate is None:
        max_error_rate = parse_fraction("egi_max_error_rate (ini)", config.getini("egi_max_error_rate"))
    suite_options: dict[str, dict[str, str]] = {}
    for entry in [parse_suite_option(x) for x in config.getini("egi_options")] + list(opt.egi_opt):
        suite, key, value = entry
        suite_options.setdefault(suite, {})[key] = value
    from pytest_egi.records import make_run_id

    workerinput = getattr(config, "workerinput", None)
    if workerinput:
        run_id = workerinput["egi_run_id"]
    else:
        run_id = opt.egi_run_id or make_run_id(model or "none", mode)
    settings = RunSettings(
        model=model,
        mode=mode,
        routing=None,
        routing_path=routing_path,
        routing_hash="",
        weights={},
        floors={},
        seed=opt.egi_seed,
        report_dir=report_dir,
        run_id=run_id,
        max_error_rate=max_error_rate,
        strict=opt.egi_strict,
        api_base=opt.egi_api_base,
        trials=opt.egi_trials,
        suite_options=suite_options,
        bootstrap=opt.egi_bootstrap,
        judge_model=getattr(opt, "egi_judge_model", None),
        simulator_model=getattr(opt, "egi_simulator_model", None),
        rootdir=rootdir,
        selection=_selection(config),
        paths=_test_paths(config, rootdir),
        shard=tuple(workerinput["egi_shard"]) if workerinput and workerinput.get("egi_shard")
        else opt.egi_shard,
    )
    from pytest_egi.scoring.gate import gate_options

    settings.gate_rule, settings.gate_level, settings.gate_undecided = gate_options(opt)
    if workerinput and workerinput.get("egi_resumed"):
        settings.resumed = {(s, t, int(k)): v for s, t, k, v in workerinput["egi_resumed"]}
    if model:
        load_routing(config, settings)
    else:  # a run without a model needs no provider settings (nor pydantic)
        return settings
    try:
        from pytest_egi.models.settings import settings_from_config
    except ImportError:
        pass
    else:
        settings.provider = settings_from_config(config)
    return settings


def _test_paths(config: pytest.Config, rootdir: Path) -> list[str]:
    """The paths this session collects from (``config.args`` without node-id parts), relative
    to the rootdir when inside it, sorted and unique (``RunSettings.paths``)."""
    out = set()
    base = Path(config.invocation_params.dir)
    for arg in getattr(config, "args", None) or []:
        path = Path(str(arg).split("::")[0])
        path = (path if path.is_absolute() else base / path).resolve()
        try:
            out.add(path.relative_to(rootdir.resolve()).as_posix() or ".")
        except ValueError:
            out.add(path.as_posix())
    return sorted(out)


def _selection(config: pytest.Config) -> dict[str, Any]:
    """The command-line options that chose or ordered this run's items, for egi.json.

    Keys: ``-k`` / ``-m`` (the expressions), ``--lf``, ``--ff``, ``--sw`` (True when given),
    ``--deselect`` (the node ids), ``node ids`` (arguments naming items with ``::``).
    Which of them make the run a subset of its profile: ``pytest_egi.scoring.verdict.SUBSET_KEYS``.
    """
    opt = config.option
    selection: dict[str, Any] = {}
    for key, value in (("-k", opt.keyword), ("-m", opt.markexpr)):
        if value:
            selection[key] = value
    flags = (("--lf", ("lf",)), ("--ff", ("failedfirst",)), ("--sw", ("stepwise", "stepwise_skip")))
    for key, dests in flags:
        if any(getattr(opt, d, False) for d in dests):
            selection[key] = True
    deselect = getattr(opt, "deselect", None)
    if deselect:
        selection["--deselect"] = [str(d) for d in deselect]
    node_ids = [str(a) for a in getattr(opt, "file_or_dir", None) or [] if "::" in str(a)]
    if node_ids:
        selection["node ids"] = node_ids
    return selection


def check_report_dir(config: pytest.Config, settings: RunSettings) -> None:
    """Refuse a report folder that cannot be written, before any item runs (exit status 4).

    The folder need not exist yet (it is created at session end); its nearest existing
    ancestor must be a folder this process can create a file in.
    """
    flag = "--egi-report-dir" if config.option.egi_report_dir else (
        "egi_report_dir (ini)" if config.getini("egi_report_dir") else "the default report folder"
    )
    path = settings.report_dir
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    problem = None
    if not existing.is_dir():
        problem = f"{existing} is not a folder"
    else:
        try:
            tempfile.TemporaryFile(dir=existing).close()
        except OSError as exc:
            problem = f"cannot create files in {existing} ({exc.strerror or type(exc).__name__})"
    if problem:
        raise pytest.UsageError(
            f"{flag}: cannot write run reports to {path}: {problem}; pass --egi-report-dir DIR "
            "with a writable folder"
        )


def load_routing(config: pytest.Config, settings: RunSettings) -> None:
    from pytest_egi.cache.taskcache import task_cache_dir
    from pytest_egi.scoring.config import apply_floors, apply_weights, load_routing

    routing, digest = load_routing(settings.routing_path, task_cache_dir(config))
    settings.routing, settings.routing_hash = routing, digest
    settings.weights_given = dict(config.option.egi_weights or {})
    settings.weights = apply_weights(routing, settings.weights_given)
    settings.floors = apply_floors(routing, config.option.egi_floor or {})
    unknown = sorted(set(settings.suite_options) - set(routing.suites))
    if unknown:
        raise pytest.UsageError(
            f"--egi-opt: unknown suite {unknown[0]!r}; valid: {', '.join(routing.suites)}"
        )


def _check_reachable(flag: str, url: str, timeout_s: float = 3.0) -> None:
    """Fail fast (usage error) when nothing accepts connections at ``url``'s host and port."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise pytest.UsageError(f"{flag}: {url!r} is not an http(s) URL, e.g. http://localhost:8000/v1")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=timeout_s).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise pytest.UsageError(
            f"{flag}: cannot connect to {parts.hostname}:{port} ({reason}); is the server "
            f"running? (egi-bench doctor --egi-api-base {url} checks it)"
        ) from None


def data_error(suite: str, settings: RunSettings, exc: Exception) -> pytest.UsageError:
    """A usage error for bad suite data, naming the suite options that pointed at it.

    The message is ``<suite>: <the suite's message>``: a suite's load errors do not repeat
    its name (the core says it once); one that does anyway (``"<suite>: ..."``,
    ``"<suite> <env>: ..."``) is not prefixed a second time."""
    text = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) and exc.strerror else str(exc)
    given = settings.suite_options.get(suite, {})
    hint = ", ".join(f"--egi-opt {suite}.{k}={v}" for k, v in given.items())
    named = text.startswith((f"{suite}: ", f"{suite} "))
    return pytest.UsageError(("" if named else f"{suite}: ") + text + (f" (from {hint})" if hint else ""))


def check_servers(settings: RunSettings) -> None:
    """Fail fast (usage error) when the server of ``--egi-api-base`` (for a model that is not
    an offline policy), ``--egi-judge-api-base`` or ``--egi-simulator-api-base`` accepts no
    connection."""
    from pytest_egi.models.offline import parse_offline_model

    if settings.api_base and parse_offline_model(settings.model) is None:
        _check_reachable("--egi-api-base", settings.api_base)
    provider = settings.provider  # a judge / simulator server is checked the same way
    for role, flag in (("judge", "--egi-judge-api-base"),
                       ("simulator", "--egi-simulator-api-base")):
        if getattr(provider, f"{role}_model", None) and getattr(provider, f"{role}_api_base", None):
            _check_reachable(flag, getattr(provider, f"{role}_api_base"))


_SHARED_PREVIOUS_KEY = pytest.StashKey[Any]()
"""config.stash: the shared directory in use before this session (restored at unconfigure)."""


def share_builds(config: pytest.Config) -> None:
    """Share one-time builds (load_tasks, suite worlds) through the controller's directory on an
    xdist worker, and not at all otherwise (:func:`pytest_egi.cache.shared.configure`)."""
    # the previous setting is restored at unconfigure, so an in-process nested session never
    # uses the outer session's directory
    workerinput = getattr(config, "workerinput", None)
    shared = workerinput.get("egi_shared_dir") if workerinput else None
    config.stash[_SHARED_PREVIOUS_KEY] = configure_shared(shared)


def stop_sharing(config: pytest.Config) -> None:
    """Restore the shared directory in use before this session; on an xdist controller, delete
    the one it made for its workers (``pytest_egi.collect.xdist``)."""
    if _SHARED_PREVIOUS_KEY in config.stash:
        configure_shared(config.stash[_SHARED_PREVIOUS_KEY])
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is not None and settings.shared_dir is not None:  # the controller's (shared.py)
        shutil.rmtree(settings.shared_dir, ignore_errors=True)
        settings.shared_dir = None
