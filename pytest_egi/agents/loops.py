"""Turn loops shared by all suites: function calling, text ReAct, and dialogue with a user.

Each loop drives a :class:`~pytest_egi.models.base.ModelClient` for at most ``max_turns``
assistant turns and returns a :class:`Trajectory`. Loops know no benchmark: the suite passes
its prompt, tools or action parser, and (for dialogue) its user simulator.

Every loop follows one rule for how an episode ends without an answer (``final_answer`` None,
see :func:`no_answer_reason`, which every scorer uses): a blank final reply, a final reply cut
off by the token limit (``finish_reason == "length"``: termination ``truncated``), turns run
out (``max_turns``), or the model's context window overflowed (the client raised
:class:`~pytest_egi.models.base.ContextWindowExceeded`: ``context_exceeded``, scored as a
failure, never an error). Any other exception ends the episode as ``error`` and propagates.

These :data:`Termination` words are the ones records (``termination``), failure lines
(``(ended: max_turns)``) and suites' own episode notes use; a failed trial's failure kind
follows from them first (:func:`pytest_egi.outcomes.ending_kind`: ``max_turns`` without an
answer is ``turn_limit``, any other ending without one ``no_answer``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol

from pytest_egi.agents.tools import ToolError, Toolkit
from pytest_egi.models.base import ContextWindowExceeded, ModelClient, Usage
from pytest_egi.normalize import fold_text

__all__ = [
    "NO_ANSWER_TERMINATIONS",
    "Action",
    "Trajectory",
    "UserSimulator",
    "blank_answer_reason",
    "call_model",
    "end_with_text",
    "is_blank",
    "keep_partial",
    "no_answer_reason",
    "run_dialogue_loop",
    "run_react_loop",
    "run_tool_loop",
]

Termination = Literal[
    "submitted",  # a submit tool or a respond action gave the answer
    "text_answer",  # a reply with no tool call, taken as the answer
    "max_turns",  # the turn limit ran out: no answer
    "user_stop",  # the simulated user ended the dialogue
    "max_user_turns",  # the dialogue's user-turn limit ran out
    "context_exceeded",  # the conversation outgrew the model's context window: no answer
    "truncated",  # the final reply was cut off by the token limit (finish_reason length)
    "error",  # an infrastructure or environment fault ended the episode (the item errors)
]

NO_ANSWER_TERMINATIONS: frozenset[str] = frozenset({"max_turns", "context_exceeded", "truncated", "error"})
"""Terminations that end an episode with no answer, whatever ``final_answer`` holds."""

_NO_ANSWER_WHY = {
    "max_turns": "the turn limit ran out (max_turns)",
    "context_exceeded": "the conversation outgrew the model's context window (context_exceeded)",
    "truncated": "the final reply was cut off by the token limit (truncated)",
    "error": "an infrastructure or environment fault ended the episode (error)",
}


@dataclass
class Trajectory:
    """The full history of one trial.

    Attributes:
        messages: every message exchanged, OpenAI format, in order (system prompt first).
        final_answer: the submitted answer (str, or the submit tool's structured value);
            None when the episode ended without one (see :func:`no_answer_reason`).
        termination: why the loop stopped.
        turns: assistant turns taken (each model call is one turn).
        finish_reason: the provider's ``finish_reason`` of the last model call (``stop``,
            ``tool_calls``, ``length``, ...); None before any call or when the provider gave
            none.
        tool_calls: the executed tool calls (``Toolkit.calls``), empty for text protocols.
        usage: summed usage of the model under test over the trial.
        info: loop- and suite-specific extras (invalid-format count, mistakes made, ...);
            ``raw_replies`` lists the replies the client had to clean (text that is not valid
            Unicode), as sent: ``{"turn": n, "fields": {path: raw text}}`` (see
            :func:`call_model`).
    """

    messages: list[dict[str, Any]]
    final_answer: Any = None
    termination: Termination = "max_turns"
    turns: int = 0
    finish_reason: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form kept in the run's trajectory store (``raw/``: ``pytest_egi.trajectories``)."""
        return {
            "messages": self.messages,
            "final_answer": self.final_answer,
            "termination": self.termination,
            "turns": self.turns,
            "finish_reason": self.finish_reason,
            "tool_calls": self.tool_calls,
            "usage": self.usage.to_dict(),
            "info": self.info,
        }


