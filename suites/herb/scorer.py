"""HERB scoring, as pure functions (reference §2.5; upstream ``evaluate.py``, commit 0c126c0).

* Answer text: what follows the last ``</think>``.
* No answer (the shared rule, :func:`pytest_egi.agents.loops.no_answer_reason`: a None,
  empty or whitespace answer, a reply cut off by the token limit, turns run out, the context
  window overflowed) fails the task with the lowest value (F1 0, content 0, abstained 0).
  Deviation: upstream turns a None answer into "I don't know." and so credits it as an
  abstention on unanswerable questions; here only an explicit abstention counts.
* person / url / pr / company: set F1 between the normalised gold and the normalised answer
  entities (normalise = upstream's lowercase, drop punctuation, drop a/an/the, collapse
  spaces, made Unicode-aware by :func:`pytest_egi.normalize.normalize_answer`: NFKC,
  typographic quotes and dashes folded, Unicode punctuation dropped too);
  precision, recall and F1 are 0 when their denominator is 0, so two empty sets score 0 and
  duplicates collapse. Entities come from the structured ``submit`` when given, else from the
  answer text by deterministic extraction (in place of upstream's GPT-4o extractor).
* content: with no judge, 100 × (0.6 × key-fact recall + 0.4 × token F1 against the
  reference) on 0–100 (our deterministic proxy for upstream's 0–100 Likert); with a judge,
  the judge's 0–100 score for our paraphrase of upstream's accuracy/completeness/relevance
  prompt.
* unanswerable: abstained = ``answerable=false`` with no entities, or (text) a recognised
  refusal naming no entity (such as "I don't know."); with a judge, a text answer counts as abstained
  when the judge says it does not address the question even partially (upstream's rule).
  An answer that names entities or states facts is not an abstention (scores 0).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from pytest_egi.agents.loops import blank_answer_reason, is_blank
from pytest_egi.judges import RULES_JUDGE
from pytest_egi.normalize import REFUSAL_RE, fold_text, normalize_answer
from pytest_egi.suite import TaskScore
from suites.herb.env import CUST_RE, EID_RE, find_links, gazetteer

__all__ = [
    "CONTENT_PASS",
    "FACT_WEIGHT",
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

FACT_WEIGHT = 0.6
"""Weight of key-fact recall in the deterministic content score (token F1 gets the rest)."""
CONTENT_PASS = 80.0
"""A content task passes at a score of at least this (0–100); entity tasks need F1 = 1."""

_REFUSALS = REFUSAL_RE
"""The core's refusal phrases (:data:`pytest_egi.normalize.REFUSAL_RE`), shared with every suite."""


def normalize(text: str) -> str:
    """Upstream ``normalize`` (lowercase, strip punctuation, drop a/an/the, squeeze spaces),
    Unicode-aware through :func:`pytest_egi.normalize.normalize_answer`.

    Example: ``normalize("The  PRD’s Link!")`` is ``"prds link"``, as for ``"the prd's link"``.
    """
    return normalize_answer(str(text), punctuation="drop", articles=True)


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

    A ``submit`` dict gives its ``answer``; anything after the last ``</think>`` is kept;
    ``None`` (no answer) gives ``""`` (upstream: "I don't know.", see the module docstring).
    """
    if final_answer is None:
        return ""
    text = final_answer.get("answer") if isinstance(final_answer, dict) else final_answer
    text = "" if text is None else str(text)
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
    """A recognised refusal that names no entity (no ``eid_…``, ``CUST-…`` or link).

    The text is folded first (:func:`pytest_egi.normalize.fold_text`), so ``I don’t know``
    with a typographic apostrophe is a refusal like ``I don't know``.
    """
    text = fold_text(text)
    if EID_RE.search(text) or CUST_RE.search(text) or find_links(text):
        return False
    return bool(_REFUSALS.search(text))


def abstention(final_answer: Any) -> tuple[bool, str]:
    """Did the agent abstain (rules)? Returns ``(abstained, reason)``.

    Abstained: a submission with ``answerable=false`` and no entities; a text (or submission
    with ``answerable=true`` and no entities) that is a recognised refusal. No answer (None,
    blank text, blank submission) is never an abstention.
    """
    if is_blank(final_answer):
        return False, "no answer"
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


def _no_answer_score(data: dict[str, Any], reason: str) -> TaskScore:
    """The score of a trial that ended with no answer: a failure on every kind of question."""
    if not data.get("answerable", True):
        key, expected = "abstained", "abstain: the sources do not answer this question"
    elif data["type"] == "content":
        key, expected = "content", _short(data.get("ground_truth"))
    else:
        key, expected = "f1", sorted(data.get("ground_truth") or [])
    return TaskScore(
        success=False, values={key: 0.0}, expected=expected, got=f"(no answer: {reason})",
        details={"judge": RULES_JUDGE, "no_answer": reason, "abstained": False,
                 "note": "no answer is a failed task, never an abstention"},
    )  # fmt: skip


def score_task(
    data: dict[str, Any],
    final_answer: Any,
    *,
    companies: list[str] | None = None,
    judge: Any = None,
    no_answer: str | None = None,
) -> TaskScore:
    """Score one trial's final answer against one HERB question record.

    Args:
        data: the task's ``Task.data`` (``type``, ``answerable``, ``ground_truth``, ``facts``).
        final_answer: the trajectory's ``final_answer`` (submit dict, text, or None).
        companies: the world's customer company names (text extraction for ``company``).
        judge: None for the rules, or an :class:`~pytest_egi.judges.LLMJudge`.
        no_answer: why the trial ended with no answer
            (:func:`pytest_egi.agents.loops.no_answer_reason` of the trajectory), or None;
            a blank ``final_answer`` is no answer either way.

    Returns:
        ``values`` is ``{"f1": 0–1}`` (person/url/pr/company), ``{"content": 0–100}`` or
        ``{"abstained": 0/1}`` (unanswerable); ``success`` is F1 = 1, content ≥
        ``CONTENT_PASS``, or abstained; ``details["judge"]`` names who graded. No answer
        scores 0 on every kind, with ``details["no_answer"]`` the reason.

    Raises:
        JudgeError: the LLM judge gave no usable verdict (an infra error).
    """
    if no_answer is None:
        no_answer = blank_answer_reason(final_answer)
    if no_answer is not None:
        return _no_answer_score(data, no_answer)
    text = answer_text(final_answer)
    structured = isinstance(final_answer, dict)
    declined = structured and final_answer.get("answerable") is False and not final_answer.get("entities")
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
