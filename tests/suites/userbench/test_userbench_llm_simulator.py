"""The LLM user simulator and search judge (``--egi-simulator-model``) with a scripted simulator
client: the exact prompts it is asked, strict verdict parsing, the one re-ask, failures as item
errors that never reach the agent, and its tokens kept apart from the agent's."""

from __future__ import annotations

import json

import pytest

from pytest_egi.models.base import (
    ContextWindowExceeded,
    ModelResponse,
    ProviderError,
    Usage,
    assistant_message,
)
from pytest_egi.models.offline import Noise, PolicyClient
from pytest_egi.suite import SuiteProfile
from suites.userbench import SUITE
from suites.userbench.agent import run_trial
from suites.userbench.data import generate_task
from suites.userbench.env import Messages
from suites.userbench.scorer import reference_micro_avg
from suites.userbench.simulator import (
    CLASSIFY_SYSTEM,
    ELICIT_SYSTEM,
    NATURAL_SYSTEM,
    PROACTIVE_SYSTEM,
    SEARCH_JUDGE_SYSTEM,
    Classification,
    LLMUser,
    SearchVerdict,
    SimulatorError,
    VerdictError,
    format_history,
    parse_json_object,
)
from tests.suites.userbench.fake_simulator import rule_reply

PARAMS = {"temperature": 0.0, "max_tokens": 2048}
HISTORY = [
    {"role": "agent", "content": "apartment in Atlanta, April 18 to April 23"},
    {"role": "database", "content": "Your search request is correct. ... (results not repeated here) ..."},
    {"role": "agent", "content": "How many bedrooms?", "note": "asked about P1: revealed implicitly"},
    {"role": "user", "content": "My teenagers refuse to share a room."},
]
HISTORY_TEXT = (
    "Agent: apartment in Atlanta, April 18 to April 23\n\n"
    "Database: Your search request is correct. ... (results not repeated here) ...\n\n"
    "Agent: How many bedrooms?\n[Note: asked about P1: revealed implicitly]\n\n"
    "User: My teenagers refuse to share a room."
)


class ScriptedSimulator:
    """A simulator client answering from a script of reply texts (or exceptions to raise);
    records what it was sent. Each reply reports 700 prompt and 70 completion tokens."""

    name = "scripted/simulator"

    def __init__(self, *replies: str | Exception) -> None:
        self.replies = list(replies)
        self.sent: list[dict] = []

    def generate(self, messages, tools=None, **params):
        self.sent.append({"messages": [dict(m) for m in messages], "tools": tools, "params": params})
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return ModelResponse(
            assistant_message(reply), Usage(calls=1, prompt_tokens=700, completion_tokens=70)
        )


class RuleBackedSimulator(ScriptedSimulator):
    """A simulator client that answers every prompt correctly (:func:`rule_reply`)."""

    def __init__(self, task: dict) -> None:
        super().__init__()
        self.task = task

    def generate(self, messages, tools=None, **params):
        self.replies.append(rule_reply(self.task, messages))
        return super().generate(messages, tools, **params)


class CountingOracle(PolicyClient):
    """The oracle agent, reporting 100 prompt and 10 completion tokens per call."""

    def generate(self, messages, tools=None, **params):
        response = super().generate(messages, tools, **params)
        response.usage = Usage(calls=1, prompt_tokens=100, completion_tokens=10)
        return response


@pytest.fixture
def task():
    return generate_task("travel22", 0, 42)  # Denver -> Atlanta, apartment + rental car, April 18-23


@pytest.fixture
def suite_task():
    return SUITE.load_tasks(SuiteProfile(seed=42, categories=["travel22"], per_category=1), None)[0]


def _oracle(task) -> CountingOracle:
    noise = Noise(0.0, f"42|userbench|{task.id}|1")
    return CountingOracle("egi/oracle", SUITE.reference_policy(task, None, noise), noise)


# -- parsing -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,parsed",
    [
        ('{"type": 1}', {"type": 1}),
        ('  \n{"type": "2", "preference_id": "P1"}\n', {"type": "2", "preference_id": "P1"}),
        ('```json\n{"type": 3}\n```', {"type": 3}),
        ('```\n{"type": 4}\n```', {"type": 4}),
    ],
)
def test_parse_json_object_accepts_the_object_alone(text, parsed):
    assert parse_json_object(text) == parsed


