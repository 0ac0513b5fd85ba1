"""HERB scoring, as pure functions (reference §2.5; upstream ``evaluate.py``, commit 0c126c0).

* Answer text: what follows the last ``</think>``; a ``None`` answer is "I don't know.".
* person / url / pr / company: set F1 between the normalised gold and the normalised answer
  entities (normalise = lowercase, drop ASCII punctuation, drop a/an/the, collapse spaces);
  precision, recall and F1 are 0 when their denominator is 0, so two empty sets score 0 and
  duplicates collapse. Entities come from the structured ``submit`` when given, else from the
  answer text by deterministic extraction (in place of upstream's GPT-4o extractor).
* content: with no judge, 100 × (0.6 × key-fact recall + 0.4 × token F1 against the
  reference) on 0–100 (our deterministic proxy for upstream's 0–100 Likert); with a judge,
  the judge's 0–100 score for our paraphrase of upstream's accuracy/completeness/relevance
  prompt.
* unanswerable: abstained = None answer, ``answerable=false`` with no entities, or (text)
  a recognised refusal naming no entity; with a judge, a text answer counts as abstained
  when the judge says it does not address the question even partially (upstream's rule).
  An answer that names entities or states facts is not an abstention (scores 0).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Any

from pytest_egi.judges import RULES_JUDGE
from pytest_egi.suite import TaskScore
from suites.herb.env import CUST_RE, EID_RE, find_links, gazetteer

__all__ = [
    "CONTENT_PASS",
    "FACT_WEIGHT",
    "UNKNOWN",
    "abstention",
    "answer_text",
    "content_rules",
    "extract_entities",
    "fact_recall",
    "is_refusal",
    "normalize",
    "score_task",
    "set_f1",
    "submitted_entities",
    "token_f1",
]

UNKNOWN = "I don't know."
"""What a ``None`` answer is scored as (upstream ``turn_sample_lst2dataset``)."""
FACT_WEIGHT = 0.6
"""Weight of key-fact recall in the deterministic content score (token F1 gets the rest)."""
CONTENT_PASS = 80.0
"""A content task passes at a score of at least this (0–100); entity tasks need F1 = 1."""

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)
_REFUSALS = re.compile(
    r"\b(i\s+(do\s+not|don'?t|cannot|can'?t|could\s*not|couldn'?t|am\s+unable\s+to|was\s+unable"
    r"\s+to)\s+(know|find|answer|determine|locate|identify|tell)"
    r"|(cannot|can'?t|could\s*not|couldn'?t|unable\s+to)\s+(be\s+)?(answer|find|determin|locat"
    r"|identif|found)\w*"
    r"|(is|are|was|were)\s+not\s+(available|mentioned|provided|found|specified|stated|present"
    r"|included)"
    r"|no\s+(information|record|records|mention|data|evidence|details?)\b"
    r"|(does|do)\s+not\s+(contain|provide|mention|include|specify|say)"
    r"|(not|un)\s*answerable|insufficient\s+(information|context|evidence)"
    r"|there\s+(is|are)\s+no\s+(such|matching|relevant))",
    re.IGNORECASE,
)


def normalize(text: str) -> str:
    """Upstream ``normalize``: lowercase, strip ASCII punctuation, drop a/an/the, squeeze spaces.

    Example: ``normalize("The  PRD's Link!")`` is ``"prds link"``.
    """
    text = "".join(ch for ch in str(text).lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def set_f1(gold: list[str], predicted: list[str]) -> float:
    """Set F1 after normalisation (upstream ``f1_score_sets``), 0–1.

    Duplicates collapse; precision/recall/F1 are 0 when their denominator is 0, so two
    empty sets give 0.0.
    """
    g = {normalize(x) for x in gold}
    p = {normalize(x) for x in predicted}
    tp = len(g & p)
    precision = tp / len(p) if p else 0.0
    recall = tp / len(g) if g else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def token_f1(prediction: str, reference: str) -> float:
    """SQuAD-style token F1 of the normalised texts (multiset overlap), 0–1; 0 if either is empty."""
    pred, ref = normalize(prediction).split(), normalize(reference).split()
    common = sum((Counter(pred) & Counter(ref)).values())
    if not pred or not ref or common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def fact_recall(answer: str, facts: list[str]) -> float | None:
    """Share of ``facts`` whose normalised tokens occur contiguously in the answer; None if no facts."""
    if not facts:
        return None
    tokens = normalize(answer).split()
    return sum(_contains(tokens, normalize(f).split()) for f in facts) / len(facts)


def content_rules(answer: str, reference: str, facts: list[str] | None) -> float:
    """Deterministic content score, 0–100: 100·(0.6·fact recall + 0.4·token F1).

    Without key facts (e.g. a loaded corpus) it is 100 · token F1.
    """
    f1 = token_f1(answer, reference)
    recall = fact_recall(answer, facts or [])
    value = 100 * f1 if recall is None else 100 * (FACT_WEIGHT * recall + (1 - FACT_WEIGHT) * f1)
    return round(value, 4)


def answer_text(final_answer: Any) -> str:
    """The answer text as upstream scores it.

    ``None`` becomes "I don't know."; a ``submit`` dict gives its ``answer``; anything after
    the last ``</think>`` is kept.
    """
    if final_answer is None:
        return UNKNOWN
    text = final_answer.get("answer") if isinstance(final_answer, dict) else final_answer
    text = UNKNOWN if text is None else str(text)
    if "</think>" in text:
        text = text.split("</think>")[-1].strip()
    return text


def extract_entities(kind: str, text: str, companies: list[str] | None = None) -> list[str]:
    """Deterministic entity extraction for an answer ``kind`` (stand-in for the LLM extractor).

    person: ``eid_…`` ids; url: every link; pr: links to pull requests (``/pull/<n>``);
    company: names from ``companies`` (whole words, case-insensitive, longest first).
    """
    if kind == "person":
        return list(dict.fromkeys(EID_RE.findall(text)))
    if kind == "url":
        return find_links(text)
    if kind == "pr":
        return [x for x in find_links(text) if re.search(r"/pulls?/\d+", x)]
    if kind == "company":
        pattern = gazetteer(list(companies or []))
        if pattern is None:
            return []
        canon = {c.lower(): c for c in companies or []}
        return list(dict.fromkeys(canon[m.group(1).lower()] for m in pattern.finditer(text)))
    raise ValueError(f"no entity extraction for answer type {kind!r}")


def submitted_entities(kind: str, final_answer: Any, companies: list[str] | None) -> list[str]:
    """The answer's entities: structured ``entities`` (ids/links pulled out of each item when
    present) if any were submitted, else extraction from the answer text."""
    if isinstance(final_answer, dict) and final_answer.get("entities"):
        items = [str(e) for e in final_answer["entities"]]
        if kind == "company":
            return items
        pulled = extract_entities(kind, "\n".join(items))
        return pulled or items
    return extract_entities(kind, answer_text(final_answer), companies)


def is_refusal(text: str) -> bool:
    """A recognised refusal that names no entity (no ``eid_…``, ``CUST-…`` or link)."""
    if EID_RE.search(text) or CUST_RE.search(text) or find_links(text):
        return False
    return bool(_REFUSALS.search(text))


def abstention(final_answer: Any) -> tuple[bool, str]:
    """Did the agent abstain (rules)? Returns ``(abstained, reason)``.

    Abstained: ``None``; a submission with ``answerable=false`` and no entities; a text (or
    submission with ``answerable=true`` and no entities) that is a recognised refusal.
    """
    if final_answer is None:
        return True, "no answer (None)"
    if isinstance(final_answer, dict):
        if final_answer.get("entities"):
            return False, "named entities"
        if final_answer.get("answerable") is False:
            return True, "submitted answerable=false"
    text = answer_text(final_answer)
    if is_refusal(text):
        return True, "refusal phrase"
    return False, "gave an answer"


CONTENT_PROMPT = """You grade an answer to a question about enterprise product data.
Compare the candidate answer with the reference answer. Judge accuracy first, then
completeness and relevance: extra information is fine only when it is correct and on topic,
and every key point of the reference that the candidate leaves out lowers the score.
Score from 0 (wrong or no answer) to 100 (fully matches the reference).

