"""Benchforce judging and aggregation on hand-made trajectories (no server)."""

from __future__ import annotations

from pytest_egi.suite import SuiteProfile
from suites.benchforce import SUITE
from suites.benchforce.envs.hospital import ENV
from suites.benchforce.scorer import expected_state, state_diff, summarize_env


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


def test_outputs_must_each_be_said():
    task = _task("medication_dosage")
    final = expected_state(ENV, 42, task.data["actions"])
    calls = [{**task.data["actions"][0], "error": False}]
    dose, freq = task.data["outputs"]
    assert SUITE.score(task, _traj(final, calls, [f"Take {dose.upper()}, {freq}."]), None).success
    missed = SUITE.score(task, _traj(final, calls, [f"Take {dose}."]), None)
    assert not missed.success and missed.details["outputs_missing"] == [freq]


def test_accuracy_is_grouped_per_entry_and_finished_means_goal_met():
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
    assert out["hospital.accuracy_finished"] == 3 / 4
    # nothing finished: undefined, never 0 (which the gap route would read as 100 on M5)
    nothing = summarize_env("hospital", [rec("e1", 0.0, 0.0)])
    assert nothing["hospital.accuracy_finished"] is None
