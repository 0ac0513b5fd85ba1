"""Issue 28, per suite: a model's realistic failing trial gets the failure kind its scorer's own
comparison says (each case checked by hand below). Benchforce's cases are in
``tests/suites/benchforce/test_benchforce_scoring.py``; the empty reply and "I don't know." over
every suite in ``tests/conformance/test_failure_kinds.py``."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_egi.suite import SuiteProfile, Task


def _said(text: Any, termination: str = "submitted", **extra: Any) -> dict[str, Any]:
    return {"messages": [{"role": "assistant", "content": text if isinstance(text, str) else ""}],
            "final_answer": text, "termination": termination, "finish_reason": "stop", "turns": 3,
            "tool_calls": [], "usage": {}, "info": {}, **extra}  # fmt: skip


# -- CRMArena: exact match of the extracted ids; KQA token F1 -------------------------------------


@pytest.fixture(scope="module")
def crm_tasks() -> list[Task]:
    from suites.crmarena import SUITE, CrmArenaOptions

    return SUITE.load_tasks(SuiteProfile(seed=42, per_category=2), CrmArenaOptions())


def test_crmarena_kinds(crm_tasks):
    from suites.crmarena import SUITE, CrmArenaOptions

    task = next(t for t in crm_tasks if t.data["reward_metric"] == "exact_match"
                and str(t.data["answer"][0]).startswith("005"))  # fmt: skip
    gold = str(task.data["answer"][0])
    other = gold[:-4] + ("AAAA" if not gold.endswith("AAAA") else "BBBB")  # another agent's id

    def kind(answer, termination="submitted"):
        score = SUITE.score(task, _said(answer, termination), CrmArenaOptions())
        return score.success, score.failure_kind

    assert kind(f"The agent best suited for this case is {gold}.") == (True, None)
    # another agent named as the answer: the extracted ids differ from the gold
    assert kind(f"Based on the closed cases, the best agent is {other}.") == (False, "wrong_answer")
    # the reader finds no answer in a declining reply: the model gave up
    assert kind("I could not determine which agent should handle this case.") == (False, "gave_up")
    assert kind("I don't know.") == (False, "gave_up")
    assert kind(None, "max_turns") == (False, "turn_limit")
    assert kind("   ", "submitted") == (False, "no_answer")


# -- HERB: entity set F1, content score, abstention on unanswerable -------------------------------


PERSON = {"type": "person", "answerable": True, "question": "Who reviewed the login PRD?",
          "ground_truth": ["eid_7d31a9c2", "eid_0b44e5f1"]}  # fmt: skip
UNANSWERABLE = {"type": "person", "answerable": False, "question": "Who approved the Mars launch budget?",
                "ground_truth": []}  # fmt: skip


@pytest.mark.parametrize(("data", "answer", "expected"), [
    (PERSON, "The PRD was reviewed by eid_7d31a9c2 and eid_0b44e5f1.", (True, None)),
    # one of two reviewers: F1 = 2·(1·0.5)/(1+0.5) = 0.667 < 1
    (PERSON, "It was reviewed by eid_7d31a9c2.", (False, "wrong_answer")),
    (PERSON, "I couldn't find who reviewed the login PRD.", (False, "gave_up")),
    (PERSON, {"answerable": False, "entities": []}, (False, "gave_up")),
    # an unanswerable question answered with a name: invented support
    (UNANSWERABLE, "The budget was approved by eid_7d31a9c2.", (False, "wrong_answer")),
    (UNANSWERABLE, "I don't know.", (True, None)),
    (UNANSWERABLE, "", (False, "no_answer")),
])  # fmt: skip
def test_herb_kinds(data, answer, expected):
    from suites.herb import SUITE

    task = Task(id="herb-hand", category="person" if data["answerable"] else "unanswerable", data=data)
    score = SUITE.score(task, _said(answer), None)
    assert (score.success, score.failure_kind) == expected
    if answer == "It was reviewed by eid_7d31a9c2.":
        assert score.values["f1"] == pytest.approx(2 / 3)


# -- MCPEval: the flexible tool-call matcher -----------------------------------------------------


S = {"location": "Lisbon", "checkin": "2025-07-01", "checkout": "2025-07-05", "adults": 2}
D = {"id": "48213377", "checkin": "2025-07-01", "checkout": "2025-07-05", "adults": 2}
GOLD = [{"tool_name": "airbnb_search", "tool_parameters": S},
        {"tool_name": "airbnb_listing_details", "tool_parameters": D}]  # fmt: skip


def _call(name: str, **params: Any) -> dict[str, Any]:
    return {"name": name, "arguments": params, "error": False}


@pytest.mark.parametrize(("calls", "expected"), [
    ([_call("airbnb_search", **S), _call("airbnb_listing_details", **D)],
     (True, None)),
    # the details of the listing were never asked for
    ([_call("airbnb_search", **S)], (False, "missing_call")),
    # the same two tools, but the search forgot both dates: flexible parameter score of the search
    # (location 1 or 0.5 if "Lisbon, Portugal" is judged unequal, checkin 0, checkout 0, adults 1)
    # / 4 = 0.5 or 0.375, below the 0.6 threshold
    ([_call("airbnb_search", location="Lisbon, Portugal", adults=2),
      _call("airbnb_listing_details", **D)],
     (False, "wrong_argument")),
    # a web search in place of the Airbnb search
    ([_call("web_search", query="Lisbon airbnb July"), _call("airbnb_listing_details", **D)],
     (False, "wrong_tool")),
    # a geocoding call inserted first shifts every position: name score 0
    ([_call("maps_geocode", address="Lisbon"), _call("airbnb_search", **S),
      _call("airbnb_listing_details", **D)], (False, "extra_call")),
])  # fmt: skip
def test_mcpeval_kinds(calls, expected):
    from suites.mcpeval import SUITE

    task = Task(id="airbnb-hand", category="airbnb",
                data={"id": "airbnb-hand", "name": "Top stay in Lisbon", "tool_calls": GOLD, "seed": 42,
                      "max_turns": 20, "description": "Find a stay in Lisbon."})  # fmt: skip
    traj = _said("Here is the listing I found.", "text_answer", tool_calls=calls)
    score = SUITE.score(task, traj, None)
    assert (score.success, score.failure_kind) == expected


def test_mcpeval_turn_limit_comes_first():
    from suites.mcpeval import SUITE

    task = Task(id="airbnb-hand", category="airbnb",
                data={"id": "airbnb-hand", "name": "n", "tool_calls": GOLD, "seed": 42, "max_turns": 20,
                      "description": "d"})  # fmt: skip
    traj = _said(None, "max_turns", tool_calls=[_call("airbnb_search", **S)])
    assert SUITE.score(task, traj, None).failure_kind == "turn_limit"


# -- PersonaBench: word-set F1 against the gold entity ---------------------------------------------


@pytest.mark.parametrize(("answer", "expected"), [
    ("Lisbon", (True, None)),
    ("She moved to Porto last spring.", (False, "wrong_answer")),
    ("I don't know where she lives.", (False, "gave_up")),
    (None, (False, "no_answer")),
])  # fmt: skip
def test_personabench_kinds(answer, expected):
    from suites.personabench import SUITE

    task = Task(id="p-hand", category="noise_0.0.Basic_information_easy",
                data={"answer": "Lisbon", "gold_segments": {}, "outdated_value": None})  # fmt: skip
    score = SUITE.score(task, _said(answer, "text_answer"), None)
    assert (score.success, score.failure_kind) == expected


# -- UserBench: per-turn rewards; all best options recommended ----------------------------------


def test_userbench_kinds():
    from suites.userbench import SUITE

    task = SUITE.load_tasks(SuiteProfile(seed=42, categories=["travel22"], per_category=1), None)[0]
    best = [task.data["best_id"][a] for a in task.data["dimensions"]]

    def kind(ended, remaining, final, termination):
        info = {"userbench": {"rewards": [0.2, 0.0, 0.8], "turns": [], "answers": ["A3"], "ended": ended,
                              "best_remaining": remaining, "active": 1, "passive": 0}}  # fmt: skip
        score = SUITE.score(task, _said(final, termination, info=info), None)
        return score.success, score.failure_kind

    assert kind("submitted", [], ["A3"], "submitted") == (True, None)
    # a second-best option recommended, the episode then cut at the turn limit
    assert kind("max_turns", best[1:], ["A3"], "max_turns") == (False, "turn_limit")
    # recommended a near-miss and closed the conversation in words
    assert kind("text_answer", best, "I recommend option A3; have a nice trip!", "text_answer") == (
        False, "wrong_answer")
    assert kind("malformed_call", best, ["A3"], "text_answer") == (False, "wrong_argument")
    assert kind("text_answer", best, "I'm unable to find a matching flight.", "text_answer") == (
        False, "gave_up")


# -- Eigent: the task's checkers on the workspace ------------------------------------------------


def test_eigent_kinds():
    from suites.eigent import SUITE

    scripts = [{"type": "checker", "script": "bench/checker/report.py", "path": "/x"}]
    config = {"metadata": {"difficulty": "easy", "tags": []}, "data": {"name": "report", "question": "q",
              "env": {}}, "tests": {}}  # fmt: skip
    data = {"config": config, "scripts": scripts, "order": [0, "r"]}
    task = Task(id="bench.report", category="easy", data=data)

    def kind(final, passed, termination="text_answer"):
        results = [{"type": "checker", "script": "bench/checker/report.py", "passed": passed, "completed": 0,
                    "total": 0}]  # fmt: skip
        score = SUITE.score(task, _said(final, termination, info={"eigent": {"results": results}}), None)
        return score.success, score.failure_kind

    assert kind("I wrote report.md with the quarterly totals.", True) == (True, None)
    # the model says it is done, the checker finds report.md without the totals
    assert kind("Done: report.md is written.", False) == (False, "state_differs")
    assert kind("I couldn't find the sales figures.", False) == (False, "gave_up")
    assert kind(None, False, "max_turns") == (False, "turn_limit")
