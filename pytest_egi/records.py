"""Record schema, run-directory layout, atomic writes, and loading for rescore.

A **record** is the JSON-safe result of one trial; it travels from the worker to the
controller as one ``("egi", record)`` entry of the report's ``user_properties`` (plain
builtins only, so it survives pytest-xdist). Its fields:

======================  ===================================================================
``schema``              record schema version (int)
``suite``               suite name; ``suite_module`` the importable package; ``suite_version``
``task_id``             task id; ``category`` its category; ``trial`` 1-based trial index
``nodeid``              pytest node id
``status``              ``passed`` | ``failed`` (model) | ``error`` (harness/provider) | ``skipped``
``success``             the suite's success rule, None unless scored
``values``              per-task values for the suite's ``summarize``
``expected`` ``got``    renderings for people
``failure_kind``        why a ``failed`` trial failed, one of ``pytest_egi.outcomes.FAILURE_KINDS``
                        (``wrong_answer``, ``wrong_tool``, ``wrong_argument``, ``missing_call``,
                        ``extra_call``, ``state_differs``, ``policy_violated``, ``no_answer``,
                        ``turn_limit``, ``gave_up``), set by the suite's scorer; null when passed,
                        errored or skipped (an error is infrastructure, not a failure kind)
``termination``         how the episode ended (``pytest_egi.agents.loops.Termination``: ``submitted``,
                        ``text_answer``, ``max_turns``, ``user_stop``, ``max_user_turns``,
                        ``context_exceeded``, ``truncated``, ``error``); ``finish_reason`` the
                        provider's last one; ``turns`` model calls; ``no_answer`` the shared rule
``details``             scorer extras (e.g. which judge graded)
``model`` ``judge``     identities of the model under test and of the grader
``usage``               token/cost counters of the model under test (``judge_usage`` likewise)
``params``              LiteLLM roles only: ``{role: {"sent": {...}, "dropped": {name: reason}}}``,
                        the generation parameters sent after the user's and the model check
``raw_path``            the trajectory's name, ``raw/<suite>/<task_id>[-t<k>].json`` (the same in
                        every run; run folders written before the trajectory store hold a file
                        of that name)
``raw_at``              where the trajectory is stored: ``raw/<writer>-<pid>.jsonl#<offset>+<length>``
                        (``pytest_egi.trajectories``); it differs run to run, so it is kept in
                        timings.jsonl, not records.jsonl
``error``               the error message for ``error``/``skipped``, else None
``timing``              volatile figures (durations, latencies): kept out of records.jsonl
======================  ===================================================================
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

__all__ = [
    "JsonRecord",
    "RECORD_SCHEMA",
    "RECORD_STATUSES",
    "RunDir",
    "atomic_file",
    "atomic_write_text",
    "bad_record_line",
    "dump_json",
    "dump_json_line",
    "load_records",
    "make_run_id",
    "natural_key",
    "read_collected",
    "record_problem",
    "remove_stale_temp_files",
    "split_timing",
    "write_collected",
]

RECORD_SCHEMA = 1
RECORD_STATUSES = ("passed", "failed", "error", "skipped")
"""Every status a record can have (see the module docstring)."""
USAGE_KEYS = ("usage", "judge_usage", "simulator_usage")
"""Record fields holding a Usage dict: model under test, judge, user simulator."""
VOLATILE_USAGE_KEYS = ("latency_s", "latencies_s", "wait_s", "retries", "cached_calls", "cost_usd",
                       "unpriced_network_calls")
"""Usage keys whose values differ run to run (timing, retries, cache hits and so what was paid,
and how many paid calls had no price); moved to timings.jsonl so records.jsonl is
byte-identical for one seed, model and profile, cold cache or warm. ``uncached_cost_usd`` (the
price at list rates), token counts and ``unpriced_calls`` stay in the record."""


class JsonRecord(dict):
    """A record whose ``str()`` is its JSON text (sorted keys), for pytest's junitxml.

    pytest writes each user property as ``<property name=... value="str(value)">``; the
    controller wraps every ``egi`` record it receives in this class so that value parses
    with ``json.loads`` (a plain dict would give its Python repr). A record travels between
    processes as a plain dict; only the controller wraps it.
    """

    def __str__(self) -> str:
        return json.dumps(self, sort_keys=True, ensure_ascii=False, default=str)


def make_run_id(model: str, mode: str, now: datetime | None = None) -> str:
    """A unique, sortable run id naming the model and mode.

    Example: ``20261129T201500Z-gpt-4o-mini-quick-3fa2c1``.
    """
    now = now or datetime.now(UTC)
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", model).strip("-").lower() or "model"
    return f"{now:%Y%m%dT%H%M%SZ}-{slug}-{mode}-{secrets.token_hex(3)}"


def dump_json(data: Any) -> str:
    """Canonical JSON text: sorted keys, 2-space indent, UTF-8, trailing newline."""
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, default=str) + "\n"


def write_json(path: Path, data: Any) -> None:
    """Write :func:`dump_json`'s text of ``data`` to ``path`` atomically, a piece at a time
    (the encoder's pieces go to the file: no whole text, nor the list of its pieces, is
    held; ``run.json`` lists every node id of a run's plan)."""
    with atomic_file(Path(path)) as out:
        json.dump(data, out, sort_keys=True, indent=2, ensure_ascii=False, default=str)
        out.write("\n")


def dump_json_line(data: Any) -> str:
    """Compact canonical JSON on one line (sorted keys, UTF-8, trailing newline): trajectory
    files, written once per item, where json's C encoder (no indent) costs a fraction of
    :func:`dump_json`'s. ``python -m json.tool FILE`` shows one indented."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False, default=str) + "\n"


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (:func:`atomic_file`)."""
    with atomic_file(path) as fh:
        fh.write(text)


@contextlib.contextmanager
def atomic_file(path: Path) -> Iterator[TextIO]:
    """A UTF-8 text file written in pieces, then put at ``path`` atomically (temp file in the
    same folder + rename).

    A reader never sees a half-written file, and a failure leaves the old file intact (the
    temp file is removed). An ``OSError`` (a full disk, a folder turned read-only) is raised
    with ``filename`` set to ``path`` when it named no file or the temp file, so the message
    names the file that could not be written. The temp file's name holds the process and thread ids
    (``.<name>.<pid>-<thread>.tmp``), so writers in other processes or threads never share
    one; folders already made by this process are not made again (one ``mkdir`` per folder,
    not per file). A lone surrogate (text that is not valid Unicode) is written as its
    backslash escape (``\\ud800``, a valid escape in JSON text) instead of aborting the write.
    """
    tmp = path.parent / f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp"
    try:
        if path.parent not in _MADE_DIRS:
            path.parent.mkdir(parents=True, exist_ok=True)
            _MADE_DIRS.add(path.parent)
        try:
            fh = open(tmp, "w", encoding="utf-8", errors=_ERRORS)  # noqa: SIM115 - closed below
        except FileNotFoundError:  # the folder was removed since: make it again
            path.parent.mkdir(parents=True, exist_ok=True)
            fh = open(tmp, "w", encoding="utf-8", errors=_ERRORS)  # noqa: SIM115
        with fh:
            yield _Named(fh, path)  # type: ignore[misc]
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):  # a folder turned read-only keeps its temp file
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename in (None, str(tmp)):
            exc.filename = str(path)  # a full disk fails the write with no file named: name it
        raise


