"""Benchforce judging and aggregation on hand-made trajectories (no server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_egi.scoring.config import load_routing
from pytest_egi.scoring.egi import transform
from pytest_egi.suite import SuiteProfile
from suites.benchforce import SUITE
from suites.benchforce.env.base import apply_call, copy_world
from suites.benchforce.env.hospital import ENV
from suites.benchforce.scorer import expected_state, state_diff, summarize_env

ROOT = Path(__file__).resolve().parents[3]


def _task(template: str):
    tasks = SUITE.load_tasks(SuiteProfile(seed=42, categories=["hospital"]), None)
    return next(t for t in tasks if t.data["template"] == template)


def _traj(final_state, calls, replies, ending="user_exit", reason="goal_met"):
    messages = [{"role": "assistant", "content": r} for r in replies]
    return {
        "messages": messages,
        "final_answer": replies[-1],
        "termination": "user_stop",
        "tool_calls": calls,
        "usage": {},
        "info": {"benchforce": {"final_state": final_state, "ending": ending, "exit_reason": reason}},
    }


def test_state_diff_is_field_level():
    assert state_diff({"a": {"x": 1, "y": 2}, "b": {}}, {"a": {"x": 1, "y": 3}, "b": {"n": 4}}) == [
        "a.y: expected 2, got 3",
        "b.n: unexpected 4",
    ]
    assert state_diff({"a": {"k": {"s": "x"}}}, {"a": {}}) == ['a.k: missing (expected {"s": "x"})']


def test_wrong_state_fails_with_its_diff_and_upstream_stateless_passes():
    task = _task("referral_status")
    state = ENV.build_world(42)
    world = ENV.projection(state)
    args = task.data["actions"][1]["arguments"]
    rid = next(
        k
        for k, r in state["referrals"].items()
        if state["patients"][r["patient_id"]]["name"] == args["patient_identifier"]
        and state["doctors"][r["referred_to_doctor_id"]]["name"] == args["referred_to_doctor_identifier"]
    )
    calls = [{**a, "error": False} for a in task.data["actions"]]
    score = SUITE.score(task, _traj(world, calls, ["Done, it has been updated."]), None)
    assert not score.success and score.values["stateless"] == 1.0 and score.values["state_match"] == 0.0
    assert score.details["state_diff"] == [
        f"referrals.{rid}.status: expected {args['new_status']!r}, got 'pending'"
    ]
    assert score.failure_kind == "state_differs"


def test_forbidden_write_fails_even_when_state_and_stateless_match():
    task = _task("medication_dosage")
    final = ENV.projection(ENV.build_world(42))
    calls = [
        {**task.data["actions"][0], "error": False},
        {"name": "update_emergency_contact", "arguments": {"patient_identifier": "P2001"}, "error": False},
    ]
    said = " ".join(task.data["outputs"])
    score = SUITE.score(task, _traj(final, calls, [said]), None)
    assert score.values["stateless"] == 1.0 and score.values["state_match"] == 1.0
    assert not score.success and score.details["forbidden_ran"] == [
        'update_emergency_contact({"patient_identifier": "P2001"})'
    ]
    # a forbidden action decides the kind whatever the ending (here the turns ran out too)
    assert score.failure_kind == "policy_violated"
    cut = SUITE.score(task, _traj(final, calls, [said], ending="max_turns", reason=None), None)
    assert cut.failure_kind == "policy_violated"


def test_outputs_must_each_be_said():
    task = _task("medication_dosage")
    final = expected_state(ENV, 42, task.data["actions"])
    calls = [{**task.data["actions"][0], "error": False}]
    dose, freq = task.data["outputs"]
    assert SUITE.score(task, _traj(final, calls, [f"Take {dose.upper()}, {freq}."]), None).success
    missed = SUITE.score(task, _traj(final, calls, [f"Take {dose}."]), None)
    assert not missed.success and missed.details["outputs_missing"] == [freq]
    assert missed.failure_kind == "wrong_answer"
    # the caller's wall-clock budget ran out before the dose was said: turn_limit
    late = SUITE.score(task, _traj(final, calls, [f"Let me check the dose for {dose}."], ending="timeout",
                                   reason=None), None)  # fmt: skip
    assert not late.success and late.failure_kind == "turn_limit"
    # "I'm not able to find that" as the closing reply: gave_up, as in every suite
    declined = SUITE.score(task, _traj(final, calls, ["I'm sorry, I could not find that prescription."]),
                           None)  # fmt: skip
    assert declined.failure_kind == "gave_up"


def test_accuracy_is_grouped_per_entry_and_finished_means_the_caller_ended_it():
    def rec(task_id, passed, finished):
        return {"task_id": task_id, "values": {"passed": passed, "finished": finished}}

    records = [
        rec("e1", 1.0, 1.0),
        rec("e1", 1.0, 1.0),
        rec("e2", 0.0, 1.0),
        rec("e2", 1.0, 1.0),
        rec("e3", 0.0, 0.0),
        rec("e3", 0.0, 0.0),
    ]
    out = summarize_env("hospital", records)
    # upstream's grouping put every session of a run in one group: 0.0 here (A10.1)
    assert out["hospital.accuracy_all"] == (1.0 + 0.5 + 0.0) / 3
    assert out["hospital.pass_all_trials"] == 1 / 3
    assert out["hospital.finished_rate"] == 4 / 6
    assert out["hospital.accuracy_finished"] == (1.0 + 0.5) / 2  # e3 has no finished session
    # nothing finished: undefined, never 0 (which the gap route would read as 100 on M5)
    nothing = summarize_env("hospital", [rec("e1", 0.0, 0.0)])
    assert nothing["hospital.accuracy_finished"] is None


# ----------------------------------------------- finished, accuracy_finished and the gap by hand


def _world_after(calls):
    """The projection after the calls that succeeded, applied as the server applies them."""
    state = copy_world(ENV.build_world(42))
    for call in calls:
        if not call["error"]:
            apply_call(ENV, state, call["name"], call["arguments"])
    return ENV.projection(state)


def _session(calls, conversation, ending, reason=None, termination="user_stop"):
    """A stored trajectory the way ``run_trial`` leaves it: the model's own words, its calls
    as the server logged them, the final state, and how the session ended."""
    messages = [{"role": "system", "content": "policy"}]
    for role, text in conversation:
        messages.append({"role": role, "content": text})
    replies = [t for r, t in conversation if r == "assistant"]
    return {
        "messages": messages,
        "final_answer": replies[-1] if replies else None,
        "termination": termination,
        "tool_calls": calls,
        "usage": {"prompt_tokens": 900, "completion_tokens": 60},
        "info": {"benchforce": {"final_state": _world_after(calls), "ending": ending, "exit_reason": reason}},
    }


def test_finished_rate_accuracy_finished_and_gap_by_hand_on_mixed_endings():
    """Six sessions over four entries, a model's wording, every way a session ends. Finished
    = the caller ended it (upstream's terminate), goal met or not; turn limit and timeout are
    unfinished. Trials are grouped per entry (A10.1)."""
    tasks = SUITE.load_tasks(SuiteProfile(seed=42, categories=["hospital"]), None)
    first = {t.data["template"]: t for t in reversed(tasks)}  # each template's first entry
    book, cancel, contact, dosage = (
        first[k] for k in ("schedule", "cancel", "emergency_contact", "medication_dosage")
    )
    booking = book.data["actions"][0]["arguments"]  # Wesley Sandoval, Dr. Elena Kowalczyk, 2024-06-24 1:30 PM
    cancelling = cancel.data["actions"][0]["arguments"]  # Hana Quiroga, 2024-06-04 10:30 AM
    new_contact = contact.data["actions"][0]["arguments"]  # Yusuf Sandoval, 555-7567

    def call(name, arguments, error=False):
        return {"name": name, "arguments": arguments, "error": error}

    sessions = [
        # entry_0, trial 1: booked as asked; the caller thanks the agent and hangs up (goal met)
        (book, _session(
            [call("schedule_appointment", booking)],
            [("user", "Hi, I'd like to see Dr. Elena Kowalczyk in Orthopedics."),
             ("assistant", "Happy to help! May I have your full name and the date and time you prefer?"),
             ("user", "Wesley Sandoval, 2024-06-24 at 1:30 PM."),
             ("assistant", "Thanks, Wesley. You're booked with Dr. Kowalczyk (Orthopedics) on Monday, "
                           "June 24 at 1:30 PM. Anything else?")],
            "user_exit", "goal_met")),
        # entry_0, trial 2: the model keeps asking and never books; the turn limit cuts it off
        (book, _session(
            [],
            [("user", "Hi, I'd like to see Dr. Elena Kowalczyk in Orthopedics."),
             ("assistant", "Sure. Could you confirm your date of birth first?"),
             ("user", "I don't know."),
             ("assistant", "No problem. And which insurance plan are you on?")],
            "max_turns", None, termination="max_turns")),
        # entry_1: the model cancels at the wrong time, the tool refuses, the caller gives up
        (cancel, _session(
            [call("cancel_appointment", {**cancelling, "appointment_time": "10:00 AM"}, error=True)],
            [("user", "I need to cancel my appointment on 2024-06-04."),
             ("assistant", "I'm sorry, I couldn't find an appointment at 10:00 AM that day."),
             ("user", "Sorry, that doesn't help me."),
             ("assistant", "Unfortunately there's nothing I can cancel for that date.")],
            "user_exit", "gave_up")),
        # entry_3, trial 1: two digits swapped in the phone number; the caller (an LLM) still
        # believes it and hangs up with its goal met: finished, not passed
        (contact, _session(
            [call("update_emergency_contact", {**new_contact, "contact_phone": "555-7576"})],
            [("user", "I'd like to change my emergency contact."),
             ("assistant", "Done: your emergency contact is now Yusuf Sandoval at 555-7576.")],
            "user_exit", "goal_met")),
        # entry_3, trial 2: right this time
        (contact, _session(
            [call("update_emergency_contact", new_contact)],
            [("user", "I'd like to change my emergency contact."),
             ("assistant", "All set. Yusuf Sandoval (555-7567) is now your emergency contact.")],
            "user_exit", "goal_met")),
        # entry_6: the session's clock runs out before the dosage is said
        (dosage, _session(
            [call("get_patient_medications", dosage.data["actions"][0]["arguments"])],
            [("user", "What's the dosage of my Thyrobal?"),
             ("assistant", "Let me pull up your medication list, one moment please.")],
            "timeout", None)),
    ]
    records = []
    for task, traj in sessions:
        score = SUITE.score(task, traj, None)
        records.append({"task_id": task.id, "category": "hospital", "values": score.values})
    assert [(r["values"]["passed"], r["values"]["finished"]) for r in records] == [
        (1.0, 1.0), (0.0, 0.0), (0.0, 1.0), (0.0, 1.0), (1.0, 1.0), (0.0, 0.0)
    ]
    out = SUITE.summarize(records)
    # per entry, mean pass over its trials: entry_0 1/2, entry_1 0, entry_3 1/2, entry_6 0
    assert out["hospital.accuracy_all"] == (0.5 + 0.0 + 0.5 + 0.0) / 4 == 0.25
    # the caller ended 4 of the 6 sessions (goal met 3, gave up 1); turn limit and timeout did not
    assert out["hospital.finished_rate"] == 4 / 6
    assert (out["hospital.goal_met_rate"], out["hospital.gave_up_rate"]) == (3 / 6, 1 / 6)
    assert (out["hospital.max_turns_rate"], out["hospital.timeout_rate"]) == (1 / 6, 1 / 6)
    # entries with a finished session, mean pass over those sessions: entry_0 1 (trial 1 only),
    # entry_1 0, entry_3 1/2; entry_6 has none (upstream's "accuracy over finished entries")
    assert out["hospital.accuracy_finished"] == (1.0 + 0.0 + 0.5) / 3 == 0.5
    assert out["hospital.pass_all_trials"] == 0.0
    # the M5 route: 100 - (100 * accuracy_finished - 100 * accuracy_all) = 100 - (50 - 25)
    config, _ = load_routing(ROOT / "routing.yaml")
    routes = {r.sub_metric: r for r in config.routes if r.suite == "benchforce"}
    assert transform(routes["hospital.accuracy_finished"], out) == 75.0
    assert transform(routes["hospital.finished_rate"], out) == pytest.approx(200 / 3)
    # the column sums the bootstrap uses give the same
    columns = SUITE.summary_columns(records)
    sums = dict(zip(columns.names, map(sum, zip(*columns.values, strict=True)), strict=True))
    finished = columns.finish(sums)
    assert finished["hospital.accuracy_finished"] == 0.5 and finished["hospital.finished_rate"] == 4 / 6


def test_order_management_is_reported_not_routed():
    config, _ = load_routing(ROOT / "routing.yaml")
    routed = {r.sub_metric for r in config.routes if r.suite == "benchforce"}
    assert routed == {
        f"{env}.{key}"
        for env in ("hospital", "hr_software")
        for key in ("accuracy_all", "finished_rate", "accuracy_finished")
    }
    for key in ("accuracy_all", "finished_rate", "accuracy_finished"):
        assert f"order_management.{key}" in SUITE.diagnostics
