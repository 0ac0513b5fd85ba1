"""UserBench suite: metric formulas on hand-made reward lists, the agent loop's protocol, the
reference policies (oracle at the per-task maximum, null 0, noisy monotone) and options."""

from __future__ import annotations

import json

import pytest

from pytest_egi.models.base import ModelResponse, Usage, assistant_message, tool_call
from pytest_egi.models.offline import Noise, NullClient, PolicyClient
from pytest_egi.suite import SuiteProfile
from suites.userbench import SUITE, UserbenchOptions
from suites.userbench.agent import MODE_SENTENCE, NOT_EXECUTED, SYSTEM_PROMPT, format_action, run_trial
from suites.userbench.env import Messages
from suites.userbench.scorer import (
    normalized_score,
    pass_hat_k_by_task,
    reference_micro_avg,
    reference_rewards,
    summarize_env,
    task_metrics,
)

ENVS = ["travel22", "travel33", "travel44", "travel233", "travel333", "travel334", "travel444", "travel2222"]


def _tasks(per_category=6, envs=ENVS):
    return SUITE.load_tasks(SuiteProfile(seed=42, categories=envs, per_category=per_category), None)


def _run(task, p, options=None):
    noise = Noise(p, f"42|userbench|{task.id}|1")
    client = PolicyClient(
        f"egi/noisy-{p}" if p else "egi/oracle", SUITE.reference_policy(task, options, noise), noise
    )
    traj = run_trial(task, client, options)
    return traj, SUITE.score(task, traj.to_dict(), options)


# -- metric formulas ----------------------------------------------------------------------
def test_task_metrics_on_hand_made_rewards():
    assert task_metrics([0.2, 0.2, 1.0, 0.0]) == {
        "micro_avg": 0.35,
        "micro_max": 1.0,
        "number_of_1": 1.0,
        "number_of_08": 0.0,
    }
    m = task_metrics([0.2, 0.8, 0.8, 1.0, 0.0])
    assert (m["micro_avg"], m["number_of_1"], m["number_of_08"]) == (pytest.approx(0.56), 1.0, 2.0)
    # exact float equality, as upstream: 0.8000001 is not a correct pick
    assert task_metrics([0.8000001, 1.0000001])["number_of_08"] == 0.0
    assert task_metrics([0.8000001, 1.0000001])["number_of_1"] == 0.0
    # a rollout with no scored turn is upstream's [0]
    assert task_metrics([]) == {"micro_avg": 0.0, "micro_max": 0.0, "number_of_1": 0.0, "number_of_08": 0.0}


def test_summarize_env_means_over_tasks():
    values = [
        {
            **task_metrics([0.2, 1.0]),
            "normalized_score": 0.5,
            "active_rate": 0.5,
            "passive_rate": 0.0,
            "all_best": 0.0,
        },
        {
            **task_metrics([0.0]),
            "normalized_score": 0.0,
            "active_rate": 0.0,
            "passive_rate": 0.25,
            "all_best": 0.0,
        },
        {
            **task_metrics([0.8, 1.0, 0.0, 0.2]),
            "normalized_score": 1.0,
            "active_rate": 1.0,
            "passive_rate": 0.0,
            "all_best": 1.0,
        },
    ]
    out = summarize_env("travel22", values)
    assert out["travel22.micro_avg"] == pytest.approx((0.6 + 0.0 + 0.5) / 3)
    assert out["travel22.micro_max"] == pytest.approx(2.0 / 3)
    assert out["travel22.avg_number_of_1"] == pytest.approx(2 / 3)
    assert out["travel22.avg_number_of_08"] == pytest.approx(1 / 3)
    assert out["travel22.normalized_score"] == 0.5
    assert out["travel22.active_elicitation_rate"] == 0.5
    assert out["travel22.passive_elicitation_rate"] == pytest.approx(0.25 / 3)
    assert (out["travel22.best_rate"], out["travel22.tasks"]) == (pytest.approx(1 / 3), 3.0)
    assert summarize_env("travel33", [])["travel33.micro_avg"] is None
    assert summarize_env("travel33", [])["travel33.pass_hat_k"] is None