_TEMP_NAME = re.compile(r"^\..+\.\d+-\d+\.tmp$")
"""The name of :func:`atomic_file`'s temp file (``.<name>.<pid>-<thread>.tmp``)."""


def remove_stale_temp_files(folder: Path) -> list[Path]:
    """Remove the temp files :func:`atomic_file` left under ``folder`` (a write that failed in a
    folder turned read-only cannot remove its own; a killed process leaves its own too). Call
    only while no other process writes there (a resumed run holds the run's lock).

    Returns:
        The removed paths (one that cannot be removed is left, and not returned).
    """
    removed = []
    for root, _dirs, files in os.walk(folder):
        for name in files:
            if _TEMP_NAME.match(name):
                path = Path(root) / name
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed.append(path)
    return removed


_ERRORS = "backslashreplace"
"""How :func:`atomic_file` writes what UTF-8 cannot encode (only lone surrogates): as the
escape ``\\udXXX``, which inside a JSON string is that same character, so a record or a
trajectory that holds one is still written whole and reads back as it was."""


class _Named:
    """A text file whose failed writes name ``path`` (:func:`atomic_file`'s target): a write
    that fails on a full disk names no file, and the file being written is not always the
    innermost one open (records.jsonl and timings.jsonl are written side by side)."""

    __slots__ = ("_fh", "_path")

    def __init__(self, fh: TextIO, path: Path) -> None:
        self._fh = fh
        self._path = path

    def write(self, text: str) -> int:
        try:
            return self._fh.write(text)
        except OSError as exc:
            if exc.filename is None:
                exc.filename = str(self._path)
            raise

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)


