"""The run folder's trajectory store: one append-only file per writing process, and the one
reader every consumer uses.

Each trial's trajectory (``{"task", "trajectory", "score", ...}``, one canonical JSON text) is
one line of ``raw/<writer>-<pid>.jsonl``, the file of the process that wrote it: ``main`` (the
controller, which writes what a serial run or a remote xdist worker hands it) or an xdist
worker on the controller's host (``gw0``, ``gw1``, ...). The record names it in ``raw_at``:
``raw/<writer>-<pid>.jsonl#<offset>+<length>`` (byte offset of the line in that file, byte
length of its JSON text without the newline), opened by seeking. Creating one file per item
cost 0.15-1 ms of kernel time each on a disk (``docs/performance.md``); appending to an open
file costs a few microseconds.

``raw_at`` differs between a serial run and ``-n 2`` (which process wrote, at which offset), so
``records.jsonl`` (byte-identical for one seed, model and profile) does not hold it: it keeps
the record's stable ``raw_path`` (``raw/<suite>/<task_id>[-t<k>].json``, the trajectory's name,
a file of that name in run folders written before this store), and ``raw_at`` goes to
``timings.jsonl`` with the other figures that differ run to run
(:func:`pytest_egi.records.split_timing`); :func:`pytest_egi.records.load_records` and the
journal give it back. A folder of the old layout (one file per item, no ``raw_at``) is read too.

Order on disk: a trajectory's line is written (one ``write`` to the OS, no buffer in this
process) before its record goes to ``journal.jsonl``, so a record names a trajectory that is on
disk, and a kill loses at most the line being written, which no record names. A line cut
short (a kill, a full disk, a copy of a folder still being written) is found by its length
when read (:class:`TrajectoryError` names the file, the trial and the offset).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

__all__ = [
    "POINTER_FIELD",
    "TrajectoryError",
    "TrajectoryReader",
    "TrajectoryStore",
    "close_all",
    "format_pointer",
    "parse_pointer",
    "pointer_problem",
    "read_trajectory",
    "store_for",
]

POINTER_FIELD = "raw_at"
"""The record field naming where its trajectory is stored (see the module docstring)."""

_POINTER = re.compile(r"^(?P<file>.+\.jsonl)#(?P<offset>\d+)\+(?P<length>\d+)$")


class TrajectoryError(ValueError):
    """A stored trajectory cannot be read: the message names the file, the trial and why
    (missing, cut short, not JSON), and the fix where there is one."""


def format_pointer(file: str, offset: int, length: int) -> str:
    """``<file>#<offset>+<length>`` (``file`` relative to the run folder, bytes)."""
    return f"{file}#{offset}+{length}"


def parse_pointer(pointer: str) -> tuple[str, int, int]:
    """(file relative to the run folder, byte offset, byte length) of a ``raw_at`` value.

    Raises:
        TrajectoryError: not of the form ``raw/<name>.jsonl#<offset>+<length>``.
    """
    m = _POINTER.match(pointer) if isinstance(pointer, str) else None
    if m is None:
        raise TrajectoryError(f"field {POINTER_FIELD!r}: {pointer!r} is not a trajectory's place "
                              "(raw/<name>.jsonl#<offset>+<length>)")
    return m["file"], int(m["offset"]), int(m["length"])


def pointer_problem(run_dir: Path, pointer: str) -> str | None:
    """Why ``pointer`` names no whole line of a store in ``run_dir`` (a file missing or too
    short: the line was never written whole); None when the file holds ``offset + length``
    bytes and a newline. Reads one byte; what resume checks of each record it keeps."""
    try:
        file, offset, length = parse_pointer(pointer)
        with open(Path(run_dir) / file, "rb") as fh:
            fh.seek(offset + length)
            end = fh.read(1)
    except (OSError, TrajectoryError) as exc:
        return str(exc)
    problem = _line_end_problem(end)
    return None if problem is None else f"{file}: the line at offset {offset} {problem}"