@pytest.mark.parametrize(
    "text,reason",
    [
        ("", "the reply is empty"),
        ('Sure! {"type": 1}', "the reply is not a JSON object (Expecting value at character 0)"),
        ('{"type": 1} I hope that helps', "the reply is not a JSON object (Extra data at character 12)"),
        (
            '```json\n{"type": 1}\n```\nDone.',
            "the reply is not a JSON object (Expecting value at character 0)",
        ),
        ("[1, 2]", "the reply is JSON but not an object (a list)"),
        ('{"type": 1', "the reply is not a JSON object (Expecting ',' delimiter at character 10)"),
    ],
)
def test_parse_json_object_refuses_anything_else(text, reason):
    with pytest.raises(VerdictError) as err:
        parse_json_object(text)
    assert str(err.value) == reason


def test_format_history_is_the_conversation_with_notes():
    assert format_history(HISTORY) == HISTORY_TEXT
    assert format_history([]) == "(nothing yet)"


# -- the search judge ----------------------------------------------------------------------------
def test_search_judge_prompt_and_params(task):
    sim = ScriptedSimulator('{"alignment_judgement": "True", "alignment_aspect": "apartment"}')
    user = LLMUser(sim)
    request = "Apartment in Atlanta, check in April 18, check out April 23"
    assert user.judge_search(request, task) == SearchVerdict("True", "apartment")
    assert sim.sent == [
        {
            "messages": [
                {"role": "system", "content": SEARCH_JUDGE_SYSTEM},
                {
                    "role": "user",
                    "content": "Search request from the agent:\n"
                    "Apartment in Atlanta, check in April 18, check out April 23\n\n"
                    "Ground-truth search arguments:\n"
                    'Aspect: apartment\n{\n  "city": "Atlanta",\n  "check_in": "April 18",\n'
                    '  "check_out": "April 23"\n}\n\n'
                    'Aspect: rental_car\n{\n  "city": "Atlanta",\n  "pickup_date": "April 18",\n'
                    '  "return_date": "April 23"\n}',
                },
            ],
            "tools": None,
            "params": PARAMS,
        }
    ]
    assert SEARCH_JUDGE_SYSTEM.startswith("You judge search requests in a travel-planning exercise.")
    assert user.usage == Usage(calls=1, prompt_tokens=700, completion_tokens=70)


@pytest.mark.parametrize(
    "reply,verdict",
    [
        ('{"alignment_judgement": "True", "alignment_aspect": "Rental Car"}', ("True", "rental_car")),
        ('{"alignment_judgement": "true", "alignment_aspect": " car rental "}', ("True", "rental_car")),
        ('{"alignment_judgement": true, "alignment_aspect": "apartment"}', ("True", "apartment")),
        ('{"alignment_judgement": "False", "alignment_aspect": "apartment"}', ("False", None)),
        ('{"alignment_judgement": false}', ("False", None)),
        ('{"alignment_judgement": "N/A"}', ("N/A", None)),
    ],
)
def test_search_verdicts(task, reply, verdict):
    assert LLMUser(ScriptedSimulator(reply)).judge_search("x", task) == SearchVerdict(*verdict)


def test_unusable_search_verdict_is_asked_again_once(task):
    bad = '{"alignment_judgement": "True", "alignment_aspect": "hotel"}'  # not an aspect of this trip
    good = '{"alignment_judgement": "True", "alignment_aspect": "apartment"}'
    sim = ScriptedSimulator(bad, good)
    assert LLMUser(sim).judge_search("apartment in Atlanta", task) == SearchVerdict("True", "apartment")
    first, second = sim.sent[0]["messages"], sim.sent[1]["messages"]
    assert second == first + [
        {"role": "assistant", "content": bad},
        {
            "role": "user",
            "content": 'That reply could not be used: a "True" verdict needs "alignment_aspect" among '
            "['apartment', 'rental_car'], not \"hotel\". Answer again with only the JSON object described "
            "in the instructions, and nothing else.",
        },
    ]


