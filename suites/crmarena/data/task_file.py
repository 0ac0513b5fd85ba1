"""Loading a user's CRMArena task file (original record schema, reference §1.2).

Two kinds of problem, kept apart (DESIGN §9.3, issue 22):

- **the whole file** (:func:`read_entries`): missing, not JSON at all, not a JSON list (nor
  JSONL), or no record in it: a ``ValueError`` naming the file and the fix, a usage error
  (exit 4) for the run;
- **one record** (:func:`validate_record`, :func:`gold_problem`): not an object, a missing or
  mistyped field, an unknown task type, a repeated ``idx``, a JSONL line that is not JSON, a
  gold id absent from the org: a :class:`RecordError` naming the record (or line), the field
  and the fix. The suite turns it into a task that errors alone
  (:func:`pytest_egi.suite.load_each`); the other records run.

:func:`load_task_file` is the strict reader (every problem raises, the first one naming the
file), for callers that want the whole file or nothing.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suites.crmarena.env.sftime import MONTH_NAMES

from .reference import GOLD_OBJECTS, TASK_TYPES

__all__ = [
    "CATEGORIES",
    "GOLD_OBJECTS",
    "RecordError",
    "check_gold",
    "gold_problem",
    "load_task_file",
    "read_entries",
    "sample_per_type",
    "validate_record",
]

CATEGORIES: tuple[str, ...] = tuple(TASK_TYPES.values())
"""The nine ``task`` values of the original org, in paper order."""


class RecordError(ValueError):
    """One record of a task file that cannot be run: ``str()`` names the record (``record 3``
    or ``line 4``), the field, the problem and the fix, not the file (the caller adds it)."""


class _BadLine:
    """A JSONL line that is not JSON: an entry of its own, so it errors alone."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


