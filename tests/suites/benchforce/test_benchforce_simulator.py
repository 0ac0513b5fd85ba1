"""The LLM user simulator (``--egi-simulator-model``) with a scripted simulator client: its
prompt and turns, its endings, its tokens kept apart from the agent's, and its failures as
item errors that never reach the agent."""

from __future__ import annotations

import json

import pytest

from pytest_egi.models.base import (
    ContextWindowExceeded,
    ModelResponse,
    ProviderError,
    Usage,
    assistant_message,
    tool_call,
)
from pytest_egi.models.offline import Noise, PolicyClient
from pytest_egi.suite import SuiteProfile
from suites.benchforce import SUITE
from suites.benchforce.agent import run_trial
from suites.benchforce.simulator import (
    EXIT_TOOL,
    OPENING_NUDGE,
    LLMUser,
    SimulatorError,
    simulator_prompt,
)

SEED = 42


@pytest.fixture(scope="module")
def schedule_task():
    tasks = SUITE.load_tasks(SuiteProfile(seed=SEED, categories=["hospital"], max_turns=15), None)
    task = tasks[0]
    assert task.data["template"] == "schedule"
    return task


class ScriptedSimulator:
    """A simulator client answering from a script; records what it was sent. Each reply
    reports 700 prompt and 70 completion tokens."""

    name = "scripted/simulator"

    def __init__(self, *replies: dict | Exception) -> None:
        self.replies = list(replies)
        self.sent: list[dict] = []

    def generate(self, messages, tools=None, **params):
        self.sent.append({"messages": [dict(m) for m in messages], "tools": tools, "params": params})
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        usage = Usage(calls=1, prompt_tokens=700, completion_tokens=70)
        return ModelResponse(reply, usage, "tool_calls" if reply.get("tool_calls") else "stop")


class CountingOracle(PolicyClient):
    """The oracle agent, reporting 100 prompt and 10 completion tokens per call."""

    def generate(self, messages, tools=None, **params):
        response = super().generate(messages, tools, **params)
        response.usage = Usage(calls=1, prompt_tokens=100, completion_tokens=10)
        return response


def _oracle(task) -> CountingOracle:
    noise = Noise(0.0, f"{SEED}|benchforce|{task.id}|1")
    return CountingOracle("egi/oracle", SUITE.reference_policy(task, None, noise), noise)


def _exit(goal_met, text: str | None = None) -> dict:
    args = goal_met if isinstance(goal_met, str) else json.dumps({"goal_met": goal_met})
    return assistant_message(text, [tool_call("x1", "exit_conversation", args)])


OPENING = "Hi there, I'd like to book an appointment with Dr. Elena Kowalczyk, please."
FACTS = "Sure, it's Wesley Sandoval. The 24th of June 2024 at 1:30 PM would be great."
YES = "Yes, that's right, please go ahead."
BYE = "Wonderful, thank you so much. Bye!"


def test_llm_caller_plays_the_entry_and_ends_with_goal_met(schedule_task):
    sim = ScriptedSimulator(
        assistant_message(OPENING), assistant_message(FACTS), assistant_message(YES), _exit(True, BYE)
    )
    traj = run_trial(schedule_task, _oracle(schedule_task), simulator=sim).to_dict()
    # what the agent heard: exactly the simulator's lines, the nudge never
    heard = [m["content"] for m in traj["messages"] if m["role"] == "user"]
    assert heard == [OPENING, FACTS, YES, BYE]
    agent_lines = [
        m["content"] for m in traj["messages"] if m["role"] == "assistant" and not m.get("tool_calls")
    ]
    assert len(agent_lines) == 3 and agent_lines[1].startswith("To confirm, I am about to run:")
    # what the simulator was sent: its prompt with the entry's agenda, the nudge, then the agent's lines
    first = sim.sent[0]
    assert first["messages"] == [
        {"role": "system", "content": simulator_prompt(schedule_task.data["instructions"])},
        {"role": "user", "content": OPENING_NUDGE},
    ]
    assert (
        "AGENDA: You are calling the hospital. You would like to book an appointment"
        in (first["messages"][0]["content"])
    )
    assert first["tools"] is None and first["params"] == {"temperature": 0.0, "max_tokens": 512}
    last = sim.sent[-1]
    assert last["tools"] == [EXIT_TOOL]
    assert [(m["role"], m["content"]) for m in last["messages"][1:]] == [
        ("user", OPENING_NUDGE),
        ("assistant", OPENING),
        ("user", agent_lines[0]),
        ("assistant", FACTS),
        ("user", agent_lines[1]),
        ("assistant", YES),
        ("user", agent_lines[2]),
    ]
    info = traj["info"]["benchforce"]
    assert (info["ending"], info["exit_reason"], info["simulator"]) == (
        "user_exit",
        "goal_met",
        "scripted/simulator",
    )
    transcript = [(x["message"]["event"], x["message"].get("text")) for x in info["transcript"]]
    assert ("user.message", OPENING) in transcript and ("user.message", BYE) in transcript
    assert ("user.exit", None) in transcript
    score = SUITE.score(schedule_task, traj, None)
    assert score.success and score.values["finished"] == 1.0


