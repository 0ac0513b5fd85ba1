"""CRMArena scoring: the original rules with a deterministic extractor in place of the LLM.

Source: CRMArena ``Evaluator.evaluate`` (env.py), reference §1.6.

``exact_match`` (every task type but KQA):
  1. if the gold has one item and the submitted text, stripped and with surrounding quotes
     removed, equals it exactly, the reward is 1;
  2. otherwise the answer's entities are extracted deterministically (upstream asks
     gpt-4o): 18/15-character ids carrying the task's object key prefix (User ``005`` for
     NCR/HTU/TCU, Product2 ``01t`` for NED, Knowledge ``ka0`` for PVI, Issue ``a1M`` for TII),
     two-letter US states (full names mapped to codes) for BRI, month names for MTA; when no
     entity is found and the answer says ``None`` explicitly, the extraction is ``["None"]``;
  3. reward = 1 iff sorted(extracted) == sorted(gold), with a null gold read as ``"None"``.
  Deviations: repeated mentions of the same entity count once (an LLM extractor returns a
  set in practice); the answer is folded first (:func:`pytest_egi.normalize.fold_text`:
  NFKC, typographic quotes and dashes to ASCII, whitespace collapsed; case kept, ids are
  case-sensitive).

No answer (the shared rule, :func:`pytest_egi.agents.loops.no_answer_reason`: a None, empty or
whitespace answer, a reply cut off by the token limit, turns run out, the context window
overflowed) scores 0 on every task type and never matches a None gold (the upstream extractor
answers "None" when it finds nothing, which rewards saying nothing); only an explicit "None"
answers None.

``fuzzy_match`` (KQA): token F1 of the answer against ``gold[0]`` after the original
normalisation (``_`` to space, lower case, every punctuation character including ‘ ’ ´ ` to
space, drop a/an/the, collapse spaces), made Unicode-aware by
:func:`pytest_egi.normalize.normalize_answer` (NFKC, typographic marks folded, Unicode
punctuation too); EM likewise. The item passes at F1 >= 0.5 (upstream marks no fuzzy task as
passed; a pass/fail verdict is ours).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from pytest_egi.agents.loops import blank_answer_reason
from pytest_egi.normalize import fold_text, normalize_answer
from suites.crmarena.schema import KEY_PREFIXES
from suites.crmarena.sftime import MONTH_NAMES

__all__ = [
    "ANSWER_PREFIX",
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

ANSWER_PREFIX: dict[str, str] = {
    "case_routing": KEY_PREFIXES["User"],
    "handle_time": KEY_PREFIXES["User"],
    "transfer_count": KEY_PREFIXES["User"],
    "named_entity_disambiguation": KEY_PREFIXES["Product2"],
    "policy_violation_identification": KEY_PREFIXES["Knowledge__kav"],
    "top_issue_identification": KEY_PREFIXES["Issue__c"],
}
"""Key prefix of the answer ids, per ``task`` value."""

MONTHS = MONTH_NAMES

US_STATES: dict[str, str] = {
    "Alabama": "AL",
    "Alaska": "AK",
    "Arizona": "AZ",
    "Arkansas": "AR",
    "California": "CA",
    "Colorado": "CO",
    "Connecticut": "CT",
    "Delaware": "DE",
    "Florida": "FL",
    "Georgia": "GA",
    "Hawaii": "HI",
    "Idaho": "ID",
    "Illinois": "IL",
    "Indiana": "IN",
    "Iowa": "IA",
    "Kansas": "KS",
    "Kentucky": "KY",
    "Louisiana": "LA",
    "Maine": "ME",
    "Maryland": "MD",
    "Massachusetts": "MA",
    "Michigan": "MI",
    "Minnesota": "MN",
    "Mississippi": "MS",
    "Missouri": "MO",
    "Montana": "MT",
    "Nebraska": "NE",
    "Nevada": "NV",
    "New Hampshire": "NH",
    "New Jersey": "NJ",
    "New Mexico": "NM",
    "New York": "NY",
    "North Carolina": "NC",
    "North Dakota": "ND",
    "Ohio": "OH",
    "Oklahoma": "OK",
    "Oregon": "OR",
    "Pennsylvania": "PA",
    "Rhode Island": "RI",
    "South Carolina": "SC",
    "South Dakota": "SD",
    "Tennessee": "TN",
    "Texas": "TX",
    "Utah": "UT",
    "Vermont": "VT",
    "Virginia": "VA",
    "Washington": "WA",
    "West Virginia": "WV",
    "Wisconsin": "WI",
    "Wyoming": "WY",
    "District of Columbia": "DC",
}
_STATE_CODES = frozenset(US_STATES.values())
_NONE_RE = re.compile(r"(?<![A-Za-z])none(?![A-Za-z])", re.IGNORECASE)


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def extract_entities(task_type: str, answer: str) -> list[str]:
    """Deterministic stand-in for the LLM extractor (reference §4.2).

    Args:
        task_type: the record's ``task`` value.
        answer: the submitted text.

    Returns:
        The entities named in ``answer`` (deduplicated, in order), ``["None"]`` when none is
        named and the answer says None, else ``[]``.
    """
    if task_type == "best_region_identification":
        names = sorted(US_STATES, key=len, reverse=True)
        found: list[tuple[int, str]] = []
        text = answer
        for name in names:
            for m in re.finditer(rf"\b{re.escape(name)}\b", text, re.IGNORECASE):
                found.append((m.start(), US_STATES[name]))
            text = re.sub(
                rf"\b{re.escape(name)}\b", lambda m: " " * len(m.group(0)), text, flags=re.IGNORECASE
            )
        for m in re.finditer(r"\b[A-Z]{2}\b", text):
            if m.group(0) in _STATE_CODES:
                found.append((m.start(), m.group(0)))
        entities = [code for _, code in sorted(found)]
    elif task_type == "monthly_trend_analysis":
        pattern = r"\b(" + "|".join(MONTHS) + r")\b"
        entities = [m.group(1).capitalize() for m in re.finditer(pattern, answer, re.IGNORECASE)]
    else:
        prefix = ANSWER_PREFIX.get(task_type)
        if prefix is None:
            raise ValueError(f"no answer prefix for task type {task_type!r}")
        entities = re.findall(
            rf"\b({re.escape(prefix)}[A-Za-z0-9]{{15}}|{re.escape(prefix)}[A-Za-z0-9]{{12}})\b", answer
        )
    entities = _dedupe(entities)
    if not entities and _NONE_RE.search(answer):
        return ["None"]
    return entities


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


def score_answer(record: dict[str, Any], answer: Any, *, no_answer: str | None = None) -> dict[str, Any]:
    """Score a submitted answer against a task record in the original schema.

    Args:
        record: ``{"task", "answer" (gold list, null for None), "reward_metric", ...}``.
        answer: the submitted answer (text; None when nothing was submitted).
        no_answer: why the trial ended with no answer (the trajectory's
            :func:`~pytest_egi.agents.loops.no_answer_reason`), or None; a blank ``answer``
            is no answer either way.

    Returns:
        ``{"reward": 0-1, "success": bool, "extracted": list | None, "em": 0-1 (KQA only)}``,
        plus ``"no_answer": reason`` when there was no answer (reward 0, never a match).
    """
    gold = ["None" if g is None else str(g) for g in record["answer"]]
    fuzzy = record["reward_metric"] == "fuzzy_match"
    if not fuzzy and record["reward_metric"] != "exact_match":
        raise ValueError(f"unsupported reward_metric {record['reward_metric']!r}")
    if no_answer is None:
        no_answer = blank_answer_reason(answer)
    if no_answer is not None:
        failed: dict[str, Any] = {"reward": 0.0, "success": False, "extracted": None if fuzzy else []}
        return failed | ({"em": 0.0} if fuzzy else {}) | {"no_answer": no_answer}
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
        return {"reward": 1.0, "success": True, "extracted": [gold[0]]}
    extracted = extract_entities(record["task"], text)
    ok = sorted(extracted) == sorted(gold)
    return {"reward": float(ok), "success": ok, "extracted": extracted}
