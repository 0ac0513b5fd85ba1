"""pytest-egi: pytest hooks only; the logic lives in config, scoring, aggregate, records,
session, recorder and report.

Precedence of settings: routing.yaml < ini file (``egi_*`` keys) < command line.
Without ``--egi-model`` (or ``egi_model`` in the ini file) the plugin still parametrizes
suite tests so they can be listed, but skips them with the reason, and writes no report.
"""

from __future__ import annotations

import functools
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# Only light modules at import time: an installed plugin must cost next to nothing in a pytest
# run that does not use it. Configuration models (pydantic), the routing file, model clients,
# the recorder and the reports are imported inside the hooks and fixtures of a configured run.
from pytest_egi.options import parse_bucket_values, parse_fraction, parse_mode, parse_suite_option
from pytest_egi.shared import build_once, shared_dir, stop_requested
from pytest_egi.shared import configure as configure_shared
from pytest_egi.state import (
    ITEM_KEY,
    SESSION_KEY,
    SETTINGS_KEY,
    Case,
    RunSettings,
    case_of,
    item_state,
    loaded_tasks_of,
)

if TYPE_CHECKING:
    from pytest_egi.recorder import EgiRecorder

__all__ = ["egi", "egi_case", "egi_model", "egi_task"]

MODEL_HELP = (
    "Model under test: a LiteLLM model string (gpt-4o-mini, ollama/qwen3, hosted_vllm/...) "
    "or an offline policy egi/oracle, egi/noisy-<p>, egi/null"
)
NO_MODEL_REASON = "no model under test: pass --egi-model (e.g. --egi-model egi/oracle)"


