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

Malformed files raise :class:`ValueError` naming the file, the record, the field and the fix;
every message names a file by its full path and starts with it (the core prefixes the suite
name). Records that cannot be right (:class:`~suites.benchforce.env.base.Integrity`: a
dangling reference, a negative count or price, an id that differs from its key) are refused by
:func:`check_integrity` the same way.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suites.benchforce.env.base import (
    TASK_ID,
    Environment,
    Integrity,
    UpstreamData,
    broken_entry,
    copy_world,
    integrity_problems,
)

__all__ = [
    "RESTORE",
    "TableSpec",
    "check_integrity",
    "data_file",
    "entries_file",
    "entry_id_problem",
    "prepare_error",
    "read_entries",
    "read_json",
    "read_tables",
    "read_text",
    "upstream_data",
    "user_block",
]

RESTORE = "restore upstream's copy"
"""The fix every unreadable file shares."""
INTEGRITY_EXAMPLES = 5
"""Problems listed one per line before the rest are counted (``... and N more``)."""


def read_text(path: Path) -> str:
    """The UTF-8 text of one upstream file.

    Raises:
        ValueError: the file is not UTF-8 text, or cannot be read (a folder, no permission);
            the message starts with the file's path and says the fix.
    """
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
            f"fix: save it as UTF-8 or {RESTORE}"
        ) from None
    except OSError as exc:
        raise ValueError(
            f"{path} cannot be read ({exc.strerror or exc}); fix: make it a readable file or {RESTORE}"
        ) from None


def read_json(path: Path) -> Any:
    """One upstream JSON file, parsed.

    Raises:
        ValueError: as :func:`read_text`, or the text is not JSON (line, column and why).
    """
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            f"fix: repair the file or {RESTORE}"
        ) from None


def check_integrity(
    world: dict[str, Any],
    integrity: Integrity,
    file_of: Callable[[str, str], Path | str],
    unchecked: frozenset[str] | set[str] = frozenset(),
) -> None:
    """Refuse a world read from upstream's files that has records which cannot be right
    (:func:`~suites.benchforce.env.base.integrity_problems`), as CRMArena refuses an org export
    failing its integrity check.

    Args:
        file_of: ``(table, record key) -> the file holding that record``.
        unchecked: tables whose file is absent (references into them are not checked).

    Raises:
        ValueError: ``"the upstream files fail the integrity check (N problems):"`` then one
            line per problem (at most :data:`INTEGRITY_EXAMPLES`): ``<file>: record '<key>':
            field '<field>' <problem>; fix: <fix>``, then ``... and M more`` when there are more.
    """
    problems = integrity_problems(world, integrity, unchecked)
    if not problems:
        return
    lines = [
        f"{file_of(p.table, p.record)}: record {p.record!r}: field {p.field!r} {p.problem}; fix: {p.fix}"
        for p in problems[:INTEGRITY_EXAMPLES]
    ]
    if len(problems) > INTEGRITY_EXAMPLES:
        lines.append(f"... and {len(problems) - INTEGRITY_EXAMPLES} more")
    count = f"{len(problems)} problem" + ("s" if len(problems) > 1 else "")
    raise ValueError(f"the upstream files fail the integrity check ({count}):\n  " + "\n  ".join(lines))


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
    where = f"{path}: record {key!r}"
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
            state = "is missing" if name not in record else "is null"
            raise ValueError(f"{where}: field {name!r} {state}; fix: give every {table} record its {name!r}")
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


def data_file(env_dir: Path, table: str) -> Path:
    """Where upstream keeps ``table`` for the environment in ``env_dir``: ``data/<table>.json``."""
    return Path(env_dir) / "data" / f"{table}.json"


def read_tables(env_dir: Path, specs: Mapping[str, TableSpec]) -> dict[str, dict[str, dict[str, Any]]]:
    """Every table of ``specs`` from ``env_dir/data/<table>.json``, converted to our shape.

    A file holds either an object ``{id: record}`` (hospital's tables, orders) or a list of
    records each carrying its id field (order_management's customers).

    Raises:
        FileNotFoundError: a table's file is absent (the message names it).
        ValueError: a file is not UTF-8 JSON, not an object or list of objects, repeats an id,
            or a record lacks a required field or holds a value of the wrong type (file,
            record, field and fix named).
    """
    world: dict[str, dict[str, dict[str, Any]]] = {}
    for table, spec in specs.items():
        path = data_file(env_dir, table)
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} is missing; upstream keeps the {table} table there (data/{table}.json); "
                f"fix: {RESTORE}"
            )
        raw = read_json(path)
        rows: dict[str, dict[str, Any]] = {}
        if isinstance(raw, dict):
            for key, record in raw.items():
                rows[key] = _convert(path, table, spec, key, record)
        elif isinstance(raw, list):
            for i, record in enumerate(raw):
                key = record.get(spec.key) if isinstance(record, dict) else None
                if not isinstance(key, str) or not key:
                    raise ValueError(
                        f"{path}: record {i + 1}: field {spec.key!r} is missing or not a string; "
                        f"fix: give every {table} record its {spec.key!r}"
                    )
                if key in rows:
                    raise ValueError(
                        f"{path}: record {i + 1}: field {spec.key!r} repeats {key!r}; fix: make ids unique"
                    )
                rows[key] = _convert(path, table, spec, key, record)
        else:
            raise ValueError(
                f"{path} holds {type(raw).__name__}; fix: an object keyed by {spec.key} or a list of records"
            )
        world[table] = rows
    return world


