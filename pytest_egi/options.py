"""The plugin's command-line options: the ``egi`` option group and its ini mirrors
(:func:`add_options`, ``pytest_addoption``'s body), their parsers, the provider option group,
and the early re-reading of the rootdir and ini file that the ``--egi-*`` options need
(:func:`redetermine_rootdir`).

Importing this module costs next to nothing (pytest and the standard library only), so an
installed plugin adds almost nothing to a pytest run that does not use it: the pydantic
models, the routing file, caches and reports are imported only once a run is configured
with a model. ``pytest_egi.scoring.config`` and ``pytest_egi.models.settings`` re-export what they
used to define here.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any

import pytest

__all__ = [
    "BUCKETS",
    "RULES",
    "MODEL_HELP",
    "add_options",
    "add_provider_options",
    "parse_bucket_values",
    "parse_fraction",
    "parse_mode",
    "parse_model",
    "parse_shard",
    "parse_suite_option",
]

BUCKETS = ("M1", "M2", "M3", "M4", "M5", "M6")
"""The six EGI buckets, in report order."""

RULES = "egi/rules"
"""The deterministic judge and user simulator (no model)."""

MODEL_HELP = (
    "Model under test: a LiteLLM model string (gpt-4o-mini, ollama/qwen3, hosted_vllm/...) "
    "or an offline policy egi/oracle, egi/noisy-<p>, egi/null"
)



# ----------------------------------------------------------------------------- option parsers


def _parse_int(flag: str, minimum: int, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise pytest.UsageError(f"{flag}: expected a whole number, got {text!r}") from None
    if value < minimum:
        raise pytest.UsageError(f"{flag}: expected a whole number >= {minimum}, got {text!r}")
    return value


def parse_model(text: str) -> str:
    from pytest_egi.models.offline import parse_offline_model

    try:
        parse_offline_model(text)
    except ValueError as exc:
        raise pytest.UsageError(f"--egi-model: {exc}") from None
    if not text.strip():
        raise pytest.UsageError("--egi-model: empty model name")
    bare = text.strip().lower()
    if bare in ("oracle", "null") or re.fullmatch(r"noisy-[0-9.]+", bare):
        raise pytest.UsageError(f"--egi-model: {text!r} is not a provider's model; the offline policy "
                                f"is named egi/{bare} (did you mean --egi-model egi/{bare}?)")
    return text


def _parse_run_id(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", text or ""):
        raise pytest.UsageError(
            f"--egi-run-id: {text!r} is not a usable folder name; use letters, digits, '.', '_' "
            "and '-' (e.g. nightly-2026-11-30 or $GITHUB_RUN_ID)"
        )
    return text


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/3"`` -> ``(2, 3)``: shard K of N, 1 <= K <= N.

    Raises:
        ValueError: not ``K/N`` with whole numbers in range (the message says so).
    """
    parts = str(text).strip().split("/")
    try:
        k, n = (int(p) for p in parts)
    except ValueError:
        raise ValueError(f"expected K/N (e.g. 2/3), got {text!r}") from None
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"expected K/N with 1 <= K <= N (e.g. 2/3), got {text!r}")
    return k, n


