"""Reading upstream Benchforce's files for one environment (``src/environments/<env>/``).

Upstream keeps each environment's data as ``data/<table>.json`` (an object keyed by id, or a
list of records) and its entries as a Python literal ``entries = [...]`` in ``entries.py``
(hospital, order_management) or as JSON in ``entries_dump.json`` (hr_software). This module
reads them without importing or executing anything (``ast.literal_eval`` of the one
assignment), converts every table explicitly into our shape (``{table: {id: record}}``, each
record holding exactly the fields its :class:`TableSpec` names), and turns each entry into one
the suite can run: numbered (``entry_num``), with the ``user`` block the deterministic caller
plays derived from the gold arguments (and, where the environment says so, from the
instructions), and set aside in ``unrunnable`` with the reason when its gold actions cannot be
dry-run on the files' world.

Malformed files raise :class:`ValueError` naming the file, the record, the field and the fix.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suites.benchforce.envs.base import Environment, UpstreamData, copy_world

__all__ = ["TableSpec", "read_entries", "read_tables", "upstream_data", "user_block"]

_JSON_TYPES: dict[type, str] = {str: "a string", float: "a number", bool: "true or false", int: "an integer"}


@dataclass(frozen=True)
class TableSpec:
    """How one upstream table maps to ours.

    Attributes:
        key: the id field (``patient_id``); a record without it gets it from its key, and a
            record whose id differs from its key is an error.
        required: fields every record must have, not null.
        optional: fields kept when present (null when absent).
        types: field -> the Python type its JSON value must have (``float`` accepts integers
            too); fields not named here may hold any JSON scalar. The key is always a string.
        defaults: field -> the value an absent optional field takes (else None).
    """

    key: str
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    types: Mapping[str, type] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)


def _type_ok(value: Any, want: type) -> bool:
    if want is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if want is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, want)


def _convert(path: Path, table: str, spec: TableSpec, key: str, record: Any) -> dict[str, Any]:
    where = f"benchforce: {path}: record {key!r}"
    if not isinstance(record, dict):
        raise ValueError(
            f"{where} is {type(record).__name__}, not an object; fix: make each {table} record a JSON object"
        )
    rid = record.get(spec.key, key)
    if rid != key:
        raise ValueError(
            f"{where}: field {spec.key!r} is {rid!r} but the record is stored under {key!r}; "
            "fix: make them equal"
        )
    out: dict[str, Any] = {spec.key: key}
    for name in spec.required:
        if record.get(name) is None:
            raise ValueError(
                f"{where}: field {name!r} is missing or null; fix: give every {table} record a {name!r}"
            )
    for name in (*spec.required, *spec.optional):
        value = record.get(name, spec.defaults.get(name))
        want = spec.types.get(name, str if name in spec.required else None)
        if value is not None and want is not None and not _type_ok(value, want):
            kind = _JSON_TYPES.get(want, want.__name__)
            raise ValueError(
                f"{where}: field {name!r} is {json.dumps(value)}, not {kind}; fix: write it as {kind}"
            )
        out[name] = value
    return out


def read_tables(env_dir: Path, specs: Mapping[str, TableSpec]) -> dict[str, dict[str, dict[str, Any]]]:
    """Every table of ``specs`` from ``env_dir/data/<table>.json``, converted to our shape.

    A file holds either an object ``{id: record}`` (hospital's tables, orders) or a list of
    records each carrying its id field (order_management's customers).

    Raises:
        FileNotFoundError: a table's file is absent (the message names it).
        ValueError: a file is not JSON, not an object or list of objects, repeats an id, or a
            record lacks a required field or holds a value of the wrong type (file, record,
            field and fix named).
    """
    world: dict[str, dict[str, dict[str, Any]]] = {}
    for table, spec in specs.items():
        path = Path(env_dir) / "data" / f"{table}.json"
        if not path.is_file():
            raise FileNotFoundError(
                f"benchforce: {path} is missing; upstream keeps the {table} table there (data/{table}.json)"
            )
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(
                f"benchforce: {path} is not valid JSON ({exc}); fix: repair or restore the file"
            ) from None
        rows: dict[str, dict[str, Any]] = {}
        if isinstance(raw, dict):
            for key, record in raw.items():
                rows[key] = _convert(path, table, spec, key, record)
        elif isinstance(raw, list):
            for i, record in enumerate(raw):
                key = record.get(spec.key) if isinstance(record, dict) else None
                if not isinstance(key, str) or not key:
                    raise ValueError(
                        f"benchforce: {path}: record {i}: field {spec.key!r} is missing or not a string; "
                        f"fix: give every {table} record its {spec.key!r}"
                    )
                if key in rows:
                    raise ValueError(
                        f"benchforce: {path}: record {i}: field {spec.key!r} repeats {key!r}; "
                        "fix: make ids unique"
                    )
                rows[key] = _convert(path, table, spec, key, record)
        else:
            raise ValueError(
                f"benchforce: {path} holds {type(raw).__name__}; "
                f"fix: an object keyed by {spec.key} or a list of records"
            )
        world[table] = rows
    return world


def _entries_literal(path: Path) -> Any:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise ValueError(
            f"benchforce: {path} is not valid Python ({exc.msg}, line {exc.lineno}); fix: repair it"
        ) from None
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "entries" for t in targets) and node.value is not None:
            try:
                return ast.literal_eval(node.value)
            except (ValueError, SyntaxError, TypeError) as exc:
                raise ValueError(
                    f"benchforce: {path}: field 'entries' is not a plain literal ({exc}); "
                    "fix: write the entries "
                    "as a list of dicts of strings, numbers and lists, without names or calls"
                ) from None
    raise ValueError(
        f"benchforce: {path} has no 'entries = [...]' assignment; fix: define the entries list at top level"
    )


def read_entries(env_dir: Path) -> list[dict[str, Any]]:
    """Upstream's entries for the environment in ``env_dir``: ``entries.py`` (its top-level
    ``entries = [...]`` read with :func:`ast.literal_eval`, never imported or run), else
    ``entries_dump.json`` (a list, or an object with an ``entries`` list), else ``[]`` (the
    data alone, a world with nothing to run).

    Each entry keeps its own fields and gets ``entry_num`` (its 1-based place in the file) when
    it has none, as upstream numbers them when it loads an environment.

    Raises:
        ValueError: the file cannot be read as such a list, an entry is not an object, has no
            string ``id``, or repeats an id (file, entry and fix named).
    """
    env_dir = Path(env_dir)
    py, dump = env_dir / "entries.py", env_dir / "entries_dump.json"
    if py.is_file():
        path, raw = py, _entries_literal(py)
    elif dump.is_file():
        path = dump
        try:
            raw = json.loads(dump.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(
                f"benchforce: {dump} is not valid JSON ({exc}); fix: repair or restore the file"
            ) from None
        if isinstance(raw, dict) and isinstance(raw.get("entries"), list):
            raw = raw["entries"]
    else:
        return []
    if not isinstance(raw, list):
        raise ValueError(
            f"benchforce: {path}: field 'entries' is {type(raw).__name__}, not a list; fix: a list of entries"
        )
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise ValueError(
                f"benchforce: {path}: entry {i} is {type(entry).__name__}; fix: make each entry a dict"
            )
        eid = entry.get("id")
        if not isinstance(eid, str) or not eid:
            raise ValueError(
                f"benchforce: {path}: entry {i}: field 'id' is missing or not a string; fix: give it an id"
            )
        if eid in seen:
            raise ValueError(
                f"benchforce: {path}: entry {i}: field 'id' repeats {eid!r}; fix: make entry ids unique"
            )
        seen.add(eid)
        out.append({**entry, "entry_num": entry.get("entry_num") or i + 1})
    return out


def user_block(
    entry: dict[str, Any], slots: Mapping[str, str], instruction_facts: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The ``user`` block (``goal``, ``facts``) the deterministic caller plays for an upstream
    entry, which has only free-text ``instructions``.

    ``goal`` names the gold actions in order, in words ("track order and update shipping
    address."). ``facts`` maps each gold argument named in ``slots`` (argument -> the caller's
    slot) to its value, and each ``instruction_facts`` slot to the first group of its regex in
    the instructions; a slot given two different values holds both ("A and B"); ``*``
    wildcards give nothing.
    """
    facts: dict[str, str] = {}

    def add(slot: str, value: Any) -> None:
        text = str(value).strip()
        if not text or text == "*":
            return
        have = facts.get(slot)
        if have is None:
            facts[slot] = text
        elif text not in have.split(" and "):
            facts[slot] = f"{have} and {text}"

    instructions = str(entry.get("instructions") or "")
    for slot, pattern in (instruction_facts or {}).items():
        match = re.search(pattern, instructions)
        if match:
            add(slot, match.group(1))
    phrases: list[str] = []
    for action in entry.get("actions") or []:
        if not isinstance(action, dict):
            continue
        phrase = str(action.get("name") or "").replace("_", " ").strip()
        if phrase and phrase not in phrases:
            phrases.append(phrase)
        for arg, value in (action.get("arguments") or {}).items():
            if arg in slots and not isinstance(value, (dict, list)):
                add(slots[arg], value)
    goal = (
        ", ".join(phrases[:-1]) + " and " + phrases[-1] if len(phrases) > 1 else "".join(phrases)
    ) or "get help"
    return {"goal": goal + ".", "facts": facts}


def _why_unrunnable(env: Environment, world: dict[str, Any], entry: dict[str, Any]) -> str | None:
    from suites.benchforce.scorer import dry_run

    actions = entry.get("actions")
    if not isinstance(actions, list) or not actions:
        return "it has no gold actions"
    for i, action in enumerate(actions):
        if not isinstance(action, dict) or not isinstance(action.get("arguments", {}), dict):
            return f"action {i} is not an object with an 'arguments' object"
    try:
        dry_run(env, copy_world(world), actions)
    except ValueError as exc:
        return f"its gold actions cannot run on these files: {exc}"
    return None


def upstream_data(
    env: Environment,
    world: dict[str, Any],
    entries: list[dict[str, Any]],
    slots: Mapping[str, str],
    instruction_facts: Mapping[str, str] | None = None,
) -> UpstreamData:
    """:class:`UpstreamData` for ``env``: each entry with its :func:`user_block` (an entry's
    own ``user`` block is kept), and the ones whose gold cannot be dry-run on ``world`` (no
    actions, an unknown tool, a ``*`` wildcard, a call the tools refuse) in ``unrunnable``
    with the reason."""
    out, unrunnable = [], {}
    for entry in entries:
        entry = {**entry}
        entry.setdefault("user", user_block(entry, slots, instruction_facts))
        why = _why_unrunnable(env, world, entry)
        if why is not None:
            unrunnable[entry["id"]] = why
        entry.setdefault("actions", [])
        out.append(entry)
    return UpstreamData(world=world, entries=out, unrunnable=unrunnable)
