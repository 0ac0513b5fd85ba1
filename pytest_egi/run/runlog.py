"""What makes a run survive a kill and spread over machines: its manifest, its journal, the
resume check, and the shard selection.

A run directory (DESIGN §7) holds, besides the session-end files:

- ``run.json``, the **manifest**, written atomically by the controller before the first item
  and again at the end: the options that decide what the records are (model, mode, seed
  override, trials, routing hash, judge, user simulator, suite options, selection, shard), the
  run's status (``running``, ``interrupted``, ``complete``) and its plan (the node ids the
  session selected, once known).
- ``journal.jsonl``, the **journal**: one line per finished item, its whole record (timing
  included), appended and flushed by the controller the moment the item ends (its trajectory
  file is written, atomically, just before). A line cut short by a kill is ignored when read,
  and cut off before the next append; a later line for the same (suite, task, trial) wins.

``--egi-resume RUN_DIR`` reads both: the options must match (:func:`manifest_differences`),
the items with a complete record are not run again (:func:`complete_records`), and the
session's records are the old ones plus the new. ``--egi-shard K/N`` keeps a deterministic,
balanced 1/N of the selected items (:func:`shard_indices`); ``egi-bench report --merge``
joins the shards' records into one run.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_egi.records import bad_record_line, compact_record, record_problem, record_sort_key, write_json

__all__ = [
    "COMPARED_KEYS",
    "JOURNAL_FILE",
    "LOCK_FILE",
    "MANIFEST_FILE",
    "Journal",
    "RunLock",
    "RunLogError",
    "complete_records",
    "manifest_differences",
    "read_journal",
    "read_manifest",
    "run_in_use",
    "run_records",
    "shard_dir_name",
    "shard_indices",
    "write_manifest",
]

MANIFEST_FILE = "run.json"
JOURNAL_FILE = "journal.jsonl"
MANIFEST_SCHEMA = 1
COMPLETE_STATUSES = ("passed", "failed")
"""A record with one of these statuses is a result; ``error`` and ``skipped`` records are run
again on resume (a provider outage or a missing prerequisite may be gone)."""

COMPARED_KEYS = {
    "model": "--egi-model",
    "mode": "--egi-mode",
    "seed_override": "--egi-seed",
    "trials": "--egi-trials",
    "routing_sha256": "the routing file (sha256)",
    "judge": "--egi-judge-model",
    "simulator": "--egi-simulator-model",
    "suite_options": "--egi-opt",
    "params": "--egi-model-params / --egi-judge-params / --egi-simulator-params",
    "paths": "the test paths (pytest's arguments or testpaths)",
    "selection": "the selection (-k, -m, --lf, --deselect, node ids)",
}
"""Manifest keys that decide what a run's records are: a resumed run and the shards of one
merged run must agree on every one (the value is how a person names the option)."""

FSYNC_INTERVAL_S = 1.0
"""The journal is flushed to the OS after every line (a killed process loses nothing) and
fsync'ed at most this often (a machine that loses power loses at most this much; those items
run again on resume)."""


class RunLogError(ValueError):
    """A run directory that cannot be resumed or merged; the message names the file, the
    field and the fix."""


def shard_dir_name(k: int, n: int) -> str:
    """The folder of shard K of N inside the run's folder: ``shard-K-of-N``."""
    return f"shard-{k}-of-{n}"


def shard_indices(keys: Sequence[tuple[Any, ...]], k: int, n: int) -> list[int]:
    """Which of the selected items shard K of N runs: indices into ``keys``, in their order.

    Args:
        keys: one sort key per selected item, whose first fields are the cost group (suite,
            category) and the rest identify the item (task id, trial); non-EGI tests get a
            key sorting after every EGI item.
        k, n: shard K of N.

    Items are put in key order (so in groups of one suite and category, whose items cost
    about the same) and dealt to the shards in turn, the count carrying on from one group to
    the next. Every group is split evenly (its shards' counts differ by at most one), the
    shards' totals differ by at most one, and the choice depends only on the set of selected
    items, never on collection or execution order. Every item is in exactly one shard.
    """
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    chosen = {i for pos, i in enumerate(order) if pos % n == k - 1}
    return [i for i in range(len(keys)) if i in chosen]


