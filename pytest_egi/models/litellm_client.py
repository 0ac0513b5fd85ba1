"""The LiteLLM client: every ``--egi-model`` that is not an ``egi/`` policy.

LiteLLM is imported lazily (first call), with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` so that
import never reaches for the network.
"""

from __future__ import annotations

import os
import time
from typing import Any

from pytest_egi.models.base import ModelResponse, ProviderError, Usage, assistant_message

__all__ = ["LiteLLMClient", "import_litellm"]


def import_litellm() -> Any:
    """Import litellm with the local cost map (no network at import).

    Raises:
        ProviderError: litellm is not installed.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError as exc:  # pragma: no cover - litellm is a dependency
        raise ProviderError(f"litellm is not installed ({exc}); pip install pytest-egi") from None
    litellm.telemetry = False
    return litellm


class LiteLLMClient:
    """Calls any LiteLLM model string (``gpt-4o-mini``, ``hosted_vllm/...``, ``ollama/...``).

    Args:
        model: the LiteLLM model string.
        api_base: OpenAI-compatible base URL (``--egi-api-base``), or None for the default.
        timeout_s: per-call timeout in seconds.
    """

    def __init__(self, model: str, *, api_base: str | None = None, timeout_s: float = 120.0):
        self.name = model
        self.api_base = api_base
        self.timeout_s = timeout_s

    def generate(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **params: Any,
    ) -> ModelResponse:
        """One chat completion.

        Raises:
            ProviderError: any transport or provider failure (message from the provider).
        """
        litellm = import_litellm()
        kwargs: dict[str, Any] = {"model": self.name, "messages": messages, "timeout": self.timeout_s}
        if tools:
            kwargs["tools"] = tools
        if self.api_base:
            kwargs["api_base"] = self.api_base
        kwargs.update(params)
        start = time.perf_counter()
        try:
            response = litellm.completion(**kwargs)
        except Exception as exc:  # litellm maps provider errors to its own exception types
            raise ProviderError(f"{type(exc).__name__}: {exc}") from exc
        latency = time.perf_counter() - start
        choices = getattr(response, "choices", None) or []
        if not choices:
            return ModelResponse(assistant_message(None), Usage(calls=1, latency_s=latency))
        msg = choices[0].message
        tool_calls = [
            {
                "id": tc.id,
                "type": "function",
                "function": {"name": tc.function.name, "arguments": tc.function.arguments or ""},
            }
            for tc in (getattr(msg, "tool_calls", None) or [])
        ]
        usage_obj = getattr(response, "usage", None)
        usage = Usage(
            calls=1,
            prompt_tokens=int(getattr(usage_obj, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage_obj, "completion_tokens", 0) or 0),
            latency_s=latency,
        )
        try:
            usage.cost_usd = float(litellm.completion_cost(completion_response=response) or 0.0)
        except Exception:
            usage.cost_usd = 0.0
        return ModelResponse(assistant_message(msg.content, tool_calls or None), usage)