def read_entries(path: str | Path) -> list[tuple[str, Any]]:
    """The raw entries of a task file, each with where it is (``record <i>``, 0-based, for a
    JSON list; ``line <n>``, 1-based, for JSONL), before any record is checked.

    A JSONL line that is not JSON is an entry of its own (:func:`validate_record` refuses it
    alone); a file none of whose lines is JSON is refused whole.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: a problem of the whole file (not JSON, a JSON value that is not a list, no
            record); the message names the file and the fix.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such task file")
    text = path.read_text(encoding="utf-8")
    is_list = text.lstrip().startswith("[")
    if not is_list and path.suffix.lower() != ".jsonl":
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None  # several JSON objects: read as JSONL
        if whole is not None:
            raise ValueError(
                f"{path}: expected a JSON list of task records, got {type(whole).__name__}. "
                "Fix: wrap the records in [...] or write one record per line (JSONL)."
            )
    if is_list:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}). "
                "Fix: the file must hold a JSON list of task records."
            ) from exc
        return [(f"record {i}", item) for i, item in enumerate(data, start=1)]  # counted from 1
    entries: list[tuple[str, Any]] = []
    parsed = 0
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append((f"line {line_number}", json.loads(line)))
            parsed += 1
        except json.JSONDecodeError as exc:
            entries.append((f"line {line_number}", _BadLine(exc.msg)))
    if entries and not parsed:
        raise ValueError(
            f"{path}: not JSON: no line is a JSON object. "
            "Fix: write one JSON task record per line (JSONL), or a JSON list of records."
        )
    return entries


def load_task_file(path: str | Path) -> list[dict]:
    """Read tasks in the original CRMArena format from a JSON list or a JSONL file, strictly.

    Each record needs ``idx`` (int, unique), ``task`` (one of `CATEGORIES`), ``query``
    (non-empty str), ``answer`` (non-empty list of str or null), ``reward_metric``
    (``exact_match`` or ``fuzzy_match``) and ``metadata`` (object with str ``required`` and
    optional str ``optional``). Extra keys (e.g. ``persona``) are kept. The suite reads a task
    file record by record instead (:func:`read_entries`, :func:`validate_record`), so one bad
    record errors alone.

    Args:
        path: The file (``.jsonl`` = one JSON object per line; anything else = a JSON list).

    Returns:
        The records, with ``metadata.optional`` defaulted to ``""``.

    Raises:
        FileNotFoundError: When the file does not exist.
        ValueError: For invalid JSON or an invalid record; the message names the file, the record
            index (and line for JSONL), the field and the fix.
    """
    path = Path(path)
    loaded: list[dict] = []
    seen: dict[int, str] = {}
    for where, item in read_entries(path):
        try:
            loaded.append(validate_record(where, item, seen))
        except RecordError as exc:
            raise ValueError(f"{path}: {exc}") from None
    return loaded


def sample_per_type(
    records: list[Any], per_category: int | None, seed: int, key: Callable[[Any], str | None] | None = None
) -> list[Any]:
    """At most ``per_category`` records of each ``task`` value, drawn with ``seed``.

    A type with more records than ``per_category`` keeps a seeded sample: the positions drawn
    by ``random.Random(f"crmarena-task-file/{seed}/{task}").sample(range(n), per_category)``
    among that type's ``n`` records (file order); a type with at most ``per_category``
    records keeps them all. Each type's draw depends only on the seed, the type and how many
    records of it the file holds, so the same file and seed give the same tasks in every run
    and process. The kept records stay in file order.

    Args:
        records: Validated records (:func:`load_task_file`), in file order.
        per_category: Records to keep per type; None keeps all.
        seed: The profile seed (``routing.yaml`` ``modes.<mode>.suites.crmarena.seed``).
        key: record -> its ``task`` value (default: ``record["task"]``); a record whose key
            is None is kept whatever ``per_category`` (a record of no known type, which the
            suite reports as an error of its own).

    Returns:
        The kept records, in file order.
    """
    if not per_category:
        return list(records)
    by_type: dict[str, list[int]] = {}
    kept: set[int] = set()
    for position, record in enumerate(records):
        task = record["task"] if key is None else key(record)
        if task is None:
            kept.add(position)
        else:
            by_type.setdefault(task, []).append(position)
    for task, positions in by_type.items():
        if len(positions) <= per_category:
            kept.update(positions)
            continue
        rng = random.Random(f"crmarena-task-file/{seed}/{task}")
        kept.update(positions[i] for i in rng.sample(range(len(positions)), per_category))
    return [record for position, record in enumerate(records) if position in kept]


def validate_record(where: str, item: Any, seen: dict[int, str]) -> dict:
    """One record of a task file, checked (the schema of :func:`load_task_file`).

    Args:
        where: the record's place (``record 3``, ``line 4``), named in the error.
        item: the parsed record.
        seen: ``idx`` -> where it was first seen, updated (a repeated ``idx`` is refused).

    Returns:
        The record, with ``metadata.optional`` defaulted to ``""``.

    Raises:
        RecordError: ``<where>: field '<field>' <problem>. Fix: <fix>.`` (no file: the caller
            names it).
    """

    def fail(field: str, problem: str, fix: str) -> RecordError:
        return RecordError(f"{where}: field '{field}' {problem}. Fix: {fix}.")

    if isinstance(item, _BadLine):
        raise RecordError(f"{where} is not valid JSON ({item.problem}). Fix: write one JSON object per line.")
    if not isinstance(item, dict):
        raise RecordError(
            f"{where}: expected a JSON object, got {type(item).__name__}. "
            "Fix: each task must be an object with idx, task, query, answer, reward_metric, metadata."
        )
    for field in ("idx", "task", "query", "answer", "reward_metric", "metadata"):
        if field not in item:
            raise fail(field, "is missing", f"add '{field}' (see the CRMArena record schema)")
    idx = item["idx"]
    if not isinstance(idx, int) or isinstance(idx, bool):
        raise fail("idx", f"must be an integer, got {idx!r}", "use a unique integer id")
    if idx in seen:
        raise fail("idx", f"value {idx} is already used by {seen[idx]}", "give every task a unique idx")
    seen[idx] = where
    if item["task"] not in CATEGORIES:
        raise fail("task", f"has unknown value {item['task']!r}", f"use one of {', '.join(CATEGORIES)}")
    if not isinstance(item["query"], str) or not item["query"].strip():
        raise fail("query", "must be a non-empty string", "put the user's request in 'query'")
    answer = item["answer"]
    if not isinstance(answer, list) or not answer or not all(a is None or isinstance(a, str) for a in answer):
        raise fail(
            "answer",
            f"must be a non-empty list of strings or null, got {answer!r}",
            'use e.g. ["005…"] or [null] for "None"',
        )
    if item["reward_metric"] not in ("exact_match", "fuzzy_match"):
        raise fail(
            "reward_metric",
            f"has unknown value {item['reward_metric']!r}",
            "use 'exact_match' (or 'fuzzy_match' for knowledge_qa)",
        )
    metadata = item["metadata"]
    if not isinstance(metadata, dict) or not isinstance(metadata.get("required", None), str):
        raise fail(
            "metadata",
            "must be an object with a string 'required'",
            'use {"required": "Today\'s date: …", "optional": ""}',
        )
    optional = metadata.get("optional", "")
    if optional is None:
        optional = ""
    if not isinstance(optional, str):
        raise fail(
            "metadata.optional", f"must be a string, got {type(optional).__name__}", "use a string or omit it"
        )
    return {**item, "metadata": {**metadata, "required": metadata["required"], "optional": optional}}


def gold_problem(record: dict, org: Any, cache: dict[str, set[str]] | None = None) -> str | None:
    """Why the gold answer of ``record`` (validated) cannot be right on ``org``, or None.

    A non-null gold of an id-answer category (`GOLD_OBJECTS`) must be the Id of a record of
    that object; an MTA gold must be a month name; a BRI gold must be a ShippingState some
    Account of the org has. KQA (free text) and null golds (``"None"``) are not checked.

    Args:
        record: a record checked by :func:`validate_record`.
        org: the `Org` the task runs on.
        cache: SQL -> the values it selects, shared across the records of one file.

    Returns:
        ``field 'answer': '005…' is not the Id of any User record in the org (<source>). Fix:
        …`` (no file and no task: the caller names them), or None.
    """
    task = record["task"]
    obj = GOLD_OBJECTS.get(task)
    cache = {} if cache is None else cache
    for gold in record["answer"]:
        if gold is None:
            continue
        if obj is not None:
            ok = gold in _values(org, f'SELECT "Id" FROM "{obj}"', cache)
            problem = f"is not the Id of any {obj} record in the org ({org.source})"
        elif task == "monthly_trend_analysis":
            ok = gold in MONTH_NAMES
            problem = f"is not a month name ({', '.join(MONTH_NAMES[:2])}, …)"
        elif task == "best_region_identification":
            ok = gold in _values(org, 'SELECT DISTINCT "ShippingState" FROM "Account"', cache)
            problem = f"is not the ShippingState of any Account in the org ({org.source})"
        else:
            continue
        if not ok:
            return (
                f"field 'answer': {gold!r} {problem}. Fix: correct the gold answer, or run the tasks "
                "on the org they were written for (--egi-opt crmarena.org=PATH)."
            )
    return None


def _values(org: Any, sql: str, cache: dict[str, set[str]]) -> set[str]:
    """The non-null values ``sql`` selects on ``org`` (kept in ``cache``)."""
    if sql not in cache:
        cache[sql] = {str(row[0]) for row in org.connection.execute(sql) if row[0] is not None}
    return cache[sql]


def check_gold(path: str | Path, records: list[dict], org: Any, ids: dict[int, str] | None = None) -> None:
    """Refuse, for the whole file, the first gold answer that cannot be right on ``org``
    (:func:`gold_problem`). The suite checks each record alone instead (it errors alone).

    Args:
        path: The task file (named in the error).
        records: Validated records (`load_task_file`).
        org: The `Org` the tasks will run on.
        ids: Optional ``idx`` -> task id (``NCR-0012``) to name in the error.

    Raises:
        ValueError: ``<path>: task idx 12 (NCR-0012), field 'answer': '005…' is not the Id of any
            User record in the org (<source>). Fix: …``.
    """
    cache: dict[str, set[str]] = {}
    for record in records:
        problem = gold_problem(record, org, cache)
        if problem is not None:
            name = f"task idx {record['idx']}" + (f" ({ids[record['idx']]})" if ids else "")
            raise ValueError(f"{path}: {name}, {problem}")