def _parse_shard(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise pytest.UsageError(f"--egi-shard: {exc}") from None




def parse_mode(text: str) -> str:
    """``--egi-mode``: ``quick`` or ``deep``."""
    if text not in ("quick", "deep"):
        raise pytest.UsageError(f"--egi-mode: expected quick or deep, got {text!r}")
    return text


def parse_fraction(flag: str, text: str) -> float:
    """A number in [0, 1] for ``flag`` (e.g. ``--egi-max-error-rate 0.05``)."""
    try:
        value = float(text)
    except ValueError:
        raise pytest.UsageError(f"{flag}: expected a number between 0 and 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise pytest.UsageError(f"{flag}: expected a number between 0 and 1, got {text!r}")
    return value


def parse_bucket_values(flag: str, text: str, *, lo: float, hi: float) -> dict[str, float]:
    """``M1=0.2,M5=0.3`` -> ``{"M1": 0.2, "M5": 0.3}``; each value in [lo, hi].

    Raises:
        pytest.UsageError: naming ``flag`` and the bad token.
    """
    values: dict[str, float] = {}
    example = f"{flag} M2=75,M5=80" if hi > 1 else f"{flag} M1=0.3,M4=0.12"
    for token in filter(None, (t.strip() for t in text.split(","))):
        name, sep, num = token.partition("=")
        name = name.strip().upper()
        if not sep or name not in BUCKETS:
            raise pytest.UsageError(
                f"{flag}: bad entry {token!r}; expected BUCKET=NUMBER with BUCKET in M1-M6, "
                f"e.g. {example}"
            )
        try:
            value = float(num)
        except ValueError:
            raise pytest.UsageError(f"{flag}: bad number in {token!r}") from None
        if name in values:
            raise pytest.UsageError(f"{flag}: {name} given twice")
        if not lo <= value <= hi or math.isnan(value):
            raise pytest.UsageError(f"{flag}: {token!r} is outside [{lo:g}, {hi:g}]")
        values[name] = value
    if not values:
        raise pytest.UsageError(f"{flag}: empty; expected e.g. {example}")
    return values


def parse_suite_option(text: str) -> tuple[str, str, str]:
    """``--egi-opt crmarena.strategy=tool_call`` -> ``("crmarena", "strategy", "tool_call")``."""
    key, sep, value = text.partition("=")
    suite, dot, name = key.partition(".")
    if not sep or not dot or not suite or not name:
        raise pytest.UsageError(
            f"--egi-opt: bad entry {text!r}; expected SUITE.KEY=VALUE, "
            "e.g. --egi-opt crmarena.strategy=tool_call"
        )
    return suite.strip(), name.strip(), value.strip()


# ----------------------------------------------------------------------------- provider options


def _positive_int(flag: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise pytest.UsageError(f"{flag}: expected a positive integer, got {text!r}") from None
        if value <= 0:
            raise pytest.UsageError(f"{flag}: expected a positive integer, got {text!r}")
        return value

    return parse


def _non_negative_int(flag: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value < 0:
            raise pytest.UsageError(f"{flag}: expected an integer >= 0, got {text!r}")
        return value

    return parse


def _seconds(flag: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not value > 0 or value == float("inf"):
            raise pytest.UsageError(f"{flag}: expected a number of seconds > 0, got {text!r}")
        return value

    return parse


def _text(flag: str, what: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if not text.strip():
            raise pytest.UsageError(f"{flag}: expected {what}, got an empty string")
        return text.strip()

    return parse


def _model(flag: str) -> Callable[[str], str | None]:
    def parse(text: str) -> str | None:
        text = _text(flag, "a LiteLLM model string")(text)
        if text == RULES:
            return None
        if text.startswith("egi/"):
            raise pytest.UsageError(
                f"{flag}: {text!r} is not a judge; give a LiteLLM model string "
                f"(e.g. {flag} gpt-4o-mini) or {RULES} for the deterministic rules"
            )
        return text

    return parse


def _url(flag: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        text = text.strip().rstrip("/")
        if not text.startswith(("http://", "https://")):
            raise pytest.UsageError(f"{flag}: expected an http(s) URL, got {text!r}")
        return text

    return parse


def _params(flag: str) -> Callable[[str], dict[str, Any]]:
    def parse(text: str) -> dict[str, Any]:
        from pytest_egi.models.params import parse_params

        try:
            return parse_params(flag, text)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None

    return parse


def add_provider_options(group: Any, parser: Any) -> None:
    """Register the real-model options on ``group`` (the plugin's ``egi`` option group).

    Registers ``--egi-cache DIR``, ``--egi-no-cache``, ``--egi-rpm N``, ``--egi-tpm N``,
    ``--egi-timeout S``, ``--egi-max-retries N``, ``--egi-price-file PATH``,
    ``--egi-judge-model M``, ``--egi-judge-api-base URL``, ``--egi-simulator-model M``,
    ``--egi-simulator-api-base URL``, ``--egi-env-file PATH``, ``--egi-gateway
    {auto,off}`` and ``--egi-model-params``, ``--egi-judge-params``,
    ``--egi-simulator-params`` (``KEY=VALUE,...``); ``dest`` is the flag with
    ``egi_`` and underscores (``egi_rpm``). Not ``--egi-model`` / ``--egi-api-base``.

    Args:
        group: ``parser.getgroup("egi")``.
        parser: the pytest parser (unused today; kept for ini options).
    """
    del parser
    group.addoption("--egi-cache", dest="egi_cache", metavar="DIR", default=None,
                    type=_text("--egi-cache", "a directory"),
                    help="cache directory: model responses in DIR/responses.sqlite3, loaded "
                    "tasks in DIR/tasks/ (default <rootdir>/.egi_cache/responses and "
                    "<rootdir>/.egi_cache/tasks)")
    group.addoption("--egi-no-cache", dest="egi_no_cache", action="store_true", default=False,
                    help="do not read or write the response cache nor the task cache")
    group.addoption("--egi-rpm", dest="egi_rpm", metavar="N", default=None,
                    type=_positive_int("--egi-rpm"),
                    help="requests per minute per model on this machine, shared by its xdist "
                         "workers (one budget across machines: a LiteLLM proxy)")
    group.addoption("--egi-tpm", dest="egi_tpm", metavar="N", default=None,
                    type=_positive_int("--egi-tpm"),
                    help="tokens per minute per model on this machine, shared by its xdist "
                         "workers (one budget across machines: a LiteLLM proxy)")
    group.addoption("--egi-timeout", dest="egi_timeout", metavar="S", default=None,
                    type=_seconds("--egi-timeout"),
                    help="timeout of one model call in seconds (default 120)")
    group.addoption("--egi-max-retries", dest="egi_max_retries", metavar="N", default=None,
                    type=_non_negative_int("--egi-max-retries"),
                    help="retries for rate limits, 5xx, timeouts, dropped connections (default 6)")
    group.addoption("--egi-price-file", dest="egi_price_file", metavar="PATH", default=None,
                    type=_text("--egi-price-file", "a file path"),
                    help="JSON/YAML {model: {input_cost_per_token, output_cost_per_token}} in USD")
    group.addoption("--egi-judge-model", dest="egi_judge_model", metavar="M", default=None,
                    type=_model("--egi-judge-model"),
                    help="LiteLLM model that grades free text (default egi/rules)")
    group.addoption("--egi-judge-api-base", dest="egi_judge_api_base", metavar="URL",
                    default=None, type=_url("--egi-judge-api-base"),
                    help="OpenAI-compatible base URL for the judge model")
    group.addoption("--egi-simulator-model", dest="egi_simulator_model", metavar="M",
                    default=None, type=_model("--egi-simulator-model"),
                    help="LiteLLM model that plays the user (default egi/rules)")
    group.addoption("--egi-simulator-api-base", dest="egi_simulator_api_base", metavar="URL",
                    default=None, type=_url("--egi-simulator-api-base"),
                    help="OpenAI-compatible base URL for the simulator model")
    group.addoption("--egi-env-file", dest="egi_env_file", metavar="PATH", default=None,
                    type=_text("--egi-env-file", "a file path"),
                    help="load provider keys from this .env file (default <rootdir>/.env if present)")
    group.addoption("--egi-gateway", dest="egi_gateway", choices=("auto", "off"), default="auto",
                    help="auto (default): with xdist workers, one gateway process makes every "
                         "LiteLLM call; off: each worker imports LiteLLM and calls itself")
    for role, flag in (("model under test", "--egi-model-params"),
                       ("judge", "--egi-judge-params"),
                       ("user simulator", "--egi-simulator-params")):
        group.addoption(flag, dest=flag[2:].replace("-", "_"), metavar="KEY=VALUE,...",
                        default=None, type=_params(flag),
                        help=f"generation parameters for the {role} over the suites' defaults "
                             "(values as JSON scalars, KEY=null removes a default), e.g. "
                             "temperature=0,max_tokens=1024; ones the model refuses are dropped")


# ----------------------------------------------------------------------------- the egi group


def add_options(parser: pytest.Parser) -> None:
    """Register the ``egi`` option group and its ini mirrors."""
    group = parser.getgroup("egi", "enterprise agent benchmarks (EGI score)")
    group.addoption(
        "--egi-model", dest="egi_model", metavar="MODEL", type=parse_model, default=None, help=MODEL_HELP
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
        help="Routing file (default: routing.yaml in the rootdir, else the one installed with the "
        "suites)",
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
    parser.addini("egi_model", "Default model under test", default=None)
    parser.addini("egi_mode", "Default profile: quick or deep", default="quick")
    parser.addini("egi_routing", "Routing file, relative to the rootdir", default=None)
    parser.addini("egi_report_dir", "Parent folder of run directories", default=None)
    parser.addini("egi_max_error_rate", "Errored share that fails the session", default="0.05")
    parser.addini("egi_options", "Suite options, one SUITE.KEY=VALUE per line", type="linelist", default=[])
    add_provider_options(group, parser)


def redetermine_rootdir(
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
