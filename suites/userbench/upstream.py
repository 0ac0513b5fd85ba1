"""Loader of upstream UserBench's released parquet rows (``--egi-opt userbench.data_dir=PATH``)
and of the scenario files upstream keeps beside its code (``--egi-opt userbench.scenarios=DIR``).

Layout (upstream's ``data/`` folder, reference §2.2)::

    <data_dir>/<env>_multiturn/<split>.parquet            (multi-choice prompt, the default)
    <data_dir>/<env>_multiturn_onechoice/<split>.parquet  (one-choice prompt)

The folder read follows ``userbench.one_choice`` (the prompts differ in one bullet: the
one-choice system message says one recommendation per aspect); ``userbench.data_split`` picks
the file (``test`` by default, upstream's evaluation split; the test files came later than the
train files, reference §2.9 item 1). Each row has ``prompt`` (the system message and the
user's first message) and ``reward_model`` ``{ground_truth, id, env_name, style}``:
``ground_truth`` is the text of a Python list of the best option ids (``"['H11', 'F3']"``),
``id`` names the aspects and their preference counts (``flight:2-37|hotel:2-9`` =
aspect:count-index, joined by ``|``), ``env_name`` is the gym (``TravelGym``) and ``style``
``rule``.

What the rows lack: the hidden preferences (texts, implicit statements), the search arguments
and the option database. Upstream's environment looks them up by ``id`` in per-environment
JSON scenario files, ``travelgym/data/travelgym_data_<digits>.json`` (UserRL's
``travel_multiturn_w_tool.py`` built the parquet rows from them). With
``userbench.scenarios=DIR`` they are read from ``DIR/travelgym_data_<digits>.json``: a JSON
object mapping each scenario id to ``{scenario, dimensions, wanted_num, initial_description,
<aspect>: {preferences, options: {correct, wrong, noise}, arguments, best_id, correct_ids}}``
(:func:`scenario_task`), and the row becomes a runnable task. Without ``scenarios`` no search
can return an option and no user simulator has a preference to reveal, so a loaded task is
**not runnable**: it carries ``not_runnable`` (the reason), its item is skipped with that
reason, and the suite's data warning says so per environment. What loads then is what the
rows hold: the id, the environment, the aspects and their preference counts, the user's first
message, upstream's system message and the best id per aspect.

One row never takes the others down (issue 22). A row that is malformed (a bad field, a
repeated id, a malformed scenario; any other exception while reading one row or its scenario)
gives a task record whose ``load_error`` names the row, the field and the fix: the suite makes
it a task that errors alone (``Task.load_error``, the file and the task named first). A row
the suite cannot run on the given files (no ``scenarios``, no scenario file for its
environment, its scenario id absent from the file) carries ``not_runnable``, the reason: the
suite makes it a task that is skipped with it (``Task.cannot_run``). What concerns a whole
file (a missing or unreadable parquet file, a missing column, a scenario file that is not one
JSON object, a ``scenarios`` folder that does not exist) is a usage error naming the file and
the fix.

Task ids: upstream's ``|`` is not allowed in :attr:`pytest_egi.suite.Task.id`, so the id is
upstream's with ``|`` replaced by ``.`` (``flight:2-37.hotel:2-9``); the original stays in
``upstream_id``. A row whose id cannot be read (or repeats an earlier row's) is
``<env>.row<index>``.
"""

from __future__ import annotations

import ast
import json
import random
import re
from pathlib import Path
from typing import Any

from suites.userbench.catalogue import ASPECT_OF_LETTER, ASPECTS, ID_LETTER
from suites.userbench.data import env_digits

__all__ = [
    "NOT_RUNNABLE",
    "RowError",
    "SCENARIO_FILE",
    "load_upstream_tasks",
    "scenario_file",
    "scenario_task",
    "upstream_file",
    "upstream_task_id",
]

NOT_RUNNABLE = (
    "upstream's parquet rows hold only the prompt and the best option ids; the hidden preferences, "
    "search arguments and option database are in upstream's scenario files "
    "(travelgym/data/travelgym_data_<digits>.json), which the parquet data does not include and this "
    "suite reads only with --egi-opt userbench.scenarios=DIR, so neither the rule simulator nor an LLM "
    "simulator can run the task"
)
"""Why a task loaded from upstream's parquet rows is skipped."""
FIX = "fix: point userbench.data_dir at upstream's data folder (<env>_multiturn[_onechoice]/<split>.parquet)"
SCENARIO_FILE = "travelgym_data_{digits}.json"
"""Upstream's scenario file of one environment (``travelgym/data/``), ``digits`` = ``22`` ... ``2222``."""
SCENARIO_FIX = ("fix: point userbench.scenarios at upstream's travelgym/data folder, whose "
                "travelgym_data_<digits>.json map each scenario id to its scenario")  # fmt: skip
