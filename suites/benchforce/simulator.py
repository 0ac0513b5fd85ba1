"""The deterministic user simulator (``egi/rules``; reference A6, C1).

It plays the caller of one entry from the entry's ``user`` block (``goal`` and ``facts``,
the agenda) and reads each agent reply in this order:

1. **Confirmation**: a question asking to confirm or proceed → "Yes, please go ahead."
2. **Goal met**: every expected output has appeared in the agent's replies so far and, when
   the caller wants a change, this reply reports one done (past-tense cue such as
   "has been", "scheduled", "updated") → it calls ``exit_conversation`` (``goal_met``).
   A caller who wants neither a change nor a figure (a look-up whose result is not scripted,
   as in some upstream entries) has its goal met by the first reply that reports something:
   not a question and not a non-answer ("I don't know", "I can't").
3. **Slot question**: a question naming facts on the agenda (the environment's ``user_slots``) →
   those facts, one sentence each; a question about facts it does not have → "I don't know".
4. Anything else is a failed turn: it restates its goal; after :data:`MAX_FAILURES` failed
   turns it gives up and calls ``exit_conversation`` (``gave_up``).

Keywords match whole words, case-insensitively, after Unicode folding.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_egi.normalize import fold_text

__all__ = ["MAX_FAILURES", "RuleUser"]

MAX_FAILURES = 3
"""Failed turns before the caller gives up."""

_CONFIRM = re.compile(
    r"\b(confirm|shall i|should i|proceed|go ahead|would you like me to|do you want me to|"
    r"is that (right|correct)|okay to|ok to)\b"
)
_NON_ANSWER = re.compile(
    r"\b(i don'?t know|i do not know|i (can ?not|can'?t|am unable to|'m unable to)|no idea)\b"
)
_DONE = re.compile(
    r"\b(has been|have been|is now|successfully|all set|scheduled|booked|cancell?ed|updated|created|"
    r"changed|done)\b"
)


class RuleUser:
    """One entry's caller (module docstring).

    Args:
        user: the entry's ``user`` block: ``goal`` (text after "I'd like to") and ``facts``
            (slot → value).
        slots: the environment's ``user_slots`` (slot → question pattern, answer sentence).
        outputs: the entry's expected outputs (what the caller wants to learn).
        wants_change: True when the caller's goal is a change to their records.

    Attributes:
        exit_reason: ``goal_met`` or ``gave_up`` once it called ``exit_conversation``, else None.
        failures: failed turns so far.
    """

    def __init__(
        self,
        user: dict[str, Any],
        outputs: list[str],
        wants_change: bool,
        slots: dict[str, tuple[str, str]],
    ) -> None:
        self.goal = str(user.get("goal") or "get help.")
        self.facts = {str(k): str(v) for k, v in (user.get("facts") or {}).items()}
        self.outputs = [fold_text(o).casefold() for o in outputs]
        self.wants_change = wants_change
        self.slots = slots
        self.heard = ""
        self.exit_reason: str | None = None
        self.failures = 0

    def opening(self) -> str:
        """The first user message: the goal, nothing else volunteered."""
        return f"Hi, I'd like to {self.goal}"

    def reply(self, agent_message: str) -> tuple[str, bool]:
        """The caller's answer to one agent reply: ``(text, done)`` (done = it called
        ``exit_conversation``; :attr:`exit_reason` says why)."""
        text = fold_text(agent_message or "").casefold()
        self.heard += "\n" + text
        outputs_ok = all(o in self.heard for o in self.outputs)
        question = "?" in text
        if question and _CONFIRM.search(text):
            return "Yes, please go ahead.", False
        if (
            outputs_ok
            and (not self.wants_change or _DONE.search(text))
            and (self.outputs or self.wants_change)
        ):
            self.exit_reason = "goal_met"
            return "Thank you, that's everything I needed. Goodbye.", True
        if (
            not question
            and not self.outputs
            and not self.wants_change
            and text.strip()
            and not _NON_ANSWER.search(text)
        ):
            self.exit_reason = "goal_met"
            return "Thank you, that's everything I needed. Goodbye.", True
        if question:
            asked = [k for k, (pattern, _) in self.slots.items() if re.search(pattern, text)]
            known = [k for k in asked if k in self.facts]
            if known:
                return " ".join(self.slots[k][1].format(self.facts[k]) for k in known), False
            if asked:
                return "I'm sorry, I don't know that.", False
        self.failures += 1
        if self.failures >= MAX_FAILURES:
            self.exit_reason = "gave_up"
            return "This isn't getting anywhere, so I'll try another time. Goodbye.", True
        return f"Sorry, that doesn't help me. I'd like to {self.goal}", False