_MADE_DIRS: set[Path] = set()
"""Folders :func:`atomic_write_text` made (or found) in this process."""


@dataclass(frozen=True)
class RunDir:
    """The layout of ``reports/<run_id>/`` (DESIGN §7)."""

    root: Path

    @property
    def run_id(self) -> str:
        """The folder name."""
        return self.root.name

    @property
    def egi_json(self) -> Path:
        """Aggregate result."""
        return self.root / "egi.json"

    @property
    def records_jsonl(self) -> Path:
        """One deterministic record per trial (sorted by suite, task, trial)."""
        return self.root / "records.jsonl"

    @property
    def timings_jsonl(self) -> Path:
        """Volatile per-trial figures (durations, latencies)."""
        return self.root / "timings.jsonl"

    @property
    def report_html(self) -> Path:
        """Self-contained page for people."""
        return self.root / "report.html"

    @property
    def results_csv(self) -> Path:
        """One row per trial."""
        return self.root / "results.csv"

    @staticmethod
    def raw_name(suite: str, task_id: str, trial: int, trials: int) -> str:
        """A trajectory's name (a record's ``raw_path``): ``raw/<suite>/<task_id>[-t<k>].json``,
        the same in every run (where it is stored is the record's ``raw_at``:
        ``pytest_egi.trajectories``)."""
        suffix = f"-t{trial}" if trials > 1 else ""
        return f"raw/{suite}/{task_id}{suffix}.json"


def split_timing(record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a record into its deterministic part and its volatile ``timing`` part.

    Returns:
        (record without ``timing``, ``raw_at`` and volatile usage keys; timing dict with
        ``suite``/``task_id``/``trial`` for joining, and ``raw_at`` when the record has one).
    """
    stable = {k: v for k, v in record.items() if k not in ("timing", "raw_at")}
    timing = dict(record.get("timing") or {})
    if record.get("raw_at"):  # where the trajectory is stored: which process wrote it, where
        timing["raw_at"] = record["raw_at"]
    for usage_key in USAGE_KEYS:
        usage = stable.get(usage_key)
        if isinstance(usage, dict):
            kept = {k: v for k, v in usage.items() if k not in VOLATILE_USAGE_KEYS}
            timing[usage_key] = {k: usage[k] for k in VOLATILE_USAGE_KEYS if k in usage}
            stable[usage_key] = kept
    timing.update({"suite": record["suite"], "task_id": record["task_id"], "trial": record["trial"]})
    return stable, timing


def record_sort_key(record: dict[str, Any]) -> tuple[str, str, int]:
    """Order records by (suite, task id, trial), independent of execution order."""
    return (record["suite"], record["task_id"], int(record["trial"]))


def natural_key(text: str) -> list[tuple[int, int, str]]:
    """The sort key of a task id in natural order, as people read ids: digit runs compare as
    numbers (``task-2`` before ``task-10``), the rest without case. The pages' tables (their
    own script) sort ids the same way."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t.lower()) for t in re.findall(r"\d+|\D+", text)]