def test_second_unusable_verdict_is_an_item_error(task):
    sim = ScriptedSimulator("The request looks right to me.", '{"alignment_judgement": "maybe"}')
    with pytest.raises(SimulatorError) as err:
        LLMUser(sim).judge_search("apartment in Atlanta", task)
    assert str(err.value) == (
        "the user simulator scripted/simulator gave no usable search verdict after one re-ask: "
        '"alignment_judgement" must be "True", "False" or "N/A", not "maybe"'
    )
    assert err.value.kind == "bad_verdict" and isinstance(err.value, ProviderError)
    assert len(sim.sent) == 2


# -- the classifier --------------------------------------------------------------------------------
def test_classify_prompt(task):
    sim = ScriptedSimulator('{"type": "2", "preference_id": "P3"}')
    remaining = task["preferences"][1:]
    verdict = LLMUser(sim).classify("How many seats does the car need?", task, remaining, HISTORY)
    assert verdict == Classification(2, "P3")
    assert sim.sent[0]["messages"] == [
        {"role": "system", "content": CLASSIFY_SYSTEM},
        {
            "role": "user",
            "content": "The trip:\n"
            "A trip from Denver to Atlanta (April 18-April 23) needing apartment, rental car.\n\n"
            f"The conversation so far:\n{HISTORY_TEXT}\n\n"
            "The agent's latest message:\nHow many seats does the car need?\n\n"
            "Preferences you still hold:\n"
            "P2 (apartment): The apartment must have a balcony.\n"
            "P3 (rental_car): The rental car needs at least 7 seats.\n"
            "P4 (rental_car): Avoid ZipDrive.",
        },
    ]
    assert sim.sent[0]["params"] == PARAMS


@pytest.mark.parametrize(
    "reply,verdict",
    [
        ('{"type": 1}', Classification(1)),
        ('{"type": 3, "preference_id": "P2"}', Classification(3)),  # an id beside type 3 is ignored
        ('{"type": "4"}', Classification(4)),
        ('{"type": 2, "preference_id": " P2 "}', Classification(2, "P2")),
    ],
)
def test_classification_verdicts(task, reply, verdict):
    assert LLMUser(ScriptedSimulator(reply)).classify("x", task, task["preferences"], []) == verdict


@pytest.mark.parametrize(
    "bad,reason",
    [
        ('{"type": 2, "preference_id": "P1"}',
         'a type-2 verdict needs "preference_id" among the remaining preferences '
         "['P2', 'P3', 'P4'], not \"P1\""),
        ('{"type": 5}', '"type" must be 1, 2, 3 or 4, not 5'),
        ('{"type": true}', '"type" must be 1, 2, 3 or 4, not true'),
        ('{"kind": 2}', '"type" must be 1, 2, 3 or 4, not null'),
    ],
)  # fmt: skip
def test_unusable_classification_is_asked_again_then_an_error(task, bad, reason):
    sim = ScriptedSimulator(bad, bad)
    with pytest.raises(SimulatorError, match="no usable classification verdict after one re-ask") as err:
        LLMUser(sim).classify("x", task, task["preferences"][1:], [])
    assert str(err.value).endswith(reason)
    assert sim.sent[1]["messages"][-1]["content"].startswith(f"That reply could not be used: {reason}.")


# -- the replies ---------------------------------------------------------------------------------
def test_reply_prompts(task):
    pref = task["preferences"][2]  # P3, seven seats
    sim = ScriptedSimulator(
        '{"thought": "t", "response": "  All seven of us are coming.  "}',
        '{"thought": "t", "response": "By the way, seven of us travel."}',
        '{"response": "Sounds fine."}',
    )
    user = LLMUser(sim)
    assert user.reply("elicit", "How many seats?", task, pref, HISTORY) == "All seven of us are coming."
    assert user.reply("proactive", "Nice weather!", task, pref, []) == "By the way, seven of us travel."
    assert user.reply("natural", "Nice weather!", task, None, HISTORY) == "Sounds fine."
    expected_pref = (
        "The preference (P3, rental_car):\nThe rental car needs at least 7 seats.\n"
        "Hint: My parents and in-laws are coming along, so there will be seven of us.\n\n"
    )
    assert sim.sent[0]["messages"] == [
        {"role": "system", "content": ELICIT_SYSTEM},
        {"role": "user", "content": expected_pref + f"The conversation so far:\n{HISTORY_TEXT}\n\n"
         "The agent's latest message:\nHow many seats?"},
    ]  # fmt: skip
    assert sim.sent[1]["messages"] == [
        {"role": "system", "content": PROACTIVE_SYSTEM},
        {"role": "user", "content": expected_pref + "The conversation so far:\n(nothing yet)\n\n"
         "The agent's latest message:\nNice weather!"},
    ]  # fmt: skip
    assert sim.sent[2]["messages"] == [
        {"role": "system", "content": NATURAL_SYSTEM},
        {"role": "user", "content": f"The conversation so far:\n{HISTORY_TEXT}\n\n"
         "The agent's latest message:\nNice weather!"},
    ]  # fmt: skip
    assert user.usage.calls == 3 and user.usage.prompt_tokens == 2100


