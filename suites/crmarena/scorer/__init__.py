"""CRMArena scoring: the original rules, with the answer read by rules or by the judge model.

Source: CRMArena ``Evaluator.evaluate`` (env.py), reference §1.6.

``exact_match`` (every task type but KQA):
  1. if the gold has one item and the submitted text, stripped and with surrounding quotes
     removed, equals it exactly, the reward is 1 (no extraction, as upstream);
  2. otherwise the answer's entities are extracted (:mod:`suites.crmarena.scorer.extract`): by the
     deterministic reader (``egi/rules``, the default) or, with ``--egi-judge-model``, by the
     judge model as upstream does with gpt-4o. The result is the entities the reply gives as
     its answer (ids with the task's key prefix, state codes for BRI, month names for MTA),
     ``["None"]`` when it says there is none ("No policy was violated in this case."), or
     ``[]`` when it gives no answer ("I don't know.");
  3. reward = 1 iff sorted(extracted) == sorted(gold), with a null gold read as ``"None"``.
  Deviations: repeated mentions of the same entity count once (an LLM extractor returns a
  set in practice); the answer is folded first (:func:`pytest_egi.normalize.fold_text`:
  NFKC, typographic quotes and dashes to ASCII, whitespace collapsed, line breaks kept for the
  reader; case kept, ids are case-sensitive).

No answer (the shared rule, :func:`pytest_egi.agents.loops.no_answer_reason`: a None, empty or
whitespace answer, a reply cut off by the token limit, turns run out, the context window
overflowed) scores 0 on every task type and never matches a None gold (the upstream extractor
answers "None" when it finds nothing, which rewards saying nothing); nor does a reply that
gives no answer in words ("I don't know."): only a reply that says there is none answers None.

``fuzzy_match`` (KQA): token F1 of the answer against ``gold[0]`` after the original
normalisation (``_`` to space, lower case, every punctuation character including ‘ ’ ´ ` to
space, drop a/an/the, collapse spaces), made Unicode-aware by
:func:`pytest_egi.normalize.normalize_answer` (NFKC, typographic marks folded, Unicode
punctuation too); EM likewise. The whole reply is compared (no extraction, as upstream). The
item passes at F1 >= 0.5 (upstream marks no fuzzy task as passed; a pass/fail verdict is ours).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pytest_egi.agents.loops import blank_answer_reason
from pytest_egi.normalize import fold_text, normalize_answer
from suites.crmarena.env.sftime import MONTH_NAMES
from suites.crmarena.scorer.extract import ANSWER_PREFIX, US_STATES, Extraction, llm_extract, rule_extract

__all__ = [
    "ANSWER_PREFIX",
    "EXACT",
    "KQA_PASS_F1",
    "MONTHS",
    "US_STATES",
    "extract_entities",
    "fuzzy_scores",
    "normalize_text",
    "score_answer",
]

KQA_PASS_F1 = 0.5
"""A KQA item passes at token F1 >= this (0-1)."""

EXACT = "exact"
"""``details["extractor"]`` when step 1 (exact match) decided and nothing was extracted."""

MONTHS = MONTH_NAMES


def extract_entities(task_type: str, answer: str) -> list[str]:
    """The deterministic reader's answer list (:func:`suites.crmarena.scorer.extract.rule_extract`):
    the entities the reply gives as its answer, ``["None"]`` when it says there is none, ``[]``
    when it gives no answer."""
    return rule_extract(task_type, answer).answers


def normalize_text(text: str) -> str:
    """KQA normalisation (CRMArena fuzzy_match, reference §1.6), Unicode-aware: punctuation
    (``_`` included) to space, casefold, drop a/an/the, collapse spaces; see
    :func:`pytest_egi.normalize.normalize_answer`.

    Example: ``normalize_text("The customer_id’s  A-B!")`` is ``"customer id s b"``.
    """
    return normalize_answer(text, punctuation="space", articles=True)


def fuzzy_scores(answer: str, gold: str) -> dict[str, float]:
    """Token-multiset F1 and exact match after :func:`normalize_text`, both 0-1."""
    pred, ref = normalize_text(answer).split(), normalize_text(gold).split()
    em = float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return {"f1": 0.0, "em": em}
    precision, recall = common / len(pred), common / len(ref)
    return {"f1": 2 * precision * recall / (precision + recall), "em": em}


def _strip_quotes(text: str) -> str:
    text = text.strip()
    while len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        text = text[1:-1].strip()
    return text


def score_answer(
    record: dict[str, Any], answer: Any, *, no_answer: str | None = None, judge: Any = None
) -> dict[str, Any]:
    """Score a submitted answer against a task record in the original schema.

    Args:
        record: ``{"task", "answer" (gold list, null for None), "reward_metric", ...}``.
        answer: the submitted answer (text; None when nothing was submitted).
        no_answer: why the trial ended with no answer (the trajectory's
            :func:`~pytest_egi.agents.loops.no_answer_reason`), or None; a blank ``answer``
            is no answer either way.
        judge: None to read the answer with the rules (``egi/rules``), or an
            :class:`~pytest_egi.judges.LLMJudge` (``--egi-judge-model``) to extract it as
            upstream does; KQA and an exact match never call it.

    Returns:
        ``{"reward": 0-1, "success": bool, "extracted": list | None, "em": 0-1 (KQA only)}``;
        for exact_match also ``"extractor"`` (``"exact"`` when step 1 matched, else
        ``"egi/rules"`` or the judge's name) and ``"extraction_rule"`` (the reader's step, see
        :class:`~suites.crmarena.scorer.extract.Extraction`); plus ``"no_answer": reason`` when
        there was no answer (reward 0, never a match).

    Raises:
        JudgeError: the judge gave no usable extraction (an infra error, not a wrong answer).
        ProviderError: the judge's provider failed.
    """
    gold = ["None" if g is None else str(g) for g in record["answer"]]
    fuzzy = record["reward_metric"] == "fuzzy_match"
    if not fuzzy and record["reward_metric"] != "exact_match":
        raise ValueError(f"unsupported reward_metric {record['reward_metric']!r}")
    if no_answer is None:
        no_answer = blank_answer_reason(answer)
    if no_answer is not None:
        failed: dict[str, Any] = {"reward": 0.0, "success": False, "extracted": None if fuzzy else []}
        return failed | ({"em": 0.0} if fuzzy else {"extractor": None}) | {"no_answer": no_answer}
    text = fold_text(str(answer))
    if fuzzy:
        scores = fuzzy_scores(text, gold[0])
        return {
            "reward": scores["f1"],
            "em": scores["em"],
            "success": scores["f1"] >= KQA_PASS_F1,
            "extracted": None,
        }
    if len(gold) == 1 and _strip_quotes(text) == fold_text(gold[0]):
        return {
            "reward": 1.0, "success": True, "extracted": [gold[0]],
            "extractor": EXACT, "extraction_rule": "exact match",
        }  # fmt: skip
    reading: Extraction = (
        rule_extract(record["task"], str(answer))
        if judge is None
        else llm_extract(judge, record["task"], str(answer))
    )
    ok = bool(reading.answers) and sorted(reading.answers) == sorted(gold)
    return {
        "reward": float(ok), "success": ok, "extracted": reading.answers,
        "extractor": reading.extractor, "extraction_rule": reading.rule,
    }  # fmt: skip