_RECORD_LAYOUTS: dict[tuple[str, ...], type] = {}
_MAX_RECORD_LAYOUTS = 256
_NESTED_LAYOUTS: dict[tuple[str, ...], type] = {}
_MAX_NESTED_LAYOUTS = 512
_SHARED_STRING_CHARS = 64
_MAX_SHARED_VALUES = 1 << 14


def _key_sharing(items: dict[str, Any], layouts: dict[tuple[str, ...], type], most: int) -> dict[str, Any]:
    """``items`` as the ``__dict__`` of a new instance of the class made once per key layout
    (a key-sharing dict: the keys stored once per layout), or ``items`` itself past ``most``
    layouts."""
    keys = tuple(items)
    layout = layouts.get(keys)
    if layout is None:
        if len(layouts) >= most:
            return items
        layout = layouts[keys] = type("RecordLayout", (), {"__doc__": "a record's key layout"})
    compact = vars(object.__new__(layout))
    for key, value in items.items():
        compact[key] = value
    return compact


def _one_copy(value: Any, shared: dict[Any, Any]) -> Any:
    """The copy of ``value`` kept in ``shared`` (added when new). ``shared`` stops growing at
    ``_MAX_SHARED_VALUES`` values (then only those already in it are shared), so values that
    never repeat cannot make it cost more than it saves."""
    one = shared.get(value)
    if one is None:
        if len(shared) >= _MAX_SHARED_VALUES:
            return value
        one = shared[value] = value
    return one


def _shared_value(value: Any, shared: dict[Any, Any]) -> Any:
    """:func:`_one_copy` of a short string, or of a score of exactly 1.0 or (positive) 0.0
    (-0.0 stays itself: JSON writes it differently); anything else as it is."""
    kind = type(value)
    if (kind is str and len(value) <= _SHARED_STRING_CHARS) or (
        kind is float and (value == 1.0 or (value == 0.0 and math.copysign(1.0, value) > 0))
    ):
        return _one_copy(value, shared)
    return value


def compact_record(
    record: dict[str, Any],
    shared: dict[Any, Any] | None = None,
    shared_fields: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The same record, an equal plain ``dict``, stored in less memory (a record of the
    throwaway suite of ``bench/bench_harness_cost.py``: 1,085 -> 850 bytes in all).

    Records read back in bulk at session end (20,000 items: 20,000 records) have the same
    keys in the same order. CPython stores the ``__dict__`` of one class's instances as
    key-sharing dicts: the keys once per class, only the values per dict. So the record's
    items are set, in order, into the ``__dict__`` of a new instance of a class made once
    per key layout, and that ``__dict__`` is returned; a non-empty dict value one level down
    (``values``, ``timing``, ...) is made the same way. Each is a real ``dict``: JSON,
    ``==``, copying and mutation behave as on any dict (a key added later turns that one
    dict into an ordinary one). Past ``_MAX_RECORD_LAYOUTS`` (``_MAX_NESTED_LAYOUTS`` one
    level down) layouts, or on an interpreter without key sharing, a dict simply stays (or
    becomes) an ordinary one.

    With ``shared`` (a memo kept across the records of one read), the string values of
    ``shared_fields`` (suite, model, status, ...), the short strings one level down and the
    scores 0.0 and 1.0 one level down are kept once: equal values become the same object
    (strings and floats are immutable, so nothing can tell but memory).

    Args:
        record: a record as parsed from JSON (str keys).
        shared: value -> its one copy, filled as records are compacted; None: no sharing.
        shared_fields: the top-level fields whose string values repeat across records.

    Returns:
        A dict equal to ``record`` (the same values, or equal ones).
    """
    if shared is not None:
        for field in shared_fields:
            value = record.get(field)
            if type(value) is str:
                record[field] = _one_copy(value, shared)
    for key, value in record.items():
        if type(value) is dict and value:
            if shared is not None:
                value = {k: _shared_value(v, shared) for k, v in value.items()}
            record[key] = _key_sharing(value, _NESTED_LAYOUTS, _MAX_NESTED_LAYOUTS)
    return _key_sharing(record, _RECORD_LAYOUTS, _MAX_RECORD_LAYOUTS)


_KEY_FIELDS = (("suite", str), ("task_id", str), ("trial", int), ("status", str))
_TEXT_OR_NULL = ("suite_module", "suite_version", "expected", "got", "error", "error_kind", "raw_path",
                 "raw_at", "model", "judge", "termination", "finish_reason", "failure_kind")
_MAPPING_OR_NULL = ("details", "usage", "judge_usage", "simulator_usage", "timing", "params")


def _shown(value: Any) -> str:
    """``a str ('abc')``: a value's JSON type and (shortened) text, for a message."""
    kinds = {str: "a str", bool: "a boolean", int: "a number", float: "a number", list: "a list",
             dict: "a mapping"}
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=False, default=str)
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"{kinds.get(type(value), type(value).__name__)} ({text})"


