"""Why a trial failed, in one vocabulary shared by every suite (record field ``failure_kind``).

Each suite's scorer sets :attr:`pytest_egi.suite.TaskScore.failure_kind` on a failed trial
from what it already compares (an exact match, a tool-call matcher, a state diff, a policy
check); the core checks it against :data:`FAILURE_KINDS` (:func:`checked_failure_kind`) and
writes it into the record. A passed trial has none (null); an errored one has none either (an
error is infrastructure, never a failure kind).

How the episode ended comes first (:func:`ending_kind`): a trial that ended with no answer
(the shared rule :func:`pytest_egi.agents.loops.no_answer_reason`) failed as ``turn_limit``
when its turn budget ran out and as ``no_answer`` otherwise (a blank reply, a reply cut off by
the token limit, the context window overflowed); a final answer that only declines ("I don't
know.", :func:`pytest_egi.normalize.is_refusal`) failed as ``gave_up``, in every suite, unless
the suite's own rule credits that abstention (HERB's unanswerable questions: then it passed).
Only a trial that gave an answer is judged by the suite's comparison (wrong answer, wrong
tool, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "FAILURE_KINDS",
    "TURN_LIMIT_TERMINATIONS",
    "FailureKindError",
    "checked_failure_kind",
    "ending_kind",
]

FAILURE_KINDS: dict[str, str] = {
    "wrong_answer": "the final answer differs from the ground truth (a failed exact match, an F1 or "
    "content score below the pass mark, a failed evaluator or hidden test)",
    "wrong_tool": "a call named another tool than the ground truth's at that step",
    "wrong_argument": "the ground truth's tools were called, with arguments that differ from it",
    "missing_call": "a call the ground truth needs was never made",
    "extra_call": "a call the ground truth does not have was made",
    "state_differs": "the environment's final state (records, files, a repository) differs from "
    "the expected one",
    "policy_violated": "an action the task's policy forbids was run",
    "no_answer": "the episode ended without an answer: a blank reply, a reply cut off by the token "
    "limit, or the context window overflowed",
    "turn_limit": "the episode's turn (or wall-clock) budget ran out before it ended",
    "gave_up": "the final answer only declines (\"I don't know.\", answerable=false) where an "
    "answer was due",
}
"""failure kind -> its one-line definition; the only values ``failure_kind`` may take."""

TURN_LIMIT_TERMINATIONS = frozenset({"max_turns"})
"""Trajectory terminations (:data:`pytest_egi.agents.loops.Termination`) whose trial, having no
answer, failed as ``turn_limit``; any other no-answer ending is ``no_answer``."""


class FailureKindError(ValueError):
    """A suite's score carries a failure kind the core cannot record: not one of
    :data:`FAILURE_KINDS`, or one on a passed trial. A fault of the suite: the item errors with
    this message (naming the suite and the allowed kinds)."""


def _allowed() -> str:
    return ", ".join(FAILURE_KINDS)


def checked_failure_kind(
    suite: str, success: bool, kind: Any, trajectory: Mapping[str, Any] | None = None
) -> str | None:
    """The ``failure_kind`` to record for a trial ``suite`` scored.

    Args:
        suite: the suite's name (named in the message).
        success: the score's ``success``.
        kind: the score's ``failure_kind``.
        trajectory: the stored trajectory, for a failed trial whose suite gave no kind.

    Returns:
        None for a passed trial; ``kind`` for a failed one; for a failed one whose suite gave
        none (a suite written before the field), how its episode ended
        (:func:`ending_kind`), else ``wrong_answer``.

    Raises:
        FailureKindError: ``kind`` is not one of :data:`FAILURE_KINDS`, or is set on a passed
            trial. E.g. ``suite 'toy' gave failure_kind 'timeout', which is not a failure kind;
            allowed: wrong_answer, wrong_tool, wrong_argument, missing_call, extra_call,
            state_differs, policy_violated, no_answer, turn_limit, gave_up``.
    """
    if success:
        if kind is not None:
            raise FailureKindError(
                f"suite {suite!r} gave failure_kind {kind!r} on a passed trial; a passed trial has "
                "none (set TaskScore.failure_kind only when success is False)")
        return None
    if kind is None:
        return (ending_kind(trajectory) if trajectory is not None else None) or "wrong_answer"
    if not isinstance(kind, str) or kind not in FAILURE_KINDS:
        raise FailureKindError(
            f"suite {suite!r} gave failure_kind {kind!r}, which is not a failure kind; allowed: "
            f"{_allowed()}")
    return kind


def ending_kind(trajectory: Mapping[str, Any], answer: Any = None) -> str | None:
    """The failure kind a trial has by how its episode ended, or None when it gave an answer.

    ``turn_limit`` when it has no answer (:func:`~pytest_egi.agents.loops.no_answer_reason`)
    and its termination is in :data:`TURN_LIMIT_TERMINATIONS`; ``no_answer`` for any other
    trial without an answer; ``gave_up`` when its answer only declines
    (:func:`~pytest_egi.normalize.is_refusal` of the answer text, or a structured
    ``answerable: false`` naming no entity); None otherwise. A suite calls it first and uses
    its own comparison's kind only when it returns None (and, for ``gave_up``, only where its
    own rule does not credit the abstention).

    Args:
        trajectory: a stored trajectory (``Trajectory.to_dict()`` form).
        answer: the answer text to read, when the suite's answer is not the trajectory's
            ``final_answer`` (None: read ``final_answer``; a mapping's ``answer`` field).
    """
    from pytest_egi.agents.loops import no_answer_reason
    from pytest_egi.normalize import is_refusal

    if no_answer_reason(trajectory) is not None:
        return "turn_limit" if trajectory.get("termination") in TURN_LIMIT_TERMINATIONS else "no_answer"
    final = trajectory.get("final_answer") if answer is None else answer
    if isinstance(final, Mapping):
        if final.get("answerable") is False and not final.get("entities"):
            return "gave_up"
        final = final.get("answer")
    if isinstance(final, str) and is_refusal(final):
        return "gave_up"
    return None
