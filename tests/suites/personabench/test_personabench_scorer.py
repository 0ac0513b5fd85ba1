"""PersonaBench scorer against upstream ``eval.py``, worked by hand on model-style answers."""

from __future__ import annotations

import math

import pytest

from pytest_egi.suite import Task
from suites.personabench import SUITE
from suites.personabench.env import gt_context_ids
from suites.personabench.scorer import category_of, prf, retrieval_scores, word_set, words


def _task(answer, qtype="Basic information", difficulty="easy", outdated=None, gold=None) -> Task:
    data = {
        "q_id": "000000001",
        "question": "q",
        "answer": answer,
        "type": qtype,
        "difficulty": difficulty,
        "outdated_value": outdated,
        "gold_segments": gold or {"x": ["000000000000"]},
    }
    return Task(id="n0.0-000000001", category=f"noise_0.0.{category_of(qtype, difficulty)}", data=data)


def _score(task: Task, answer, retriever="gt-context", retrieved=None):
    traj = {
        "final_answer": answer,
        "termination": "text_answer",
        "finish_reason": "stop",
        "info": {"personabench": {"retriever": retriever, "retrieved_segment_ids": retrieved or []}},
    }
    return SUITE.score(task, traj, None)


def test_normaliser_is_upstreams_on_ascii_and_folds_typographic_marks():
    # upstream: re.sub(r'[^a-zA-Z0-9\s]', '', text).strip().lower().split() -> set
    assert words("Self-Employed, since 2019!") == {"selfemployed", "since", "2019"}
    assert words("  Dr. O'Neil   (MD) ") == {"dr", "oneil", "md"}
    assert words("Kelly’s report — final") == {"kellys", "report", "final"}  # typographic apostrophe dropped
    assert words("café") == {"café"}  # upstream keeps "caf": letters of any script are kept here
    assert word_set(["oolong tea", "cold brew"]) == {"oolong", "tea", "cold", "brew"}
    # a dict item counts through str(): its key words too, as upstream's str(word)
    assert word_set([{"Eye color": "green"}]) == {"eye", "color", "green"}


def test_f1_of_a_model_style_list_answer_worked_by_hand():
    gold = ["oolong tea", "cold brew", "kombucha", "ginger beer", "hot cider"]  # 9 distinct words
    score = _score(_task(gold, "Preference", "hard"), "I'd say oolong tea, kombucha and iced coffee.")
    # prediction words {id, say, oolong, tea, kombucha, and, iced, coffee}: 8; shared {oolong, tea, kombucha}
    assert score.values["precision"] == pytest.approx(3 / 8)
    assert score.values["recall"] == pytest.approx(3 / 9)
    assert score.values["f1"] == pytest.approx(6 / 17)  # 2 * (3/8) * (1/3) / (3/8 + 1/3)
    assert score.success is False


def test_dict_items_and_empty_sets():
    gold = [{"Eye color": "green"}, {"Hair color": "auburn"}]  # {eye, color, green, hair, auburn}
    score = _score(_task(gold), "Green eyes and auburn hair")  # {green, eyes, and, auburn, hair}
    assert score.values["f1"] == pytest.approx(0.6)  # P = R = 3/5
    assert prf(set(), {"a"}) == (0.0, 0.0, 0.0) and prf({"a"}, set()) == (0.0, 0.0, 0.0)


def test_integer_answer_is_scored_against_its_own_digits():
    """Upstream skipped int answers (``pass``): the age question kept the previous question's
    gold words (or raised NameError when first), so "50 years old" scored against them."""
    score = _score(_task(50), "50 years old")
    assert score.values["precision"] == pytest.approx(1 / 3) and score.values["recall"] == 1.0
    assert score.values["f1"] == pytest.approx(0.5)
    assert _score(_task(50), "50").success is True


def test_social_hard_is_its_own_category():
    """Upstream forced difficulty 'easy' for every type but Preference (Social hard -> Social_easy)."""
    assert category_of("Social", "hard") == "Social_hard"
    assert category_of("Social", "easy") == "Social_easy"
    assert category_of("Basic information", "easy") == "Basic_information_easy"
    assert category_of("Preference", "hard") == "Preference_hard"
    records = [
        {"category": "noise_0.0.Social_hard", "values": {"f1": 0.5, "precision": 0.5, "recall": 0.5}},
        {"category": "noise_0.0.Social_easy", "values": {"f1": 1.0, "precision": 1.0, "recall": 1.0}},
    ]
    out = SUITE.summarize(records)
    assert out["noise_0.0.Social_hard.f1"] == 0.5 and out["noise_0.0.Social_easy.f1"] == 1.0
    assert out["noise_0.0.Overall.f1"] == 0.75


def test_outdated_recall():
    task = _task(["green tea", "espresso"], "Preference", "hard", outdated=["matcha latte"])
    assert _score(task, "green tea, matcha").values["outdated_recall"] == pytest.approx(0.5)
    assert _score(task, "green tea, espresso").values["outdated_recall"] == 0.0
    assert _score(_task("x"), "x").values["outdated_recall"] is None


