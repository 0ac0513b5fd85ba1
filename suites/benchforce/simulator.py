"""The deterministic user simulator (``egi/rules``; reference A6, C1).

It plays the caller of one entry from the entry's ``user`` block (``goal`` and ``facts``,
the agenda) and reads each agent reply in this order:

1. **Confirmation**: a question asking to confirm or proceed → "Yes, please go ahead."
2. **Goal met**: every expected output has appeared in the agent's replies so far and, when
   the caller wants a change, this reply reports one done (past-tense cue such as
   "has been", "scheduled", "updated") → it calls ``exit_conversation`` (``goal_met``).
3. **Slot question**: a question naming facts on the agenda (name, date, doctor, ...) →
   those facts, one sentence each; a question about facts it does not have → "I don't know".
4. Anything else is a failed turn: it restates its goal; after :data:`MAX_FAILURES` failed
   turns it gives up and calls ``exit_conversation`` (``gave_up``).

Keywords match whole words, case-insensitively, after Unicode folding.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_egi.normalize import fold_text

__all__ = ["MAX_FAILURES", "SLOT_ASK", "RuleUser"]

MAX_FAILURES = 3
"""Failed turns before the caller gives up."""

_SLOTS: dict[str, tuple[str, str]] = {
    "name": (
        r"\b(your|full|patient'?s?|caller'?s?) (full )?name\b|\bwho (am i|is) (speaking|calling)\b",
        "My name is {}.",
    ),
    "doctor": (
        r"\bdoctor'?s? (full )?name\b|\b(which|what) doctor\b|\bphysician\b|\breferring doctor\b",
        "The doctor is {}.",
    ),
    "date": (r"\b(date|day)\b", "The date is {}."),
    "time": (r"\btime\b", "The time is {}."),
    "new_date": (r"\bnew (appointment )?date\b|\breschedul\w*\b|\bmove\b", "The new date I'd like is {}."),
    "new_time": (r"\bnew (appointment )?time\b|\breschedul\w*\b|\bmove\b", "The new time I'd like is {}."),
    "contact_name": (
        r"\bcontact'?s? (full )?name\b|\bnew (emergency )?contact\b|\bemergency contact\b",
        "The new emergency contact is {}.",
    ),
    "contact_phone": (r"\bphone\b|\bnumber\b", "Their phone number is {}."),
    "referred_doctor": (
        r"\breferr(ed|al|ing) to\b|\bspecialist\b|\bwhich referral\b",
        "The referral is to {}.",
    ),
    "priority": (r"\bpriority\b|\burgent\b|\broutine\b", "The priority is {}."),
    "referral_status": (r"\bstatus\b", "It should be {}."),
    "medication": (r"\bmedications?\b|\bmedicines?\b|\bdrugs?\b", "It's {}."),
    "test": (r"\btests?\b|\blab\b", "The test is {}."),
}
SLOT_ASK: dict[str, str] = {
    "name": "your full name",
    "doctor": "the doctor's name",
    "date": "the date",
    "time": "the time",
    "new_date": "the new date",
    "new_time": "the new time",
    "contact_name": "the new emergency contact's name",
    "contact_phone": "their phone number",
    "referred_doctor": "who the referral is to",
    "priority": "the priority",
    "referral_status": "the status you want",
    "medication": "which medication",
    "test": "which test",
}
"""How an agent asks for each fact (the reference policy uses these words)."""

_CONFIRM = re.compile(
    r"\b(confirm|shall i|should i|proceed|go ahead|would you like me to|do you want me to|"
    r"is that (right|correct)|okay to|ok to)\b"
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
        outputs: the entry's expected outputs (what the caller wants to learn).
        wants_change: True when the caller's goal is a change to their records.

    Attributes:
        exit_reason: ``goal_met`` or ``gave_up`` once it called ``exit_conversation``, else None.
        failures: failed turns so far.
    """

    def __init__(self, user: dict[str, Any], outputs: list[str], wants_change: bool) -> None:
        self.goal = str(user.get("goal") or "get help.")
        self.facts = {str(k): str(v) for k, v in (user.get("facts") or {}).items()}
        self.outputs = [fold_text(o).casefold() for o in outputs]
        self.wants_change = wants_change
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
        if question:
            asked = [k for k, (pattern, _) in _SLOTS.items() if re.search(pattern, text)]
            known = [k for k in asked if k in self.facts]
            if known:
                return " ".join(_SLOTS[k][1].format(self.facts[k]) for k in known), False
            if asked:
                return "I'm sorry, I don't know that.", False
        self.failures += 1
        if self.failures >= MAX_FAILURES:
            self.exit_reason = "gave_up"
            return "This isn't getting anywhere, so I'll try another time. Goodbye.", True
        return f"Sorry, that doesn't help me. I'd like to {self.goal}", False
