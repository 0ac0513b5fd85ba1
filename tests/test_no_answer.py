"""The shared no-answer rule: how every loop ends without an answer, and how it is counted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_egi.agents.loops import (
    Action,
    Trajectory,
    is_blank,
    no_answer_reason,
    run_dialogue_loop,
    run_react_loop,
    run_tool_loop,
)
from pytest_egi.agents.tools import Tool, Toolkit
from pytest_egi.models.base import (
    ContextWindowExceeded,
    ModelResponse,
    ProviderError,
    assistant_message,
    tool_call,
)
from pytest_egi.run.recorder import trajectory_fields
from pytest_egi.scoring.aggregate import no_answer_figures

OVERFLOW = "This model's maximum context length is 8192 tokens; your messages resulted in 9120 tokens"


class Scripted:
    """A fake model client: each turn is a ModelResponse to return, or an exception to raise."""

    name = "scripted/fake"

    def __init__(self, *turns: ModelResponse | Exception) -> None:
        self.turns = list(turns)

    def generate(self, messages: list[dict[str, Any]], tools: Any = None, **params: Any) -> ModelResponse:
        turn = self.turns.pop(0)
        if isinstance(turn, Exception):
            raise turn
        return turn


def reply(content: str | None = None, *, calls: list | None = None, finish: str = "stop") -> ModelResponse:
    return ModelResponse(message=assistant_message(content, calls), finish_reason=finish)


def lookup_call() -> ModelResponse:
    return reply(None, calls=[tool_call("c1", "lookup", json.dumps({"item": 3}))], finish="tool_calls")


def submit_call(code: str, finish: str = "tool_calls") -> ModelResponse:
    return reply(None, calls=[tool_call("c2", "submit", json.dumps({"code": code}))], finish=finish)


def toolkit(fault: Exception | None = None) -> Toolkit:
    def lookup(item: int) -> dict[str, str]:
        if fault is not None:
            raise fault
        return {"code": "C3"}

    schema = {"type": "object", "properties": {"item": {"type": "integer"}}}
    return Toolkit.of(
        Tool("lookup", "Look up", schema, lookup),
        Tool("submit", "Submit", {"type": "object", "properties": {"code": {"type": "string"}}},
             lambda code: code, kind="submit"),
    )  # fmt: skip


MESSAGES = [{"role": "user", "content": "What is the code of item 3?"}]


def tool_loop(*turns: ModelResponse | Exception, max_turns: int = 5) -> Trajectory:
    return run_tool_loop(Scripted(*turns), MESSAGES, toolkit(), max_turns=max_turns)


def parse(text: str) -> Action:
    if text.startswith("RESPOND:"):
        return Action("respond", text.removeprefix("RESPOND:").strip())
    if text.startswith("EXEC:"):
        return Action("execute", text.removeprefix("EXEC:").strip())
    return Action("invalid")


def react_loop(*turns: ModelResponse | Exception, max_turns: int = 5) -> Trajectory:
    return run_react_loop(Scripted(*turns), MESSAGES, parse=parse, execute=lambda q: f"rows for {q}",
                          max_turns=max_turns, invalid_format_message="Use EXEC: or RESPOND:")  # fmt: skip


class User:
    """A user simulator that stops after ``stop_after`` replies."""

    def __init__(self, stop_after: int = 1) -> None:
        self.stop_after, self.n = stop_after, 0

    def reply(self, agent_message: str) -> tuple[str, bool]:
        self.n += 1
        return "thanks", self.n >= self.stop_after


def dialogue_loop(*turns: ModelResponse | Exception, max_turns: int = 5, stop_after: int = 1) -> Trajectory:
    return run_dialogue_loop(Scripted(*turns), MESSAGES, User(stop_after), toolkit=toolkit(),
                             max_turns=max_turns, max_user_turns=5)  # fmt: skip


# --- context overflow ends the episode in every loop kind ---------------------------------


@pytest.mark.parametrize(
    "run",
    [
        lambda: tool_loop(lookup_call(), ContextWindowExceeded(OVERFLOW)),
        lambda: react_loop(reply("EXEC: SELECT Id FROM Case"), ContextWindowExceeded(OVERFLOW)),
        lambda: dialogue_loop(lookup_call(), ContextWindowExceeded(OVERFLOW)),
    ],
    ids=["tool", "react", "dialogue"],
)
def test_context_overflow_ends_every_loop_without_an_answer(run) -> None:
    traj = run()
    assert (traj.termination, traj.final_answer, traj.turns) == ("context_exceeded", None, 1)
    assert traj.info["context_exceeded"] == OVERFLOW
    assert no_answer_reason(traj) == "the conversation outgrew the model's context window (context_exceeded)"
    # the last completed call's finish_reason is kept
    assert traj.finish_reason in ("tool_calls", "stop")


def test_context_overflow_on_the_first_call() -> None:
    traj = tool_loop(ContextWindowExceeded(OVERFLOW))
    assert (traj.termination, traj.turns, traj.finish_reason, len(traj.messages)) == (
        "context_exceeded", 0, None, 1)  # fmt: skip


# --- a reply cut off by the token limit is no answer --------------------------------------


@pytest.mark.parametrize(
    "run",
    [
        lambda: tool_loop(lookup_call(), reply("The code is C3 and", finish="length")),
        lambda: tool_loop(lookup_call(), submit_call("C3", finish="length")),
        lambda: react_loop(reply("RESPOND: C3", finish="length")),
        lambda: dialogue_loop(reply("Your code is C", finish="length")),
    ],
    ids=["tool-text", "tool-submit", "react-respond", "dialogue"],
)
def test_cut_off_final_reply_is_truncated(run) -> None:
    traj = run()
    assert (traj.termination, traj.final_answer, traj.finish_reason) == ("truncated", None, "length")
    assert no_answer_reason(traj) == "the final reply was cut off by the token limit (truncated)"


def test_cut_off_reply_mid_episode_is_not_the_end() -> None:
    # an execute action in a cut-off reply still runs; the later answer counts
    traj = react_loop(reply("EXEC: SELECT Id FROM Case", finish="length"), reply("RESPOND: C3"))
    assert (traj.termination, traj.final_answer, traj.finish_reason) == ("submitted", "C3", "stop")
    assert no_answer_reason(traj) is None


# --- blank replies and running out of turns ------------------------------------------------


@pytest.mark.parametrize("content", [None, "", "   \n\t", "\u200b"])
def test_blank_final_text_is_no_answer(content: str | None) -> None:
    traj = tool_loop(lookup_call(), reply(content))
    assert (traj.termination, traj.final_answer) == ("text_answer", None)
    assert no_answer_reason(traj) == "empty reply (None)"
    traj = react_loop(reply(f"RESPOND: {content or ''}"))
    assert (traj.termination, traj.final_answer) == ("submitted", None)
    traj = tool_loop(submit_call(content or " "))
    assert (traj.termination, traj.final_answer) == ("submitted", None)


def test_running_out_of_turns_is_no_answer_in_every_loop() -> None:
    traj = tool_loop(lookup_call(), lookup_call(), max_turns=2)
    assert (traj.termination, traj.final_answer) == ("max_turns", None)
    traj = react_loop(reply("thinking"), reply("still thinking"), max_turns=2)
    assert (traj.termination, traj.final_answer, traj.info["invalid_actions"]) == ("max_turns", None, 2)
    # dialogue: the user never stops, the agent's turns run out: its last text is not an answer
    traj = dialogue_loop(reply("Hello"), reply("Anything else?"), max_turns=2, stop_after=9)
    assert (traj.termination, traj.final_answer) == ("max_turns", None)
    assert no_answer_reason(traj) == "the turn limit ran out (max_turns)"


def test_an_answer_is_an_answer() -> None:
    traj = tool_loop(lookup_call(), submit_call("C3"))
    assert (traj.termination, traj.final_answer, traj.finish_reason) == ("submitted", "C3", "tool_calls")
    assert no_answer_reason(traj) is None
    traj = dialogue_loop(reply("Your code is C3."))
    assert (traj.termination, traj.final_answer) == ("user_stop", "Your code is C3.")
    assert no_answer_reason(traj.to_dict()) is None


# --- an errored episode says why it ended -----------------------------------------------


def test_provider_failure_mid_episode_leaves_a_partial_trajectory_ending_in_error() -> None:
    client = Scripted(lookup_call(), ProviderError("HTTP 503 after 3 attempts"))
    with pytest.raises(ProviderError) as info:
        run_tool_loop(client, MESSAGES, toolkit(), max_turns=20)
    partial = info.value.partial_trajectory  # type: ignore[attr-defined]
    assert (partial["termination"], partial["turns"], partial["finish_reason"]) == ("error", 1, "tool_calls")
    assert partial["info"]["error"] == "ProviderError: HTTP 503 after 3 attempts"
    assert trajectory_fields(partial, errored=True) == {
        "termination": "error", "finish_reason": "tool_calls", "turns": 1, "no_answer": None}  # fmt: skip


def test_environment_fault_in_a_tool_ends_the_episode_as_error() -> None:
    client = Scripted(lookup_call())
    with pytest.raises(OSError) as info:
        run_tool_loop(client, MESSAGES, toolkit(fault=OSError("disk I/O error")), max_turns=20)
    partial = info.value.partial_trajectory  # type: ignore[attr-defined]
    assert partial["termination"] == "error"
    assert partial["info"]["error"] == "OSError: disk I/O error"


# --- the rule on stored trajectories, and the blank test ----------------------------------


@pytest.mark.parametrize(
    ("trajectory", "reason"),
    [
        ({"final_answer": "C3", "termination": "submitted", "finish_reason": "stop"}, None),
        ({"final_answer": {"answer": "", "answerable": False}, "termination": "submitted"}, None),
        ({"final_answer": "C3", "termination": "max_turns"}, "the turn limit ran out (max_turns)"),
        ({"final_answer": "C3", "termination": "submitted", "finish_reason": "length"},
         "the final reply was cut off by the token limit (truncated)"),
        ({"final_answer": None, "termination": "text_answer"}, "empty reply (None)"),
        ({"final_answer": "  ", "termination": "text_answer"}, "empty reply (blank)"),
        ({"final_answer": {"answer": " ", "entities": []}, "termination": "submitted"},
         "empty reply (blank)"),
        ({"final_answer": "x", "termination": "error"},
         "an infrastructure or environment fault ended the episode (error)"),
        ({"final_answer": "C3"}, None),  # an old stored trajectory without the new keys
    ],
)  # fmt: skip
def test_no_answer_reason_on_stored_trajectories(trajectory: dict, reason: str | None) -> None:
    assert no_answer_reason(trajectory) == reason


@pytest.mark.parametrize(
    ("value", "blank"),
    [(None, True), ("", True), ("\u00a0\u200b", True), ([], True), ({}, True), ({"a": [" "]}, True),
     ("0", False), (0, False), (False, False), ({"answerable": False}, False), (["x"], False)],
)  # fmt: skip
def test_is_blank(value: Any, blank: bool) -> None:
    assert is_blank(value) is blank


@pytest.mark.parametrize(
    ("text", "blank"),
    [("\ufeff\u2060 \u00ad", True), ("\u3000\u2003", True), ("\uff01", False), ("<\u0338", False),
     ("\u200b\u00e9", False), ("\u00a0" * 5000 + "x", False), ("C3 " * 5000, False)],
)  # fmt: skip
def test_is_blank_folds_only_a_text_without_visible_ascii(
    text: str, blank: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # is_blank runs on every stored answer a rescore reads (about 20,000 calls for a deep
    # run): folding a whole long answer to see that it has one visible character is wasted
    from pytest_egi.agents import loops
    from pytest_egi.normalize import fold_text

    folded: list[str] = []
    monkeypatch.setattr(loops, "fold_text", lambda t: folded.append(t) or fold_text(t))
    assert is_blank(text) is blank is (not fold_text(text))  # the folding rule's answer
    assert len(folded) == (0 if any("!" <= c <= "~" for c in text) else 1)


# --- the per-suite diagnostic -------------------------------------------------------------


def test_no_answer_figures_hand_computed() -> None:
    def rec(status: str, termination: str | None, no_answer: bool | None) -> dict[str, Any]:
        return {"status": status, "termination": termination, "no_answer": no_answer}

    records = [
        rec("passed", "submitted", False),
        rec("failed", "submitted", False),
        rec("failed", "context_exceeded", True),
        rec("failed", "max_turns", True),
        rec("failed", "text_answer", True),  # an empty reply
        rec("error", "error", None),  # not scored: not in the share
        rec("skipped", None, None),  # did not run: in neither figure
        {"status": "passed"},  # an old record without the fields
    ]
    share, terminations = no_answer_figures(records)
    # 3 of the 6 scored records had no answer
    assert share == 0.5
    assert terminations == {"context_exceeded": 1, "error": 1, "max_turns": 1, "submitted": 2,
                            "text_answer": 1, "unknown": 1}  # fmt: skip
    assert no_answer_figures([rec("error", "error", None)]) == (None, {"error": 1})
