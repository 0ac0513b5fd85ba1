"""What every Benchforce environment provides, and the state helpers they share.

An environment is a module under :mod:`suites.benchforce.env` exposing one
:class:`Environment`: its name, policy (the agent's system prompt), fixed clock, tools (each a
pure function of the state and its arguments), seeded world builder, the projection of the
state that judging compares, and the entry templates. The server executes the tools (checking
arguments with :func:`schema_problem`); the scorer and the upstream-file readers dry-run gold
actions with the same functions on a copy of the world (:func:`dry_run`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import pickle
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "ENTRY_CLOSING",
    "ENTRY_COUNTS",
    "TASK_ID",
    "EnvToolError",
    "Environment",
    "Integrity",
    "IntegrityProblem",
    "ToolSpec",
    "UpstreamData",
    "apply_call",
    "broken_entry",
    "canonical_json",
    "dry_run",
    "entry_id",
    "gold_call",
    "integrity_problems",
    "make_entry",
    "object_params",
    "placeholder_id",
    "schema_problem",
    "state_hash",
    "string_param",
]


ENTRY_COUNTS: dict[str, int] = {"hospital": 64, "hr_software": 28, "order_management": 1}
"""Entries each environment generates (its module's ``ENTRY_COUNT``; upstream's counts),
in the base so the suite's ``task_index`` tells the ids without importing the environments."""


def entry_id(index: int) -> str:
    """The id of generated entry ``index`` (0-based): ``entry_<index>``, for every seed."""
    return f"entry_{index}"