def now_text() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    """Write ``run.json`` atomically (the folder is created when missing)."""
    write_json(Path(run_dir) / MANIFEST_FILE, {"schema": MANIFEST_SCHEMA, **manifest})


def read_manifest(run_dir: Path, flag: str = "--egi-resume") -> dict[str, Any]:
    """Read ``run.json`` of a run directory.

    Raises:
        RunLogError: the folder or its run.json is missing or not valid JSON (names the path
            and says what to pass instead).
    """
    path = Path(run_dir) / MANIFEST_FILE
    if not Path(run_dir).is_dir():
        raise RunLogError(f"{flag} {run_dir}: no such folder; pass a run folder (reports/<run_id>)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if (Path(run_dir) / LOCK_FILE).exists():  # the run's session started, then stopped
            raise RunLogError(
                f"{flag} {run_dir}: the run stopped before its first item finished, so there is "
                "nothing to continue; start it again without --egi-resume"
            ) from None
        raise RunLogError(
            f"{flag} {run_dir}: {path.name} not found; is it a run folder made by pytest-egi "
            "(reports/<run_id>, or reports/<run_id>/shard-K-of-N)?"
        ) from None
    except (OSError, json.JSONDecodeError) as exc:
        raise RunLogError(f"{flag} {run_dir}: {path} is not readable JSON ({exc})") from None
    if not isinstance(data, dict) or "model" not in data:
        raise RunLogError(f"{flag} {run_dir}: {path} is not a pytest-egi run manifest (no 'model')")
    return data


def manifest_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between two manifests on :data:`COMPARED_KEYS`, for people:
    ``--egi-model: egi/oracle in the run, egi/null here``. Empty when like for like."""
    out = []
    for key, name in COMPARED_KEYS.items():
        a, b = old.get(key), new.get(key)
        if _norm(a) != _norm(b):
            out.append(f"{name}: {_show(a)} in the run, {_show(b)} here")
    return out


def _norm(value: Any) -> Any:
    if value in (None, {}, []):
        return None
    return json.loads(json.dumps(value, sort_keys=True))


def _show(value: Any) -> str:
    if value in (None, {}, []):
        return "none"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


class Journal:
    """The append-only ``journal.jsonl`` of a run, written by the controller only.

    Opening it cuts off a last line left incomplete by a kill, so the next line starts clean
    (a whole record that only lacks its newline is kept and given one, as :func:`read_journal`
    counts it).
    :meth:`append` writes one record as one JSON line and flushes it to the OS (fsync at most
    every :data:`FSYNC_INTERVAL_S`); :meth:`close` flushes and fsyncs.

    Attributes:
        path: the journal file.
        start: the byte offset where this object's first line went (what the file held
            before, a resumed run's lines, ends there); None before the first append.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / JOURNAL_FILE
        self.start: int | None = None
        self._fh: Any = None
        self._synced = 0.0

    def _open(self) -> Any:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+b")  # noqa: SIM115 - kept open for the session
        fh.seek(0)
        data = fh.read()
        if data and not data.endswith(b"\n"):  # a kill before the line's newline
            start = data.rfind(b"\n") + 1
            if _is_json(data[start:]):  # the record is whole (read_journal counts it): keep it
                fh.write(b"\n")
            else:  # a line cut short: cut it off
                fh.truncate(start)
        fh.seek(0, os.SEEK_END)
        if self.start is None:
            self.start = fh.tell()
        return fh

    def append(self, record: dict[str, Any]) -> None:
        """Append one record (any JSON-safe dict) as one line, flushed.

        Raises:
            OSError: the journal cannot be opened or written (a full disk, a folder turned
                read-only), with ``filename`` the journal; the file is closed (a line cut short
                by the failure is cut off when the run is resumed).
        """
        line = json.dumps(record, sort_keys=True, ensure_ascii=False, default=str) + "\n"
        try:
            if self._fh is None:
                self._fh = self._open()
            self._fh.write(line.encode("utf-8", "backslashreplace"))  # a lone surrogate: \ud800
            self._fh.flush()
            now = time.monotonic()
            if now - self._synced >= FSYNC_INTERVAL_S:
                os.fsync(self._fh.fileno())
                self._synced = now
        except OSError as exc:
            self._abandon()
            raise _naming(exc, self.path) from None

    def _abandon(self) -> None:
        """Close the file after a failed write, whatever its buffer still holds (the close
        tries one more flush: a line it completes is a whole record)."""
        fh, self._fh = self._fh, None
        if fh is not None:
            with contextlib.suppress(OSError):
                fh.close()

    def close(self) -> None:
        """Flush, fsync and close (a no-op when nothing was written).

        Raises:
            OSError: the last lines cannot be written (``filename`` the journal); the file is
                closed anyway.
        """
        if self._fh is not None:
            try:
                self._fh.flush()
                os.fsync(self._fh.fileno())
            except OSError as exc:
                self._abandon()
                raise _naming(exc, self.path) from None
            self._fh.close()
            self._fh = None


def _naming(exc: OSError, path: Path) -> OSError:
    """``exc`` with ``filename`` set to ``path`` when it names no file (a failed write)."""
    if exc.filename is None:
        exc.filename = str(path)
    return exc


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def read_journal(path: Path, start: int | None = None, end: int | None = None) -> list[dict[str, Any]]:
    """The records of a journal, the last line per (suite, task, trial) winning, sorted.

    A last line cut short by a kill is ignored.

    Args:
        path: the journal file.
        start, end: read only the bytes ``[start, end)`` (offsets at line starts, e.g.
            :attr:`Journal.start`); None: from the beginning / to the end.

    The records are built compactly (one session's worth at a time is in memory): the file
    is read and parsed a batch of lines at a time (never the whole file's bytes at once), so
    the records of a batch share their key strings; the values of the fields every record
    repeats (suite, model, status, ...) are shared too, and each record is a
    :func:`compact_record`.

    Raises:
        RunLogError: a line other than the last is not valid JSON, or is JSON but not a
            record (:func:`pytest_egi.records.record_problem`: a field missing or of the wrong
            type, ``values`` not a mapping of sub-metric to number or null, an unknown
            ``status``); names the file, the line, the field and the fix.
    """
    by_key: dict[tuple[str, str, int], dict[str, Any]] = {}
    shared: dict[Any, Any] = {}
    at = 0
    for batch in _line_batches(path, start, end):
        records = _parse_batch(batch, at, path, start)
        if not all(record_problem(r) is None for r in records):
            _raise_for_bad_record(batch, at, path, start)
        for record in records:
            by_key[record_sort_key(record)] = compact_record(record, shared, SHARED_FIELDS)
        at += len(batch)
    return [by_key[k] for k in sorted(by_key)]


SHARED_FIELDS = ("suite", "suite_module", "suite_version", "category", "model", "judge",
                 "status", "termination", "finish_reason", "error_kind", "expected", "got")
"""Record fields whose string values repeat across records; :func:`read_journal` keeps one
copy of each value."""
_BATCH_LINES = 512


def _line_batches(path: Path, start: int | None, end: int | None) -> Iterator[list[bytes]]:
    """The lines of ``path``'s bytes ``[start, end)``, ``_BATCH_LINES`` at a time, each with
    its newline (a last line without one was cut short by a kill)."""
    with open(path, "rb") as fh:
        fh.seek(start or 0)
        left = None if end is None else max(0, end - (start or 0))
        while left is None or left > 0:
            batch = []
            while len(batch) < _BATCH_LINES:
                line = fh.readline() if left is None else fh.readline(left)
                if not line:
                    break
                if left is not None:
                    left -= len(line)
                batch.append(line)
            if not batch:
                return
            yield batch
            if not batch[-1].endswith(b"\n"):
                return


def _parse_batch(batch: list[bytes], at: int, path: Path, start: int | None) -> list[dict[str, Any]]:
    """The records of journal lines ``batch`` (``at``: index of its first line in the
    range read from byte ``start``), parsed in one call (their keys then share strings);
    line by line when one is not valid JSON, to skip a cut last line (no newline after it)
    or name the broken one."""
    kept = [raw for raw in batch if raw.strip()]
    if not kept:
        return []
    try:
        return json.loads(b"[" + b",".join(kept) + b"]")
    except ValueError:
        pass
    out = []
    for i, raw in enumerate(batch):
        if not raw.strip():
            continue
        try:
            out.append(json.loads(raw))
        except ValueError:
            if not raw.endswith(b"\n"):  # the last line, its write cut short
                continue
            raise _bad_line(path, start, at + i, "not valid JSON") from None
    return out


def _raise_for_bad_record(batch: list[bytes], at: int, path: Path, start: int | None) -> None:
    """Raise for the first line of ``batch`` that parses but is not a record
    (:func:`pytest_egi.records.record_problem`).

    Raises:
        RunLogError: names the file, the line and the fix.
    """
    for i, raw in enumerate(batch):
        if not raw.strip():
            continue
        try:
            problem = record_problem(json.loads(raw))
        except ValueError:
            continue  # a cut last line: already skipped
        if problem is not None:
            raise _bad_line(path, start, at + i, problem)


def _bad_line(path: Path, start: int | None, index: int, problem: str) -> RunLogError:
    """The error for the ``index``-th line (0-based) of the range read from byte ``start``:
    names the file, its line number and the fix. The lines before ``start`` are counted only
    here, when there is an error to report."""
    before = 0
    if start:
        with open(path, "rb") as fh:
            while chunk := fh.read(min(1 << 20, start - fh.tell())):
                before += chunk.count(b"\n")
    return RunLogError(bad_record_line(path, before + index + 1, problem))


def run_records(run_dir: Path, journal_end: int | None = None) -> list[dict[str, Any]]:
    """Every record of a run directory: its journal, or ``records.jsonl`` (+ timings) for a
    run written before journals existed. Empty when it has neither.

    Args:
        run_dir: the run directory.
        journal_end: the run as it was before a resumed session appended to its journal:
            only the journal's bytes before this offset (that session's
            :attr:`Journal.start`). 0: the journal began with that session, so the run's
            earlier records are in ``records.jsonl``. None: the whole journal.

    Raises:
        RunLogError: a damaged journal line (see :func:`read_journal`).
        ValueError: a damaged records.jsonl line.
    """
    from pytest_egi.records import RunDir, load_records

    journal = Path(run_dir) / JOURNAL_FILE
    if journal.is_file() and journal_end != 0:
        return read_journal(journal, end=journal_end)
    if RunDir(Path(run_dir)).records_jsonl.is_file():
        return load_records(Path(run_dir))
    return []


def complete_records(
    run_dir: Path, records: list[dict[str, Any]], damaged: list[str] | None = None
) -> list[dict[str, Any]]:
    """The records that are results: status passed or failed, with their trajectory on
    disk whole (its store's line, ``raw_at``: :func:`pytest_egi.trajectories.pointer_problem`;
    or, in a folder of the old layout, its file ``raw_path``). Resume runs every other item
    of the plan again (its trajectory is appended again, and its new record names the new
    copy).

    Args:
        run_dir: the run folder the records' places are relative to.
        records: the run's records (journal order).
        damaged: when given, gets one line per result left out because its stored
            trajectory is missing or not whole (``<suite>/<task id> (trial k): <why>``), so
            the resumed session can say why that item runs again.
    """
    from pytest_egi.trajectories import pointer_problem

    out = []
    for rec in records:
        if rec.get("status") not in COMPLETE_STATUSES:
            continue
        pointer, raw = rec.get("raw_at"), rec.get("raw_path")
        if pointer:
            problem = pointer_problem(Path(run_dir), pointer)
        elif raw and not (Path(run_dir) / raw).is_file():
            problem = f"{raw}: no such file"
        else:
            problem = None
        if problem is not None:
            if damaged is not None:
                trial = f"{rec.get('suite')}/{rec.get('task_id')} (trial {rec.get('trial')})"
                damaged.append(f"{trial}: {problem}")
            continue
        out.append(rec)
    return out


def manifest_for(settings: Any) -> dict[str, Any]:
    """The manifest fields of a session's settings (:class:`pytest_egi.run.state.RunSettings`):
    :data:`COMPARED_KEYS`, plus the run id, shard, API base and start time (not compared)."""
    return {
        "run_id": settings.run_id,
        "shard": list(settings.shard) if settings.shard else None,
        "model": settings.model,
        "mode": settings.mode,
        "seed_override": settings.seed,
        "trials": settings.trials,
        "routing_sha256": settings.routing_hash,
        "judge": settings.judge_model or "egi/rules",
        "simulator": settings.simulator_model or "egi/rules",
        "suite_options": settings.suite_options,
        "params": _params_given(settings),
        "paths": list(getattr(settings, "paths", None) or []),
        "selection": settings.selection,
        "api_base": settings.api_base,
    }


def _params_given(settings: Any) -> dict[str, Any]:
    """The generation parameters the user gave per role (``--egi-model-params`` ...), the
    ones that change the records (a secret-named one's value shown as ``***``); empty for
    roles given none."""
    provider = getattr(settings, "provider", None)
    if not hasattr(provider, "params_for"):
        return {}
    from pytest_egi.models.secrets import mask_secret_params

    out = {role: mask_secret_params(provider.params_for(role)) for role in ("model", "judge", "simulator")}
    return {role: value for role, value in out.items() if value}


LOCK_FILE = "run.lock"


class RunLock:
    """An exclusive lock on a run folder for the session writing it (``run.lock``, holding
    ``pid host start-time``): a second session, a resume of a run still going, or the same
    shard started twice, is refused instead of writing the folder twice (and paying twice).

    The lock is ``fcntl.flock`` on the file, so it is released by the kernel when the process
    dies, however it dies; the file itself stays and means nothing unless locked.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / LOCK_FILE
        self._fh: Any = None
        self.made: list[Path] = []

    def acquire(self) -> str | None:
        """Take the lock.

        Returns:
            None when taken; else who holds it (``pid 123 on host h since <time>``).
        """
        import fcntl
        import socket

        missing = [d for d in (self.path.parent, *self.path.parent.parents) if not d.exists()]
        self.made = missing  # folders this lock made, deepest first (see remove_if_unused)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the session
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            return holder
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} on host {socket.gethostname()} since {now_text()}\n")
        fh.flush()
        self._fh = fh
        return None

    def release(self) -> None:
        """Release the lock and remove its file: a run folder holds ``run.lock`` only while a
        session writes it, or after one was killed (the kernel released the lock; the file
        says who held it)."""
        if self._fh is not None:
            with contextlib.suppress(OSError):  # a folder turned read-only keeps the file
                self.path.unlink(missing_ok=True)
            self._fh.close()
            self._fh = None

    def remove_if_unused(self) -> None:
        """After :meth:`release`: a session that wrote nothing (a usage error, nothing
        collected) leaves no trace: the folders the lock made go, as long as they are empty."""
        try:
            if any(self.path.parent.iterdir()):
                return
            for folder in getattr(self, "made", []):
                folder.rmdir()
        except OSError:
            pass


def run_in_use(run_dir: Path) -> str | None:
    """Who holds the run folder's lock right now (see :class:`RunLock`), or None. Only looks:
    the lock file is neither written nor removed."""
    import fcntl

    try:
        fh = open(Path(run_dir) / LOCK_FILE, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError:
        return None
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return fh.read().strip() or "another process"
        fcntl.flock(fh, fcntl.LOCK_UN)
    return None
