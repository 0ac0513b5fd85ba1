"""``google_search.*`` ops: ``google_search.llm_as_a_judge`` (web_search).

Upstream (``mcpuniverse/evaluator/google_search/functions.py``) sends the raw final answer,
the question and the reference answer to an LLM judge, which extracts the final answer and
states ``correct: yes`` or ``correct: no``. Here the same op has two graders:

- **rules** (default, recorded as ``egi/rules``): a deterministic exact-answer judge,
  :func:`exact_answer_verdict`;
- **the LLM judge** given with ``--egi-judge-model`` (``ctx.judge``), asked with our own
  prompt built on upstream's idea (:func:`judge_messages`) and read by :func:`parse_verdict`.

Whoever graded is recorded in ``ctx.notes["judge"]``, and each verdict is appended to
``ctx.notes["judge_verdicts"]`` (``{"judge", "extracted_answer", "verdict"}``; for the LLM judge
``verdict`` is its reply text).

Deviations from upstream (deliberate; upstream's behaviour is defective for scoring):

- upstream passes iff the text after the first ``correct:`` *contains* ``yes`` (so ``no, the
  eyes differ`` passes); here the verdict is the first word on the last ``correct:`` line and
  must be exactly ``yes`` or ``no``.
- upstream scores a judge that gives no verdict (or an API failure) as a failed evaluator
  (``ERROR: ...``); here it raises :class:`~pytest_egi.judges.JudgeError` (an infrastructure
  error: the item errors, nothing is scored).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pytest_egi.judges import RULES_JUDGE, JudgeError
from pytest_egi.normalize import fold_text, normalize_answer
from suites.mcp_universe.scorer.evaluator import EvalContext, EvaluatorSpecError, decode_json, domain_op

__all__ = [
    "exact_answer_verdict",
    "extract_final_answer",
    "judge_messages",
    "llm_as_a_judge",
    "normalize_final_answer",
    "parse_number",
    "parse_verdict",
]

_ANSWER_LINE = re.compile(r"^\s*(?:final\s+)?answer\s*[:=]\s*(.*)$", re.IGNORECASE)
_NUMBER = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")
_VERDICT_LINE = re.compile(r"^\W*correct\W*:\s*\**\s*([A-Za-z]+)", re.IGNORECASE | re.MULTILINE)


def extract_final_answer(response: Any) -> str:
    """The final answer in an agent's response (the rule judge's extraction step).

    In order: a JSON object (fenced or not, as the ``json`` pipeline step reads it) with an
    ``answer`` field gives that field (a string or a number; anything else gives ""); a JSON
    string or number gives itself; otherwise the text after the last line starting
    ``answer:`` / ``final answer:``; otherwise the whole text. Surrounding space is dropped.

    Args:
        response: the final answer text (upstream's ``raw`` pipeline leaf).

    Returns:
        The extracted answer ("" when there is none).
    """
    if response is None:
        return ""
    text = response if isinstance(response, str) else json.dumps(response)
    try:
        data = decode_json(text)
    except (json.JSONDecodeError, TypeError):
        data = None
    else:
        if isinstance(data, dict):
            data = data.get("answer")
            if isinstance(data, bool) or not isinstance(data, (str, int, float)):
                return ""
        if isinstance(data, (str, int, float)) and not isinstance(data, bool):
            return str(data).strip()
    lines = [m.group(1) for m in map(_ANSWER_LINE.match, text.splitlines()) if m]
    return (lines[-1] if lines else text).strip()


def parse_number(text: str) -> float | None:
    """``text`` as a number when it is one: an optional sign, digits with optional
    comma thousands separators (``1,200``), an optional decimal part. Else None.

    ``parse_number("1,200") == parse_number("1200") == 1200.0``; ``parse_number("12 %")`` is
    None (units are not read).
    """
    s = fold_text(text).strip().rstrip(".")
    if not _NUMBER.match(s):
        return None
    value = float(s.replace(",", ""))
    return value if math.isfinite(value) else None


def normalize_final_answer(text: str) -> str:
    """The rule judge's text form: :func:`~pytest_egi.normalize.normalize_answer` with
    punctuation as spaces and the articles a/an/the dropped (``"The Ambry."`` → ``"ambry"``,
    ``"Anne-Marie"`` → ``"anne marie"``)."""
    return normalize_answer(text, punctuation="space", articles=True)


def exact_answer_verdict(response: Any, correct_answer: Any) -> tuple[bool, str, str]:
    """The deterministic exact-answer judge.

    Rule: extract the final answer (:func:`extract_final_answer`); when both it and the
    reference are numbers (:func:`parse_number`), pass iff they are equal as numbers
    (``"1,200"`` = ``"1200"`` = ``"1200.0"``); otherwise pass iff their normalised forms
    (:func:`normalize_final_answer`: Unicode folded, case-folded, punctuation and articles
    ignored) are equal. An empty answer never passes.

    Limits (what the LLM judge would grant and this rule does not): an answer embedded in a
    sentence (``"It was founded in 1932."``), one that buries the right value among wrong ones
    (``"1932 or 1933"``), aliases and abbreviations (``"Dr. I. Varn"``), a number with a unit
    or in words, and small numeric margins.

    Args:
        response: the agent's final answer text.
        correct_answer: the reference answer.

    Returns:
        ``(passed, extracted_answer, reason)``; reason "" when passed.
    """
    extracted = extract_final_answer(response)
    reference = str(correct_answer)
    if not normalize_final_answer(extracted):
        return False, extracted, "no final answer to compare (empty answer)"
    a, b = parse_number(extracted), parse_number(reference)
    if a is not None and b is not None:
        if a == b:
            return True, extracted, ""
        return False, extracted, f"answer {extracted!r} is not the number {reference!r}"
    if normalize_final_answer(extracted) == normalize_final_answer(reference):
        return True, extracted, ""
    return False, extracted, f"answer {extracted!r} does not match the correct answer {reference!r}"


def judge_messages(question: str, response: str, correct_answer: str) -> list[dict[str, str]]:
    """The LLM judge's messages (our wording of upstream's prompt idea: extract the final
    answer, compare it with the reference only, end with ``correct: yes`` or ``correct: no``)."""
    system = "You grade answers to research questions against a reference answer. Be strict and brief."
    user = (
        "A question, an agent's response to it and the reference answer follow.\n\n"
        f"Question: {question}\n\n"
        f"Response: {response}\n\n"
        f"Reference answer: {correct_answer}\n\n"
        "Reply with exactly three lines:\n"
        "extracted_final_answer: the final answer the response commits to, copied from it "
        "(None if it commits to no single final answer)\n"
        "reasoning: one or two sentences on whether the extracted answer and the reference "
        "answer mean the same thing; judge only the match, do not solve the question yourself\n"
        "correct: yes if they match (for a number, equal up to a small rounding difference), no if "
        "they differ in any meaningful way, if the response hedges between answers, or if there is "
        "no final answer"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_verdict(reply: str) -> bool | None:
    """The verdict in a judge's reply: the first word after the **last** ``correct:`` label
    (a line that starts with it, markdown emphasis allowed), True for ``yes``, False for
    ``no``; None when there is no such line or the word is neither (an unusable reply)."""
    found = _VERDICT_LINE.findall(reply or "")
    if not found:
        return None
    return {"yes": True, "no": False}.get(found[-1].lower())


def _record(ctx: EvalContext, judge: str, extracted: str | None, verdict: str) -> None:
    ctx.notes["judge"] = judge
    ctx.notes.setdefault("judge_verdicts", []).append(
        {"judge": judge, "extracted_answer": extracted, "verdict": verdict}
    )


@domain_op("google_search.llm_as_a_judge", kind="dynamic")
def llm_as_a_judge(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> tuple[bool, str]:
    """Is the agent's final answer the task's correct answer? (module docstring).

    Args:
        leaf: the final answer text (``func: raw``).
        value: unused (upstream's tasks give none).
        op_args: ``{"question": str, "correct_answer": str}``.
        ctx: ``ctx.judge`` selects the LLM judge; the verdict goes to ``ctx.notes``.

    Returns:
        ``(passed, reason)``.

    Raises:
        EvaluatorSpecError: ``op_args`` lacks a non-empty ``question`` or ``correct_answer``.
        JudgeError: the LLM judge gave no usable ``correct: yes/no`` verdict.
    """
    if not isinstance(op_args, dict):
        raise EvaluatorSpecError("google_search.llm_as_a_judge needs op_args {question, correct_answer}")
    for key in ("question", "correct_answer"):
        if not str(op_args.get(key) or "").strip():
            raise EvaluatorSpecError(
                f"google_search.llm_as_a_judge: op_args.{key} is missing or empty; give the "
                f"{'question asked' if key == 'question' else 'reference answer'} as a string"
            )
    question, correct = str(op_args["question"]), str(op_args["correct_answer"])
    response = leaf if isinstance(leaf, str) else json.dumps(leaf, ensure_ascii=False)
    judge = ctx.judge
    if judge is None:
        passed, extracted, reason = exact_answer_verdict(response, correct)
        _record(ctx, RULES_JUDGE, extracted, "yes" if passed else "no")
        return passed, reason
    replies: list[str] = []

    def parse(reply: str) -> tuple[bool, str] | None:
        replies.append(reply)
        verdict = parse_verdict(reply)
        return None if verdict is None else (verdict, reply)

    result = judge.ask(judge_messages(question, response, correct), parse)
    if result is None:
        last = replies[-1] if replies else ""
        raise JudgeError(
            f"judge {judge.name} gave no 'correct: yes/no' verdict in {len(replies)} attempt(s); "
            f"last reply: {last[:200]!r}"
        )
    passed, reply = result
    _record(ctx, judge.name, None, reply)
    if passed:
        return True, ""
    return False, f"judge {judge.name}: the answer does not match the correct answer {correct!r}"