def _entries_literal(path: Path) -> Any:
    try:
        tree = ast.parse(read_text(path), filename=str(path))
    except SyntaxError as exc:
        raise ValueError(
            f"{path} is not valid Python ({exc.msg}, line {exc.lineno}); fix: repair it"
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
                    f"{path}: field 'entries' is not a plain literal ({exc}); "
                    "fix: write the entries "
                    "as a list of dicts of strings, numbers and lists, without names or calls"
                ) from None
    raise ValueError(f"{path} has no 'entries = [...]' assignment; fix: define the entries list at top level")


def entries_file(env_dir: Path) -> Path | None:
    """The file :func:`read_entries` reads in ``env_dir``: ``entries.py``, else
    ``entries_dump.json``, else None."""
    for name in ("entries.py", "entries_dump.json"):
        if (Path(env_dir) / name).is_file():
            return Path(env_dir) / name
    return None


def read_entries(env_dir: Path) -> list[dict[str, Any]]:
    """Upstream's entries for the environment in ``env_dir``: ``entries.py`` (its top-level
    ``entries = [...]`` read with :func:`ast.literal_eval`, never imported or run), else
    ``entries_dump.json`` (a list, or an object with an ``entries`` list), else ``[]`` (the
    data alone, a world with nothing to run).

    Each entry keeps its own fields and gets ``entry_num`` (its 1-based place in the file) when
    it has none, as upstream numbers them when it loads an environment. Each entry stands
    alone: one that is not an object, has no usable ``id`` (a string of letters, digits and
    ``_ . : -``) or repeats one is kept as a :func:`~suites.benchforce.env.base.broken_entry`
    whose ``load_error`` names the file, the entry and the fix; its item errors, the others run.

    Raises:
        ValueError: the file cannot be read as such a list (file and fix named).
    """
    path = entries_file(env_dir)
    if path is None:
        return []
    if path.name == "entries.py":
        raw = _entries_literal(path)
    else:
        raw = read_json(path)
        if isinstance(raw, dict) and isinstance(raw.get("entries"), list):
            raw = raw["entries"]
    if not isinstance(raw, list):
        raise ValueError(
            f"{path}: field 'entries' is {type(raw).__name__}, not a list; fix: a list of entries"
        )
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        problem = entry_id_problem(entry, seen)
        if problem is not None:
            eid = entry.get("id") if isinstance(entry, dict) else None
            out.append(broken_entry(i, eid, f"{path}: entry {i + 1}{problem}", seen))
        else:
            out.append({**entry, "entry_num": entry.get("entry_num") or i + 1})
        seen.add(out[-1]["id"])
    return out


def entry_id_problem(entry: Any, seen: set[str]) -> str | None:
    """What keeps ``entry`` from standing as an entry of its own (``" is list; fix: ..."``,
    ``": field 'id' repeats 'x'; fix: ..."``, to follow ``<file>: entry <i>``), or None."""
    if not isinstance(entry, dict):
        return f" is {type(entry).__name__}; fix: make each entry a dict"
    eid = entry.get("id")
    if not isinstance(eid, str) or not eid:
        return ": field 'id' is missing or not a string; fix: give it an id"
    if not TASK_ID.match(eid):
        return f": field 'id' is {eid!r}; fix: use only letters, digits and _ . : - in an entry id"
    if eid in seen:
        return f": field 'id' repeats {eid!r}; fix: make entry ids unique"
    return None


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
    from suites.benchforce.env.base import dry_run

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
    source: Path | str | None = None,
) -> UpstreamData:
    """:class:`UpstreamData` for ``env``: each entry with its :func:`user_block` (an entry's
    own ``user`` block is kept), the ones whose gold cannot be dry-run on ``world`` (no
    actions, an unknown tool, a ``*`` wildcard, a call the tools refuse) in ``unrunnable``
    with the reason, and in ``errors`` the ones that could not be read (a ``load_error`` from
    :func:`read_entries`) or whose preparation raised, each named with ``source`` (the entries
    file) and its id: one entry's fault never stops the others."""
    out, unrunnable, errors = [], {}, {}
    for entry in entries:
        entry = {**entry}
        if entry.get("load_error"):
            errors[entry["id"]] = str(entry["load_error"])
            out.append(entry)
            continue
        try:
            entry.setdefault("user", user_block(entry, slots, instruction_facts))
            why = _why_unrunnable(env, world, entry)
        except Exception as exc:  # a fault of ours or an entry shape nobody foresaw: this entry only
            errors[entry["id"]] = prepare_error(source, entry, exc)
            entry.setdefault("actions", [])
            out.append(entry)
            continue
        if why is not None:
            unrunnable[entry["id"]] = why
        entry.setdefault("actions", [])
        out.append(entry)
    return UpstreamData(world=world, entries=out, unrunnable=unrunnable, errors=errors)


def prepare_error(source: Path | str | None, entry: Mapping[str, Any], exc: BaseException) -> str:
    """``<file>: entry '<id>' (entry_num N) could not be prepared: <Type>: <message>; fix: ...``:
    one upstream entry whose preparation raised, named by file and entry."""
    where = f"{source}: " if source is not None else ""
    return (
        f"{where}entry {entry.get('id')!r} (entry_num {entry.get('entry_num')}) could not be "
        f"prepared: {type(exc).__name__}: {exc}; fix: correct this entry or {RESTORE}"
    )
