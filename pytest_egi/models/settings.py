"""Provider settings: the command-line options for real models, validated into one object.

The plugin registers the options with :func:`add_provider_options` and builds a
:class:`ProviderSettings` once per process with :func:`settings_from_config`. Every client
(model under test, judge, simulator) is built from it (``make_client(..., settings=...)``).
Option values are plain strings and numbers so that they survive pytest-xdist.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, model_validator

from pytest_egi.models.secrets import load_env_file, register_secrets, secret_param_values
from pytest_egi.options import RULES, add_provider_options

__all__ = [
    "DEFAULT_CACHE_SUBDIR",
    "ProviderSettings",
    "add_provider_options",
    "load_price_file",
    "settings_from_config",
]

DEFAULT_CACHE_SUBDIR = Path(".egi_cache") / "responses"
"""The response cache lives in ``<rootdir>/.egi_cache/responses`` unless ``--egi-cache DIR``."""


class ProviderSettings(BaseModel):
    """How real-model clients call their provider. Defaults suit a paid API.

    Attributes:
        api_base: base URL of an OpenAI-compatible server for the model under test
            (``--egi-api-base``), or None for the provider's default.
        timeout_s: per-call timeout in seconds (``--egi-timeout``).
        max_retries: retries after the first attempt for rate limits, 5xx, timeouts and
            dropped connections (``--egi-max-retries``); 0 disables retrying.
        backoff_base_s: first backoff in seconds; doubles each retry (with jitter).
        backoff_max_s: cap of one backoff, in seconds.
        retry_after_max_s: cap on an honoured ``Retry-After``, in seconds.
        cache_dir: directory of the on-disk response cache, or None when caching is off.
        state_dir: directory of the cross-process rate-limiter state (shared by xdist
            workers); None keeps the limiter in this process only.
        rpm: requests per minute allowed per model across all workers, or None.
        tpm: tokens per minute allowed per model across all workers, or None.
        price_file: JSON or YAML ``{model: {input_cost_per_token, output_cost_per_token}}``
            overriding LiteLLM's local price map (USD per token).
        independent_trials: put the trial index in the cache key (trials never share an
            answer). Turn off only for deterministic servers.
        env_file: the ``.env`` file loaded into the environment (never overriding), or None.
        judge_model: LiteLLM model string of the judge, or None for deterministic rules.
        judge_api_base: base URL for the judge (None: the provider's default).
        simulator_model: LiteLLM model string of the user simulator, or None for rules.
        simulator_api_base: base URL for the simulator (None: the provider's default).
        gateway: Unix socket of the session's model gateway (set on xdist workers when
            ``--egi-gateway`` is ``auto``); None calls LiteLLM in this process.
        model_params: generation parameters for the model under test
            (``--egi-model-params``), applied over each suite's defaults; a None value
            removes that default. The value of a secret-named one (``api_key=...``) is
            redacted wherever it would be written (:func:`~pytest_egi.models.secrets.
            register_secrets`; stored parameter lists show ``***``).
        judge_params: the same for the judge (``--egi-judge-params``).
        simulator_params: the same for the user simulator (``--egi-simulator-params``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_base: str | None = None
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=6, ge=0)
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)
    retry_after_max_s: float = Field(default=300.0, ge=0)
    cache_dir: Path | None = None
    state_dir: Path | None = None
    rpm: int | None = Field(default=None, gt=0)
    tpm: int | None = Field(default=None, gt=0)
    price_file: Path | None = None
    independent_trials: bool = True
    env_file: Path | None = None
    judge_model: str | None = None
    judge_api_base: str | None = None
    simulator_model: str | None = None
    simulator_api_base: str | None = None
    gateway: str | None = None
    model_params: dict[str, Any] = Field(default_factory=dict)
    judge_params: dict[str, Any] = Field(default_factory=dict)
    simulator_params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _backoff(self) -> ProviderSettings:
        if self.backoff_max_s < self.backoff_base_s:
            raise ValueError("backoff_max_s must be >= backoff_base_s")
        return self

    @model_validator(mode="after")
    def _register_secret_params(self) -> ProviderSettings:
        """Secrets given as options are secrets: the value of every secret-named parameter
        (``api_key``, ``*_key``, ``*token*``, ``*secret*``, ``password``, ``authorization``)
        of any role joins this process's redaction set (it is sent, but never written)."""
        for params in (self.model_params, self.judge_params, self.simulator_params):
            register_secrets(secret_param_values(params))
        return self

    def judge_identity(self) -> str:
        """Who grades free text: the judge model string, or ``egi/rules``."""
        return self.judge_model or RULES

    def simulator_identity(self) -> str:
        """Who plays the user: the simulator model string, or ``egi/rules``."""
        return self.simulator_model or RULES

    def params_for(self, role: str) -> dict[str, Any]:
        """The user's generation parameters for ``role`` (``model``, ``judge``, ``simulator``);
        None values mean "do not send" (see :func:`~pytest_egi.models.params.merge_params`)."""
        return dict({"model": self.model_params, "judge": self.judge_params,
                     "simulator": self.simulator_params}.get(role, self.model_params))

    def api_base_for(self, role: str) -> str | None:
        """The base URL for ``role`` (``model``, ``judge`` or ``simulator``)."""
        return {"model": self.api_base, "judge": self.judge_api_base,
                "simulator": self.simulator_api_base}.get(role, self.api_base)