def _parse_int(flag: str, minimum: int, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise pytest.UsageError(f"{flag}: expected a whole number, got {text!r}") from None
    if value < minimum:
        raise pytest.UsageError(f"{flag}: expected a whole number >= {minimum}, got {text!r}")
    return value


def _parse_model(text: str) -> str:
    from pytest_egi.models.offline import parse_offline_model

    try:
        parse_offline_model(text)
    except ValueError as exc:
        raise pytest.UsageError(f"--egi-model: {exc}") from None
    if not text.strip():
        raise pytest.UsageError("--egi-model: empty model name")
    return text


def _parse_run_id(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", text or ""):
        raise pytest.UsageError(
            f"--egi-run-id: {text!r} is not a usable folder name; use letters, digits, '.', '_' "
            "and '-' (e.g. nightly-2026-11-30 or $GITHUB_RUN_ID)"
        )
    return text


def _parse_shard(text: str) -> tuple[int, int]:
    from pytest_egi.runlog import parse_shard

    try:
        return parse_shard(text)
    except ValueError as exc:
        raise pytest.UsageError(f"--egi-shard: {exc}") from None


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``egi`` option group and its ini mirrors."""
    group = parser.getgroup("egi", "enterprise agent benchmarks (EGI score)")
    group.addoption(
        "--egi-model", dest="egi_model", metavar="MODEL", type=_parse_model, default=None, help=MODEL_HELP
    )
    group.addoption(
        "--egi-mode",
        dest="egi_mode",
        metavar="quick|deep",
        type=parse_mode,
        default=None,
        help="Profile from routing.yaml modes (default: quick)",
    )
    group.addoption(
        "--egi-routing",
        dest="egi_routing",
        metavar="PATH",
        default=None,
        help="Routing file (default: routing.yaml in the rootdir)",
    )
    group.addoption(
        "--egi-weights",
        dest="egi_weights",
        metavar="M1=W,...",
        default=None,
        type=functools.partial(parse_bucket_values, "--egi-weights", lo=0.0, hi=1.0),
        help="Override bucket weights: the named buckets take the given weights, the others "
             "are scaled to fill the rest (the weights used are printed and stored)",
    )
    group.addoption(
        "--egi-floor",
        dest="egi_floor",
        metavar="M5=F,...",
        default=None,
        type=functools.partial(parse_bucket_values, "--egi-floor", lo=0.0, hi=100.0),
        help="Override release-gate floors (0-100)",
    )
    group.addoption(
        "--egi-seed",
        dest="egi_seed",
        metavar="N",
        default=None,
        type=functools.partial(_parse_int, "--egi-seed", 0),
        help="Override every profile seed",
    )
    group.addoption(
        "--egi-report-dir",
        dest="egi_report_dir",
        metavar="DIR",
        default=None,
        help="Parent folder of run directories (default: reports/ in the rootdir)",
    )
    group.addoption(
        "--egi-max-error-rate",
        dest="egi_max_error_rate",
        metavar="FRACTION",
        default=None,
        type=functools.partial(parse_fraction, "--egi-max-error-rate"),
        help="Fail the session when more than this share of items errored (default: 0.05)",
    )
    group.addoption(
        "--egi-strict",
        dest="egi_strict",
        action="store_true",
        default=False,
        help="Plain pytest exit status: any failed task fails the session",
    )
    group.addoption(
        "--egi-api-base",
        dest="egi_api_base",
        metavar="URL",
        default=None,
        help="OpenAI-compatible base URL for the model under test",
    )
    group.addoption(
        "--egi-trials",
        dest="egi_trials",
        metavar="K",
        default=1,
        type=functools.partial(_parse_int, "--egi-trials", 1),
        help="Independent trials per task (pass^k is reported for K > 1)",
    )
    group.addoption(
        "--egi-opt",
        dest="egi_opt",
        metavar="SUITE.KEY=VALUE",
        action="append",
        type=parse_suite_option,
        default=[],
        help="A suite option, e.g. crmarena.strategy=tool_call (repeatable)",
    )
    group.addoption(
        "--egi-bootstrap",
        dest="egi_bootstrap",
        metavar="N",
        default=1000,
        type=functools.partial(_parse_int, "--egi-bootstrap", 0),
        help="Bootstrap resamples for confidence intervals (0 disables)",
    )
    group.addoption(
        "--egi-run-id",
        dest="egi_run_id",
        metavar="ID",
        default=None,
        type=_parse_run_id,
        help="Name the run folder reports/ID (default: time, model, mode and a random suffix); "
        "with --egi-shard, each shard writes reports/ID/shard-K-of-N",
    )
    group.addoption(
        "--egi-shard",
        dest="egi_shard",
        metavar="K/N",
        default=None,
        type=_parse_shard,
        help="Run shard K of N: a deterministic 1/N of the selected items, balanced by suite "
        "and category, into reports/ID/shard-K-of-N (needs --egi-run-id ID); merge the shards "
        "with egi-bench report --merge reports/ID",
    )
    group.addoption(
        "--egi-resume",
        dest="egi_resume",
        metavar="RUN_DIR",
        default=None,
        help="Continue a stopped run in its own folder: run only the items without a complete "
        "record (same model, mode, seed, routing, options and suite versions)",
    )
    from pytest_egi.budget import add_budget_options
    from pytest_egi.gate import add_gate_options

    add_gate_options(group)
    add_budget_options(group)
    parser.addini("egi_model", "Default model under test", default=None)
    parser.addini("egi_mode", "Default profile: quick or deep", default="quick")
    parser.addini("egi_routing", "Routing file, relative to the rootdir", default=None)
    parser.addini("egi_report_dir", "Parent folder of run directories", default=None)
    parser.addini("egi_max_error_rate", "Errored share that fails the session", default="0.05")
    parser.addini("egi_options", "Suite options, one SUITE.KEY=VALUE per line", type="linelist", default=[])
    from pytest_egi.options import add_provider_options

    add_provider_options(group, parser)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """Redo pytest's choice of rootdir and ini file now that the ``--egi-*`` options are known.

    pytest picks the rootdir and ini file (``Config.parse`` -> ``determine_setup``) from a first
    parse of the command line made before plugins installed through entry points are loaded.
    Then ``--egi-report-dir DIR`` is an unknown option and ``DIR`` reads as a test path: with
    no other path on the command line, the rootdir becomes ``DIR`` (or its ancestor with an
    ini file), and ``routing.yaml`` is looked for there; ``--egi-routing PATH`` can likewise
    pull in the ini file (addopts, testpaths, pythonpath) of the project ``PATH`` lives in.
    The ``--egi-routing=PATH`` form was never affected.

    This hook runs before the initial conftests are loaded, right after pytest re-parsed the
    command line with every plugin's options: when the rootdir or ini file it now determines
    differ, the config is switched to them (ini values, the ini file's ``addopts`` at the
    head of the arguments, its ``pythonpath`` entries, and the default ``--confcutdir``).
    """
    import os

    env = os.environ.get("PYTEST_ADDOPTS", "")
    given = [str(a) for a in early_config.invocation_params.args]
    if not any(a.startswith("--egi-") and "=" not in a for a in given) and "--egi-" not in env:
        return  # only the space form of an egi option can be misread as a test path
    import copy
    import shlex
    import sys

    from _pytest.config.findpaths import determine_setup

    given = shlex.split(env) + given
    ns = parser.parse_known_args(given, namespace=copy.copy(early_config.option))
    rootpath, inipath, inicfg, ignored = determine_setup(
        inifile=ns.inifilename,
        override_ini=ns.override_ini,
        args=ns.file_or_dir,
        rootdir_cmd_arg=ns.rootdir or None,
        invocation_dir=early_config.invocation_params.dir,
    )
    if rootpath == early_config.rootpath and inipath == early_config.inipath:
        return
    old_addopts = list(early_config.getini("addopts"))
    old_pythonpath = [str(x) for x in early_config.getini("pythonpath")]
    # private attributes of pytest's Config (pytest is pinned in pyproject.toml)
    early_config._rootpath, early_config._inipath = rootpath, inipath
    early_config._inicfg, early_config._ignored_config_files = inicfg, ignored
    early_config._inicache.clear()
    parser.extra_info["rootdir"] = str(rootpath)
    parser.extra_info["inifile"] = str(inipath)
    if old_addopts and args[: len(old_addopts)] == old_addopts:
        del args[: len(old_addopts)]
    new_addopts = list(early_config.getini("addopts"))
    args[:0] = new_addopts
    for path in old_pythonpath:
        if path in sys.path:
            sys.path.remove(path)
    for path in reversed(early_config.getini("pythonpath")):
        sys.path.insert(0, str(path))
    namespace = parser.parse_known_args(args, namespace=copy.copy(early_config.option))
    early_config.known_args_namespace = namespace
    if early_config.known_args_namespace.confcutdir is None:  # not given: pytest's default
        early_config.known_args_namespace.confcutdir = str(inipath.parent if inipath else rootpath)
    if new_addopts:
        early_config.pluginmanager.consider_preparse(new_addopts, exclude_only=False)


def _settings(config: pytest.Config) -> RunSettings:
    opt = config.option
    rootdir = Path(config.rootpath)
    model = opt.egi_model or config.getini("egi_model") or None
    if model:
        _parse_model(model)
    mode = opt.egi_mode or parse_mode(config.getini("egi_mode") or "quick")
    routing_path = Path(opt.egi_routing or config.getini("egi_routing") or "routing.yaml")
    if not routing_path.is_absolute():
        base = Path(config.invocation_params.dir) if opt.egi_routing else rootdir
        routing_path = base / routing_path
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
    from pytest_egi.gate import gate_options

    settings.gate_rule, settings.gate_level, settings.gate_undecided = gate_options(opt)
    if workerinput and workerinput.get("egi_resumed"):
        settings.resumed = {(s, t, int(k)): v for s, t, k, v in workerinput["egi_resumed"]}
    if model:
        _load_routing(config, settings)
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
    Which of them make the run a subset of its profile: ``pytest_egi.verdict.SUBSET_KEYS``.
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


def _check_report_dir(config: pytest.Config, settings: RunSettings) -> None:
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


def _load_routing(config: pytest.Config, settings: RunSettings) -> None:
    from pytest_egi.config import apply_floors, apply_weights, load_routing
    from pytest_egi.taskcache import task_cache_dir

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


def pytest_configure(config: pytest.Config) -> None:
    """Resolve settings; on the controller with a model, register the collector."""
    config.addinivalue_line("markers", "egi: an EGI benchmark task (one task, one trial)")
    settings = _settings(config)
    config.stash[SETTINGS_KEY] = settings
    if getattr(config.option, "egi_budget", None) is not None and settings.model:
        from pytest_egi.budget import register_budget

        register_budget(config, settings)
    if settings.model and not hasattr(config, "workerinput"):
        from pytest_egi.models.offline import parse_offline_model
        from pytest_egi.session import EgiSession

        _check_report_dir(config, settings)
        resumed_records = _resolve_run_dir(config, settings)
        if settings.api_base and parse_offline_model(settings.model) is None:
            _check_reachable("--egi-api-base", settings.api_base)
        provider = settings.provider  # a judge / simulator server is checked the same way
        for role, flag in (("judge", "--egi-judge-api-base"),
                           ("simulator", "--egi-simulator-api-base")):
            if getattr(provider, f"{role}_model", None) and getattr(provider, f"{role}_api_base", None):
                _check_reachable(flag, getattr(provider, f"{role}_api_base"))

        session = EgiSession(settings, config, resumed_records)
        config.stash[SESSION_KEY] = session
        config.pluginmanager.register(session, "egi-session")
        _start_gateway(config, settings)
    if settings.model:
        from pytest_egi.interrupt import TwoStepInterrupt

        session_plugin = config.stash.get(SESSION_KEY, None)
        interrupt = TwoStepInterrupt(getattr(session_plugin, "interrupt", None))
        interrupt.install()
        config.stash[_INTERRUPT_KEY] = interrupt
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(config), "egi-xdist")
        from pytest_egi.scheduling import SchedulerHooks

        chosen = lambda: config.stash.get(_WORKSTEAL_KEY, False)  # noqa: E731  (-n without --dist)
        config.pluginmanager.register(SchedulerHooks(chosen, _suite_name), "egi-scheduling")
    if getattr(config.option, "xmlpath", None) and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_JunitXmlJson(), "egi-junitxml")
    # one-time builds (load_tasks, suite worlds) are shared through the controller's
    # directory on a worker, and not at all otherwise; the previous setting is restored at
    # unconfigure, so an in-process nested session never uses the outer session's directory
    workerinput = getattr(config, "workerinput", None)
    shared = workerinput.get("egi_shared_dir") if workerinput else None
    config.stash[_SHARED_PREVIOUS_KEY] = configure_shared(shared)


def _resolve_run_dir(config: pytest.Config, settings: RunSettings) -> list[dict[str, Any]]:
    """Settle where this session writes, and on ``--egi-resume`` what it continues.

    Without ``--egi-resume``, the run folder must not already hold a run (only possible with
    ``--egi-run-id``). With it, the folder's manifest must match this session
    (:func:`pytest_egi.runlog.manifest_differences`); the session then writes into that
    folder, keeps its shard, and skips the items with a complete record.

    Returns:
        The run's complete records (passed/failed, trajectory on disk) when resuming, else [].

    Raises:
        pytest.UsageError: the folder already holds a run, is not a run, or was made with
            other options (every difference is named).
    """
    from pytest_egi.runlog import (
        MANIFEST_FILE,
        RunLogError,
        complete_records,
        manifest_differences,
        manifest_for,
        read_manifest,
        run_records,
        shard_dir_name,
    )

    opt = config.option
    if not opt.egi_resume:
        _refuse_unnamed_shard(opt)
        _refuse_mixed_layout(settings)
        _lock_run_dir(config, settings.run_dir)  # a session still writing it is named first
        if (settings.run_dir / MANIFEST_FILE).exists():
            raise pytest.UsageError(
                f"--egi-run-id {settings.run_id}: {settings.run_dir} already holds a run; "
                f"continue it with --egi-resume {settings.run_dir}, or pick another --egi-run-id"
            )
        return []
    run_dir = Path(opt.egi_resume)
    if not run_dir.is_absolute():
        run_dir = Path(config.invocation_params.dir) / run_dir
    if run_dir.exists() and not run_dir.is_dir():
        raise pytest.UsageError(f"--egi-resume {opt.egi_resume}: not a folder; pass a run folder "
                                "(reports/<run_id>)")
    from pytest_egi.runlog import run_in_use

    holder = run_in_use(run_dir) if run_dir.is_dir() else None
    if holder is not None:
        raise pytest.UsageError(f"--egi-resume {opt.egi_resume}: the run is still going ({holder}); "
                                "wait for it to end or stop it, then resume")
    try:
        old = read_manifest(run_dir)
        shard = tuple(old["shard"]) if old.get("shard") else None
        if opt.egi_shard and tuple(opt.egi_shard) != shard:
            raise RunLogError(
                f"--egi-resume {opt.egi_resume}: the run is "
                + (f"shard {shard[0]}/{shard[1]}" if shard else "not a shard")
                + f", not --egi-shard {opt.egi_shard[0]}/{opt.egi_shard[1]}; drop --egi-shard "
                "(a resumed run keeps its own)"
            )
        if shard and run_dir.name != shard_dir_name(*shard):
            raise RunLogError(f"--egi-resume {opt.egi_resume}: a shard's folder must be named "
                              f"{shard_dir_name(*shard)} (inside its run's folder)")
        run_id = run_dir.resolve().parent.name if shard else run_dir.resolve().name
        if opt.egi_run_id and opt.egi_run_id != run_id:
            raise RunLogError(f"--egi-resume {opt.egi_resume}: the run's id is {run_id}, not "
                              f"--egi-run-id {opt.egi_run_id}; drop --egi-run-id")
        differences = manifest_differences(old, manifest_for(settings))
        if differences:
            raise RunLogError(
                f"--egi-resume {opt.egi_resume}: this session differs from the run: "
                + "; ".join(differences)
                + ". Resume with the run's options, or start a new run without --egi-resume"
            )
        records = complete_records(run_dir, run_records(run_dir))
    except (RunLogError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from None
    _lock_run_dir(config, run_dir)
    settings.shard = shard  # type: ignore[assignment]
    settings.run_id = run_id
    settings.report_dir = run_dir.resolve().parent.parent if shard else run_dir.resolve().parent
    settings.resume_from = run_dir
    settings.resumed = {(r["suite"], r["task_id"], int(r["trial"])): r.get("suite_version") for r in records}
    return records


def _refuse_unnamed_shard(opt: Any) -> None:
    """``--egi-shard K/N`` needs ``--egi-run-id``: the shards of one run are merged from one
    run folder (``reports/ID/shard-K-of-N``), and ``egi-bench report --merge`` refuses shards
    of different runs, so a shard in a folder of its own (a fresh random run id) could never
    be merged with the others. A resumed shard keeps its run's id (``--egi-resume``).

    Raises:
        pytest.UsageError: ``--egi-shard`` without ``--egi-run-id`` (names both and the fix).
    """
    if opt.egi_shard and not opt.egi_run_id:
        k, n = opt.egi_shard
        raise pytest.UsageError(
            f"--egi-shard {k}/{n} needs --egi-run-id: without it this shard would write into a "
            f"run folder of its own, which egi-bench report --merge cannot join with the other "
            f"shards; pass --egi-run-id NAME so the {n} shards share one run folder "
            f"(reports/NAME/shard-K-of-{n})"
        )


def _refuse_mixed_layout(settings: RunSettings) -> None:
    """A run folder holds either one run or the shards of one run, never both."""
    from pytest_egi.runlog import JOURNAL_FILE, MANIFEST_FILE

    top = settings.report_dir / settings.run_id
    if settings.shard is None and any(top.glob("shard-*-of-*")):
        raise pytest.UsageError(
            f"--egi-run-id {settings.run_id}: {top} holds shards of a run; add --egi-shard K/N to "
            "run one of them, or pick another --egi-run-id"
        )
    # a merged run's folder has a manifest but no journal: its shards may be run again
    if settings.shard is not None and (top / MANIFEST_FILE).exists() and (top / JOURNAL_FILE).exists():
        raise pytest.UsageError(
            f"--egi-run-id {settings.run_id}: {top} holds a run made without --egi-shard; pick "
            "another --egi-run-id for the shards"
        )


def _lock_run_dir(config: pytest.Config, run_dir: Path) -> None:
    """Hold the run folder's lock for this session (``pytest_egi.runlog.RunLock``).

    Raises:
        pytest.UsageError: another session holds it (names its pid, host and start).
    """
    from pytest_egi.runlog import RunLock

    lock = RunLock(run_dir)
    holder = lock.acquire()
    if holder is not None:
        raise pytest.UsageError(
            f"{run_dir} is in use by another session ({holder}); wait for it to end or stop it, "
            f"then continue the run with --egi-resume {run_dir}"
        )
    config.stash[_RUN_LOCK_KEY] = lock


_RUN_LOCK_KEY = pytest.StashKey[Any]()

_INTERRUPT_KEY = pytest.StashKey[Any]()
_SHARED_PREVIOUS_KEY = pytest.StashKey[Any]()


_GATEWAY_KEY = pytest.StashKey[Any]()


def _start_gateway(config: pytest.Config, settings: RunSettings) -> None:
    """On an xdist controller whose run calls LiteLLM, start the model gateway that the
    workers will share (``--egi-gateway auto``); its socket reaches them in ``workerinput``.

    Only when some worker is a local process (``-n N``, ``--tx popen``): the gateway is a
    Unix socket of this host, so a worker on another one (``--tx ssh=...`` /
    ``--tx socket=...``) calls the provider itself
    (``pytest_egi.models.settings._gateway_here``)."""
    if getattr(config.option, "egi_gateway", "off") != "auto":
        return
    if not getattr(config.option, "tx", None) or getattr(config.option, "dist", "no") == "no":
        return  # not distributed (-n N, or --tx SPEC with -d / --dist, fill option.tx)
    from execnet import XSpec
    from xdist.workermanage import parse_tx_spec_config

    if not any(XSpec(spec).popen for spec in parse_tx_spec_config(config)):
        return
    from pytest_egi.models.offline import parse_offline_model

    provider = settings.provider
    models = [m for m in (settings.model, getattr(provider, "judge_model", None),
                          getattr(provider, "simulator_model", None))
              if m and parse_offline_model(m) is None]
    if not models:
        return
    from pytest_egi.models.gateway import start_gateway

    try:
        config.stash[_GATEWAY_KEY] = start_gateway()
    except RuntimeError as exc:
        raise pytest.UsageError(f"--egi-gateway auto: {exc}; rerun with --egi-gateway off") from None


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


def pytest_unconfigure(config: pytest.Config) -> None:
    """Unregister the collector; stop what this process started (shared dir, gateway, MCP servers)."""
    interrupt = config.stash.get(_INTERRUPT_KEY, None)
    if interrupt is not None:
        del config.stash[_INTERRUPT_KEY]
        interrupt.uninstall()
    lock = config.stash.get(_RUN_LOCK_KEY, None)
    if lock is not None:
        del config.stash[_RUN_LOCK_KEY]
        lock.release()
        lock.remove_if_unused()
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        del config.stash[SESSION_KEY]
        config.pluginmanager.unregister(session)
    if _SHARED_PREVIOUS_KEY in config.stash:
        configure_shared(config.stash[_SHARED_PREVIOUS_KEY])
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is not None and settings.shared_dir is not None:  # the controller's (shared.py)
        shutil.rmtree(settings.shared_dir, ignore_errors=True)
        settings.shared_dir = None
    gateway = config.stash.get(_GATEWAY_KEY, None)
    if gateway is not None:
        del config.stash[_GATEWAY_KEY]
        gateway.stop()
    # MCP servers this process started (a suite's, on first use) stop with the session; the
    # client module is looked up, never imported here, so a run without MCP pays nothing
    mcp_client = sys.modules.get("pytest_egi.mcp.client")
    if mcp_client is not None:
        mcp_client.close_all()


class _XdistHooks:
    """Hand every worker the controller's run id (so all write into one run directory) and
    the model gateway's socket, when there is one; on the controller, collect the workers'
    data warnings and turn a worker's usage error into the session's (exit status 4, as in a
    serial run)."""

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
        gateway = node.config.stash.get(_GATEWAY_KEY, None)
        if gateway is not None:
            node.workerinput["egi_gateway"] = gateway.socket_path

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """On a worker, once xdist sent the report to the controller (and every plugin here
        saw it): the record leaves it, since the worker's terminal keeps every report to the
        end and memory must not grow with the number of items."""
        if self.worker and any(p[0] == "egi" for p in report.user_properties):
            report.user_properties[:] = [p for p in report.user_properties if p[0] != "egi"]

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """Gather the data warnings a worker found while loading tasks (``_check_data``)."""
        found = (getattr(node, "workeroutput", None) or {}).get("egi_data_warnings")
        if found:
            from pytest_egi.checks import merge_data_warnings

            merge_data_warnings(node.config.stash[SETTINGS_KEY].data_warnings, found)


class _JunitXmlJson:
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


_WORKSTEAL_KEY = pytest.StashKey[bool]()


def _stop_reason_now(config: pytest.Config) -> str | None:
    """Why this process must start no further item: a first Ctrl-C or SIGTERM it received, or (on an
    xdist worker) a stop the controller requested (``pytest_egi.shared.request_stop``)."""
    from pytest_egi.interrupt import interrupt_reason

    reason = interrupt_reason()
    if reason is None and hasattr(config, "workerinput"):
        reason = stop_requested()
    return reason


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """On an xdist worker, first build the world of the item's suite if this process has not
    (:func:`_prepare_before_item`; the outermost wrapper, so before pytest-timeout's timer).
    Then stop after this item when a stop was asked for while it ran (a first Ctrl-C, or on an
    xdist worker the controller's early stop); xdist would otherwise run every queued item."""
    _prepare_before_item(item)
    result = yield
    reason = _stop_reason_now(item.config)
    if reason:
        item.session.shouldstop = reason
    state = item.stash.get(ITEM_KEY, None)
    if state is not None:  # reported: memory must not grow with the number of items
        del item.stash[ITEM_KEY]  # the record, the item's clients and recorder
        if state.record is not None:
            item.user_properties[:] = [p for p in item.user_properties if p[0] != "egi"]
    return result


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """After every other plugin (on an xdist worker: after xdist sent the report to the
    controller), drop the trajectory text a report carried, if it still holds it."""
    if getattr(report, "egi_raw", None) is not None:
        del report.egi_raw


@pytest.hookimpl(tryfirst=True, specname="pytest_runtest_protocol")
def _start_no_item_after_a_stop(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """An item not yet started when a stop was asked for is not run at all (no report, no
    record: a resumed run runs it)."""
    reason = _stop_reason_now(item.config)
    if reason:
        item.session.shouldstop = reason
        return True
    return None


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> Any:
    """With ``-n`` and no ``--dist``, an EGI session distributes with ``worksteal``, which
    the plugin's scheduler then refines (``pytest_egi.scheduling``: whole suites per worker).

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
        config.stash[_WORKSTEAL_KEY] = True
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Any:
    """When the items are over (run, stopped or interrupted), a further Ctrl-C no longer
    interrupts: the run's report is being written (``pytest_egi.interrupt``)."""
    try:
        return (yield)
    finally:
        interrupt = session.config.stash.get(_INTERRUPT_KEY, None)
        if interrupt is not None:
            interrupt.wrap_up()


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    """Model, mode, routing file and hash, seed, run directory (and the xdist mode we chose,
    with what the suites' placement on the workers is weighed by)."""
    s = config.stash.get(SETTINGS_KEY, None)
    if s is None or not s.model or s.routing is None:
        return None
    seed = s.run_seed
    lines = [
        f"egi: model {s.model}, mode {s.mode}, seed {seed}, trials {s.trials}, "
        f"judge {s.judge_model or 'egi/rules'}",
        f"egi: routing {s.routing_path} (sha256 {s.routing_hash[:12]}), run {s.run_dir}",
    ]
    if config.stash.get(_WORKSTEAL_KEY, False):
        from pytest_egi.scheduling import learned_durations

        basis = ("learned item times (last -n run, same model and profile)" if learned_durations(config)
                 else "item counts (no item times learned for this model and profile)")
        lines.append(f"egi: xdist suite-affine work stealing, suites placed by {basis}; --dist to choose")
    if s.shard:
        lines.append(f"egi: shard {s.shard[0]}/{s.shard[1]} of run {s.run_id}: a deterministic "
                     f"1/{s.shard[1]} of the selected items, balanced by suite and category")
    if s.resume_from is not None:
        done = len(s.resumed)
        what = "items already have a complete record and do not" if done != 1 else (
            "item already has a complete record and does not")
        lines.append(f"egi: resuming {s.resume_from}: {done} {what} run again")
    return lines


def pytest_report_collectionfinish(config: pytest.Config, items: list[pytest.Item]) -> str | None:
    """After pytest's "collected N items": how many of them this session runs when it is a
    shard or a resume (pytest's count is before those choices)."""
    s = config.stash.get(SETTINGS_KEY, None)
    if s is None or not s.model or (not s.shard and not s.resumed):
        return None
    skipped = config.stash.get(RESUMED_SKIPPED_KEY, 0)
    parts = []
    if s.shard:
        parts.append(f"shard {s.shard[0]}/{s.shard[1]}")
    if skipped:
        parts.append(f"{skipped} already recorded")
    return f"egi: {len(items)} items to run ({', '.join(parts)})"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Without a model, say loudly that the benchmark items were skipped (not a green run)."""
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is None or settings.model:
        return
    skipped = [
        r for r in terminalreporter.stats.get("skipped", [])
        if isinstance(r.longrepr, tuple) and NO_MODEL_REASON in str(r.longrepr[2])
    ]
    if skipped:
        terminalreporter.write_line(
            f"egi: {len(skipped)} benchmark items skipped, {NO_MODEL_REASON}; no EGI was computed",
            yellow=True,
            bold=True,
        )


def _marker_name(text: str) -> str:
    return re.sub(r"\W", "_", text)


@functools.cache
def _suite_for_module(package: str) -> Any:
    from pytest_egi.suite import load_suite

    return load_suite(package)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``egi_case`` with the suite's tasks for the active profile."""
    if "egi_case" not in metafunc.fixturenames:
        return
    from pytest_egi.config import check_routes_produced, validate_suite_options

    config = metafunc.config
    settings = config.stash[SETTINGS_KEY]
    package = metafunc.module.__package__ or ""
    suite = _suite_for_module(package)
    if settings.routing is None:
        _load_routing(config, settings)
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
        # one worker builds (or reads the cross-run task cache, pytest_egi/taskcache.py), the
        # others unpickle (pytest_egi/shared.py); the Task objects are unpickled only when an
        # item first needs one (LoadedTasks)
        from pytest_egi.taskcache import CacheEntries, LoadedTasks, source_paths, task_cache_dir

        cache = CacheEntries(task_cache_dir(config), key, lambda: source_paths(suite, package, options))
        tasks = build_once(f"tasks-{suite.name}", key, lambda: cache.get(
            f"tasks-{suite.name}", lambda: LoadedTasks(suite.load_tasks(profile, options))))  # fmt: skip
    except (pytest.UsageError, ValueError, OSError) as exc:
        # bad suite options or bad user data: a usage error (exit 4), raised once collection
        # is over so pytest reports it cleanly (an xdist worker reports a collection error)
        error = exc if isinstance(exc, pytest.UsageError) else _data_error(suite.name, settings, exc)
        return _refuse(metafunc, error)
    if not tasks and getattr(suite, "opt_in", None):
        # an opt-in suite whose tasks were not asked for collects nothing (its optional
        # routes are then left out of the EGI): the empty parametrization's placeholder item
        # is dropped in pytest_collection_modifyitems
        config.stash.setdefault(_OPTED_OUT_KEY, set()).add(metafunc.definition.nodeid)
        metafunc.parametrize("egi_case", [], indirect=True)
        return None
    if not tasks:
        return _refuse(metafunc, _data_error(suite.name, settings, ValueError(
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
    try:
        _check_data(config, settings, suite, tasks, options, profile, cache)
    except (ValueError, OSError) as exc:
        return _refuse(metafunc, _data_error(suite.name, settings, exc))
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


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """After every other selection (``-k``, ``-m``, ``--lf``, ...): keep this shard's part of
    the selected items (``--egi-shard K/N``, :func:`pytest_egi.runlog.shard_indices`), then
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
        from pytest_egi.runlog import shard_indices

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
    cache: Any,
) -> None:
    """Warn about the tasks a suite loaded (``tasks``, a ``LoadedTasks``): a category of the
    profile with no task at all (a user's task file may hold only some), the tasks it cannot
    run or could not load (:func:`_not_run_warnings`), and the suite's optional
    ``constant_answer_check`` and ``data_warnings``, whose results are kept in the task cache
    beside the tasks (``cache``, the suite's ``CacheEntries``: same key), so a warm collection
    neither runs them nor unpickles the tasks. Several warnings of one category make one line.
    The warnings go to ``settings.data_warnings`` (an xdist worker also hands them to the
    controller in ``workeroutput``, read back in ``_XdistHooks.pytest_testnodedown``)."""
    if not settings.model:
        return
    from pytest_egi.checks import data_warning_entries, merge_data_warnings

    loaded = set(tasks.categories)
    absent = {
        c: f"{c}: no task of this category was loaded, so its sub-metrics are missing "
        "(the task data holds none)"
        for c in (profile.categories or suite.categories) if c not in loaded
    }
    merge_data_warnings(settings.data_warnings, data_warning_entries(suite.name, absent))
    hooks = [(hook, check) for hook in ("constant_answer_check", "data_warnings")
             if (check := getattr(suite, hook, None)) is not None]  # fmt: skip
    found = cache.get(f"checks-{suite.name}", lambda: _run_checks(hooks, tasks.all(), options))
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
    it (``pytest_make_collect_report`` here, ``_XdistHooks.pytest_collectreport`` there).
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
_OPTED_OUT_KEY = pytest.StashKey[set]()
"""Node ids (without parameters) of the test functions of opt-in suites given no task."""
_WORKER_USAGE_ERRORS_KEY = pytest.StashKey[list]()
_OPTED_OUT_KEY = pytest.StashKey[set]()
"""Node ids (without parameters) of the test functions of opt-in suites given no task."""
_DESELECTED_KEY = pytest.StashKey[int]()


def _data_error(suite: str, settings: RunSettings, exc: Exception) -> pytest.UsageError:
    """A usage error for bad suite data, naming the suite options that pointed at it.

    The message is ``<suite>: <the suite's message>``: a suite's load errors do not repeat
    its name (the core says it once); one that does anyway (``"<suite>: ..."``,
    ``"<suite> <env>: ..."``) is not prefixed a second time."""
    text = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) and exc.strerror else str(exc)
    given = settings.suite_options.get(suite, {})
    hint = ", ".join(f"--egi-opt {suite}.{k}={v}" for k, v in given.items())
    named = text.startswith((f"{suite}: ", f"{suite} "))
    return pytest.UsageError(("" if named else f"{suite}: ") + text + (f" (from {hint})" if hint else ""))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Raise the first usage error found while parametrizing suites (exit status 4); on an
    xdist worker, write the collected EGI items for the controller (``write_collected``);
    then do the one-time start-up (:func:`_start_up`) before the first item."""
    config = session.config
    errors = config.stash.get(_USAGE_ERRORS_KEY, [])
    if errors:
        raise errors[0]
    for tasks in loaded_tasks_of(session.items):  # the data checks are done
        tasks.drop_objects()
    settings = config.stash.get(SETTINGS_KEY, None)
    directory = shared_dir()
    if hasattr(config, "workerinput") and directory is not None and settings is not None and settings.model:
        from pytest_egi.recorder import base_record
        from pytest_egi.records import RunDir, write_collected

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
        config.stash[_REMOTE_COLLECTED_KEY] = {
            "items": [item.nodeid for item in session.items if case_of(item) is not None],
            "deselected": deselected_count(config),
        }
    _start_up(session)


_REMOTE_COLLECTED_KEY = pytest.StashKey[dict]()


def deselected_count(config: pytest.Config) -> int:
    """Items deselected in this process's collection so far (see ``pytest_deselected``)."""
    return config.stash.get(_DESELECTED_KEY, 0)


def pytest_deselected(items: list[pytest.Item]) -> None:
    """Count deselected items (``-k``, ``-m``, ``--lf``, ``--sw``, ``--deselect``)."""
    if items:
        stash = items[0].config.stash
        stash[_DESELECTED_KEY] = stash.get(_DESELECTED_KEY, 0) + len(items)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """On an xdist worker, tag the failed collection report of a usage error with its message
    (``egi_usage_error``, kept when xdist serializes the report) for the controller."""
    report = yield
    pending = collector.config.stash.get(_WORKER_USAGE_ERRORS_KEY, None)
    if pending and report.failed:
        report.egi_usage_error = pending.pop(0)
    return report


# --- one-time start-up, outside every item's (pytest-timeout) budget -------------------------


def _start_up(session: pytest.Session) -> None:
    """Everything slow that happens once per process, done before the first item runs.

    In each process that runs items (the serial session, or each xdist worker after it
    collected): every LiteLLM client of the run (model under test, judge, simulator) imports
    LiteLLM here, or waits until the model gateway has, and checks its generation
    parameters; then each suite with collected items that defines the optional hook
    ``prepare(tasks, options)`` builds its world for those tasks: here in a serial session,
    and on an xdist worker just before the first of that suite's items the worker is given
    (:func:`_prepare_before_item`; a worker collects every item but runs only some, so it
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
            client = _client(config, settings, model, None, role)
            core = getattr(client, "core", None)
            if core is not None:
                core.warm()
                core.check_params({})
    by_suite: dict[str, list[Case]] = {}
    for case in cases:
        by_suite.setdefault(case.suite.name, []).append(case)
    pending = {name: group for name, group in by_suite.items()
               if getattr(group[0].suite, "prepare", None) is not None}
    if hasattr(config, "workerinput"):
        config.stash[_UNPREPARED_KEY] = pending
        return
    for name in pending:
        _prepare_suite(config, settings, pending[name])


_UNPREPARED_KEY = pytest.StashKey[dict]()
"""config.stash on an xdist worker: suite name -> its collected cases, for the suites whose
``prepare`` has not run yet in this process (:func:`_prepare_before_item`)."""


def _prepare_suite(config: pytest.Config, settings: RunSettings, group: list[Case]) -> None:
    """Run a suite's ``prepare`` with the runnable tasks of ``group`` (its collected cases;
    ``Task.runnable``).

    ``CannotRun`` skips every item of the suite and any other exception errors each of them
    (:func:`_item_problem`), with the reason: a failed ``prepare`` is reported on the items it
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
        except Exception:  # noqa: BLE001 - that item reports it (_prepare_before_item)
            continue
        if task.runnable:
            tasks.append(task)
    tasks = list({t.id: t for t in tasks}.values())
    if not tasks:
        return
    try:
        suite.prepare(tasks, group[0].options)
    except (ValueError, OSError) as exc:
        raise _data_error(suite.name, settings, exc) from None
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


def _item_problem(item: pytest.Item, case: Case) -> None:
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


def _suite_name(item: pytest.Item) -> str | None:
    """The name of the item's suite, or None for an item that is not an EGI task."""
    case = case_of(item)
    return None if case is None else case.suite.name


def _prepare_before_item(item: pytest.Item) -> None:
    """Unpickle the item's task (and, for a suite whose tasks share objects, every task of
    it on its first item: :class:`~pytest_egi.taskcache.LoadedTasks`); tell the MCP client an
    item begins (:func:`pytest_egi.mcp.client.begin_item`: an unknown-state server is stopped,
    a dead one restarted at its first use); on an xdist worker, also run
    the ``prepare`` of the item's suite when it has not run yet in this process (see
    :func:`_start_up`). Called before pytest-timeout starts the item's timer
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
        # MCP servers left in an unknown state are stopped, dead ones restarted at their
        # next use (pytest_egi/mcp/client.py); looked up, never imported here
        mcp_client = sys.modules.get("pytest_egi.mcp.client")
        if mcp_client is not None:
            mcp_client.begin_item()
    pending = item.config.stash.get(_UNPREPARED_KEY, None)
    if not pending:
        return
    if case is None or case.suite.name not in pending or _stop_reason_now(item.config):
        return  # (an item not started after a stop needs no world)
    _prepare_suite(item.config, item.config.stash[SETTINGS_KEY], pending.pop(case.suite.name))


@pytest.fixture
def egi_case(request: pytest.FixtureRequest) -> Case:
    """The item's case (task, trial, suite); parametrized by ``pytest_generate_tests``.

    Errors or skips the item, with the reason, when its task could not be loaded or the
    suite cannot run it (:func:`_item_problem`)."""
    case: Case = request.param
    if request.config.stash[SETTINGS_KEY].model:
        _item_problem(request.node, case)
    return case


@pytest.fixture
def egi_task(egi_case: Case) -> Any:
    """The :class:`~pytest_egi.suite.Task` of this item."""
    return egi_case.task


@pytest.fixture
def egi_model(egi_case: Case, request: pytest.FixtureRequest) -> Any:
    """The model client for this trial (an offline policy or the shared LiteLLM client).

    Skips the item when no model is configured.
    """
    settings = request.config.stash[SETTINGS_KEY]
    if not settings.model:
        pytest.skip(NO_MODEL_REASON)
    client = _client(request.config, settings, settings.model, egi_case)
    item_state(request.node).client = client
    return client


def _client(
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


@pytest.fixture
def egi(egi_case: Case, request: pytest.FixtureRequest) -> EgiRecorder:
    """The recorder: ``egi.record(score, trajectory)``; also ``egi.options``, ``egi.judge``."""
    from pytest_egi.recorder import EgiRecorder

    settings = request.config.stash[SETTINGS_KEY]
    judge = simulator = None
    if settings.judge_model:
        from pytest_egi.judges import LLMJudge

        judge = LLMJudge(_client(request.config, settings, settings.judge_model, egi_case, "judge"))
    if settings.simulator_model:
        simulator = _client(request.config, settings, settings.simulator_model, egi_case, "simulator")
    recorder = EgiRecorder(request.node, settings, judge, simulator)
    item_state(request.node).recorder = recorder  # an errored item's judge/simulator usage
    return recorder


def _write_or_send_raw(item: pytest.Item, report: pytest.TestReport, raw: tuple[str, str]) -> None:
    """Put the item's trajectory file (``raw``: path in the run directory, JSON text) on disk
    before its record reaches the journal.

    An xdist worker on the controller's host (it sees the controller's shared directory)
    writes it into the run directory itself, atomically, so the workers write in parallel
    and the controller, which takes every report in turn, is not held up creating a file per
    item (about 0.4 ms each on ext4: with two fast workers its queue of reports, and its
    memory, grew). Any other process hands it to the controller with the report
    (``report.egi_raw``): serially the controller is this process; a worker on another host
    cannot reach the run directory. A worker that cannot write the file (a full disk, a
    folder turned read-only) says so with the report (``report.egi_write_error``: path,
    error, errno); the controller then stops the run (``EgiSession._write_failed``).
    """
    run_dir = (getattr(item.config, "workerinput", None) or {}).get("egi_run_dir")
    if run_dir and shared_dir() is not None:
        from pytest_egi.records import atomic_write_text

        try:
            atomic_write_text(Path(run_dir) / raw[0], raw[1])
        except OSError as exc:  # a full disk, a folder turned read-only: the controller stops the run
            report.egi_write_error = [  # type: ignore[attr-defined]
                str(exc.filename or Path(run_dir) / raw[0]), exc.strerror or str(exc), exc.errno]
    else:
        report.egi_raw = list(raw)  # type: ignore[attr-defined]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Turn harness/provider exceptions into ``error`` records; skips into ``skipped`` ones."""
    report = yield
    case = case_of(item)
    settings = item.config.stash.get(SETTINGS_KEY, None)
    if case is None or settings is None or not settings.model:
        return report
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
        from pytest_egi.recorder import base_record

        report.egi_base = base_record(item, case, settings)  # type: ignore[attr-defined]
        collected = item.config.stash.get(_REMOTE_COLLECTED_KEY, None)
        if collected is not None:
            del item.config.stash[_REMOTE_COLLECTED_KEY]
            report.egi_collected = collected  # type: ignore[attr-defined]
    return report


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
    from pytest_egi.recorder import base_record, keep_raw, store_record, trajectory_fields, trial_usage

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
            existing.update(status="error", success=None, error=_error_text(excinfo))
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
    and cut to :data:`~pytest_egi.recorder.MAX_RENDER` characters without ever cutting its
    fix hint (``exc.hint``, or a parenthesised group ending the message:
    :func:`~pytest_egi.recorder.shorten`)."""
    from pytest_egi.models.secrets import redact
    from pytest_egi.recorder import shorten

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


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    """Show harness/provider failures in the call phase (and worker crashes, whose report
    xdist makes with ``when="???"``) as ERROR, not FAILED."""
    if report.when in ("call", "???") and report.failed:
        for name, value in report.user_properties:
            if name == "egi" and isinstance(value, dict) and value.get("status") == "error":
                return "error", "E", "ERROR"
    return None