def test_recall_and_ndcg_take_the_max_over_alternatives():
    gold = {"a": ["s1", "s2"], "b": ["s3"]}
    retrieved = ["s9", "s2", "s3", "s7", "s1"]
    # {s1, s3}: hits at 2 and 4 -> (1/log2 4 + 1/log2 6) / (1 + 1/log2 3) = 0.5438
    # {s2, s3}: hits at 1 and 2 -> (1/log2 3 + 1/log2 4) / (1 + 1/log2 3) = 0.6934 (the max)
    recall, ndcg = retrieval_scores(retrieved, gold)
    assert recall == 1.0
    assert ndcg == pytest.approx((1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3)))
    # four combinations; the best recall and the best NDCG
    recall, ndcg = retrieval_scores(["s4", "x1", "x2", "x3", "s1"], {"a": ["s1", "s2"], "b": ["s3", "s4"]})
    assert recall == 1.0  # {s1, s4}
    assert ndcg == pytest.approx((1 + 1 / math.log2(6)) / (1 + 1 / math.log2(3)))  # {s1, s4}: 0.8503
    assert retrieval_scores(["x"] * 5, gold) == (0.0, 0.0)
    score = _score(_task("x", gold=gold), "x", retriever="bm25", retrieved=retrieved)
    assert score.values["ndcg"] == pytest.approx(0.693426, abs=1e-6)
    assert _score(_task("x", gold=gold), "x").values["ndcg"] is None  # gt-context is not scored


def test_gt_context_pads_by_repeating_and_refuses_more_than_k():
    assert gt_context_ids({"a": ["s1", "s2"], "b": ["s3"]}, 5) == ["s1", "s3", "s1", "s3", "s1"]
    assert gt_context_ids({"a": ["s1"]}, 5) == ["s1"] * 5
    with pytest.raises(ValueError, match="find 6 ground truth, which is larger than 5"):
        gt_context_ids({str(i): [f"s{i}"] for i in range(6)}, 5)


def test_no_answer_scores_zero_and_is_not_an_answer():
    traj = {"final_answer": None, "termination": "text_answer", "info": {}}
    score = SUITE.score(_task("Portwell"), traj, None)
    assert score.values["f1"] == 0.0 and score.got == "no answer: empty reply (None)"


def test_summarize_rounds_means_to_three_decimals_as_upstream():
    records = [
        {"category": "noise_0.7.Preference_hard", "values": {"f1": f, "precision": f, "recall": f}}
        for f in (1.0, 0.0, 0.0)
    ]
    out = SUITE.summarize(records)
    assert out["noise_0.7.Preference_hard.f1"] == 0.333
    assert out["noise_0.7.Preference_hard.n"] == 3.0


def _sums(records):
    cols = SUITE.summary_columns(records)
    return cols.finish({name: sum(row[j] for row in cols.values) for j, name in enumerate(cols.names)})


def test_summary_columns_give_summarize_from_column_sums():
    """The bootstrap's fast path (no ``summarize`` per resample): the same keys and values as
    ``summarize``, by hand: Preference_hard f1 (2/3 + 0) / 2 = 0.333, its retrieval recall
    only over the record that has one, the level's Overall over both categories, the outdated
    recall only where the question had an outdated value, a foreign category left out."""
    records = [
        {"category": "noise_0.3.Preference_hard", "values": {
            "f1": 2 / 3, "precision": 0.5, "recall": 1.0, "retrieval_recall": 0.25, "ndcg": 0.5,
            "outdated_recall": 1.0, "bm25_fallback": 1.0}},
        {"category": "noise_0.3.Preference_hard", "values": {
            "f1": 0.0, "precision": 0.0, "recall": 0.0, "retrieval_recall": None, "ndcg": None,
            "outdated_recall": None, "bm25_fallback": 0.0}},
        {"category": "noise_0.3.Social_easy", "values": {
            "f1": 1.0, "precision": 1.0, "recall": 1.0, "retrieval_recall": None, "ndcg": None,
            "outdated_recall": 0.5, "bm25_fallback": 0.0}},
        {"category": "elsewhere", "values": {"f1": 1.0, "precision": 1.0, "recall": 1.0}},
    ]
    got = _sums(records)
    assert got == SUITE.summarize(records)
    assert got["noise_0.3.Preference_hard.f1"] == 0.333
    assert got["noise_0.3.Preference_hard.retrieval_recall"] == 0.25
    assert got["noise_0.3.Social_easy.retrieval_recall"] is None
    assert got["noise_0.3.Overall.f1"] == 0.556  # (2/3 + 0 + 1) / 3
    assert got["noise_0.3.Overall.retrieval_recall"] == 0.25
    assert got["noise_0.3.outdated_information.recall"] == 0.75
    assert got["noise_0.3.Preference_hard.n"] == 2.0 and got["bm25_fallback_trials"] == 1.0
    assert not any(key.startswith("noise_0.0") for key in got)  # a category with no record is left out