def test_agent_tokens_exclude_the_simulators(schedule_task):
    sim = ScriptedSimulator(
        assistant_message(OPENING), assistant_message(FACTS), assistant_message(YES), _exit(True)
    )
    traj = run_trial(schedule_task, _oracle(schedule_task), simulator=sim).to_dict()
    # the oracle made 4 calls (ask, confirm, the tool call, the report) at 110 tokens each;
    # the simulator made 4 calls at 770 tokens each, counted on its own
    assert traj["usage"]["calls"] == 4
    assert (traj["usage"]["prompt_tokens"], traj["usage"]["completion_tokens"]) == (400, 40)
    assert traj["info"]["benchforce"]["simulator_usage"] == {
        "calls": 4,
        "prompt_tokens": 2800,
        "completion_tokens": 280,
        "cost_usd": 0.0,
        "latency_s": 0.0,
        "cached_calls": 0,
    }
    assert SUITE.score(schedule_task, traj, None).values["tokens"] == 440.0


@pytest.mark.parametrize(
    "arguments", ['{"goal_met": false}', "{}", '{"goal_met": "yes"}', "{not json"], ids=str
)
def test_exit_without_goal_met_true_is_giving_up(schedule_task, arguments):
    sim = ScriptedSimulator(assistant_message(OPENING), _exit(arguments, "Never mind, goodbye."))
    traj = run_trial(schedule_task, _oracle(schedule_task), simulator=sim).to_dict()
    info = traj["info"]["benchforce"]
    assert (info["ending"], info["exit_reason"]) == ("user_exit", "gave_up")
    assert [m["content"] for m in traj["messages"] if m["role"] == "user"][-1] == "Never mind, goodbye."
    score = SUITE.score(schedule_task, traj, None)
    # the caller ended the call: finished (upstream's terminate), its goal not met
    assert not score.success and score.values["finished"] == 1.0
    assert (score.values["gave_up"], score.values["goal_met"]) == (1.0, 0.0)


def test_another_tool_name_does_not_end_the_call():
    sim = ScriptedSimulator(
        assistant_message("It's Wesley.", [tool_call("t1", "lookup_my_records", "{}")]), _exit(True)
    )
    user = LLMUser(sim, "You want to book a visit.")
    assert user.reply("Your name?") == ("It's Wesley.", False) and user.exit_reason is None
    assert user.reply("Done, booked.") == ("", True) and user.exit_reason == "goal_met"
    assert user.messages[-1] == {"role": "assistant", "content": ""}


@pytest.mark.parametrize(
    ("failure", "message", "kind"),
    [
        (
            ProviderError("server_error: 500 upstream broke", kind="server_error"),
            "SimulatorError: the user simulator scripted/simulator failed: server_error: 500 upstream broke",
            "server_error",
        ),
        (
            ContextWindowExceeded("too long"),
            "SimulatorError: the user simulator scripted/simulator failed: its context window "
            "overflowed (too long)",
            "context_window",
        ),
    ],
    ids=["provider", "context"],
)
def test_simulator_failure_is_an_item_error_the_agent_never_sees(schedule_task, failure, message, kind):
    sim = ScriptedSimulator(assistant_message(OPENING), assistant_message(FACTS), failure)
    with pytest.raises(SimulatorError) as info:
        run_trial(schedule_task, _oracle(schedule_task), simulator=sim)
    assert isinstance(info.value, ProviderError) and info.value.kind == kind
    assert f"{type(info.value).__name__}: {info.value}" == message
    partial = info.value.partial_trajectory
    assert partial["termination"] == "error" and partial["info"]["error"] == message
    assert [m["content"] for m in partial["messages"] if m["role"] == "user"] == [OPENING, FACTS]
    # the server could still end the session: its transcript is the one session.end returned
    known = partial["info"]["benchforce"]
    assert known["ending"] == "error" and known["simulator"] == "scripted/simulator"
    assert known["simulator_usage"]["calls"] == 2
    events = [(f["direction"], f["message"]["event"]) for f in known["transcript"]]
    assert events[-2:] == [("recv", "session.end"), ("sent", "session.ended")]
    assert known["transcript"][-2]["message"]["reason"] == "error"
    # the server ended the errored session, so the same session id runs again
    traj = run_trial(schedule_task, _oracle(schedule_task)).to_dict()
    assert SUITE.score(schedule_task, traj, None).success


def test_opening_failure_is_an_item_error(schedule_task):
    sim = ScriptedSimulator(ProviderError("rate_limit: slow down", kind="rate_limit"))
    with pytest.raises(
        SimulatorError, match="^the user simulator scripted/simulator failed: rate_limit"
    ) as info:
        run_trial(schedule_task, _oracle(schedule_task), simulator=sim)
    # no dialogue yet: the partial trajectory holds no message, but what is known of the session
    partial = info.value.partial_trajectory
    assert partial["messages"] == [] and partial["termination"] == "error"
    assert (
        partial["info"]["error"]
        == "SimulatorError: the user simulator scripted/simulator failed: rate_limit: slow down"
    )
    events = [f["message"]["event"] for f in partial["info"]["benchforce"]["transcript"]]
    assert events == ["session.start", "session.ready", "session.end", "session.ended"]


def test_blank_agenda_is_refused():
    with pytest.raises(ValueError, match="needs the entry's 'instructions'"):
        LLMUser(ScriptedSimulator(), "  ")
