"""The plugin's command-line option parsers and the provider option group: everything
``pytest_addoption`` needs, and nothing heavy.

Importing this module costs next to nothing (pytest and the standard library only), so an
installed plugin adds almost nothing to a pytest run that does not use it: the pydantic
models, the routing file, caches and reports are imported only once a run is configured
with a model. ``pytest_egi.config`` and ``pytest_egi.models.settings`` re-export what they
used to define here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

__all__ = [
    "BUCKETS",
    "RULES",
    "add_provider_options",
    "parse_bucket_values",
    "parse_fraction",
    "parse_mode",
    "parse_suite_option",
]

BUCKETS = ("M1", "M2", "M3", "M4", "M5", "M6")
"""The six EGI buckets, in report order."""

RULES = "egi/rules"
"""The deterministic judge and user simulator (no model)."""


# ----------------------------------------------------------------------------- option parsers


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
