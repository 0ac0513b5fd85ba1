"""Issue 28, the core: one vocabulary of failure kinds, checked and counted; how an episode
ended decides first; one refusal rule."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_egi.normalize import is_refusal
from pytest_egi.outcomes import FAILURE_KINDS, FailureKindError, checked_failure_kind, ending_kind
from pytest_egi.records import record_problem
from pytest_egi.report.failures import bucket_failure_counts, failure_counts, failure_kinds_line
from pytest_egi.run.recorder import failure_line

ALLOWED = ("wrong_answer, wrong_tool, wrong_argument, missing_call, extra_call, state_differs, "
           "policy_violated, no_answer, turn_limit, gave_up")


def test_every_kind_has_a_one_line_definition():
    assert len(FAILURE_KINDS) == 10
    assert all(d and "\n" not in d for d in FAILURE_KINDS.values())


def test_an_unknown_kind_is_refused_naming_the_suite_and_the_allowed_kinds():
    with pytest.raises(FailureKindError) as err:
        checked_failure_kind("toy", False, "timeout")
    assert str(err.value) == (
        f"suite 'toy' gave failure_kind 'timeout', which is not a failure kind; allowed: {ALLOWED}")


def test_a_kind_on_a_passed_trial_is_refused():
    with pytest.raises(FailureKindError, match=r"^suite 'toy' gave failure_kind 'wrong_answer' on a passed"):
        checked_failure_kind("toy", True, "wrong_answer")


def test_checked_kind():
    assert checked_failure_kind("toy", True, None) is None
    assert checked_failure_kind("toy", False, "wrong_tool") == "wrong_tool"
    # a suite that says nothing: how the episode ended, else wrong_answer
    blank = {"final_answer": "", "termination": "text_answer"}
    assert checked_failure_kind("toy", False, None, blank) == "no_answer"
    answered = {"final_answer": "C7", "termination": "submitted"}
    assert checked_failure_kind("toy", False, None, answered) == "wrong_answer"
    assert checked_failure_kind("toy", False, None) == "wrong_answer"


@pytest.mark.parametrize(("trajectory", "kind"), [
    ({"final_answer": None, "termination": "max_turns"}, "turn_limit"),
    ({"final_answer": "I don't know.", "termination": "max_turns"}, "turn_limit"),
    ({"final_answer": None, "termination": "context_exceeded"}, "no_answer"),
    ({"final_answer": "The answer is", "termination": "truncated"}, "no_answer"),
    ({"final_answer": "Paris", "termination": "text_answer", "finish_reason": "length"}, "no_answer"),
    ({"final_answer": "  \n", "termination": "text_answer"}, "no_answer"),
    ({"final_answer": "\u200b", "termination": "submitted"}, "no_answer"),
    ({"final_answer": "I don't know.", "termination": "text_answer"}, "gave_up"),
    ({"final_answer": "I don’t know", "termination": "user_stop"}, "gave_up"),
    ({"final_answer": {"answer": "The information is not available.", "entities": []},
      "termination": "submitted"}, "gave_up"),
    ({"final_answer": {"answerable": False, "entities": []}, "termination": "submitted"}, "gave_up"),
    ({"final_answer": {"answerable": False, "entities": ["eid_1"]}, "termination": "submitted"}, None),
    ({"final_answer": "005Wt000003NIiTIAW", "termination": "submitted"}, None),
    ({"final_answer": "I couldn't find the March report, but the total was 42 units across the two "
                      "warehouses in Ohio and Texas, counting both the open and the closed orders of "
                      "that quarter.", "termination": "text_answer"}, None),
])  # fmt: skip
def test_ending_kind(trajectory, kind):
    assert ending_kind(trajectory) == kind


@pytest.mark.parametrize(("text", "refusal"), [
    ("I don't know.", True), ("I do not know the answer to that.", True), ("i cant find it", True),
    ("Insufficient information to answer.", True), ("There is no such record.", True),
    ("Paris", False), ("", False), ("   ", False), ("No. The agent is 005Wt000003NIiTIAW.", False),
])  # fmt: skip
def test_is_refusal(text, refusal):
    assert is_refusal(text) is refusal


def _rec(suite, status, kind=None, category="a", values=None, task="t"):
    return {"suite": suite, "status": status, "failure_kind": kind, "category": category,
            "values": values or {}, "task_id": task, "trial": 1}


def test_failure_counts_hand_counted():
    records = [
        _rec("crm", "failed", "wrong_answer"), _rec("crm", "failed", "turn_limit"),
        _rec("crm", "failed", "wrong_answer"), _rec("crm", "passed"), _rec("crm", "error"),
        _rec("mcp", "failed", "wrong_tool"), _rec("mcp", "failed", None), _rec("mcp", "skipped"),
        _rec("ok", "passed"),
    ]  # fmt: skip
    assert failure_counts(records) == {
        "crm": {"wrong_answer": 2, "turn_limit": 1},
        "mcp": {"wrong_tool": 1, "unknown": 1},
    }
    # in the vocabulary's order, not by count or name
    assert list(failure_counts(records)["crm"]) == ["wrong_answer", "turn_limit"]


def test_bucket_counts_follow_the_routed_sub_metrics_a_failed_task_feeds():
    # a Benchforce-like suite: an unfinished session feeds accuracy_all and finished_rate but not
    # accuracy_finished (None without a finished session)
    def summarize(records):
        finished = [r for r in records if r["values"]["finished"]]
        return {"acc_all": 0.0, "finished_rate": len(finished) / len(records),
                "acc_finished": 0.0 if finished else None, "diag": 1.0}

    routes = [SimpleNamespace(suite="bf", sub_metric="acc_all", bucket="M1"),
              SimpleNamespace(suite="bf", sub_metric="finished_rate", bucket="M2"),
              SimpleNamespace(suite="bf", sub_metric="acc_finished", bucket="M5"),
              SimpleNamespace(suite="other", sub_metric="x", bucket="M4")]
    records = [
        _rec("bf", "failed", "turn_limit", values={"finished": 0.0}),
        _rec("bf", "failed", "policy_violated", values={"finished": 1.0}),
        _rec("bf", "failed", "state_differs", values={"finished": 1.0}),
        _rec("bf", "passed", values={"finished": 1.0}),
        _rec("unrouted", "failed", "wrong_answer"),
    ]  # fmt: skip
    assert bucket_failure_counts(records, {"bf": summarize}, routes) == {
        "M1": {"state_differs": 1, "policy_violated": 1, "turn_limit": 1},
        "M2": {"state_differs": 1, "policy_violated": 1, "turn_limit": 1},
        "M5": {"state_differs": 1, "policy_violated": 1},
    }


def test_terminal_line():
    assert failure_kinds_line({"turn_limit": 6, "wrong_answer": 2}) == [
        "  failed by kind: 2 wrong_answer, 6 turn_limit"]
    assert failure_kinds_line({}) == []


def test_failure_line_names_the_kind_and_the_ending():
    record = {"task_id": "crm-7", "category": "NCR", "failure_kind": "turn_limit", "expected": "005A",
              "got": "(no answer: the turn limit ran out (max_turns))", "termination": "max_turns"}
    assert failure_line(record) == ("crm-7 [NCR] turn_limit: expected 005A, got (no answer: the turn "
                                    "limit ran out (max_turns)) (ended: max_turns)")


def test_record_schema_checks_the_failure_kind():
    base = {"suite": "s", "task_id": "t", "trial": 1, "status": "failed", "category": "c", "nodeid": "n",
            "values": {}, "success": False}
    assert record_problem({**base, "failure_kind": "wrong_tool"}) is None
    assert record_problem(base) is None  # a record written before the field
    assert record_problem({**base, "failure_kind": "oops"}) == (
        f"field 'failure_kind': 'oops' is not a failure kind ({ALLOWED})")
    assert record_problem({**base, "status": "passed", "success": True, "failure_kind": "wrong_tool"}) == (
        "field 'failure_kind': 'wrong_tool' on a passed record (only a failed one has one)")
