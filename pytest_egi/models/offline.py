"""Offline reference policies: ``egi/oracle``, ``egi/noisy-<p>``, ``egi/null`` (DESIGN §6).

They need no network and no key. The oracle replays each task's reference solution through
the same scaffold a model would use; ``egi/noisy-<p>`` is the oracle with seeded mistakes at
rate ``p``; ``egi/null`` answers nothing useful and calls no tool.

Monotonicity by construction: every potential mistake draws its uniform number ``u`` from a
hash of (run seed, task, trial, mistake kind, occurrence), never from a shared stream, so the
set of mistakes made at rate ``p`` is contained in the set made at any ``p' > p`` for the same
seed: scores can only fall as ``p`` rises.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from typing import Any, Protocol

from pytest_egi.models.base import ModelResponse, Usage, assistant_message

__all__ = [
    "MISTAKE_KINDS",
    "NULL_ANSWER",
    "Noise",
    "NullClient",
    "OFFLINE_PREFIX",
    "PolicyClient",
    "ReferencePolicy",
    "parse_offline_model",
]

OFFLINE_PREFIX = "egi/"
NULL_ANSWER = "I don't know."
"""What ``egi/null`` says every turn."""

MISTAKE_KINDS = ("wrong_tool", "wrong_argument", "wrong_answer", "no_abstention", "extra_turn")
"""The mistakes a noisy policy may make (DESIGN §6); each suite's policy decides which apply."""

_NOISY_RE = re.compile(r"^egi/noisy-(?P<p>0(\.\d+)?|1(\.0+)?)$")


class ReferencePolicy(Protocol):
    """A suite's reference solution for one task, acting through the scaffold.

    Called once per assistant turn with the conversation so far; returns the next assistant
    message (OpenAI format). It may keep state between calls (one instance per trial). It
    must compute answers only from what its own tool calls returned, never from the gold.
    """

    def __call__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]: ...


class Noise:
    """Seeded, nested mistake source for one trial.

    Args:
        p: mistake rate in [0, 1]; 0 is the oracle.
        key: identifies the trial, e.g. ``"42|crmarena|NCR-001|0"``.

    ``happens(kind)`` is True with probability ``p``; the n-th call for the same ``kind``
    always draws the same uniform number for the same key, so raising ``p`` only adds
    mistakes.
    """

    def __init__(self, p: float, key: str) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"mistake rate must be in [0, 1], got {p}")
        self.p = p
        self.key = key
        self._occurrences: Counter[str] = Counter()
        self.made: list[str] = []
        """Mistake kinds actually made, in order (recorded in the trajectory)."""

    def uniform(self, kind: str) -> float:
        """The uniform number in [0, 1) for the next occurrence of ``kind``."""
        n = self._occurrences[kind]
        self._occurrences[kind] += 1
        digest = hashlib.sha256(f"{self.key}|{kind}|{n}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    def happens(self, kind: str) -> bool:
        """Whether the policy makes a mistake of ``kind`` now (consumes one draw)."""
        hit = self.uniform(kind) < self.p
        if hit:
            self.made.append(kind)
        return hit

    def choice(self, kind: str, options: list[Any]) -> Any:
        """Pick one of ``options`` deterministically for this trial (no mistake implied)."""
        if not options:
            raise ValueError("choice from an empty list")
        return options[int(self.uniform(f"choice:{kind}") * len(options))]


def parse_offline_model(model: str) -> tuple[str, float] | None:
    """Parse an offline model name.

    Returns:
        ``("oracle", 0.0)``, ``("noisy", p)`` or ``("null", 0.0)``; None for a non-offline name.

    Raises:
        ValueError: an ``egi/`` name that is not one of the three policies, or p outside [0, 1].
    """
    if not model.startswith(OFFLINE_PREFIX):
        return None
    if model == "egi/oracle":
        return ("oracle", 0.0)
    if model == "egi/null":
        return ("null", 0.0)
    m = _NOISY_RE.match(model)
    if m:
        return ("noisy", float(m.group("p")))
    raise ValueError(
        f"unknown offline policy {model!r}: use egi/oracle, egi/null or egi/noisy-<p> "
        "with p between 0 and 1 (e.g. egi/noisy-0.3)"
    )


class PolicyClient:
    """A ModelClient that asks a suite's reference policy for each turn.

    Args:
        name: ``egi/oracle`` or ``egi/noisy-<p>``.
        policy: the suite's reference policy for this trial.
        noise: the trial's mistake source (kept so the trajectory can list mistakes made).
    """

    def __init__(self, name: str, policy: ReferencePolicy, noise: Noise) -> None:
        self.name = name
        self.policy = policy
        self.noise = noise

    def generate(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **params: Any,
    ) -> ModelResponse:
        """Return the policy's next assistant message; usage counts one call, zero tokens;
        ``finish_reason`` is ``tool_calls`` when it calls a tool, else ``stop``."""
        message = self.policy(messages, tools)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return ModelResponse(message=message, usage=Usage(calls=1), finish_reason=finish)


class NullClient:
    """``egi/null``: says ``NULL_ANSWER`` every turn and never calls a tool (the floor)."""

    name = "egi/null"

    def generate(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **params: Any,
    ) -> ModelResponse:
        """Return ``NULL_ANSWER`` as plain assistant text (``finish_reason`` ``stop``)."""
        message = assistant_message(NULL_ANSWER)
        return ModelResponse(message=message, usage=Usage(calls=1), finish_reason="stop")