def _line_end_problem(end: bytes) -> str | None:
    """Why a stored line whose byte at ``offset + length`` is ``end`` (empty past the end of
    the file) is not whole; None when that byte ends the line."""
    if end == b"\n":
        return None
    if not end:
        return "is cut short (was the run killed while writing it?)"
    return "does not end its line (the file is not the one the record was written with)"


class TrajectoryStore:
    """One process's append-only trajectory file, opened on the first :meth:`append`.

    Args:
        run_dir: the run folder.
        writer: who writes (``main`` or the xdist worker id): the file is
            ``raw/<writer>-<pid>.jsonl``, so two processes never share one.
    """

    def __init__(self, run_dir: Path, writer: str) -> None:
        self.run_dir = Path(run_dir)
        self.name = f"raw/{writer}-{os.getpid()}.jsonl"
        self.path = self.run_dir / self.name
        self._fd: int | None = None
        self._size = 0

    def _open(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            # a line cut short by an earlier kill (a process of the same id): the next line
            # starts on its own (no record names the cut one)
            if size and os.pread(fd, 1, size - 1) != b"\n":
                size += _write_all(fd, b"\n")
        except OSError:
            os.close(fd)
            raise
        self._size = size
        return fd

    def append(self, text: str) -> str:
        """Append one trajectory's JSON text (one line, no newline in it) and return its place
        (``raw_at``: ``raw/<writer>-<pid>.jsonl#<offset>+<length>``). The bytes are with the
        OS when this returns (a kill of this process loses none of them). A lone surrogate
        is written as its backslash escape (a valid escape in JSON text).

        Raises:
            OSError: the file cannot be opened or written (a full disk, a folder turned
                read-only), ``filename`` the store; the file is closed, and the next append
                opens it again after whatever a failed write left.
        """
        data = text.rstrip("\n").encode("utf-8", "backslashreplace")
        try:
            if self._fd is None:
                self._fd = self._open()
            offset = self._size
            _write_all(self._fd, data + b"\n")
        except OSError as exc:
            self.close()
            if exc.filename is None:
                exc.filename = str(self.path)
            raise
        self._size = offset + len(data) + 1
        return format_pointer(self.name, offset, len(data))

    def close(self) -> None:
        """Close the file (a later :meth:`append` opens it again)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


def _write_all(fd: int, data: bytes) -> int:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    return len(data)


_STORES: dict[tuple[int, str], TrajectoryStore] = {}


def store_for(run_dir: Path | str, writer: str) -> TrajectoryStore:
    """This process's store in ``run_dir`` (made on first use, kept until :func:`close_all`)."""
    key = (os.getpid(), str(run_dir))
    store = _STORES.get(key)
    if store is None:
        store = _STORES[key] = TrajectoryStore(Path(run_dir), writer)
    return store


def close_all() -> None:
    """Close every store this process opened (at the end of its session)."""
    for key in [k for k in _STORES if k[0] == os.getpid()]:
        _STORES.pop(key).close()


def _label(record: dict[str, Any]) -> str:
    trial = record.get("trial")
    label = f"{record.get('suite')}/{record.get('task_id')}"
    return label + (f" (trial {trial})" if trial not in (1, None) else "")


class TrajectoryReader:
    """Reads the stored trajectories of one run folder, each by its record (files kept open
    until :meth:`close`; a context manager).

    A record gives its place by ``raw_at`` (journal records, and :func:`load_records`' which
    joins ``timings.jsonl``); a record read straight from ``records.jsonl`` has only
    ``raw_path``: when no file has that name (the old layout, one file per item), its
    ``raw_at`` is looked up in ``timings.jsonl`` (read once).

    Args:
        run_dir: the run folder the places are relative to.
    """

    def __init__(self, run_dir: Path | str) -> None:
        self.run_dir = Path(run_dir)
        self._files: dict[str, Any] = {}
        self._timings: dict[tuple[Any, Any, Any], str] | None = None

    def __enter__(self) -> TrajectoryReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the store files this reader opened."""
        files, self._files = self._files, {}
        for fh in files.values():
            fh.close()

    def where(self, record: dict[str, Any]) -> str | None:
        """The record's ``raw_at`` (its own, or the one ``timings.jsonl`` holds for it); None
        when it has none (an old run folder's record, or a trial that stored no trajectory)."""
        pointer = record.get(POINTER_FIELD)
        if pointer:
            return pointer
        if not record.get("raw_path") or (self.run_dir / record["raw_path"]).is_file():
            return None
        if self._timings is None:
            self._timings = _pointers_in_timings(self.run_dir)
        return self._timings.get((record.get("suite"), record.get("task_id"), record.get("trial")))

    def path_of(self, record: dict[str, Any]) -> Path:
        """The file that holds the record's stored trajectory (its store, or an old run
        folder's file), for messages; it may not exist."""
        where = self.where(record) or record.get("raw_path") or ""
        return self.run_dir / str(where).partition("#")[0]

    def read_text(self, record: dict[str, Any]) -> str:
        """The JSON text of the record's stored trajectory.

        Raises:
            TrajectoryError: the record names none, its file is missing, or its line is cut
                short (names the file, the trial and the offset).
        """
        pointer = self.where(record)
        if pointer is None:
            raw_path = record.get("raw_path")
            if not raw_path:
                raise TrajectoryError(f"{_label(record)}: the record names no stored trajectory")
            path = self.run_dir / raw_path
            try:
                return path.read_text(encoding="utf-8")
            except OSError as exc:
                raise TrajectoryError(
                    f"{path}: cannot read the stored trajectory of {_label(record)} ({exc.strerror or exc}); "
                    "its place (raw_at) is in timings.jsonl: copy the run folder whole") from None
        file, offset, length = parse_pointer(pointer)
        path = self.run_dir / file
        try:
            fh = self._files.get(file)
            if fh is None:
                fh = self._files[file] = open(path, "rb")  # noqa: SIM115 - kept for the next record
            fh.seek(offset)
            data = fh.read(length + 1)
        except OSError as exc:
            raise TrajectoryError(f"{path}: cannot read the stored trajectory of {_label(record)} "
                                  f"({exc.strerror or exc})") from None
        what = _line_end_problem(data[length:length + 1])
        if what is not None:
            raise TrajectoryError(f"{path}: the trajectory of {_label(record)} at offset {offset} {what}; "
                                  f"run the run's pytest command again with --egi-resume {self.run_dir}: "
                                  "it runs that item again and keeps every other record")
        return data[:-1].decode("utf-8")

    def read(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record's stored trajectory, parsed (``{"task", "trajectory", "score", ...}``).

        Raises:
            TrajectoryError: as :meth:`read_text`, or the text is not a JSON object.
        """
        text = self.read_text(record)
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TrajectoryError(f"{self.path_of(record)}: the trajectory of "
                                  f"{_label(record)} is not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise TrajectoryError(f"{self.run_dir}: the trajectory of {_label(record)} is not a JSON object")
        return obj


def _pointers_in_timings(run_dir: Path) -> dict[tuple[Any, Any, Any], str]:
    out: dict[tuple[Any, Any, Any], str] = {}
    try:
        with open(run_dir / "timings.jsonl", encoding="utf-8") as fh:
            for line in fh:
                if POINTER_FIELD not in line:
                    continue
                try:
                    t = json.loads(line)
                    out[(t["suite"], t["task_id"], t["trial"])] = t[POINTER_FIELD]
                except (ValueError, KeyError, TypeError):
                    continue
    except OSError:
        pass
    return out


def read_trajectory(run_dir: Path | str, record: dict[str, Any]) -> dict[str, Any]:
    """One record's stored trajectory (:meth:`TrajectoryReader.read`); for many, keep one
    :class:`TrajectoryReader`.

    Raises:
        TrajectoryError: see :meth:`TrajectoryReader.read_text`.
    """
    with TrajectoryReader(run_dir) as reader:
        return reader.read(record)
