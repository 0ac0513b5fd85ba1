"""The model-client interface every scaffold talks to.

Messages and tools use the OpenAI chat-completions wire format, which is also what LiteLLM
speaks: a message is ``{"role": "system"|"user"|"assistant"|"tool", "content": str, ...}``;
an assistant message may carry ``tool_calls=[{"id", "type": "function", "function": {"name",
"arguments": <JSON string>}}]``; a tool result is ``{"role": "tool", "tool_call_id", "content"}``.
A tool schema is ``{"type": "function", "function": {"name", "description", "parameters"}}``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "ContextWindowExceeded",
    "SESSION_FATAL_KINDS",
    "ModelClient",
    "ModelResponse",
    "ProviderError",
    "Usage",
    "assistant_message",
    "tool_call",
]


@dataclass
class Usage:
    """Token, cost and latency counters for one or more model calls.

    Attributes:
        calls: number of completed model calls.
        prompt_tokens: input tokens summed over calls.
        completion_tokens: output tokens summed over calls.
        cost_usd: price in US dollars (0.0 for offline policies and unknown prices).
        latency_s: wall-clock seconds spent waiting for the provider, summed.
        cached_calls: calls answered from the response cache (no network).
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached_calls: int = 0

    def add(self, other: Usage) -> None:
        """Add ``other``'s counters into this one, in place."""
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.latency_s += other.latency_s
        self.cached_calls += other.cached_calls

    def to_dict(self) -> dict[str, Any]:
        """Return the counters as a plain dict (JSON-safe)."""
        return asdict(self)


@dataclass
class ModelResponse:
    """One assistant turn.

    Attributes:
        message: the assistant message in OpenAI format (``role`` is ``"assistant"``;
            ``content`` str or None; optional ``tool_calls`` list).
        usage: what this call cost.
        finish_reason: the provider's ``finish_reason`` (``stop``, ``tool_calls``,
            ``length``, ``content_filter``, ...); None when the provider gave none. ``length``
            means the reply was cut off by the token limit: whatever it holds is not an answer.
        raw: None when ``message`` is the reply as sent; else the fields the client had to
            clean (text that is not valid Unicode: a lone surrogate, replaced by U+FFFD in
            ``message``), as sent, in JSON-safe form: ``{field path: text}``, e.g.
            ``{"content": "Paris \\ud800"}`` (see :mod:`pytest_egi.models.replies`). The
            scaffold stores it in the trajectory (``info["raw_replies"]``).
    """

    message: dict[str, Any]
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    raw: dict[str, str] | None = None


class ProviderError(Exception):
    """The provider or the transport failed (rate limit after retries, 5xx, timeout, auth).

    A ProviderError is an infrastructure failure: the item is reported as a pytest **error**
    and excluded from scoring, never scored as a wrong answer (DESIGN §3.4).

    Attributes:
        kind: the failure kind when known (``no_credentials``, ``quota``, ``connect``,
            ``rate_limit``, ``timeout``, ``server_error``, ``client_error``, ...); the session
            stops at once on a kind that every later call would repeat
            (:data:`SESSION_FATAL_KINDS`), rather than after five errored items.
        hint: the part of the message that says how to fix it (``(to stop sending
            temperature, pass --egi-model-params temperature=null)``), or None; a failure
            line shortened for the record keeps it whole
            (:func:`pytest_egi.run.recorder.shorten`).
    """

    def __init__(self, message: str = "", kind: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.hint = hint


SESSION_FATAL_KINDS = frozenset({"no_credentials", "quota"})
"""Provider failures that no later call of the same session can escape: a missing API key,
an exhausted quota or billing limit."""


class ContextWindowExceeded(Exception):
    """The conversation no longer fits the model's context window.

    Raised by a client when the provider refuses a request for its length (LiteLLM's
    ``ContextWindowExceededError``, an OpenAI ``context_length_exceeded`` error body). When the
    episode's own growth caused it, this is the model's limit, not an infrastructure fault: the
    scaffold ends the episode with termination ``context_exceeded`` and no answer, and the
    trial is scored as a failure (inspect_ai scores such samples). It is deliberately not a
    :class:`ProviderError`.
    """


@runtime_checkable
class ModelClient(Protocol):
    """What a scaffold needs from a model: one method that produces the next assistant turn.

    Implementations: the offline reference policies (``egi/oracle``, ``egi/noisy-<p>``,
    ``egi/null``) and the LiteLLM client for every other model string.
    """

    name: str
    """The model identity as given on the command line (``gpt-4o-mini``, ``egi/oracle``)."""

    def generate(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **params: Any,
    ) -> ModelResponse:
        """Return the next assistant message for ``messages``.

        Args:
            messages: the conversation so far, OpenAI format.
            tools: tool schemas offered to the model, or None for a text-only protocol.
            **params: sampling parameters (``temperature``, ``max_tokens``, ...).

        Raises:
            ProviderError: the provider could not produce a response (infra failure).
            ContextWindowExceeded: the messages no longer fit the model's context window.
        """
        ...


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """Build one OpenAI-format tool call; ``arguments`` is the raw JSON string."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant_message(
    content: str | None = None, tool_calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Build an OpenAI-format assistant message (``tool_calls`` omitted when empty)."""
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return msg
