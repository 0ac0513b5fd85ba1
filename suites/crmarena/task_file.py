"""Loading a user's CRMArena task file (original record schema, reference §1.2).

`load_task_file` validates every record and names file, record (or line), field and fix in its
errors, so a broken file fails at collection with a message the user can act on.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from .reference import GOLD_OBJECTS, TASK_TYPES
from .sftime import MONTH_NAMES

__all__ = ["CATEGORIES", "GOLD_OBJECTS", "check_gold", "load_task_file", "sample_per_type"]

CATEGORIES: tuple[str, ...] = tuple(TASK_TYPES.values())
"""The nine ``task`` values of the original org, in paper order."""


def load_task_file(path: str | Path) -> list[dict]:
    """Read tasks in the original CRMArena format from a JSON list or a JSONL file.

    Each record needs ``idx`` (int, unique), ``task`` (one of `CATEGORIES`), ``query``
    (non-empty str), ``answer`` (non-empty list of str or null), ``reward_metric``
    (``exact_match`` or ``fuzzy_match``) and ``metadata`` (object with str ``required`` and
    optional str ``optional``). Extra keys (e.g. ``persona``) are kept.

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
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such task file")
    text = path.read_text(encoding="utf-8")
    records: list[tuple[str, object]] = []
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
    if not is_list:
        for line_number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((f"line {line_number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f"{path}: line {line_number} is not valid JSON ({exc.msg}). "
                    "Fix: write one JSON object per line."
                ) from exc
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}). "
                "Fix: the file must hold a JSON list of task records."
            ) from exc
        records = [(f"record {i}", item) for i, item in enumerate(data)]
    loaded: list[dict] = []
    seen: dict[int, str] = {}
    for where, item in records:
        loaded.append(_validate(path, where, item, seen))
    return loaded


def sample_per_type(records: list[dict], per_category: int | None, seed: int) -> list[dict]:
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

    Returns:
        The kept records, in file order.
    """
    if not per_category:
        return list(records)
    by_type: dict[str, list[int]] = {}
    for position, record in enumerate(records):
        by_type.setdefault(record["task"], []).append(position)
    kept: set[int] = set()
    for task, positions in by_type.items():
        if len(positions) <= per_category:
            kept.update(positions)
            continue
        rng = random.Random(f"crmarena-task-file/{seed}/{task}")
        kept.update(positions[i] for i in rng.sample(range(len(positions)), per_category))
    return [record for position, record in enumerate(records) if position in kept]


def _validate(path: Path, where: str, item: object, seen: dict[int, str]) -> dict:
    def fail(field: str, problem: str, fix: str) -> ValueError:
        return ValueError(f"{path}: {where}: field '{field}' {problem}. Fix: {fix}.")

    if not isinstance(item, dict):
        raise ValueError(
            f"{path}: {where}: expected a JSON object, got {type(item).__name__}. "
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


def check_gold(path: str | Path, records: list[dict], org, ids: dict[int, str] | None = None) -> None:
    """Refuse gold answers that cannot be right on ``org``.

    A non-null gold of an id-answer category (`GOLD_OBJECTS`) must be the Id of a record of
    that object; an MTA gold must be a month name; a BRI gold must be a ShippingState some
    Account of the org has. KQA (free text) and null golds (``"None"``) are not checked.

    Args:
        path: The task file (named in the error).
        records: Validated records (`load_task_file`).
        org: The `Org` the tasks will run on.
        ids: Optional ``idx`` -> task id (``NCR-0012``) to name in the error.

    Raises:
        ValueError: ``<path>: task idx 12 (NCR-0012), field 'answer': '005…' is not the Id of any
            User record in the org (<source>). Fix: …``.
    """
    known: dict[str, set[str]] = {}

    def values(sql: str) -> set[str]:
        if sql not in known:
            known[sql] = {str(row[0]) for row in org.connection.execute(sql) if row[0] is not None}
        return known[sql]

    for record in records:
        task = record["task"]
        obj = GOLD_OBJECTS.get(task)
        for gold in record["answer"]:
            if gold is None:
                continue
            if obj is not None:
                ok = gold in values(f'SELECT "Id" FROM "{obj}"')
                problem = f"is not the Id of any {obj} record in the org ({org.source})"
            elif task == "monthly_trend_analysis":
                ok = gold in MONTH_NAMES
                problem = f"is not a month name ({', '.join(MONTH_NAMES[:2])}, …)"
            elif task == "best_region_identification":
                ok = gold in values('SELECT DISTINCT "ShippingState" FROM "Account"')
                problem = f"is not the ShippingState of any Account in the org ({org.source})"
            else:
                continue
            if not ok:
                name = f"task idx {record['idx']}" + (f" ({ids[record['idx']]})" if ids else "")
                raise ValueError(
                    f"{path}: {name}, field 'answer': {gold!r} {problem}. Fix: correct the gold "
                    "answer, or run the tasks on the org they were written for "
                    "(--egi-opt crmarena.org=PATH)."
                )