def _rec(task_id, trial, success, ceiling=0.4, micro_avg=None, pass_k=1, env="travel22"):
    values = {"micro_avg": ceiling if micro_avg is None else micro_avg, "micro_avg_ceiling": ceiling}
    return {"category": env, "task_id": task_id, "trial": trial, "success": success, "values": values,
            "details": {"pass_k": pass_k}}  # fmt: skip


def test_true_pass_hat_k_over_trials_on_hand_made_records():
    # task a: 2 of 3 trials succeed; task b: 3 of 3; task c: 0 of 3
    recs = [_rec("a", t, s) for t, s in ((1, True), (2, False), (3, True))]
    recs += [_rec("b", t, True) for t in (1, 2, 3)] + [_rec("c", t, False) for t in (1, 2, 3)]
    # k defaults to the trials per task: pass^3 = (0 + 1 + 0) / 3
    assert pass_hat_k_by_task(recs) == (pytest.approx(1 / 3), 3)
    # pass^2 = (C(2,2)/C(3,2) + 1 + 0) / 3 = (1/3 + 1) / 3; pass^1 = (2/3 + 1 + 0) / 3
    assert pass_hat_k_by_task(recs, 2) == (pytest.approx((1 / 3 + 1) / 3), 2)
    assert pass_hat_k_by_task(recs, 1) == (pytest.approx((2 / 3 + 1) / 3), 1)
    # fewer trials than k: undefined, never a 0
    assert pass_hat_k_by_task([_rec("a", 1, True)], 2) == (None, 2)
    # through summarize: routing.yaml's pass_k 1 leaves k to the trials; pass_k 2 asks for pass^2
    out = SUITE.summarize(recs + [_rec("x", 1, True, env="travel33", pass_k=2)])
    assert (out["travel22.pass_hat_k"], out["travel22.pass_hat_k_k"]) == (pytest.approx(1 / 3), 3.0)
    assert (out["travel33.pass_hat_k"], out["travel33.pass_hat_k_k"]) == (None, 2.0)
    two = SUITE.summarize([{**r, "details": {"pass_k": 2}} for r in recs])
    assert (two["travel22.pass_hat_k"], two["travel22.pass_hat_k_k"]) == (pytest.approx(4 / 9), 2.0)
    # upstream's figures average over every trial (the expectation of its last-rollout figure)
    assert out["travel22.tasks"] == 9.0


def test_micro_avg_ceiling_is_micro_avgs_own_mean():
    recs = [_rec("a", 1, True, ceiling=0.4), _rec("b", 1, False, ceiling=0.36, micro_avg=0.1)]
    out = SUITE.summarize(recs)
    assert out["travel22.micro_avg_ceiling"] == (0.4 + 0.36) / 2
    assert out["travel22.micro_avg"] == (0.4 + 0.1) / 2
    assert SUITE.oracle_ceiling == {f"{e}.micro_avg": f"{e}.micro_avg_ceiling" for e in ENVS[:3]}
    # a trial without a ceiling leaves it undefined, never a mean over a part
    assert SUITE.summarize([*recs, _rec("c", 1, True, ceiling=None, micro_avg=0.58)])[
        "travel22.micro_avg_ceiling"
    ] is None
    assert set(SUITE.oracle_ceiling.values()) <= SUITE.diagnostics


def test_normalized_score_per_aspect_max_over_answer_turns():
    turns = [
        {"choice": "search", "content": "x", "reward": 0.2},
        {"choice": "answer", "content": "H3", "reward": 0.0},
        {"choice": "answer", "content": "H5", "reward": 0.8},
        {"choice": "answer", "content": "[answer] F2", "reward": 1.0},  # the prefix does not hide the aspect
        {"choice": "answer", "content": "", "reward": 0.0},
    ]
    assert normalized_score(turns, "travel22") == pytest.approx(0.9)
    assert normalized_score(turns, "travel2222") == pytest.approx(0.45)


def _prefs(**per_aspect):
    return [{"aspect": a} for a, n in per_aspect.items() for _ in range(n)]