_VISIBLE_ASCII = re.compile("[!-~]")


def is_blank(value: Any) -> bool:
    """True when ``value`` carries no answer: None, a string of only whitespace (after NFKC,
    so a zero-width or non-breaking space is blank too), an empty container, or a mapping whose
    every value is blank. Booleans and numbers are never blank (``answerable=false`` is an
    answer)."""
    if value is None:
        return True
    if isinstance(value, str):
        # a visible ASCII character survives folding (NFKC leaves it, or composes it with a
        # following mark into another visible character): only a text without one is folded
        return _VISIBLE_ASCII.search(value) is None and not fold_text(value)
    if isinstance(value, Mapping):
        return all(is_blank(v) for v in value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(is_blank(v) for v in value)
    return False


def no_answer_reason(trajectory: Trajectory | Mapping[str, Any]) -> str | None:
    """Why a trial ended with **no answer**, or None when it has one: the shared rule.

    A trial has no answer when its ``termination`` is one of :data:`NO_ANSWER_TERMINATIONS`
    (turns ran out, the context window overflowed, the final reply was cut off, an error), when
    the last model call's ``finish_reason`` is ``length`` (a cut-off reply is not an answer),
    or when ``final_answer`` is blank (:func:`is_blank`: None, empty or whitespace text, an
    empty structure). No answer is a failed task: scorers give it the lowest value of every
    per-task value and never count it as an abstention; only an explicit abstention by the
    suite's own rule (a refusal text, a structured ``answerable=false``) is one.

    Args:
        trajectory: a :class:`Trajectory` or its ``to_dict()`` form (a stored trajectory:
            keys ``final_answer``, ``termination``, ``finish_reason``; missing keys read as
            absent).

    Returns:
        A short human-readable reason (``"the turn limit ran out (max_turns)"``, ``"empty
        reply (None)"``), or None when the trial gave an answer.
    """
    if isinstance(trajectory, Trajectory):
        trajectory = trajectory.to_dict()
    termination = trajectory.get("termination")
    if termination in _NO_ANSWER_WHY:
        return _NO_ANSWER_WHY[str(termination)]
    if trajectory.get("finish_reason") == "length":
        return _NO_ANSWER_WHY["truncated"]
    return blank_answer_reason(trajectory.get("final_answer"))


def blank_answer_reason(final_answer: Any) -> str | None:
    """``"empty reply (None)"`` for None, ``"empty reply (blank)"`` for another blank value
    (:func:`is_blank`), None for an answer. The part of :func:`no_answer_reason` that looks
    only at the answer, for scorers given a bare ``final_answer``."""
    if final_answer is None:
        return "empty reply (None)"
    return "empty reply (blank)" if is_blank(final_answer) else None


@contextmanager
def keep_partial(traj: Trajectory) -> Iterator[None]:
    """On any exception (provider or environment failure), end the trajectory with
    termination ``error`` and ``info["error"]`` = ``"<ExceptionType>: <message>"``, and attach
    it as ``exc.partial_trajectory``; the plugin stores it with the error, so nothing computed
    is lost and the partial trajectory says why it ended."""
    try:
        yield
    except Exception as exc:
        if not hasattr(exc, "partial_trajectory"):
            traj.termination = "error"
            traj.info["error"] = f"{type(exc).__name__}: {exc}"
            exc.partial_trajectory = traj.to_dict()  # type: ignore[attr-defined]
        raise


def call_model(
    client: ModelClient,
    traj: Trajectory,
    tools: list[dict] | None,
    params: dict,
    messages: list[dict[str, Any]] | None = None,
) -> dict | None:
    """One model call; the reply is appended to the trajectory (usage, turns and
    ``finish_reason`` updated). Returns the reply, or None when the context window overflowed
    (the trajectory then ends with termination ``context_exceeded`` and no answer).

    When the client had to clean the reply (text that is not valid Unicode, a lone surrogate,
    is replaced by U+FFFD: ``ModelResponse.raw``), the raw form is kept in
    ``traj.info["raw_replies"]`` as ``{"turn": n, "fields": {path: raw text}}`` (the text in
    JSON-safe form, ``\\ud800``); the cleaned reply is what the scaffold and the scorer use.

    Args:
        messages: what to send when it is not the trajectory's own message list (a scaffold
            that rebuilds one prompt per turn from its history, as MCP-Universe's ReAct does);
            None sends ``traj.messages``.

    Raises:
        ProviderError: from the client.
    """
    try:
        response = client.generate(traj.messages if messages is None else messages, tools, **params)
    except ContextWindowExceeded as exc:
        traj.termination = "context_exceeded"
        traj.final_answer = None
        traj.info["context_exceeded"] = str(exc) or type(exc).__name__
        return None
    traj.usage.add(response.usage)
    traj.turns += 1
    traj.finish_reason = response.finish_reason
    raw = getattr(response, "raw", None)
    if raw:  # the client cleaned text that was not valid Unicode: keep what the model sent
        traj.info.setdefault("raw_replies", []).append({"turn": traj.turns, "fields": dict(raw)})
    message = dict(response.message)
    message.setdefault("role", "assistant")
    traj.messages.append(message)
    return message


def _cut_off(traj: Trajectory) -> bool:
    return traj.finish_reason == "length"


def end_with_text(traj: Trajectory, text: Any, termination: Termination) -> None:
    """End on a reply taken as the answer: cut off (``finish_reason`` length) →
    ``truncated`` with no answer; blank → no answer; else ``final_answer = text``."""
    if _cut_off(traj):
        traj.final_answer, traj.termination = None, "truncated"
        return
    traj.final_answer = None if is_blank(text) else text
    traj.termination = termination


def run_tool_loop(
    client: ModelClient,
    messages: list[dict[str, Any]],
    toolkit: Toolkit,
    *,
    max_turns: int,
    text_is_final: bool = True,
    params: dict[str, Any] | None = None,
    turn_note: Callable[[int, int], str | None] | None = None,
) -> Trajectory:
    """Native function calling until a submit tool is called or turns run out.

    Args:
        client: the model under test.
        messages: the opening messages (system + first user message); copied.
        toolkit: the tools offered every turn; a ``submit`` tool ends the episode.
        max_turns: assistant turns allowed (CRMArena: 20, HERB: 10).
        text_is_final: a reply with no tool call ends the episode with its text as the
            answer (``text_answer``); when False the model is told to use a tool and the turn
            is spent.
        params: sampling parameters passed to every call.
        turn_note: ``(turns_taken, max_turns) -> text``: a user message added before every
            turn after the first when it returns text (MCP-Universe's "N steps remaining").

    Returns:
        The trajectory; ``final_answer`` is the submit tool's value or the final text, None
        when there is no answer (blank or cut-off reply, turns ran out, context overflowed;
        see :func:`no_answer_reason`).

    Raises:
        ProviderError: from the client (an infra failure, not the model's mistake); the
            trajectory so far is attached with termination ``error``. A
            ``ContextWindowExceeded`` from the client is not raised: the episode ends with
            termination ``context_exceeded``.
    """
    # the toolkit's call log is shared, so a partial trajectory (on an error) lists the
    # calls made so far
    traj = Trajectory(messages=list(messages), tool_calls=toolkit.calls)
    params = params or {}
    schemas = toolkit.schemas()
    with keep_partial(traj):
        _tool_turns(client, traj, toolkit, schemas, max_turns, text_is_final, params, turn_note)
    return traj


def _calls_with_ids(traj: Trajectory, message: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls of ``message`` (the trajectory's last message), each with an id.

    A call the model sent without an id (or with an empty or non-text one) gets
    ``call_<turn>_<k>`` (the turn's number and the call's 1-based position), written into
    the stored assistant message too, so its tool result pairs with it when the conversation
    goes back to the provider. A malformed call is the model's mistake and still runs
    (an unknown or missing name, arguments that are not a JSON object: see ``Toolkit.call``).
    """
    calls = message.get("tool_calls") or []
    if all(isinstance(c, dict) and isinstance(c.get("id"), str) and c["id"] for c in calls):
        return calls
    fixed = []
    for k, call in enumerate(calls, 1):
        call = dict(call) if isinstance(call, dict) else {"function": {}}
        if not (isinstance(call.get("id"), str) and call["id"]):
            call["id"] = f"call_{traj.turns}_{k}"
        fixed.append(call)
    message["tool_calls"] = fixed
    return fixed


def _execute_calls(traj: Trajectory, toolkit: Toolkit, calls: list[dict[str, Any]]) -> bool:
    """Run one turn's tool calls in order, appending tool messages; True once submitted.

    A call whose name is not text runs under the name ``""`` (an unknown tool: the model's
    mistake, an observation), never under the text ``"None"``.

    The first successful submit sets the final answer; calls after it in the same turn still
    run (the model asked for them) but cannot change the answer. A submit in a reply cut off
    by the token limit ends the episode as ``truncated`` with no answer.
    """
    submitted = False
    value: Any = None
    for call in calls:
        fn = call.get("function") or {}
        name = fn.get("name")
        outcome = toolkit.call(name if isinstance(name, str) else "", fn.get("arguments"))
        traj.messages.append({"role": "tool", "tool_call_id": call.get("id"), "content": outcome.content})
        if outcome.submitted and not submitted:
            submitted, value = True, outcome.value
    if submitted:
        end_with_text(traj, value, "submitted")
    return submitted


def _tool_turns(
    client: ModelClient,
    traj: Trajectory,
    toolkit: Toolkit,
    schemas: list[dict[str, Any]],
    max_turns: int,
    text_is_final: bool,
    params: dict[str, Any],
    turn_note: Callable[[int, int], str | None] | None = None,
) -> None:
    while traj.turns < max_turns:
        note = turn_note(traj.turns, max_turns) if turn_note is not None and traj.turns else None
        if note:
            traj.messages.append({"role": "user", "content": note})
        message = call_model(client, traj, schemas, params)
        if message is None:
            break
        calls = _calls_with_ids(traj, message)
        if not calls:
            if text_is_final:
                end_with_text(traj, message.get("content"), "text_answer")
                break
            traj.messages.append({"role": "user", "content": "Please act by calling one of the tools."})
            continue
        if _execute_calls(traj, toolkit, calls):
            break


class Action(NamedTuple):
    """One parsed text-protocol action.

    Attributes:
        kind: ``execute`` (run ``payload`` in the environment), ``respond`` (final answer)
            or ``invalid`` (no valid action found; the turn is spent).
        payload: the query / answer text.
    """

    kind: Literal["execute", "respond", "invalid"]
    payload: str = ""


def run_react_loop(
    client: ModelClient,
    messages: list[dict[str, Any]],
    *,
    parse: Callable[[str], Action],
    execute: Callable[[str], str],
    max_turns: int,
    invalid_format_message: str,
    params: dict[str, Any] | None = None,
) -> Trajectory:
    """Text ReAct: the model writes thought + one action per turn; observations come back
    as user messages (CRMArena ``react`` strategy, reference §1.4).

    Args:
        parse: turns the assistant text into an :class:`Action`.
        execute: runs an ``execute`` payload and returns the observation text. For a
            mistake in the model's input it returns the error text or raises
            :class:`~pytest_egi.agents.tools.ToolError` (whose ``observation`` the model then
            reads); any other exception is an environment fault and propagates (the item
            errors, with the trajectory so far attached).
        max_turns: assistant turns allowed; an invalid action still spends its turn.
        invalid_format_message: the user message sent after an invalid action.

    Returns:
        The trajectory; ``final_answer`` is the first ``respond`` payload, else None (also
        when that reply was cut off by the token limit: termination ``truncated``).
    """
    traj = Trajectory(messages=list(messages))
    params = params or {}
    traj.info["invalid_actions"] = 0
    with keep_partial(traj):
        while traj.turns < max_turns:
            message = call_model(client, traj, None, params)
            if message is None:
                break
            action = parse(message.get("content") or "")
            if action.kind == "respond":
                end_with_text(traj, action.payload, "submitted")
                break
            if action.kind == "execute":
                try:
                    observation = execute(action.payload)
                except ToolError as mistake:
                    observation = mistake.observation
                traj.tool_calls.append({"name": "execute", "arguments": {"query": action.payload}})
                traj.messages.append({"role": "user", "content": observation})
            else:
                traj.info["invalid_actions"] += 1
                traj.messages.append({"role": "user", "content": invalid_format_message})
    return traj


class UserSimulator(Protocol):
    """Plays the user in a dialogue (rule-based by default, an LLM when configured)."""

    def reply(self, agent_message: str) -> tuple[str, bool]:
        """Answer the agent's message.

        Returns:
            (user message, done) where done ends the dialogue (``###STOP###`` upstream).
        """
        ...


def run_dialogue_loop(
    client: ModelClient,
    messages: list[dict[str, Any]],
    simulator: UserSimulator,
    *,
    toolkit: Toolkit | None = None,
    max_turns: int,
    max_user_turns: int,
    params: dict[str, Any] | None = None,
) -> Trajectory:
    """Multi-turn dialogue: the agent may call tools, and each text reply goes to the user.

    Args:
        messages: opening messages; the last one is normally the user's first message.
        simulator: the simulated user.
        toolkit: tools the agent may call between user turns (None: talk only).
        max_turns: assistant turns allowed in all (tool-calling turns included).
        max_user_turns: user replies allowed; running out ends with ``max_user_turns``.

    Returns:
        The trajectory; ``final_answer`` is the agent's last text reply when the user ended
        the dialogue or the user turns ran out (or the submit value); None when the reply was
        blank or cut off, the turns ran out or the context overflowed. ``info["user_turns"]``
        is the number of simulator replies.
    """
    traj = Trajectory(messages=list(messages), tool_calls=toolkit.calls if toolkit is not None else [])
    params = params or {}
    schemas = toolkit.schemas() if toolkit else None
    with keep_partial(traj):
        user_turns = _dialogue_turns(
            client, traj, simulator, toolkit, schemas, max_turns, max_user_turns, params
        )
    traj.info["user_turns"] = user_turns
    return traj


def _dialogue_turns(
    client: ModelClient,
    traj: Trajectory,
    simulator: UserSimulator,
    toolkit: Toolkit | None,
    schemas: list[dict[str, Any]] | None,
    max_turns: int,
    max_user_turns: int,
    params: dict[str, Any],
) -> int:
    user_turns = 0
    while traj.turns < max_turns:
        message = call_model(client, traj, schemas, params)
        if message is None:
            return user_turns
        calls = _calls_with_ids(traj, message) if toolkit is not None else message.get("tool_calls") or []
        if calls and toolkit is not None:
            if _execute_calls(traj, toolkit, calls):
                break
            continue
        text = message.get("content") or ""
        if user_turns >= max_user_turns:
            end_with_text(traj, text, "max_user_turns")
            break
        reply, done = simulator.reply(text)
        user_turns += 1
        traj.messages.append({"role": "user", "content": reply})
        if done:
            end_with_text(traj, text, "user_stop")
            break
    return user_turns
