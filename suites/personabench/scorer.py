"""PersonaBench scoring (upstream ``scripts/evaluation/eval.py``; reference §1.7).

End to end, per question: G = the gold answer's word set, P = the prediction's; a list is the
union of its items' word sets (each item through ``str``, so a dict item such as
``{"Eye color": "green"}`` gives ``eye color green``). Precision |G∩P|/|P|, recall |G∩P|/|G|,
F1 = 2PR/(P+R), each 0 when its denominator is 0. Outdated information: recall of the
``outdated_value`` words in the prediction (lower is better). Retrieval: expand the gold map
into every combination that takes one alternative segment per answer item; for each, Recall@k
= |R∩C|/|C| and NDCG@k = DCG/IDCG with DCG = Σ 1/log2(i+2) over retrieved positions i in C and
IDCG over min(|C|, k) positions; the maximum over combinations of each.

Categories: ``<type>_<difficulty>`` with spaces as ``_`` (``Basic_information_easy``,
``Preference_easy``, ``Preference_hard``, ``Social_easy``, ``Social_hard``); Subjective is not
scored. Means per category are rounded to 3 decimals (``round(mean, 3)``, as upstream).

Fixed upstream defects (README "Differences"):
- an integer answer (the age questions) was skipped by a ``pass`` branch, so the question was
  scored against the previous question's gold words; here it is ``str(answer)``'s words;
- upstream forced the difficulty of every type but Preference to ``easy``, so Social hard
  questions were counted in ``Social_easy``; here they are ``Social_hard``.

Normaliser: upstream deletes every character that is not an ASCII letter, digit or whitespace,
lower-cases and splits on whitespace. Here the text is first folded
(:func:`pytest_egi.normalize.fold_text`: typographic quotes and dashes, NFKC) and letters and
digits of any script are kept; on ASCII text the result is upstream's.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from pytest_egi.normalize import fold_text

__all__ = ["category_of", "prf", "retrieval_scores", "word_set"]


def words(text: str) -> set[str]:
    """Upstream's ``split_into_words`` (Unicode-aware, see the module docstring): the set of
    lower-cased words after deleting every character that is not a letter, digit or space."""
    kept = "".join(ch for ch in fold_text(text) if ch.isalnum() or ch.isspace())
    return set(kept.lower().split())


def word_set(value: Any) -> set[str]:
    """The word set of an answer, prediction or outdated value: a string's words; a list's
    union of ``str(item)`` words; any other value (an int age) its ``str`` form's words (the
    fix of upstream's integer branch)."""
    if isinstance(value, str):
        return words(value)
    if isinstance(value, list):
        return set().union(*(words(str(item)) for item in value)) if value else set()
    if value is None:
        return set()
    return words(str(value))


def prf(gold: set[str], pred: set[str]) -> tuple[float, float, float]:
    """(precision, recall, F1) of word sets, upstream's ``calculate_precision_recall_f1``;
    each is 0 when its denominator is 0."""
    tp = len(gold & pred)
    precision = tp / len(pred) if pred else 0.0
    recall = tp / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


def category_of(qtype: str, difficulty: str) -> str:
    """The score category of a question: ``<type>_<difficulty>``, spaces as ``_``
    (upstream forced ``easy`` for every type but Preference; fixed, see the module
    docstring)."""
    return "_".join(qtype.split(" ") + difficulty.split(" "))


def _recall_ndcg(retrieved: list[str], combination: list[str]) -> tuple[float, float]:
    k = len(retrieved)
    truth = set(combination)
    recall = len(set(retrieved) & truth) / len(truth) if truth else 0.0
    dcg = sum(1 / math.log2(i + 2) for i, sid in enumerate(retrieved) if sid in truth)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(truth), k)))
    return recall, (dcg / idcg if idcg > 0 else 0.0)


def retrieval_scores(retrieved: list[str], gold: dict[str, list[str]]) -> tuple[float, float]:
    """(Recall@k, NDCG@k) of ``retrieved`` (k = its length), each the maximum over every
    combination of one alternative per answer item (upstream's
    ``calculate_retrieval_scores``); (0, 0) for an empty gold map."""
    best_recall = best_ndcg = 0.0
    for combination in itertools.product(*gold.values()):
        recall, ndcg = _recall_ndcg(list(retrieved), list(combination))
        best_recall, best_ndcg = max(best_recall, recall), max(best_ndcg, ndcg)
    return best_recall, best_ndcg