def test_reference_rewards_in_the_oracles_order():
    task = {"dimensions": ["flight", "hotel"], "preferences": _prefs(flight=2, hotel=2)}
    assert reference_rewards(task) == [0.2, 0.2, 0.2, 1.0, 0.2, 0.2, 0.2, 1.0]
    # task_metrics' own sum, in this order: the very float the oracle's run gives
    assert reference_micro_avg(task) == (0.2 + 0.2 + 0.2 + 1.0 + 0.2 + 0.2 + 0.2 + 1.0) / 8
    assert reference_micro_avg(task) == pytest.approx(3.2 / 8)
    uneven = {"dimensions": ["flight", "hotel", "rental_car"],
              "preferences": _prefs(flight=2, hotel=3, rental_car=3)}  # fmt: skip
    assert reference_rewards(uneven) == [0.2, 0.2, 0.2, 1.0] + [0.2] * 4 + [1.0] + [0.2] * 4 + [1.0]
    # five aspects: the 5th search fails (0.0) and is sent again
    five = {"dimensions": list("abcde"), "preferences": _prefs(a=2, b=2, c=2, d=2, e=2)}
    assert reference_rewards(five) == [0.2, 0.2, 0.2, 1.0] * 4 + [0.0, 0.2, 0.2, 0.2, 1.0]
    assert reference_micro_avg(five) == pytest.approx((1.0 + 2.0 + 5.0) / (6 + 10 + 5))
    # a turn limit cuts the list where the environment truncates
    assert reference_rewards(task, max_turns=3) == [0.2, 0.2, 0.2]
    assert reference_micro_avg(task, max_turns=5) == pytest.approx((0.6 + 1.0 + 0.2) / 5)


# -- reference policies ---------------------------------------------------------------------
@pytest.mark.parametrize("task", _tasks(), ids=lambda t: t.id)
def test_oracle_reaches_the_maximum_the_task_allows(task):
    traj, score = _run(task, 0.0)
    assert score.success, score.got
    assert traj.info["userbench"]["rewards"] == reference_rewards(task.data)
    assert score.values["micro_avg"] == score.values["micro_avg_ceiling"] == reference_micro_avg(task.data)
    assert (score.values["active_rate"], score.values["passive_rate"], score.values["normalized_score"]) == (
        1.0,
        0.0,
        1.0,
    )
    assert traj.termination == "submitted" and traj.info["userbench"]["ended"] == "submitted"


def test_multi_choice_is_the_default_and_one_choice_an_option():
    assert UserbenchOptions().one_choice is False
    assert [UserbenchOptions(one_choice=v).one_choice for v in ("false", "0", "no", "true", "1", "yes")] == [
        False,
        False,
        False,
        True,
        True,
        True,
    ]
    task = _tasks(1, ["travel33"])[0]
    traj, multi = _run(task, 0.0)
    assert traj.info["userbench"]["one_choice"] is False
    assert traj.messages[0]["content"] == SYSTEM_PROMPT + MODE_SENTENCE[False]
    # the oracle plays the same protocol in both modes, and the ceiling is defined in both
    traj, one = _run(task, 0.0, UserbenchOptions(one_choice="yes"))
    assert traj.info["userbench"]["one_choice"] is True
    assert traj.messages[0]["content"] == SYSTEM_PROMPT + MODE_SENTENCE[True]
    for score in (multi, one):
        assert score.success and score.values["micro_avg"] == pytest.approx(0.36)
        assert score.values["micro_avg_ceiling"] == score.values["micro_avg"]