class EnvToolError(Exception):
    """A tool refused the call for a reason in its input (an unknown patient, a taken slot).

    The server turns it into a ``tool.error`` frame with ``code`` and the message; the agent
    reads ``"Error: <message>"`` and the episode goes on (the model's mistake, scored).

    Args:
        code: short machine-readable reason (``not_found``, ``conflict``, ``invalid_value``).
        message: the text the agent reads.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ToolSpec:
    """One tool of an environment.

    Attributes:
        name: upstream's tool name.
        description: shown to the agent.
        parameters: JSON schema of the arguments (validated by the server before ``fn`` runs).
        fn: ``fn(state, **arguments) -> output`` (a JSON-safe value); it mutates ``state`` in
            place for a write tool and raises :class:`EnvToolError` for a refused call.
        kind: ``read`` (never changes the projection) or ``write`` (changes it when it succeeds
            with a new value; as upstream, re-setting a value already there may succeed and
            change nothing).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    kind: Literal["read", "write"] = "read"

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-tool schema (upstream's ``get_metadata()`` shape)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class UpstreamData:
    """What an environment reads from upstream's repository layout
    (``<data_dir>/src/environments/<env>/``).

    Attributes:
        world: the state built from upstream's data files (same shape as ``build_world``'s).
        entries: upstream's entries in upstream's shape, numbered (``entry_num``, 1-based, in
            file order; hr_software's dump has none, A10.3), each with the ``user`` block the
            deterministic simulator plays (``goal``, ``facts``), derived from the entry.
        unrunnable: entry id -> why it cannot run on these files (a table it needs is absent,
            a gold action the tools refuse, a ``*`` wildcard in a write); such entries are
            skipped with the reason, never scored.
        errors: entry id -> why it could not be read or prepared, naming the entries file and
            the entry (``<file>: entry 3: field 'id' is missing ...``, or the exception that
            preparing it raised); such an entry's item is an error on its own, the others run.
            An entry with no usable id is listed under :func:`placeholder_id`.
    """

    world: dict[str, Any]
    entries: list[dict[str, Any]]
    unrunnable: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


TASK_ID = re.compile(r"^[A-Za-z0-9_.:-]+$")
"""What an entry id may hold to name a test item (the core's task id pattern)."""


def placeholder_id(index: int) -> str:
    """The id an upstream entry gets when its own is missing, repeated or not usable as a
    test id: ``entry_number_<n>``, ``n`` its 1-based place in its file (as error messages
    number entries)."""
    return f"entry_number_{index + 1}"


def broken_entry(index: int, entry_id: Any, message: str, taken: set[str]) -> dict[str, Any]:
    """An upstream entry that cannot be read, kept so its item errors alone with
    ``message`` (``load_error``): its own id when usable and not ``taken``, else
    :func:`placeholder_id`; ``entry_num`` its 1-based place; no gold actions."""
    usable = isinstance(entry_id, str) and TASK_ID.match(entry_id) and entry_id not in taken
    eid = entry_id if usable else placeholder_id(index)
    return {"id": eid, "entry_num": index + 1, "actions": [], "load_error": message}


@dataclass(frozen=True)
class Integrity:
    """What every record of a world must satisfy to be right, whoever made it (our seeded
    world or upstream's files): checked on upstream's files when they load, and by the tests on
    every generated world.

    Attributes:
        keys: table -> its id field; a record's id field, when present, equals its key.
        references: ``(table, field)`` -> the table whose id the field holds (null allowed:
            an optional link such as a lab result's ``doctor_id``).
        non_negative: ``(table, field)`` pairs holding a count, a price or a duration: a
            number below 0 cannot be right (null is left to the readers' type checks).
    """

    keys: dict[str, str] = field(default_factory=dict)
    references: dict[tuple[str, str], str] = field(default_factory=dict)
    non_negative: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class IntegrityProblem:
    """One record that cannot be right: ``table``/``record`` (its key)/``field``, what is
    wrong (``problem``, ``"is 'ORG-9', not the id of any organizations record"``) and the
    ``fix``."""

    table: str
    record: str
    field: str
    problem: str
    fix: str


def integrity_problems(
    world: dict[str, Any], integrity: Integrity, unchecked: frozenset[str] | set[str] = frozenset()
) -> list[IntegrityProblem]:
    """Every :class:`IntegrityProblem` of ``world`` under ``integrity``, in table, record,
    rule order; an empty list means the world can be trusted.

    Args:
        unchecked: tables that were not loaded (upstream keeps them empty when their file is
            absent): references into them are not checked, since nothing can be found there.
    """
    out: list[IntegrityProblem] = []
    for table, key_field in integrity.keys.items():
        for key, record in (world.get(table) or {}).items():
            rid = record.get(key_field, key)
            if rid != key:
                out.append(IntegrityProblem(
                    table, key, key_field, f"is {rid!r} but the record is stored under {key!r}",
                    "make them equal",
                ))  # fmt: skip
    for (table, name), target in integrity.references.items():
        if target in unchecked:
            continue
        known = world.get(target) or {}
        for key, record in (world.get(table) or {}).items():
            value = record.get(name)
            if value is not None and (not isinstance(value, str) or value not in known):
                out.append(IntegrityProblem(
                    table, key, name, f"is {value!r}, not the id of any {target} record",
                    f"correct it, or add the {target} record {value!r}",
                ))  # fmt: skip
    for table, name in integrity.non_negative:
        for key, record in (world.get(table) or {}).items():
            value = record.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
                out.append(IntegrityProblem(
                    table, key, name, f"is {value!r}, below 0", "write a number of 0 or more",
                ))  # fmt: skip
    return out


@dataclass(frozen=True)
class Environment:
    """One Benchforce environment (see the module docstring).

    Attributes:
        name: upstream's environment name (``hospital``).
        policy: the agent's system prompt (our own wording of upstream's policy).
        now: the fixed clock (``YYYY-MM-DD``), part of the policy and used by the tools.
        tools: by name, in upstream's order.
        build_world: ``seed -> state`` (a JSON-safe dict of tables keyed by id).
        projection: ``state -> dict``: the business fields judging compares (explicit, so a
            change elsewhere never counts and a change here always does).
        make_entries: ``(state, seed) -> entries`` in upstream's shape plus our keys (the
            environment's ``ENTRY_COUNT`` of them; ``count=N`` as a keyword draws N).
        user_slots: the facts a caller can be asked for: slot -> ``(pattern, answer)``, a
            regex (matched on the agent's folded, lower-cased question) and the sentence that
            gives the fact (``"My name is {}."``); the deterministic simulator answers from it.
        slot_asks: slot -> how the reference policy asks for it ("your full name"); every key
            is a ``user_slots`` key and the phrase matches that slot's pattern.
        load_upstream: ``env_dir -> UpstreamData`` for upstream's files, or None when the
            environment cannot read them.
        integrity: what every record of a world must satisfy (:class:`Integrity`); upstream's
            files are refused when they break it, and ``build_world`` must never.
    """

    name: str
    policy: str
    now: str
    tools: dict[str, ToolSpec]
    build_world: Callable[[int], dict[str, Any]]
    projection: Callable[[dict[str, Any]], dict[str, Any]]
    make_entries: Callable[[dict[str, Any], int], list[dict[str, Any]]] = field(repr=False)
    user_slots: dict[str, tuple[str, str]] = field(default_factory=dict, repr=False)
    slot_asks: dict[str, str] = field(default_factory=dict, repr=False)
    load_upstream: Callable[[Path], UpstreamData] | None = field(default=None, repr=False)
    integrity: Integrity = field(default_factory=Integrity, repr=False)

    def schemas(self) -> list[dict[str, Any]]:
        """Every tool's OpenAI schema, in order."""
        return [t.schema() for t in self.tools.values()]


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values give equal text whatever the
    key order."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def state_hash(env: Environment, state: dict[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``env.projection(state)``; independent of key
    order, changed by every successful write (tests prove both)."""
    return hashlib.sha256(canonical_json(env.projection(state)).encode("utf-8")).hexdigest()


def apply_call(env: Environment, state: dict[str, Any], name: str, arguments: dict[str, Any]) -> Any:
    """Run one already-validated call on ``state`` (mutated in place) and return its output.

    Raises:
        EnvToolError: the tool refused the call.
        KeyError: no tool ``name`` (callers validate first).
    """
    return env.tools[name].fn(state, **arguments)


def copy_world(state: dict[str, Any]) -> dict[str, Any]:
    """A deep copy (every session and every dry run works on its own).

    Made by a pickle round trip: the world is plain data (dicts, lists, tuples, strings,
    numbers), which pickle copies exactly, shared objects included, as ``copy.deepcopy`` does,
    in about a fifth of the time (each task's gold actions are dry-run on a copy at load)."""
    return pickle.loads(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))


# -- helpers the environments' tool schemas and entry templates share ---------------------------


@functools.lru_cache(maxsize=64)
def _validator(schema_json: str) -> Any:
    from jsonschema.validators import validator_for

    schema = json.loads(schema_json)
    return validator_for(schema)(schema)


def schema_problem(schema: dict[str, Any], arguments: Any) -> str | None:
    """The first way ``arguments`` break ``schema`` (jsonschema's wording, with the path), or
    None when they fit."""
    from jsonschema.exceptions import best_match

    error = best_match(_validator(json.dumps(schema, sort_keys=True)).iter_errors(arguments))
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    return error.message + (f" (at '{where}')" if where else "")


def dry_run(env: Environment, world: dict[str, Any], actions: list[dict[str, Any]]) -> dict[str, Any]:
    """The projection after applying the gold ``actions`` in order to a copy of ``world``.

    A read action with a ``*`` wildcard is skipped (it cannot change the state).

    Raises:
        ValueError: a write action has a ``*`` wildcard, an action names no tool, its
            arguments break the tool's JSON schema (a required one missing, an unknown one, a
            wrong type: the server would refuse the same call from the agent), or the tool
            refuses it (gold that cannot be right; the message names the action and the reason).
    """
    state = copy_world(world)
    for i, action in enumerate(actions):
        name, args = action.get("name"), dict(action.get("arguments") or {})
        if name not in env.tools:
            raise ValueError(f"action {i} names no {env.name} tool: {name!r}")
        if "*" in args.values():
            if env.tools[str(name)].kind == "read":
                continue
            raise ValueError(f"action {i} ({name}) has a '*' wildcard argument, so it cannot be dry-run")
        problem = schema_problem(env.tools[str(name)].parameters, args)
        if problem is not None:
            raise ValueError(f"action {i} ({name}) has arguments the tool's schema refuses: {problem}")
        try:
            apply_call(env, state, str(name), args)
        except EnvToolError as exc:
            raise ValueError(f"action {i} ({name} {args}) is refused by the tool: {exc}") from None
    return env.projection(state)


def string_param(description: str) -> dict[str, Any]:
    """A JSON-schema string property with ``description`` (upstream's tools take strings)."""
    return {"type": "string", "description": description}


def object_params(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    """A tool's ``parameters`` schema: ``required`` and ``optional`` properties, no others."""
    return {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "required": list(required),
        "additionalProperties": False,
    }


def gold_call(name: str, **arguments: Any) -> dict[str, Any]:
    """One gold action in upstream's entry shape: ``{"name", "arguments"}``."""
    return {"name": name, "arguments": arguments}


ENTRY_CLOSING = (
    "Give these details only when asked, confirm the assistant's proposals when they match your "
    "goal, and end the conversation once your goal is met."
)
"""The last sentence of every generated entry's ``instructions``."""


def make_entry(
    intro: str,
    template: str,
    goal: str,
    facts: dict[str, str],
    actions: list[dict[str, Any]],
    outputs: list[str] | None = None,
    *,
    writes: tuple[str, ...],
    closing: str = ENTRY_CLOSING,
) -> dict[str, Any]:
    """A generated entry in upstream's shape (reference A5) plus our keys.

    Args:
        intro: who the caller is calling ("You are calling the hospital.").
        template: the template's name (kept as ``template``).
        goal: what the caller wants, after "You would like to".
        facts: slot -> value, the caller's agenda (``user.facts``; also written into
            ``instructions`` one sentence each).
        actions: the gold calls (``gold_call``), ``case_insensitive_args`` already set.
        outputs: what the agent must say.
        writes: the environment's write tools; every one the gold does not use is forbidden.
        closing: the instructions' last sentence.

    Returns:
        ``{template, instructions, actions, outputs, forbidden_actions, user}``.
    """
    used = {a["name"] for a in actions}
    lines = [f"{intro} You would like to {goal}"]
    lines += [f"Your {k.replace('_', ' ')} is {v}." for k, v in facts.items()]
    lines.append(closing)
    return {
        "template": template,
        "instructions": " ".join(lines),
        "actions": actions,
        "outputs": list(outputs or []),
        "forbidden_actions": [{"name": w} for w in writes if w not in used],
        "user": {"goal": goal, "facts": facts},
    }
