"""Unicode-aware answer normalisation (pytest_egi.normalize) and its use by both scorers."""

from __future__ import annotations

import pytest

from pytest_egi.normalize import fold_text, is_punctuation, normalize_answer
from suites.crmarena.scorer import fuzzy_scores, score_answer
from suites.herb.scorer import fact_recall, is_refusal, set_f1, token_f1


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("Kelly’s report", "Kelly's report"),  # right single quotation mark
        ("Kelly‘s", "Kelly's"),
        ("Kelly´s", "Kelly's"),  # acute accent used as an apostrophe
        ("Kellyʼs", "Kelly's"),  # modifier letter apostrophe
        ("“Project Atlas”", '"Project Atlas"'),
        ("„Projekt“ «Atlas»", '"Projekt" "Atlas"'),
        ("2023–2024 — final", "2023-2024 - final"),  # en and em dash
        ("net −5", "net -5"),  # minus sign
        ("Q３ ＲＥＶＥＮＵＥ", "Q3 REVENUE"),  # full-width forms (NFKC)
        ("ﬁnal ﬂow", "final flow"),  # ligatures (NFKC)
        ("wait…", "wait..."),
        ("a\u00a0b\u2009c", "a b c"),  # no-break and thin spaces
        ("zero\u200bwidth\ufeff soft\u00adhyphen", "zerowidth softhyphen"),
        ("  line\none\t\ttwo  ", "line one two"),
        ("Café", "Café"),  # accents are kept (composed and decomposed alike)
        ("Cafe\u0301", "Café"),
        ("005AbCdEfGhIjKlMnO", "005AbCdEfGhIjKlMnO"),  # case is kept (ids are case-sensitive)
    ],
)
def test_fold_text(text: str, folded: str) -> None:
    assert fold_text(text) == folded


@pytest.mark.parametrize(
    ("text", "kwargs", "expected"),
    [
        ("The  Kelly’s Report!", {"punctuation": "drop", "articles": True}, "kellys report"),
        ("the kelly's report", {"punctuation": "drop", "articles": True}, "kellys report"),
        ("The customer_id’s  A–B!", {"punctuation": "space", "articles": True}, "customer id s b"),
        ("¿Dónde está?", {"punctuation": "drop"}, "dónde está"),  # Unicode punctuation
        ("STRASSE straße", {}, "strasse strasse"),  # casefold, not lower
        ("An apple a day", {"articles": True}, "apple day"),
        ("theme anthem", {"articles": True}, "theme anthem"),  # whole words only
        ("Price: $5+", {"punctuation": "drop"}, "price 5"),  # ASCII symbols as upstream
    ],
)
def test_normalize_answer(text: str, kwargs: dict, expected: str) -> None:
    assert normalize_answer(text, **kwargs) == expected


def test_normalize_answer_rejects_an_unknown_punctuation_mode() -> None:
    with pytest.raises(ValueError, match="punctuation must be 'keep', 'drop' or 'space', got 'strip'"):
        normalize_answer("x", punctuation="strip")  # type: ignore[arg-type]


def test_is_punctuation() -> None:
    assert [is_punctuation(c) for c in "'’—«¿$"] == [True] * 6
    assert [is_punctuation(c) for c in "aé5 €"] == [False] * 5


def test_herb_scorer_matches_typographic_variants() -> None:
    # set F1 (entity tasks): the only difference is the apostrophe; it scored 0 before
    assert set_f1(["Kelly's Bakery"], ["Kelly’s Bakery"]) == 1.0
    assert set_f1(["Rivera–Lopez Health"], ["Rivera-Lopez Health"]) == 1.0
    # token F1 and key-fact recall (content tasks)
    assert token_f1("Kelly’s team shipped it", "Kelly's team shipped it") == 1.0
    assert fact_recall("Signed off by Kelly’s manager", ["Kelly's manager"]) == 1.0
    assert fact_recall("uptime ９９.９%", ["99.9%"]) == 1.0
    # a refusal with a typographic apostrophe is a refusal
    assert is_refusal("I don’t know.") and is_refusal("I can’t find that meeting.")


def test_crmarena_scorer_matches_typographic_variants() -> None:
    gold = ["Kelly's policy covers returns."]
    kqa = {"task": "knowledge_qa", "answer": gold, "reward_metric": "fuzzy_match"}
    got = score_answer(kqa, "Kelly’s policy covers returns.")
    assert (got["reward"], got["em"], got["success"]) == (1.0, 1.0, True)
    assert fuzzy_scores("Kelly’s policy", "Kelly's policy") == {"f1": 1.0, "em": 1.0}
    # curly double quotes and an en dash were kept as parts of words: F1 0.5 before
    assert fuzzy_scores("The “Gold” plan – 30 days", 'The "Gold" plan - 30 days') == {"f1": 1.0, "em": 1.0}
    # exact match: typographic quotes around the id are stripped like ASCII ones
    uid = "005" + "A" * 15
    ncr = {"task": "case_routing", "answer": [uid], "reward_metric": "exact_match"}
    assert score_answer(ncr, f"“{uid}”")["reward"] == 1.0
    assert score_answer(ncr, f"\u00a0{uid}\u200b")["reward"] == 1.0
    bri = {"task": "best_region_identification", "answer": ["NY"], "reward_metric": "exact_match"}
    assert score_answer(bri, "New\u00a0York")["reward"] == 1.0
    assert score_answer(ncr, uid.lower())["reward"] == 0.0  # ids stay case-sensitive