Question: {question}
Reference answer: {reference}
Candidate answer: {candidate}"""
"""Our paraphrase of upstream's Likert prompt (``answer_likert_score``)."""

ADDRESSES_PROMPT = """Decide whether the answer gives information that answers the question,
fully or at least partly. Say "no" when it does not address the question: when it says the
information is missing, unavailable or cannot be found, or stays vague. Say "yes" when it
states facts that answer the question, even if only part of it.

Question: {question}
Answer: {answer}"""
"""Our paraphrase of upstream's unanswerability prompt (``unanswerability_eval``)."""


def _short(value: Any, limit: int = 300) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    return value


def score_task(
    data: dict[str, Any],
    final_answer: Any,
    *,
    companies: list[str] | None = None,
    judge: Any = None,
) -> TaskScore:
    """Score one trial's final answer against one HERB question record.

    Args:
        data: the task's ``Task.data`` (``type``, ``answerable``, ``ground_truth``, ``facts``).
        final_answer: the trajectory's ``final_answer`` (submit dict, text, or None).
        companies: the world's customer company names (text extraction for ``company``).
        judge: None for the rules, or an :class:`~pytest_egi.judges.LLMJudge`.

    Returns:
        ``values`` is ``{"f1": 0–1}`` (person/url/pr/company), ``{"content": 0–100}`` or
        ``{"abstained": 0/1}`` (unanswerable); ``success`` is F1 = 1, content ≥
        ``CONTENT_PASS``, or abstained; ``details["judge"]`` names who graded.

    Raises:
        JudgeError: the LLM judge gave no usable verdict (an infra error).
    """
    text = answer_text(final_answer)
    structured = isinstance(final_answer, dict)
    declined = final_answer is None or (
        structured and final_answer.get("answerable") is False and not final_answer.get("entities")
    )
    question = data.get("question", "")
    if not data.get("answerable", True):
        if declined or judge is None or (structured and final_answer.get("entities")):
            abstained, reason = abstention(final_answer)
            graded = RULES_JUDGE
        else:
            addresses, why = judge.verdict(ADDRESSES_PROMPT.format(question=question, answer=text))
            abstained, reason, graded = not addresses, f"judge: {why}", judge.name
        note = (
            "abstaining is the correct behaviour on an unanswerable question"
            if abstained
            else "answered an unanswerable question (invented support)"
        )
        return TaskScore(
            success=abstained, values={"abstained": float(abstained)},
            expected="abstain: the sources do not answer this question",
            got=_short("answerable=false" if structured and final_answer.get("answerable") is False
                       else text),
            details={"judge": graded, "abstention": reason, "note": note,
                     "intent": data.get("intent"),
                     "perturbation": (data.get("perturbation") or {}).get("kind")},
        )  # fmt: skip
    kind = data["type"]
    gold = data.get("ground_truth")
    if kind == "content":
        if declined:
            value, graded, why = 0.0, RULES_JUDGE, "abstained on an answerable question"
        elif judge is not None:
            score, why = judge.score(CONTENT_PROMPT.format(question=question, reference=gold, candidate=text))
            value, graded = float(score), judge.name
        else:
            value, graded = content_rules(text, str(gold), data.get("facts")), RULES_JUDGE
            why = (
                f"fact recall {fact_recall(text, data.get('facts') or [])}, "
                f"token F1 {token_f1(text, str(gold)):.4f}"
            )
        return TaskScore(
            success=value >= CONTENT_PASS, values={"content": value}, expected=_short(gold),
            got=_short(text), details={"judge": graded, "reason": why, "abstained": declined},
        )  # fmt: skip
    gold_list = list(gold or [])
    entities = [] if declined else submitted_entities(kind, final_answer, companies)
    f1 = set_f1(gold_list, entities)
    return TaskScore(
        success=f1 == 1.0, values={"f1": f1}, expected=sorted(gold_list), got=entities,
        details={"judge": RULES_JUDGE, "abstained": declined,
                 "entities_from": "submit" if structured and final_answer.get("entities")
                 else "text extraction"},
    )  # fmt: skip