def load_price_file(path: Path) -> dict[str, dict[str, float]]:
    """Read a user price file (JSON, or YAML by suffix ``.yaml``/``.yml``).

    Format: ``{model: {"input_cost_per_token": USD, "output_cost_per_token": USD}}``.

    Raises:
        ValueError: unreadable file or wrong shape (names the file and the model).
    """
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read price file {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"price file {path}: expected a mapping of model -> prices")
    prices: dict[str, dict[str, float]] = {}
    for model, entry in data.items():
        if not isinstance(entry, dict):
            raise ValueError(f"price file {path}: {model}: expected a mapping")
        try:
            prices[str(model)] = {k: float(entry[k]) for k in
                                  ("input_cost_per_token", "output_cost_per_token")}
        except (KeyError, TypeError, ValueError):
            raise ValueError(
                f"price file {path}: {model}: needs numeric input_cost_per_token and "
                "output_cost_per_token (USD per token)"
            ) from None
        if min(prices[str(model)].values()) < 0:
            raise ValueError(f"price file {path}: {model}: prices must be >= 0")
    return prices


def gateway_note(path: str) -> str:
    """The note of an xdist worker whose controller's model gateway is not on its host."""
    import socket

    return (f"egi: the model gateway {path} is not on this host ({socket.gethostname()}): this "
            "worker calls the provider itself")


def _gateway_here(config: Any) -> str | None:
    """The model gateway's socket handed to this xdist worker, when it exists on this host.

    The gateway is a Unix socket on the controller's host: a worker on another host
    (``--tx ssh=...`` / ``--tx socket=...``) gets a path that does not exist there, and
    calls the provider itself; a one-line note (a ``RuntimeWarning`` the controller lists
    in its warnings summary) says so."""
    import os

    path = (getattr(config, "workerinput", None) or {}).get("egi_gateway")
    if path and not os.path.exists(path):
        config.issue_config_time_warning(RuntimeWarning(gateway_note(path)), stacklevel=2)
        return None
    return path


def settings_from_config(config: Any, *, load_env: bool = True) -> ProviderSettings:
    """Build the settings from the pytest config (and load the ``.env`` file).

    Reads the options of :func:`add_provider_options` plus ``egi_api_base`` when registered.
    The env file is ``--egi-env-file`` (must exist) or ``<rootdir>/.env`` when present; it
    never overrides variables already set.

    Args:
        config: the ``pytest.Config``.
        load_env: load the env file into ``os.environ`` (False: only record its path).

    Raises:
        pytest.UsageError: a missing env/price file or a malformed one, naming the flag.
    """
    opt = config.getoption
    root = Path(config.rootpath)
    cache = opt("egi_cache", None)
    cache_dir = None if opt("egi_no_cache", False) else (
        Path(cache).expanduser() if cache else root / DEFAULT_CACHE_SUBDIR)
    if cache_dir is not None and not cache_dir.is_absolute():
        cache_dir = Path(config.invocation_params.dir) / cache_dir

    env_opt = opt("egi_env_file", None)
    env_file: Path | None = Path(env_opt).expanduser() if env_opt else root / ".env"
    if env_opt and not env_file.is_file():
        raise pytest.UsageError(f"--egi-env-file: no such file {env_file}")
    if not env_opt and not env_file.is_file():
        env_file = None
    if env_file is not None and load_env:
        try:
            load_env_file(env_file)
        except (OSError, ValueError) as exc:
            raise pytest.UsageError(f"--egi-env-file: {exc}") from None

    price = opt("egi_price_file", None)
    price_file = Path(price).expanduser() if price else None
    if price_file is not None:
        try:
            load_price_file(price_file)
        except ValueError as exc:
            raise pytest.UsageError(f"--egi-price-file: {exc}") from None

    def model(name: str) -> str | None:
        value = opt(name, None)
        return None if value in (None, RULES) else value

    values: dict[str, Any] = {
        "api_base": opt("egi_api_base", None),
        "cache_dir": cache_dir,
        "state_dir": root / ".egi_cache",
        "rpm": opt("egi_rpm", None),
        "tpm": opt("egi_tpm", None),
        "price_file": price_file,
        "env_file": env_file,
        "judge_model": model("egi_judge_model"),
        "judge_api_base": opt("egi_judge_api_base", None),
        "simulator_model": model("egi_simulator_model"),
        "simulator_api_base": opt("egi_simulator_api_base", None),
        "gateway": _gateway_here(config),
    }
    for role in ("model", "judge", "simulator"):
        values[f"{role}_params"] = opt(f"egi_{role}_params", None) or {}
    if opt("egi_timeout", None) is not None:
        values["timeout_s"] = opt("egi_timeout")
    if opt("egi_max_retries", None) is not None:
        values["max_retries"] = opt("egi_max_retries")
    return ProviderSettings(**values)
