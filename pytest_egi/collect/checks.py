"""Checks on a suite's tasks that need no model: is the data able to tell models apart?

A category where one constant answer (the same text for every task) scores full marks measures
nothing: a model that always gives that answer clears it, and a route fed by it can lift a
bucket over its release floor by accident. :func:`constant_answer_warnings` finds such
categories with the suite's own scorer; a suite exposes it as the optional
``Suite.constant_answer_check(tasks, options)`` (see :mod:`pytest_egi.suite`), and the plugin
shows the warnings in the terminal summary, ``egi.json`` (``data_warnings``) and report.html.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_egi.suite import Task

__all__ = ["constant_answer_warnings", "data_warning_entries", "merge_data_warnings"]

FULL_MARKS_TOLERANCE = 1e-9
"""A per-task score within this of ``full`` counts as full marks (float rounding)."""


def _render(answer: Any, limit: int = 60) -> str:
    text = repr(answer) if isinstance(answer, str) else json.dumps(answer, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _key(answer: Any) -> str:
    return json.dumps(answer, sort_keys=True, default=str)


def constant_answer_warnings(
    tasks: Sequence[Task],
    answers: Callable[[Task], Iterable[Any]],
    score: Callable[[Task, Any], float],
    *,
    full: float = 1.0,
    min_tasks: int = 2,
    exempt: Collection[str] = (),
    render: Callable[[Any], str] = _render,
) -> dict[str, str]:
    """Categories where one constant answer scores full marks on every task.

    For each category with at least ``min_tasks`` tasks (and not in ``exempt``), every distinct
    gold answer of the category (``answers(task)``, deduplicated in first-seen order) is given
    as the answer to every task of the category and scored with ``score``; the category is
    flagged with the first candidate that reaches ``full`` on all of them. A candidate is
    dropped at its first task below ``full``, so the cost is about one score call per
    candidate on data that is not degenerate.

    Args:
        tasks: the suite's tasks (any mix of categories).
        answers: task -> the answers that are right for it, in the form the model submits
            (e.g. ``["None"]``, or a structured submission); JSON-serialisable values.
        score: (task, answer) -> the task's score, with ``full`` as full marks.
        full: full marks on the scale of ``score`` (1.0 for a 0-1 reward).
        min_tasks: categories with fewer tasks are not judged (one task always has a
            constant answer).
        exempt: categories whose gold is constant by design (documented by the suite).
        render: how an answer is shown in the warning.

    Returns:
        category -> one line, e.g. ``"PVI: the answer 'None' scores 1.00 on all 6 tasks"``;
        empty when no category is degenerate. Categories appear in the tasks' order.
    """
    by_category: dict[str, list[Task]] = {}
    for task in tasks:
        by_category.setdefault(task.category, []).append(task)
    flags: dict[str, str] = {}
    for category, members in by_category.items():
        if category in exempt or len(members) < min_tasks:
            continue
        candidates: dict[str, Any] = {}
        for task in members:
            for answer in answers(task):
                candidates.setdefault(_key(answer), answer)
        for answer in candidates.values():
            if all(score(task, answer) >= full - FULL_MARKS_TOLERANCE for task in members):
                flags[category] = (
                    f"{category}: the answer {render(answer)} scores {full:.2f} on all {len(members)} tasks"
                )
                break
    return flags


def data_warning_entries(suite: str, flags: dict[str, str]) -> list[dict[str, str]]:
    """``constant_answer_check`` output as report entries ``{"suite", "category", "warning"}``."""
    return [{"suite": suite, "category": c, "warning": w} for c, w in sorted(flags.items())]


def merge_data_warnings(into: list[dict[str, str]], entries: Iterable[dict[str, str]]) -> None:
    """Add ``entries`` to ``into`` in place, once per (suite, category), sorted by them.

    Every xdist worker reports the warnings of the suites it collected, so the controller sees
    each several times; serial and ``-n`` runs end with the same list.
    """
    seen = {(e["suite"], e["category"]): e for e in into}
    for entry in entries:
        seen.setdefault((entry["suite"], entry["category"]), dict(entry))
    into[:] = [seen[k] for k in sorted(seen)]
