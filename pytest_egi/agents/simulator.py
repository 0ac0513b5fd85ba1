"""The model call behind an LLM user simulator or judge, shared by the suites that have one.

A simulator's failure is never the agent's: a provider error or an overflowing context window
becomes :class:`SimulatorError`, which makes the item an error (never scored, and nothing of it
reaches the agent), and the simulator's tokens are counted apart from the agent's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_egi.models.base import ContextWindowExceeded, ModelClient, ModelResponse, ProviderError, Usage

__all__ = ["SimulatorError", "simulator_generate", "simulator_name"]


class SimulatorError(ProviderError):
    """The user simulator (or a simulator-side judge) failed: its model failed (provider error,
    or its own context window overflowed), or it gave no usable reply. The item is an error,
    never scored, and nothing of it reaches the agent. ``kind`` is the provider failure's kind,
    ``context_window`` for an overflow, or a suite's own (UserBench's ``bad_verdict``)."""


def simulator_name(client: ModelClient) -> str:
    """The simulator's name in records and messages: the client's model name, else its class."""
    return str(getattr(client, "name", None) or type(client).__name__)


def simulator_generate(
    client: ModelClient,
    name: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    params: Mapping[str, Any],
    usage: Usage,
) -> ModelResponse:
    """One call of the simulator's model; its usage is added to ``usage`` (the simulator's own).

    Args:
        client: the simulator's client (``--egi-simulator-model``).
        name: the simulator's model name, for messages.
        messages: the simulator's own conversation (copied before the call).
        tools: tools offered to the simulator, or None.
        params: generation parameters.
        usage: the simulator's running usage.

    Raises:
        SimulatorError: the provider failed (``kind`` kept) or the context window overflowed
            (``kind`` ``context_window``).
    """
    try:
        response = client.generate(list(messages), tools, **dict(params))
    except ContextWindowExceeded as exc:
        raise SimulatorError(
            f"the user simulator {name} failed: its context window overflowed ({exc})",
            kind="context_window",
        ) from exc
    except ProviderError as exc:
        raise SimulatorError(f"the user simulator {name} failed: {exc}", kind=exc.kind) from exc
    usage.add(response.usage)
    return response
