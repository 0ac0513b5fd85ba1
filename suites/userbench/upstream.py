"""Loader of upstream UserBench's released parquet rows (``--egi-opt userbench.data_dir=PATH``).

Layout (upstream's ``data/`` folder, reference §2.2)::

    <data_dir>/<env>_multiturn/<split>.parquet            (multi-choice prompt)
    <data_dir>/<env>_multiturn_onechoice/<split>.parquet  (one-choice prompt)

The folder read follows ``userbench.one_choice`` (the prompts differ: the one-choice system
message says one recommendation per aspect); ``userbench.data_split`` picks the file
(``test`` by default, upstream's evaluation split; the test files came later than the train
files, reference §2.9 item 1). Each row has ``prompt`` (the system message and the user's first
message) and ``reward_model`` ``{ground_truth, id, env_name, style}``: ``ground_truth`` is the
text of a Python list of the best option ids (``"['H11', 'F3']"``), ``id`` names the aspects
and their preference counts (``flight:2-37|hotel:2-9`` = aspect:count-index, joined by ``|``),
``env_name`` is the gym (``TravelGym``) and ``style`` ``rule``.

What the rows lack: the hidden preferences (texts, implicit statements), the search arguments
and the option database. Upstream keeps them in per-environment JSON scenario files
(``travelgym/data/travelgym_data_<digits>.json``) that its environment looks up by ``id``;
they are not part of the parquet data and this suite does not read them (its world is its
own, generated from the seed). Without them no
search can return an option and no user simulator, rule-based or an LLM, has a preference to
reveal, so a loaded task is **not runnable**: it carries ``not_runnable`` (the reason), its
item is skipped with that reason, and the suite's data warning says so per environment. What
loads is what the rows hold: the id, the environment, the aspects and their preference
counts, the user's first message, upstream's system message and the best id per aspect.

Task ids: upstream's ``|`` is not allowed in :attr:`pytest_egi.suite.Task.id`, so the id is
upstream's with ``|`` replaced by ``.`` (``flight:2-37.hotel:2-9``); the original stays in
``upstream_id``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from suites.userbench.catalogue import ASPECT_OF_LETTER, ASPECTS, ID_LETTER
from suites.userbench.data import env_digits

__all__ = ["NOT_RUNNABLE", "load_upstream_tasks", "upstream_file", "upstream_task_id"]

NOT_RUNNABLE = (
    "upstream's parquet rows hold only the prompt and the best option ids; the hidden preferences, "
    "search arguments and option database are in upstream's scenario files "
    "(travelgym/data/travelgym_data_<digits>.json), which the parquet data does not include and this "
    "suite does not read, so neither the rule simulator nor an LLM simulator can run the task"
)
"""Why a task loaded from upstream's parquet rows is skipped."""
FIX = "fix: point userbench.data_dir at upstream's data folder (<env>_multiturn[_onechoice]/<split>.parquet)"
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


def _row_task(path: Path, index: int, row: dict[str, Any], env: str) -> dict[str, Any]:
    def bad(field: str, problem: str) -> ValueError:
        return ValueError(f"userbench: {path}: row {index}: field {field}: {problem}; {FIX}")

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
    if not isinstance(roles.get("user"), str):
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


def load_upstream_tasks(
    data_dir: Path, env: str, one_choice: bool = True, split: str = "test"
) -> list[dict[str, Any]]:
    """The task records of one environment's upstream parquet file, in row order.

    Args:
        data_dir: upstream's ``data/`` folder.
        env: ``travel22`` ... ``travel2222``.
        one_choice: read ``<env>_multiturn_onechoice`` (else ``<env>_multiturn``).
        split: the file's stem (``test``, ``train``).

    Returns:
        Records (module docstring): ``id``, ``env``, ``upstream_id``, ``dimensions``,
        ``preference_counts``, ``initial_description``, ``system_prompt``, ``best_id``,
        ``source`` and ``not_runnable``; ``preferences`` / ``options`` / ``arguments`` empty.

    Raises:
        ValueError: a missing file or column, an unreadable file, a malformed row or a task id
            seen twice (the message names the file, row, field and fix).
    """
    path = upstream_file(data_dir, env, one_choice, split)
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(_read_rows(path)):
        task = _row_task(path, index, row, env)
        if task["id"] in seen:
            raise ValueError(f"userbench: {path}: row {index}: field reward_model.id: "
                             f"{task['upstream_id']!r} repeats row {seen[task['id']]}; task ids must be "
                             "unique")  # fmt: skip
        seen[task["id"]] = index
        out.append(task)
    return out