_POOLS = ("correct", "wrong", "noise")
_ASPECT_ID = re.compile(r"^([a-z_]+):([1-9])-(\d+)$")
_OPTION_ID = re.compile(r"^[ACFHR]\d+$")


def upstream_task_id(upstream_id: str) -> str:
    """Upstream's task id made to fit ``Task.id`` (``|`` -> ``.``)."""
    return upstream_id.replace("|", ".")


def upstream_file(data_dir: Path, env: str, one_choice: bool, split: str) -> Path:
    """``<data_dir>/<env>_multiturn[_onechoice]/<split>.parquet``.

    Raises:
        ValueError: the file does not exist (the message lists the splits that do).
    """
    folder = Path(data_dir) / f"{env}_multiturn{'_onechoice' if one_choice else ''}"
    path = folder / f"{split}.parquet"
    if not path.is_file():
        present = sorted(p.stem for p in folder.glob("*.parquet")) if folder.is_dir() else []
        hint = (
            f"this folder has the split(s) {present}: pass --egi-opt userbench.data_split={present[0]}"
            if present
            else FIX
        )
        raise ValueError(f"userbench: no upstream data file {path}; {hint}")
    return path


def _read_rows(path: Path) -> list[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:  # a pinned dependency; say how to get it all the same
        raise ValueError(
            f"userbench: reading {path} needs pyarrow (pip install pyarrow==26.0.1): {exc}"
        ) from exc
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow's ArrowInvalid / OSError: not a parquet file
        raise ValueError(f"userbench: cannot read {path} as parquet ({exc}); {FIX}") from exc
    missing = [c for c in ("prompt", "reward_model") if c not in table.column_names]
    if missing:
        raise ValueError(
            f"userbench: {path}: missing column(s) {missing} (upstream's rows have prompt and "
            f"reward_model{{ground_truth, id, env_name, style}}; found {table.column_names}); {FIX}"
        )
    return table.select(["prompt", "reward_model"]).to_pylist()


class RowError(ValueError):
    """One malformed row (or scenario): ``str()`` names the field, the problem and the fix;
    the record's ``load_error`` adds the row, the item's error the file and the task."""


def _row_task(path: Path, index: int, row: dict[str, Any], env: str) -> dict[str, Any]:
    def bad(field: str, problem: str) -> RowError:
        return RowError(f"field {field}: {problem}; {FIX}")

    rm = row.get("reward_model")
    if not isinstance(rm, dict):
        raise bad("reward_model", f"expected a struct {{ground_truth, id, env_name, style}}, got {rm!r}")
    for key in ("ground_truth", "id"):
        if not isinstance(rm.get(key), str) or not rm[key].strip():
            raise bad(f"reward_model.{key}", f"missing or not a string ({rm.get(key)!r})")
    upstream_id = rm["id"]
    aspects: list[str] = []
    counts: dict[str, int] = {}
    for part in upstream_id.split("|"):
        m = _ASPECT_ID.match(part)
        if not m or m.group(1) not in ASPECTS or m.group(1) in counts:
            raise bad("reward_model.id", f"{upstream_id!r}: expected distinct '<aspect>:<count>-<index>' "
                      f"parts joined by '|', aspects among {list(ASPECTS)}")  # fmt: skip
        aspects.append(m.group(1))
        counts[m.group(1)] = int(m.group(2))
    if sorted(counts.values()) != sorted(env_digits(env)):
        raise bad("reward_model.id", f"{upstream_id!r} has preference counts {list(counts.values())}, "
                  f"which do not fit the environment {env} of the file's folder")  # fmt: skip
    try:
        gold = ast.literal_eval(rm["ground_truth"])
    except (ValueError, SyntaxError) as exc:
        raise bad("reward_model.ground_truth", f"{rm['ground_truth']!r} is not a Python list literal "
                  f"({exc.__class__.__name__})") from exc  # fmt: skip
    if not isinstance(gold, list) or not all(isinstance(g, str) and _OPTION_ID.match(g) for g in gold):
        raise bad("reward_model.ground_truth", f"{rm['ground_truth']!r}: expected a list of option ids "
                  "matching ^[ACFHR]\\d+$")  # fmt: skip
    best = {ASPECT_OF_LETTER[g[0]]: g for g in gold}
    if len(best) != len(gold) or set(best) != set(aspects):
        raise bad("reward_model.ground_truth", f"{gold} must name one best id per aspect of the id "
                  f"{upstream_id!r} ({', '.join(ID_LETTER[a] for a in aspects)})")  # fmt: skip
    prompt = row.get("prompt")
    roles = {m.get("role"): m.get("content") for m in prompt or [] if isinstance(m, dict)}
    if not isinstance(roles.get("user"), str) or not roles["user"].strip():
        raise bad("prompt", "expected a list of {role, content} messages with the user's first message")
    return {
        "id": upstream_task_id(upstream_id),
        "env": env,
        "upstream_id": upstream_id,
        "dimensions": aspects,
        "preference_counts": counts,
        "initial_description": roles["user"],
        "system_prompt": roles.get("system"),
        "best_id": {a: best[a] for a in aspects},
        "preferences": [],
        "options": {},
        "arguments": {},
        "source": {"file": str(path), "row": index, "env_name": rm.get("env_name"), "style": rm.get("style")},
        "not_runnable": NOT_RUNNABLE,
    }


def _unrunnable_row(path: Path, index: int, row: Any, env: str, reason: str) -> dict[str, Any]:
    """The record of a row that cannot be read: id ``<env>.row<index>``, ``load_error``
    ``row <index>: <reason>``."""
    rm = row.get("reward_model") if isinstance(row, dict) else None
    raw_id = rm.get("id") if isinstance(rm, dict) else None
    return {
        "id": f"{env}.row{index}",
        "env": env,
        "upstream_id": raw_id if isinstance(raw_id, str) else None,
        "dimensions": [],
        "preferences": [],
        "options": {},
        "arguments": {},
        "best_id": {},
        "source": {"file": str(path), "row": index,
                   "env_name": rm.get("env_name") if isinstance(rm, dict) else None,
                   "style": rm.get("style") if isinstance(rm, dict) else None},  # fmt: skip
        "load_error": f"row {index}: {reason}",
    }


def scenario_file(scenarios: Path, env: str) -> tuple[Path, dict[str, Any] | None]:
    """``(path, its scenarios)`` of ``env`` in the ``scenarios`` folder; None when the folder has
    no such file (each row of the environment is then skipped with that reason).

    Raises:
        ValueError: the folder does not exist, or the file is not one JSON object (names the
            file and the fix).
    """
    folder = Path(scenarios).expanduser()
    if not folder.is_dir():
        raise ValueError(f"userbench: scenarios folder {folder} does not exist; {SCENARIO_FIX}")
    path = folder / SCENARIO_FILE.format(digits=env.removeprefix("travel"))
    if not path.is_file():
        return path, None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"userbench: {path}: not valid JSON ({exc}); {SCENARIO_FIX}") from None
    if not isinstance(data, dict):
        raise ValueError(f"userbench: {path}: expected one JSON object mapping scenario ids to scenarios, "
                         f"got a {type(data).__name__}; {SCENARIO_FIX}")  # fmt: skip
    return path, data


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def scenario_task(task: dict[str, Any], entry: Any, path: Path, seed: int) -> dict[str, Any]:
    """A runnable task: the row's record ``task`` with its scenario ``entry`` from ``path``.

    ``entry`` (upstream's shape, reference §2.3): ``scenario`` (one line), ``dimensions`` (the
    row id's aspects), ``wanted_num`` (optional: the environment's digits),
    ``initial_description``, and per aspect ``preferences`` (lists ``[aspect, subcategory,
    preference, implicit statement, ...]``, as many as the row id's count), ``options``
    ``{correct, wrong, noise}`` (lists of options, each with an ``id`` of the aspect's
    letter; ``type`` and ``reason`` are dropped before they are shown), ``arguments`` (the
    ground-truth search arguments), and optionally ``best_id`` (must be the row's) and
    ``correct_ids`` (default: the ``correct`` pool's ids).

    The record gains ``scenario``, ``arguments``, ``preferences`` (``P1, P2, ...`` across the
    aspects in ``dimensions`` order, each with ``aspect``, ``subcategory``, ``preference``,
    ``implicit_statement`` and upstream's ``label``), ``options`` (every pool, shuffled by
    ``random.Random("<seed>|<env>|<scenario id>|<aspect>")``, not by upstream's global numpy
    state, reference §2.9 item 6), ``correct_ids``, ``option_kinds`` (each id's pool) and
    ``scenario_file``; it loses ``not_runnable``. The first user message stays the row's (what
    upstream's harness sends).

    Raises:
        RowError: a field missing or malformed, or not matching the row (names it and the fix).
    """

    def bad(field: str, problem: str) -> RowError:
        return RowError(f"{path}: scenario {task['upstream_id']!r}: field {field}: {problem}; {SCENARIO_FIX}")

    if not isinstance(entry, dict):
        raise bad("(the scenario)", f"expected a JSON object, got a {type(entry).__name__}")
    for key in ("scenario", "initial_description"):
        if not _text(entry.get(key)):
            raise bad(key, f"missing or not a non-empty string ({entry.get(key)!r})")
    dims = entry.get("dimensions")
    if not (isinstance(dims, list) and sorted(map(str, dims)) == sorted(task["dimensions"])
            and len(set(dims)) == len(dims)):  # fmt: skip
        raise bad("dimensions", f"{dims!r} does not list the aspects of the row's id {task['upstream_id']!r}")
    digits = task["env"].removeprefix("travel")
    if "wanted_num" in entry and str(entry["wanted_num"]) != digits:
        raise bad("wanted_num", f"{entry['wanted_num']!r} is not the environment's {digits!r}")
    rng_key = f"{seed}|{task['env']}|{task['upstream_id']}"
    preferences: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {}
    options: dict[str, list[dict[str, Any]]] = {}
    correct_ids: dict[str, list[str]] = {}
    kinds: dict[str, dict[str, dict[str, str]]] = {}
    for aspect in dims:
        block = entry.get(aspect)
        if not isinstance(block, dict):
            raise bad(aspect, f"expected an object {{preferences, options, arguments, ...}}, got {block!r}")
        prefs = block.get("preferences")
        if not isinstance(prefs, list) or len(prefs) != task["preference_counts"][aspect]:
            raise bad(f"{aspect}.preferences", f"expected a list of {task['preference_counts'][aspect]} "
                      f"preference(s), the row id's count, got {prefs!r}")  # fmt: skip
        for i, pref in enumerate(prefs):
            if not (isinstance(pref, list) and len(pref) >= 4 and all(_text(x) for x in pref[:4])):
                raise bad(f"{aspect}.preferences[{i}]", "expected [aspect, subcategory, preference, implicit "
                          f"statement, ...] (four non-empty strings first), got {pref!r}")  # fmt: skip
            preferences.append({"id": f"P{len(preferences) + 1}", "aspect": aspect,
                                "subcategory": pref[1], "preference": pref[2],
                                "implicit_statement": pref[3], "label": pref[0]})  # fmt: skip
        args = block.get("arguments")
        if not isinstance(args, dict) or not args:
            raise bad(f"{aspect}.arguments", f"expected a non-empty object of search arguments, got {args!r}")
        arguments[aspect] = args
        pools = block.get("options")
        if not isinstance(pools, dict):
            raise bad(f"{aspect}.options", f"expected an object {{correct, wrong, noise}}, got {pools!r}")
        shown: list[dict[str, Any]] = []
        kinds[aspect] = {}
        for pool in _POOLS:
            found = pools.get(pool)
            if not isinstance(found, list):
                raise bad(f"{aspect}.options.{pool}", f"expected a list of options, got {found!r}")
            for i, option in enumerate(found):
                oid = option.get("id") if isinstance(option, dict) else None
                if not (isinstance(oid, str) and _OPTION_ID.match(oid) and oid[0] == ID_LETTER[aspect]):
                    raise bad(f"{aspect}.options.{pool}[{i}].id", "expected an option id "
                              f"{ID_LETTER[aspect]}<n> of the {aspect}, got {oid!r}")  # fmt: skip
                if any(oid in k for k in kinds.values()):
                    raise bad(f"{aspect}.options.{pool}[{i}].id", f"{oid} appears twice")
                kinds[aspect][oid] = {"pool": pool}
                shown.append({k: v for k, v in option.items() if k not in ("type", "reason")})
        random.Random(f"{rng_key}|{aspect}").shuffle(shown)
        options[aspect] = shown
        best = task["best_id"][aspect]
        if best not in kinds[aspect]:
            raise bad(f"{aspect}.options", f"no option {best}, the row's best id (reward_model.ground_truth)")
        if "best_id" in block and block["best_id"] != best:
            raise bad(f"{aspect}.best_id", f"{block['best_id']!r}, but the row's ground truth names {best!r}")
        listed = block.get("correct_ids")
        if listed is None:
            listed = [o for o, k in kinds[aspect].items() if k["pool"] == "correct"]
        if not (isinstance(listed, list) and all(isinstance(o, str) and o in kinds[aspect] for o in listed)):
            raise bad(f"{aspect}.correct_ids", f"expected a list of the aspect's option ids, got {listed!r}")
        correct_ids[aspect] = list(listed)
    out = {k: v for k, v in task.items() if k != "not_runnable"}
    out.update({"dimensions": list(dims), "scenario": entry["scenario"], "arguments": arguments,
                "preferences": preferences, "options": options, "correct_ids": correct_ids,
                "option_kinds": kinds, "scenario_file": str(path)})  # fmt: skip
    return out


