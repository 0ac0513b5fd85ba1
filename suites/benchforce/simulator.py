"""The user simulators (reference A6, C1): the deterministic caller :class:`RuleUser`
(``egi/rules``, the default) and :class:`LLMUser` (a model, ``--egi-simulator-model``). Both
have one interface: ``opening() -> str``, ``reply(agent_message) -> (text, done)`` and
``exit_reason`` (``goal_met`` / ``gave_up`` once the caller called ``exit_conversation``).

**RuleUser.** It plays the caller of one entry from the entry's ``user`` block (``goal`` and ``facts``,
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

import json
import re
from typing import Any

from pytest_egi.agents.simulator import SimulatorError, simulator_generate, simulator_name
from pytest_egi.models.base import ModelClient, Usage
from pytest_egi.models.params import scaffold_params
from pytest_egi.normalize import fold_text

__all__ = [
    "EXIT_TOOL",
    "MAX_FAILURES",
    "OPENING_NUDGE",
    "SIMULATOR_PARAMS",
    "LLMUser",
    "RuleUser",
    "SimulatorError",
    "simulator_prompt",
]

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


SIMULATOR_PARAMS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 512}
"""The LLM caller's defaults (upstream: temperature 0); ``--egi-simulator-params`` overrides."""
SIMULATOR_REASONING_MAX_TOKENS = 4096
"""``max_tokens`` for a reasoning simulator model (hidden reasoning counts against it)."""

EXIT_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "exit_conversation",
        "description": (
            "Hang up: end this call. Use it once your request has been handled, or once it is "
            "clear the representative cannot handle it, or when there is nothing left to say."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "goal_met": {
                    "type": "boolean",
                    "description": "true when everything on your agenda was done or answered; "
                    "false when you are hanging up without it",
                }
            },
            "required": ["goal_met"],
        },
    },
}
"""The caller's one tool (upstream's ``exit_conversation``, with a ``goal_met`` argument added so
an ending says whether the goal was met)."""

OPENING_NUDGE = "(The support line picks up. Start the conversation with your first line as the caller.)"
"""The synthetic user message that opens the simulator's own conversation (upstream opens with
such a nudge too); the agent never sees it."""

_PROMPT = """You are role-playing a customer who has called a support line. The other side of \
this conversation is the company's representative. Everything you want from this call is in your \
agenda:

AGENDA: {agenda}

How to play the customer:
- You are a real person. Never say or hint that you are an AI, a model, a simulation or a test.
- Talk the way a customer talks: short, natural messages, polite but human.
- Open with what you want in general terms. Give details (your name, dates, names, numbers) \
only when the representative asks for them or clearly needs them, a few at a time over several \
messages, never all at once.
- Use only the facts in your agenda. If you are asked for something the agenda does not say, \
say you do not know it; never invent details.
- Stay on the agenda. Do not bring up other requests or topics, and do not try to do the \
representative's work for them.
- When the representative proposes an action that matches your agenda and asks you to confirm, \
confirm it. Do not agree to anything the agenda does not ask for.
- When everything on your agenda is done or answered, thank them and call the \
`exit_conversation` tool with goal_met=true. If the representative cannot or will not do it \
after a fair try, say goodbye and call `exit_conversation` with goal_met=false. You MUST call \
`exit_conversation` to end the call; do not just say goodbye."""


def simulator_prompt(agenda: str) -> str:
    """The LLM caller's system prompt with the entry's ``instructions`` as its agenda (our own
    wording of upstream's wrapper, reference A6, without its speech-only digit spelling)."""
    return _PROMPT.format(agenda=agenda.strip())




class LLMUser:
    """A model playing one entry's caller (module docstring; reference A6).

    Its conversation, from its own side: the system prompt (:func:`simulator_prompt` with the
    entry's ``instructions``), the :data:`OPENING_NUDGE` as a user message, then each agent
    reply as a user message and each of its own replies as an assistant message. It is offered
    :data:`EXIT_TOOL` on every turn but the opening (a caller cannot hang up before saying
    anything). A call to ``exit_conversation`` ends the dialogue: ``exit_reason`` is
    ``goal_met`` when its ``goal_met`` argument is JSON ``true``, else ``gave_up`` (false,
    missing or unreadable arguments: the caller did not say its goal was met); the text sent
    with the call, if any, is the caller's last line. Calls to other tool names are ignored
    (their text is the reply).

    Its token usage is kept in :attr:`usage`, apart from the agent's (the trajectory's usage
    counts the agent only; reference A10.4).

    Args:
        client: the simulator's model client (the core's ``egi.simulator``).
        agenda: the entry's ``instructions``.
        params: overrides of the generation parameters (None: :data:`SIMULATOR_PARAMS`, with
            ``max_tokens`` raised for a reasoning model; the LiteLLM client then applies
            ``--egi-simulator-params`` over them).

    Attributes:
        name: the simulator model's name.
        messages: the simulator's own conversation so far.
        usage: the simulator's summed usage.
        exit_reason: ``goal_met`` or ``gave_up`` once it called ``exit_conversation``, else None.

    Raises:
        ValueError: ``agenda`` is blank.
    """

    def __init__(self, client: ModelClient, agenda: str, params: dict[str, Any] | None = None) -> None:
        if not (agenda or "").strip():
            raise ValueError(
                "benchforce: the LLM user simulator needs the entry's 'instructions' (its agenda); "
                "this entry has none"
            )
        self.client = client
        self.name = simulator_name(client)
        self.params = (
            dict(params)
            if params is not None
            else scaffold_params(SIMULATOR_PARAMS, client, SIMULATOR_REASONING_MAX_TOKENS)
        )
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": simulator_prompt(agenda)},
            {"role": "user", "content": OPENING_NUDGE},
        ]
        self.usage = Usage()
        self.exit_reason: str | None = None

    def _generate(self, tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        response = simulator_generate(self.client, self.name, self.messages, tools, self.params, self.usage)
        return dict(response.message)

    def opening(self) -> str:
        """The caller's first message (no tool offered).

        Raises:
            SimulatorError: the simulator's model failed.
        """
        message = self._generate(None)
        text = str(message.get("content") or "")
        self.messages.append({"role": "assistant", "content": text})
        return text

    def reply(self, agent_message: str) -> tuple[str, bool]:
        """The caller's answer to one agent reply: ``(text, done)`` (class docstring).

        Raises:
            SimulatorError: the simulator's model failed.
        """
        self.messages.append({"role": "user", "content": agent_message or ""})
        message = self._generate([EXIT_TOOL])
        text = str(message.get("content") or "")
        exits = [
            c for c in message.get("tool_calls") or []
            if (c.get("function") or {}).get("name") == "exit_conversation"
        ]  # fmt: skip
        self.messages.append({"role": "assistant", "content": text})
        if not exits:
            return text, False
        self.exit_reason = "goal_met" if _goal_met(exits[0]) else "gave_up"
        return text, True


def _goal_met(call: dict[str, Any]) -> bool:
    raw = (call.get("function") or {}).get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return False
    return isinstance(args, dict) and args.get("goal_met") is True
