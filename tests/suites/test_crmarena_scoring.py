"""CRMArena scoring rules with hand-computed values (reference §1.6)."""

from __future__ import annotations

import pytest

from suites.crmarena.scorer import extract_entities, fuzzy_scores, normalize_text, score_answer

U1 = "005" + "A" * 15
U2 = "005" + "B" * 15
P1 = "01t" + "C" * 15


def rec(task: str, answer: list, metric: str = "exact_match") -> dict:
    return {"task": task, "answer": answer, "reward_metric": metric}


@pytest.mark.parametrize(
    ("record", "answer", "reward"),
    [
        (rec("case_routing", [U1]), U1, 1.0),  # exact
        (rec("case_routing", [U1]), f" '{U1}' ", 1.0),  # quotes and spaces stripped
        (rec("case_routing", [U1]), f"The best agent is {U1}.", 1.0),  # extraction
        (rec("case_routing", [U1]), U2, 0.0),
        (rec("handle_time", [U1, U2]), f"{U2}, {U1}", 1.0),  # tie: order-free
        (rec("handle_time", [U1, U2]), U1, 0.0),  # one of two tied ids is wrong
        (rec("handle_time", [U1]), f"{U1} and again {U1}", 1.0),  # repeats count once
        (rec("handle_time", [U1]), f"{U1}, {P1}", 1.0),  # other object ids are ignored
        (rec("transfer_count", [None]), "None", 1.0),  # explicit None
        (rec("transfer_count", [None]), "There is none.", 1.0),
        (rec("transfer_count", [None]), "", 0.0),  # empty is not None
        (rec("transfer_count", [None]), None, 0.0),  # nothing submitted
        (rec("transfer_count", [None]), "I don't know.", 0.0),
        (rec("transfer_count", [None]), U1, 0.0),
        (rec("transfer_count", [U1]), "None", 0.0),
        (rec("named_entity_disambiguation", [P1]), f"Product {P1}", 1.0),
        (rec("best_region_identification", ["NY"]), "New York", 1.0),
        (rec("best_region_identification", ["NY", "CA"]), "CA, NY", 1.0),
        (rec("best_region_identification", ["WV"]), "West Virginia", 1.0),  # not Virginia
        (rec("best_region_identification", ["VA"]), "West Virginia", 0.0),
        (rec("monthly_trend_analysis", ["March"]), "march", 1.0),
        (rec("monthly_trend_analysis", ["March", "May"]), "May and March", 1.0),
        (rec("monthly_trend_analysis", ["March"]), "Mar", 0.0),
    ],
)
def test_exact_match(record, answer, reward):
    assert score_answer(record, answer)["reward"] == reward


def test_extraction_of_15_char_ids():
    assert extract_entities("case_routing", "005ABCDEFGHIJKL") == ["005ABCDEFGHIJKL"]


def test_normalisation_and_token_f1():
    assert normalize_text("The customer_id’s  A-B!") == "customer id s b"
    # pred: refund within 30 days ; gold: refunds are issued within 30 days
    # tokens pred [refund, within, 30, days], gold [refunds, are, issued, within, 30, days]
    # common = 3 -> P = 3/4, R = 3/6, F1 = 2*0.75*0.5/1.25 = 0.6
    s = fuzzy_scores("Refund within 30 days", "Refunds are issued within 30 days.")
    assert s == {"f1": pytest.approx(0.6), "em": 0.0}
    assert fuzzy_scores("the Refund, policy", "refund policy") == {"f1": 1.0, "em": 1.0}
    assert fuzzy_scores("xyz", "refund policy")["f1"] == 0.0


def test_kqa_pass_threshold():
    gold = "Refunds are issued within 30 days."
    r = score_answer(rec("knowledge_qa", [gold], "fuzzy_match"), "Refund within 30 days")
    assert r["reward"] == pytest.approx(0.6) and r["success"] is True
    r = score_answer(rec("knowledge_qa", [gold], "fuzzy_match"), "within 30")
    # common 2, P = 1, R = 2/6 -> F1 = 0.5 -> passes at the 0.5 threshold
    assert r["reward"] == pytest.approx(0.5) and r["success"] is True
    r = score_answer(rec("knowledge_qa", [gold], "fuzzy_match"), "")
    assert r["reward"] == 0.0 and r["success"] is False
