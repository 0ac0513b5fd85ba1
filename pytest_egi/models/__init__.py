"""Model clients: the protocol, the offline reference policies, and the LiteLLM client."""

from __future__ import annotations

from typing import Any

from pytest_egi.models.base import (
    ContextWindowExceeded,
    ModelClient,
    ModelResponse,
    ProviderError,
    Usage,
    assistant_message,
    tool_call,
)
from pytest_egi.models.offline import (
    Noise,
    NullClient,
    PolicyClient,
    ReferencePolicy,
    parse_offline_model,
)

__all__ = [
    "ContextWindowExceeded",
    "ModelClient",
    "ModelResponse",
    "Noise",
    "NullClient",
    "PolicyClient",
    "ProviderError",
    "ReferencePolicy",
    "Usage",
    "assistant_message",
    "make_client",
    "tool_call",
]


def make_client(
    model: str,
    *,
    suite: Any = None,
    task: Any = None,
    options: Any = None,
    noise_key: str = "",
    api_base: str | None = None,
    shared: dict[str, Any] | None = None,
    trial: int = 0,
    cache_namespace: str = "",
    provider: Any = None,
    role: str = "model",
) -> ModelClient:
    """The client for one trial.

    Offline policies are built per trial from the suite's reference policy (their state
    lives in the policy). For a LiteLLM model one :class:`LiteLLMClient` per (role, model,
    api base) is kept in ``shared`` (cache, rate limiter, prices) and each call returns a
    :class:`~pytest_egi.models.litellm_client.TrialClient` bound to ``trial``, whose
    ``usage_dict()`` is the record's usage.

    Args:
        model: ``--egi-model`` (or the judge / simulator model string).
        suite, task, options: the trial's suite, task and suite options (offline policies).
        noise_key: seeds ``egi/noisy-<p>`` mistakes (run seed, suite, task, trial).
        api_base: base URL; None takes ``provider.api_base_for(role)``.
        shared: a per-process dict of LiteLLM clients (pass the same dict every time).
        trial: the trial index; part of the cache key so trials stay independent.
        cache_namespace: extra cache-key text (e.g. the run seed); "" for none.
        provider: a :class:`~pytest_egi.models.settings.ProviderSettings`; None means
            no cache, no rate limit, default retries and timeout.
        role: ``model``, ``judge`` or ``simulator`` (separate cache entries and limits).

    Raises:
        ValueError: an unknown ``egi/`` policy name.
    """
    offline = parse_offline_model(model)
    if offline is not None:
        kind, p = offline
        if kind == "null":
            return NullClient()
        noise = Noise(p, noise_key)
        return PolicyClient(model, suite.reference_policy(task, options, noise), noise)
    from pytest_egi.models.litellm_client import LiteLLMClient

    if api_base is None and provider is not None:
        api_base = provider.api_base_for(role)
    key = f"{role}|{model}|{api_base or ''}"
    core = shared.get(key) if shared is not None else None
    if core is None:
        core = LiteLLMClient(model, api_base=api_base, settings=provider, role=role)
        if shared is not None:
            shared[key] = core
    return core.for_trial(trial, cache_namespace)