def test_hand_computed_micro_avg_of_a_model_like_multi_choice_trajectory():
    """A model's wording through the rule user, in the default multi-choice mode. Task travel22-001
    (seed 42): apartment in Atlanta (best A17, correct A15 A17 A18; A3 wrong) and rental car
    (best C1, correct C1 C12 C17 C19); preferences P1 apartment bedrooms, P2 balcony, P3 car
    seats, P4 car company. Upstream's async step sums the ids of one answer."""
    task = _tasks(1, ["travel22"])[0]
    turns = [
        ("search", "Search for apartments in Atlanta, check-in April 18th, check-out April 23rd"),  # 0.2
        ("action", "Great, I found some options! Before I pick one, how many bedrooms will you "
                   "need in the apartment?"),  # type 2, P1: 0.2
        ("answer", "A15, A3"),  # A15 correct (0.8) + A3 wrong (0.0) = 0.8
        ("action", "Is there anything else you'd like me to know?"),  # too vague, type 4: 0.0
        ("search", "Rental car in Atlanta, pick up April 18, drop off April 23"),  # 0.2
        ("action", "How many passengers will be riding in the car?"),  # type 2, P3: 0.2
        ("answer", "C1, C12"),  # C1 best (1.0) + C12 correct (0.8) = 1.8: counted as neither
        ("answer", "A17"),  # the last best id: 1.0, the episode terminates
    ]  # fmt: skip
    client = Scripted([assistant_message(None, [_call(i, c, t, thought="Next step.")])
                       for i, (c, t) in enumerate(turns)])  # fmt: skip
    traj = run_trial(task, client, None)
    info = traj.info["userbench"]
    assert info["rewards"] == [0.2, 0.2, 0.8, 0.0, 0.2, 0.2, 1.8, 1.0]
    assert info["ended"] == "submitted" and info["best_remaining"] == []
    score = SUITE.score(task, traj.to_dict(), None)
    # upstream's eval.py: micro_avg = sum / T = 4.4 / 8; micro_max = 1.8; count(1.0) = 1 (the
    # last turn, not the 1.8); count(0.8) = 1 (the first answer)
    assert score.values["micro_avg"] == pytest.approx(4.4 / 8) == 0.55
    assert score.values["micro_max"] == 1.8
    assert (score.values["number_of_1"], score.values["number_of_08"]) == (1.0, 1.0)
    # UserRL's per-aspect max over answer turns (aspect: the content's first letter): A max(0.8,
    # 1.0) + C 1.8 over 2 aspects = 1.4, above 1 as upstream's formula gives for a multi-id answer
    assert score.values["normalized_score"] == pytest.approx(1.4)
    assert (score.values["active_rate"], score.values["passive_rate"]) == (0.5, 0.0)
    assert score.success
    # the reference protocol's ceiling (search, one question per preference, the best id):
    # (0.2 * 2 + 0.2 * 4 + 1.0 * 2) / 8; listing more correct ids lifted this agent above it
    assert score.values["micro_avg_ceiling"] == pytest.approx(0.4)


def test_null_scores_zero():
    for task in _tasks(2):
        traj = run_trial(task, NullClient(), None)
        score = SUITE.score(task, traj.to_dict(), None)
        assert (score.success, score.values["micro_avg"], score.values["micro_max"]) == (False, 0.0, 0.0)
        # the closing text reply is the final answer (issue 28: "I don't know." counts the same
        # in every suite): an explicit refusal, failed as gave_up, not a missing answer
        assert traj.info["userbench"]["ended"] == "text_answer" and traj.final_answer == "I don't know."
        assert score.failure_kind == "gave_up"


def _summary(tasks, p, trials=1):
    recs = []
    for task in tasks:
        for trial in range(1, trials + 1):
            noise = Noise(p, f"42|userbench|{task.id}|{trial}")
            policy = SUITE.reference_policy(task, None, noise)
            client = PolicyClient(f"egi/noisy-{p}" if p else "egi/oracle", policy, noise)
            score = SUITE.score(task, run_trial(task, client, None, trial=trial).to_dict(), None)
            recs.append({"category": task.category, "task_id": task.id, "trial": trial,
                         "success": score.success, "values": score.values,
                         "details": score.details})  # fmt: skip
    return SUITE.summarize(recs)


def test_quick_profile_oracle_at_the_ceiling_exactly_and_noisy_below():
    profile = SuiteProfile(seed=42, categories=ENVS[:3], per_category=60, max_turns=20, pass_k=1)
    tasks = SUITE.load_tasks(profile, None)
    oracle, noisy = _summary(tasks, 0.0), _summary(tasks, 0.3)
    for env in ENVS[:3]:
        assert oracle[f"{env}.micro_avg"] == oracle[f"{env}.micro_avg_ceiling"], env
        assert noisy[f"{env}.micro_avg_ceiling"] == oracle[f"{env}.micro_avg_ceiling"], env
        assert noisy[f"{env}.micro_avg"] < noisy[f"{env}.micro_avg_ceiling"], env
    assert [round(oracle[f"{e}.micro_avg_ceiling"], 3) for e in ENVS[:3]] == [0.4, 0.36, 0.333]