def record_problem(record: Any) -> str | None:
    """Why ``record`` (a parsed line of ``journal.jsonl`` or ``records.jsonl``) does not fit the
    record schema (the module docstring), naming the field; None when it fits.

    Checked: a JSON object; ``suite``, ``task_id`` (text), ``trial`` (a whole number >= 1),
    ``status`` (one of :data:`RECORD_STATUSES`); ``category`` and ``nodeid`` (text);
    ``values`` (a mapping of sub-metric name to a number or null: what ``summarize`` reads);
    ``success`` (true, false or null); and, when present, the text fields (``raw_path``,
    ``error``, ...) text or null and the mapping fields (``usage``, ``details``, ...) a
    mapping or null.
    """
    if not isinstance(record, dict):
        return "not a record (a JSON object)"
    for name, kind in _KEY_FIELDS:
        if not isinstance(record.get(name), kind) or isinstance(record.get(name), bool):
            return f"not a record (no {kind.__name__} {name!r})"
    if record["trial"] < 1:
        return f"field 'trial': expected a whole number >= 1, got {_shown(record['trial'])}"
    if record["status"] not in RECORD_STATUSES:
        return (f"field 'status': {record['status']!r} is not a record status "
                f"({', '.join(RECORD_STATUSES)})")
    for name in ("category", "nodeid"):
        if not isinstance(record.get(name), str):
            return f"field {name!r}: expected text, got {_shown(record.get(name))}"
    values = record.get("values")
    if not isinstance(values, dict):
        return (f"field 'values': expected a mapping of sub-metric name to a number or null, got "
                f"{_shown(values)}")
    for key, value in values.items():
        if value is not None and (type(value) not in (int, float)):
            return (f"field 'values': sub-metric {key!r} is {_shown(value)}, expected a number or "
                    "null")
    if record.get("success") not in (True, False, None):
        return f"field 'success': expected true, false or null, got {_shown(record.get('success'))}"
    for name in _TEXT_OR_NULL:
        value = record.get(name)
        if value is not None and not isinstance(value, str):
            return f"field {name!r}: expected text or null, got {_shown(value)}"
    kind = record.get("failure_kind")
    if kind is not None:
        from pytest_egi.outcomes import FAILURE_KINDS

        if kind not in FAILURE_KINDS:
            return (f"field 'failure_kind': {kind!r} is not a failure kind "
                    f"({', '.join(FAILURE_KINDS)})")
        if record["status"] != "failed":
            return (f"field 'failure_kind': {kind!r} on a {record['status']} record (only a failed "
                    "one has one)")
    for name in _MAPPING_OR_NULL:
        value = record.get(name)
        if value is not None and not isinstance(value, dict):
            return f"field {name!r}: expected a mapping or null, got {_shown(value)}"
    return None


