"""Model clients: the protocol, the offline reference policies, and the LiteLLM client."""

from __future__ import annotations

from typing import Any

from pytest_egi.models.base import (
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
    shared: dict[str, ModelClient] | None = None,
) -> ModelClient:
    """The client for one trial.

    Offline policies are built per trial from the suite's reference policy (their state
    lives in the policy); LiteLLM clients are shared through ``shared`` (keyed by model).

    Args:
        model: ``--egi-model``.
        suite, task, options: the trial's suite, task and suite options (offline policies).
        noise_key: seeds ``egi/noisy-<p>`` mistakes (run seed, suite, task, trial).
        api_base: ``--egi-api-base``.
        shared: a per-process cache of non-offline clients.

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
    if shared is not None and model in shared:
        return shared[model]
    from pytest_egi.models.litellm_client import LiteLLMClient

    client = LiteLLMClient(model, api_base=api_base)
    if shared is not None:
        shared[model] = client
    return client