def load_upstream_tasks(
    data_dir: Path, env: str, one_choice: bool = False, split: str = "test",
    scenarios: Path | None = None, seed: int = 42,
) -> list[dict[str, Any]]:  # fmt: skip
    """The task records of one environment's upstream parquet file, in row order.

    Args:
        data_dir: upstream's ``data/`` folder.
        env: ``travel22`` ... ``travel2222``.
        one_choice: read ``<env>_multiturn_onechoice`` (else ``<env>_multiturn``).
        split: the file's stem (``test``, ``train``).
        scenarios: upstream's ``travelgym/data`` folder (``travelgym_data_<digits>.json``), to
            make the rows runnable (:func:`scenario_task`); None loads the rows alone.
        seed: seeds the order of each aspect's options.

    Returns:
        Records (module docstring): ``id``, ``env``, ``upstream_id``, ``dimensions``,
        ``preference_counts``, ``initial_description``, ``system_prompt``, ``best_id``,
        ``source``; with the row's scenario, the rest of a runnable task; else
        ``not_runnable`` (the reason) and ``preferences`` / ``options`` / ``arguments`` empty;
        a malformed row or scenario carries ``load_error`` (``row <i>: <field, problem, fix>``).

    Raises:
        ValueError: a missing file or column, an unreadable file, a missing scenarios folder or
            a scenario file that is not one JSON object (the message names the file and fix).
            One row's fault never raises: that row's record carries it in ``load_error``.
    """
    path = upstream_file(data_dir, env, one_choice, split)
    scenario_path, table = scenario_file(scenarios, env) if scenarios is not None else (None, None)
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(_read_rows(path)):
        try:
            task = _row_task(path, index, row, env)
        except Exception as exc:  # one row: skipped alone with its reason, never the collection
            reason = str(exc) if isinstance(exc, RowError) else f"{type(exc).__name__}: {exc}; {FIX}"
            out.append(_unrunnable_row(path, index, row, env, reason))
            continue
        if task["id"] in seen:
            out.append(_unrunnable_row(path, index, row, env, (
                f"field reward_model.id: {task['upstream_id']!r} repeats row {seen[task['id']]}; task ids "
                "must be unique")))  # fmt: skip
            continue
        seen[task["id"]] = index
        if scenario_path is not None:
            task = _with_scenario(task, scenario_path, table, seed)
        out.append(task)
    return out


def _with_scenario(
    task: dict[str, Any], path: Path, table: dict[str, Any] | None, seed: int
) -> dict[str, Any]:
    """``task`` made runnable with its scenario, or with the reason it cannot be."""
    if table is None:
        return {**task, "not_runnable": f"no scenario file {path} for {task['env']}; {SCENARIO_FIX}"}
    if task["upstream_id"] not in table:
        return {**task, "not_runnable": f"{path} has no scenario {task['upstream_id']!r}; {SCENARIO_FIX}"}
    try:
        return scenario_task(task, table[task["upstream_id"]], path, seed)
    except Exception as exc:  # one malformed scenario: its task errors alone
        reason = str(exc) if isinstance(exc, RowError) else (
            f"{path}: scenario {task['upstream_id']!r}: {type(exc).__name__}: {exc}; {SCENARIO_FIX}")
        out = {k: v for k, v in task.items() if k != "not_runnable"}
        return {**out, "load_error": f"row {task['source']['row']}: {reason}"}