def test_pass_hat_k_over_noisy_trials_is_at_most_the_success_rate():
    tasks = _tasks(6, ["travel22"])
    out = _summary(tasks, 0.3, trials=3)
    assert out["travel22.pass_hat_k_k"] == 3.0 and out["travel22.tasks"] == 18.0
    assert 0.0 <= out["travel22.pass_hat_k"] < out["travel22.best_rate"] < 1.0
    assert _summary(tasks, 0.0, trials=2)["travel22.pass_hat_k"] == 1.0


def test_noisy_is_monotone():
    tasks = _tasks(8, ["travel22", "travel33", "travel44"])
    means = {
        p: sum(_run(t, p)[1].values["micro_avg"] for t in tasks) / len(tasks) for p in (0.0, 0.2, 0.5, 1.0)
    }
    assert means[0.0] > means[0.2] > means[0.5] >= means[1.0] >= 0.0
    assert means[0.0] == pytest.approx(sum(reference_micro_avg(t.data) for t in tasks) / len(tasks))


# -- agent loop protocol -------------------------------------------------------------------
class Scripted:
    """Replies from a list of assistant messages."""

    name = "scripted"

    def __init__(self, messages):
        self.messages = list(messages)

    def generate(self, messages, tools=None, **params):
        return ModelResponse(message=self.messages.pop(0), usage=Usage(calls=1), finish_reason="tool_calls")


def _call(i, choice, content, thought="t"):
    return tool_call(
        f"c{i}", "interact_with_env", json.dumps({"thought": thought, "choice": choice, "content": content})
    )


def test_format_action_is_upstreams_prefixing():
    assert format_action("search", "hotel in X") == "[search] hotel in X"
    assert format_action("answer", "[answer] H1") == "[answer] H1"
    assert format_action("finish", "[finish]") == "[finish]"
    assert format_action("talk", "hello") == "hello"


def test_loop_executes_only_the_first_call_and_stops_at_a_malformed_one():
    task = _tasks(1, ["travel22"])[0]
    client = Scripted(
        [
            assistant_message(None, [_call(1, "action", "Hello!"), _call(2, "answer", "A1")]),
            assistant_message(None, [_call(3, "talk", "hello")]),  # unknown choice: the env's format error
            assistant_message(None, [tool_call("c4", "interact_with_env", json.dumps({"choice": "action"}))]),
        ]
    )
    traj = run_trial(task, client, None)
    info = traj.info["userbench"]
    assert info["rewards"] == [0.0, 0.0] and info["ended"] == "malformed_call"
    tool_msgs = [m["content"] for m in traj.messages if m["role"] == "tool"]
    assert tool_msgs[1] == NOT_EXECUTED and tool_msgs[2] == Messages.FORMAT_WRONG
    assert tool_msgs[3] == "Error: arguments need string fields thought, content"
    assert traj.turns == 3 and traj.final_answer is None


def test_loop_truncates_at_max_turns_and_keeps_rewards():
    task = _tasks(1, ["travel22"])[0]
    q = "How many bedrooms does the apartment need?"
    client = Scripted([assistant_message(None, [_call(i, "action", q)]) for i in range(3)])
    traj = run_trial(task, client, UserbenchOptions(max_turns=3))
    info = traj.info["userbench"]
    # the episode's own words (issue 28): the env's turn limit is max_turns, as the record says
    assert info["rewards"] == [0.2, 0.0, 0.0] and info["ended"] == "max_turns" == traj.termination
    assert traj.termination == "max_turns"
    score = SUITE.score(task, traj.to_dict(), None)
    assert score.values["micro_avg"] == pytest.approx(0.2 / 3) and not score.success


# -- suite contract ----------------------------------------------------------------------------
def test_load_tasks_sizes_and_unknown_category():
    assert len(SUITE.load_tasks(SuiteProfile(seed=42, categories=["travel2222"]), None)) == 17
    assert [t.id for t in _tasks(2, ["travel33"])] == ["travel33-001", "travel33-002"]
    with pytest.raises(ValueError, match=r"userbench: unknown categories \['travel55'\]"):
        SUITE.load_tasks(SuiteProfile(categories=["travel55"]), None)


def test_routed_and_diagnostic_keys():
    routed = SUITE.sub_metrics - SUITE.diagnostics
    assert routed == {"travel22.micro_avg", "travel33.micro_avg", "travel44.micro_avg"}