def bad_record_line(path: Path, line: int, problem: str) -> str:
    """The message for a bad line of a run's ``journal.jsonl`` or ``records.jsonl``
    (``line``: 1-based): names the file, the line, the problem (its field) and the fix."""
    return (f"{path}:{line}: {problem}; remove the line and resume with --egi-resume {Path(path).parent} "
            "(its item runs again)")


def load_records(run_dir: Path) -> list[dict[str, Any]]:
    """Read ``records.jsonl`` of a run, re-joined with ``timings.jsonl`` when present.

    Raises:
        FileNotFoundError: the run has no records.jsonl (message names the path).
        ValueError: a line is not valid JSON or not a record (:func:`record_problem`); names
            the file, the line, the field and the fix.
    """
    rd = RunDir(run_dir)
    if not rd.records_jsonl.exists():
        raise FileNotFoundError(f"{rd.records_jsonl}: no such file; is {run_dir} a run directory?")
    records: list[dict[str, Any]] = []
    for n, line in enumerate(rd.records_jsonl.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(bad_record_line(rd.records_jsonl, n, f"not valid JSON ({exc.msg})")) from None
        problem = record_problem(record)
        if problem is not None:
            raise ValueError(bad_record_line(rd.records_jsonl, n, problem))
        records.append(record)
    if rd.timings_jsonl.exists():
        timings = {}
        for n, line in enumerate(rd.timings_jsonl.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    t = json.loads(line)
                    timings[(t["suite"], t["task_id"], t["trial"])] = t
                except (ValueError, TypeError, KeyError):
                    raise ValueError(
                        f"{rd.timings_jsonl}:{n}: not a timing line (a JSON object with suite, task_id "
                        "and trial); remove the line (only that item's latencies are lost)"
                    ) from None
        for rec in records:
            t = timings.get((rec["suite"], rec["task_id"], rec["trial"]))
            if t:
                for usage_key in USAGE_KEYS:
                    if isinstance(rec.get(usage_key), dict) and t.get(usage_key):
                        rec[usage_key].update(t[usage_key])
                rec["timing"] = {
                    k: v
                    for k, v in t.items()
                    if k not in ("suite", "task_id", "trial", "raw_at", *USAGE_KEYS)
                }
                if t.get("raw_at"):
                    rec["raw_at"] = t["raw_at"]
    return records


COLLECTED_FILE = "egi-collected.json"
"""Written by each xdist worker into the session's shared directory after collection."""
COLLECTED_IDS_FILE = "egi-collected-ids.json"
"""Beside it: only the node ids and the deselected count (what the controller reads while the
session runs; the base records are read only when a worker crashes)."""


def write_collected(directory: Path, items: dict[str, dict[str, Any]], deselected: int) -> None:
    """Record which EGI items a worker collected, for the controller (which collects nothing).

    Args:
        directory: the session's shared directory (``pytest_egi.cache.shared``).
        items: node id -> ``{"record": base record, "raw": the trajectory's name relative to the
            run directory}``; the controller turns the base record into an error record
            when the worker running that item crashes.
        deselected: items deselected on the worker (``-k``, ``-m``, ``--lf``, ...).

    Every worker collects the same items, so every worker writes the same content; the
    write is atomic, so the controller never reads a half-written file.
    """
    content = json.dumps({"items": items, "deselected": deselected})
    atomic_write_text(Path(directory) / COLLECTED_FILE, content)
    ids = json.dumps({"items": list(items), "deselected": deselected})
    atomic_write_text(Path(directory) / COLLECTED_IDS_FILE, ids)


def read_collected(directory: Path | None, records: bool = True) -> dict[str, Any] | None:
    """What :func:`write_collected` wrote, or None when no worker has written it (yet).

    With ``records=False``, only ``{"items": [node id, ...], "deselected": n}``: a small file
    (the base records of a run of many items are megabytes of JSON)."""
    if directory is None:
        return None
    name = COLLECTED_FILE if records else COLLECTED_IDS_FILE
    try:
        return json.loads((Path(directory) / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
