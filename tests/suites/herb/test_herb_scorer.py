"""HERB scoring rules with hand-computed values (reference §2.5, upstream evaluate.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_egi.judges import RULES_JUDGE, LLMJudge
from pytest_egi.models.base import ModelResponse, assistant_message
from pytest_egi.suite import Task
from suites.herb import SUITE
from suites.herb.scorer import (
    abstention,
    answer_text,
    content_rules,
    extract_entities,
    fact_recall,
    is_refusal,
    normalize,
    score_task,
    set_f1,
    token_f1,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The  PRD's Link!", "prds link"),
        ("An apple a day", "apple day"),
        ("https://Git.example/Pull/12.", "httpsgitexamplepull12"),
        ("  Cobalt\tLogistics \n", "cobalt logistics"),
        ("theme anthem", "theme anthem"),  # articles only as whole words
    ],
)
def test_normalize(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.mark.parametrize(
    ("gold", "pred", "f1"),
    [
        (["eid_1", "eid_2"], ["eid_1", "eid_2"], 1.0),
        (["eid_1", "eid_2"], ["eid_1", "eid_1"], 2 / 3),  # duplicates collapse: P=1, R=1/2
        (["a1", "b2", "c3"], ["a1", "b2", "d4", "d4"], 2 / 3),  # P=2/3, R=2/3
        (["eid_1"], ["eid_1", "eid_2", "eid_3", "eid_4"], 0.4),  # P=1/4, R=1 -> 2*.25/1.25
        (["https://git.x/pull/12"], ["HTTPS://GIT.X/PULL/12."], 1.0),  # punctuation, case
        (["The Cobalt Logistics"], ["cobalt logistics!"], 1.0),  # article and "!" dropped
        (["Cobalt Logistics"], ["Cobalt Health"], 0.0),
        ([], [], 0.0),  # two empty sets score 0 (upstream)
        (["eid_1"], [], 0.0),
        ([], ["eid_1"], 0.0),
    ],
)
def test_set_f1(gold: list[str], pred: list[str], f1: float) -> None:
    assert set_f1(gold, pred) == pytest.approx(f1)


def test_token_f1_and_fact_recall() -> None:
    # ["cat","sat"] vs ["cat","sat","down"]: P=1, R=2/3 -> 0.8
    assert token_f1("The cat sat", "a cat sat down") == pytest.approx(0.8)
    assert token_f1("", "anything") == 0.0
    assert token_f1("the", "the") == 0.0  # nothing left after normalisation
    assert fact_recall("The target is 99.9% now", ["99.9%", "250 ms"]) == 0.5
    assert fact_recall("250 and ms", ["250 ms"]) == 0.0  # facts must be contiguous
    assert fact_recall("uptime 99.95%", ["99.9%"]) == 0.0  # "9995" is not "999"
    assert fact_recall("anything", []) is None


def test_content_rules_blend() -> None:
    reference = "The sprint goal agreed on May 1, 2025 was to finish QA for smart alerts."
    facts = ["finish QA for smart alerts"]
    assert content_rules(reference, reference, facts) == 100.0
    # recall 1; token F1: 8 shared of 8 predicted / 14 reference tokens = 16/22
    answer = "The goal was to finish QA for smart alerts."
    assert content_rules(answer, reference, facts) == pytest.approx(60 + 40 * 16 / 22, abs=1e-3)
    assert content_rules("I don't know.", reference, facts) == 0.0
    # without key facts (a loaded corpus) it is 100 x token F1
    assert content_rules("cat sat", "cat sat down", None) == pytest.approx(80.0)


def test_answer_text() -> None:
    assert answer_text(None) == ""  # no answer is not "I don't know." (upstream maps it so)
    assert answer_text("<think>eid_1 maybe</think> eid_2") == "eid_2"
    assert answer_text("a</think>b</think>  final ") == "final"  # after the last </think>
    assert answer_text({"answer": "x", "entities": [], "answerable": True}) == "x"
    assert answer_text({"answer": None}) == ""


@pytest.mark.parametrize(
    ("final", "abstained"),
    [
        (None, False),  # no answer is never an abstention
        ("", False),
        (" \n\t", False),
        ({"answer": "", "entities": []}, False),
        ({"answer": "not found", "entities": [], "answerable": False}, True),
        ({"answer": "eid_1a2b3c4d", "entities": ["eid_1a2b3c4d"], "answerable": False}, False),
        ({"answer": "The PRD was approved.", "entities": [], "answerable": True}, False),
        ("I don't know.", True),
        ("I don’t know.", True),  # typographic apostrophe
        ("I do not know which meeting you mean.", True),
        ("The sources do not mention a product called ZephyrForce.", True),
        ("I could not find any information about that meeting.", True),
        ("There is no such meeting on record.", True),
        ("This question is not answerable from the available data.", True),
        ("The requested figure is not stated in the report.", True),
        ("The PRD was written by eid_1a2b3c4d, but I couldn't find the reviewers.", False),
        ("I cannot find the PR; maybe https://git.x/pull/3 is it.", False),
        ("The sprint goal was to ship smart alerts to beta customers.", False),
    ],
)
def test_abstention(final: Any, abstained: bool) -> None:
    assert abstention(final)[0] is abstained


def test_is_refusal_requires_no_entities() -> None:
    assert is_refusal("No information is available.")
    assert not is_refusal("No information about CUST-0012345 beyond its name.")


def test_extract_entities() -> None:
    text = "Reviewed by eid_ab12cd34 and eid_ab12cd34, see https://git.x/a/pull/7. Also https://docs.x/a/prd."
    assert extract_entities("person", text) == ["eid_ab12cd34"]
    assert extract_entities("url", text) == ["https://git.x/a/pull/7", "https://docs.x/a/prd"]
    assert extract_entities("pr", text) == ["https://git.x/a/pull/7"]
    companies = ["Cobalt Logistics", "Cobalt Logistics Group", "Redwood Health"]
    got = extract_entities("company", "cobalt logistics group and REDWOOD HEALTH.", companies)
    assert got == ["Cobalt Logistics Group", "Redwood Health"]  # longest match first
    with pytest.raises(ValueError, match="no entity extraction"):
        extract_entities("content", text)


def _task(category: str, data: dict[str, Any]) -> Task:
    return Task(id=f"herb-{category}-001", category=category, data=data)


def test_score_entity_task_structured_and_text() -> None:
    data = {
        "question": "q",
        "type": "person",
        "answerable": True,
        "ground_truth": ["eid_aaaa1111", "eid_bbbb2222"],
        "citations": [],
    }
    # structured: ids are pulled out of each entity; duplicates collapse -> P=1, R=1/2
    final = {"answer": "x", "entities": ["eid_aaaa1111 (Ana)", "eid_aaaa1111"], "answerable": True}
    s = score_task(data, final)
    assert s.values == {"f1": pytest.approx(2 / 3)} and not s.success
    assert s.details["entities_from"] == "submit" and s.details["judge"] == RULES_JUDGE
    # plain text falls back to extraction
    s = score_task(data, "It was eid_bbbb2222 and eid_aaaa1111.")
    assert s.values == {"f1": 1.0} and s.success and s.details["entities_from"] == "text extraction"
    # answerable=false on an answerable question is an abstention: 0
    s = score_task(data, {"answer": "eid_aaaa1111", "entities": [], "answerable": False})
    assert s.values == {"f1": 0.0} and s.details["abstained"]


def test_score_company_text_uses_world_gazetteer(quick_tasks: list[Task]) -> None:
    task = next(t for t in quick_tasks if t.category == "company")
    gold = task.data["ground_truth"]
    text = "Reported by " + " and ".join(g.upper() for g in gold) + "."
    s = SUITE.score(task, {"final_answer": text}, None)
    assert s.values == {"f1": 1.0}


def test_scoring_a_company_text_answer_builds_no_world(
    quick_tasks: list[Task], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a rescore scores company answers with the world's company names, drawn without
    # building the world (generate_world: 0.3-0.5 s per rescore before)
    from pytest_egi.cache import shared
    from suites.herb import data
    from suites.herb.data import generator

    calls: dict[str, int] = {"world": 0, "names": 0}

    def counted(name: str, fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return fn(*args, **kwargs)

        return call

    monkeypatch.setattr(generator, "generate_world", counted("world", generator.generate_world))
    names = counted("names", generator.generate_company_names)
    monkeypatch.setattr(generator, "generate_company_names", names)
    monkeypatch.setattr(shared, "_dir", None)  # no session's shared file: this process draws
    data._company_names.cache_clear()
    data.release_worlds()
    monkeypatch.setattr(data, "_WORLD_NAMES", {})  # no world held in this process either
    task = next(t for t in quick_tasks if t.category == "company")
    text = "Reported by " + " and ".join(g.upper() for g in task.data["ground_truth"]) + "."
    assert SUITE.score(task, {"final_answer": text}, None).values == {"f1": 1.0}
    assert calls == {"world": 0, "names": 1}
    # a process that holds the world (a run's collection) reads its names: nothing drawn
    data._company_names.cache_clear()
    held = data.get_world(task.data["world"])
    assert data.company_names(task.data["world"]) == held.company_names
    assert calls == {"world": 1, "names": 1}
    data.release_worlds()
    data._company_names.cache_clear()  # later tests draw again without the counters


def test_score_content_and_unanswerable_rules() -> None:
    content = {
        "question": "q",
        "type": "content",
        "answerable": True,
        "ground_truth": "The cache layer uses Redis.",
        "facts": ["Redis"],
    }
    s = score_task(content, {"answer": "The cache layer uses Redis.", "entities": []})
    assert s.values == {"content": 100.0} and s.success
    s = score_task(content, None)
    assert s.values == {"content": 0.0} and not s.success and s.details["no_answer"] == "empty reply (None)"
    s = score_task(content, {"answer": "x", "entities": [], "answerable": False})
    assert s.values == {"content": 0.0} and s.details["abstained"]
    unans = {"question": "q", "type": None, "answerable": False, "ground_truth": None}
    s = score_task(unans, {"answer": "Not found.", "entities": [], "answerable": False})
    assert s.values == {"abstained": 1.0} and s.success
    assert "correct behaviour" in s.details["note"]
    s = score_task(unans, {"answer": "It is eid_12345678.", "entities": ["eid_12345678"]})
    assert s.values == {"abstained": 0.0} and not s.success


class _ScriptedJudgeModel:
    """A judge client that replies with fixed texts and counts its calls."""

    name = "judge/scripted"

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)
        self.calls = 0

    def generate(self, messages: list[dict[str, Any]], tools: Any = None, **params: Any) -> ModelResponse:
        self.calls += 1
        return ModelResponse(message=assistant_message(json.dumps(self.replies.pop(0))))


def test_judge_paths() -> None:
    content = {
        "question": "q",
        "type": "content",
        "answerable": True,
        "ground_truth": "The cache layer uses Redis.",
        "facts": ["Redis"],
    }
    model = _ScriptedJudgeModel({"score": 73, "reason": "partly right"})
    s = score_task(content, "It uses Redis, probably.", judge=LLMJudge(model))
    assert s.values == {"content": 73.0} and s.details["judge"] == "judge/scripted"
    assert not s.success  # 73 < 80
    unans = {"question": "q", "type": None, "answerable": False, "ground_truth": None}
    no = _ScriptedJudgeModel({"verdict": "no", "reason": "says it is missing"})
    s = score_task(unans, "The information is missing.", judge=LLMJudge(no))
    assert s.values == {"abstained": 1.0} and s.details["judge"] == "judge/scripted"
    yes = _ScriptedJudgeModel({"verdict": "yes", "reason": "answers"})
    s = score_task(unans, "The sprint goal was to ship it.", judge=LLMJudge(yes))
    assert s.values == {"abstained": 0.0}
    # a structured abstention is exact: the judge is not asked
    idle = _ScriptedJudgeModel()
    s = score_task(unans, {"answer": "n/a", "entities": [], "answerable": False}, judge=LLMJudge(idle))
    assert s.values == {"abstained": 1.0} and idle.calls == 0 and s.details["judge"] == RULES_JUDGE


def test_summarize_hand_computed() -> None:
    def rec(cat: str, **values: float) -> dict[str, Any]:
        return {
            "task_id": f"herb-{cat}",
            "category": cat,
            "trial": 0,
            "status": "passed",
            "values": values,
            "details": {},
        }

    out = SUITE.summarize([
        rec("person", f1=1.0), rec("person", f1=0.5), rec("url", f1=0.0), rec("pr", f1=1.0),
        rec("content", content=60.0), rec("unanswerable", abstained=1.0),
        rec("unanswerable", abstained=0.0), rec("unanswerable", abstained=1.0),
    ])  # fmt: skip
    assert out["person_f1"] == 0.75 and out["url_f1"] == 0.0 and out["pr_f1"] == 1.0
    assert out["company_f1"] is None  # no company task ran
    assert out["content"] == 60.0 and out["null_rate"] == pytest.approx(2 / 3)
    # overall (commit 0c126c0): mean of 100, 50, 0, 100 and 60 = 62
    assert out["answerable_overall"] == pytest.approx(62.0)
    assert out["url_pr_f1"] == 0.5 and out["n_answerable"] == 5 and out["n_unanswerable"] == 3
    empty = SUITE.summarize([])
    assert empty["content"] is None and empty["null_rate"] is None