def test_empty_reply_is_asked_again(task):
    sim = ScriptedSimulator('{"thought": "t", "response": "  "}', '{"response": "Nothing special."}')
    assert LLMUser(sim).reply("natural", "Hi", task, None, []) == "Nothing special."
    assert sim.sent[1]["messages"][-1]["content"].startswith(
        'That reply could not be used: "response" must be a non-empty string, not "  ".'
    )


# -- the episode -----------------------------------------------------------------------------------
def test_oracle_episode_over_the_llm_simulator_scores_as_with_rules_and_keeps_tokens_apart(suite_task):
    sim = RuleBackedSimulator(suite_task.data)
    traj = run_trial(suite_task, _oracle(suite_task), simulator=sim)
    info = traj.info["userbench"]
    # 2 searches (judge), 4 questions (classify + reply), 2 answers (no simulator call)
    assert [s["messages"][0]["content"] for s in sim.sent] == (
        [SEARCH_JUDGE_SYSTEM] + [CLASSIFY_SYSTEM, ELICIT_SYSTEM] * 2
    ) * 2
    assert info["rewards"] == [0.2, 0.2, 0.2, 1.0, 0.2, 0.2, 0.2, 1.0]
    score = SUITE.score(suite_task, traj.to_dict(), None)
    assert score.success and score.values["micro_avg"] == pytest.approx(reference_micro_avg(suite_task.data))
    assert info["simulator"] == "scripted/simulator"
    assert info["simulator_usage"] == {"calls": 10, "prompt_tokens": 7000, "completion_tokens": 700,
                                       "cost_usd": 0.0, "latency_s": 0.0, "cached_calls": 0}  # fmt: skip
    # the trajectory's usage is the agent's alone: 8 turns and the closing call at 100 / 10 tokens
    assert traj.usage.prompt_tokens == 100 * traj.turns and traj.usage.completion_tokens == 10 * traj.turns


def test_rule_simulator_is_named_and_has_no_usage(suite_task):
    info = run_trial(suite_task, _oracle(suite_task)).info["userbench"]
    assert info["simulator"] == "egi/rules" and info["simulator_usage"] is None


@pytest.mark.parametrize(
    "failure,kind,message",
    [
        (ProviderError("HTTP 500 from the provider", kind="server_error"), "server_error",
         "the user simulator scripted/simulator failed: HTTP 500 from the provider"),
        (ContextWindowExceeded("too long"), "context_window",
         "the user simulator scripted/simulator failed: its context window overflowed (too long)"),
    ],
)  # fmt: skip
def test_simulator_failure_is_an_item_error_never_shown_to_the_agent(suite_task, failure, kind, message):
    judge_ok = '{"alignment_judgement": "True", "alignment_aspect": "apartment"}'
    sim = ScriptedSimulator(judge_ok, failure)  # the search is judged; the first question's classify fails
    with pytest.raises(SimulatorError) as err:
        run_trial(suite_task, _oracle(suite_task), simulator=sim)
    assert str(err.value) == message and err.value.kind == kind
    partial = err.value.partial_trajectory
    info = partial["info"]["userbench"]
    assert partial["termination"] == "error" and info["rewards"] == [0.2]  # the failed turn is not scored
    assert info["simulator_usage"]["calls"] == 1
    tool_msgs = [m["content"] for m in partial["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 1 and tool_msgs[0].startswith(Messages.SEARCH_OK)
    assert not any(word in json.dumps(partial["messages"]) for word in ("500", "too long", "simulator"))
