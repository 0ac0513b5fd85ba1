"""A cross-run, on-disk cache of each suite's ``load_tasks`` result.

Suites compute reference answers and worlds when they load their tasks, which makes a
collection cost seconds. :class:`CacheEntries` keeps the loaded tasks as a pickle file, so a
repeated collection with the same code, data and options unpickles them instead.
:func:`pytest_egi.cache.shared.build_once` stays in front of it (one process per session builds or
reads the cache, the other xdist workers get the result from the session's shared folder).
:class:`CacheEntries` holds the entries that share one key: a suite's tasks, and what the
plugin derives from them (the suite's data checks), computed only on a miss.

The plugin keeps the tasks as :class:`LoadedTasks`: their ids and categories (all that
collecting items needs) at hand, and the :class:`~pytest_egi.suite.Task` objects themselves
as one pickle, unpickled when an item of the suite first needs its task. A warm collection
(``--collect-only``, or an xdist worker's collection of items it will not run) then builds no
Task object at all.

Where: ``<cache root>/tasks/tasks-<suite>-<sha256 of the key>.pkl`` (and beside it
``checks-<suite>-*.pkl``, the suite's ``constant_answer_check`` / ``data_warnings`` results,
and ``routing-*.pkl``, the parsed YAML of a routing file keyed by its sha256, read by
:func:`pytest_egi.scoring.config.load_routing`), where the cache root is
``<rootdir>/.egi_cache`` by default (the response cache lives beside it in
``.egi_cache/responses``) or the folder given by ``--egi-cache DIR`` (relative to the
invocation folder; the response cache is then ``DIR/responses.sqlite3``, the task cache
``DIR/tasks/``). ``--egi-no-cache`` turns both off: the task cache is then neither read nor
written. At most :data:`KEEP_PER_SUITE` entries per suite are kept (the least recently used
are removed when a new one is written); deleting the folder is always safe.

What the key holds (:func:`cache_key`), and why a stale entry cannot be used silently:

- the caller's key, as :func:`pytest_egi.cache.shared.canonical_key` text: suite name, version and
  package, the profile (seed, categories, counts, suite-specific keys) and the validated
  suite options, so another profile, seed or option is another entry;
- the interpreter (``sys.version``, the bytecode tag, ``sys.prefix``), the versions of
  pytest-egi and pydantic (the pickles hold pydantic models), and the name of every
  installed distribution's metadata folder on ``sys.path`` (``numpy-2.1.3.dist-info``, ...),
  so installing, removing or upgrading any package is another entry;
- a stat fingerprint (relative path, size, ``mtime_ns``, ``ctime_ns`` and inode of every
  file; nothing is read) of the code the tasks can come from: the suite's own folder, the
  shared code beside it (every ``_``-prefixed entry of its parent package, such as
  ``suites/__init__.py`` and ``suites/_common/``; DESIGN.md puts code two suites share there
  or in ``pytest_egi/``), and ``pytest_egi/``, so an edited, added, removed, renamed or
  restored (``cp -p``, whose old mtime still gives a new ctime) file is another entry;
  ``__pycache__`` folders and ``.pyc`` files are left out (they change as Python runs);
- the same stat fingerprint of every file or folder a suite option points to (any
  :class:`pathlib.PurePath` in the options, and any string option holding a ``/`` that names
  an existing path), taken by absolute path, so a changed task or data file, or the same
  relative path seen from another folder, is another entry.

The entry also stores the full key text and is used only when that text is equal, so two
keys whose hashes collide cannot be confused. Left outside the key, by design: environment
variables and files a suite reads from elsewhere without an option naming them (no shipped
suite does; a suite that must do so should take the path as an option), and a suite
importing code from another suite's folder (DESIGN.md §2 rules this out).

Writes are atomic (a temporary file, then ``os.replace``), so a reader never sees half a
file; two processes that build the same entry at once both write it and the last one wins
(both hold the same value). An entry that cannot be read or unpickled (truncated, corrupt,
made by other code) is rebuilt and overwritten without an error; a cache folder that cannot
be created or written is skipped without an error (the tasks are then loaded as without the
cache). Entries are trusted like the project's own ``__pycache__``: a pickle runs code when
loaded, so the cache folder must not be writable by anyone who could not edit the suites.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import re
import stat
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # annotations only: the plugin imports this module at collection
    from pytest_egi.suite import Task

__all__ = ["KEEP_PER_SUITE", "SHARED_GAIN", "TASK_CACHE_FORMAT", "CacheEntries", "LoadedTasks", "cache_key",
           "fingerprint", "source_paths", "task_cache_dir"]  # fmt: skip

T = TypeVar("T")

TASK_CACHE_FORMAT = "egi-task-cache/3"
"""Bumped when the stored entry's shape changes (old entries then simply miss)."""

KEEP_PER_SUITE = 8
"""Entries kept per suite (profiles, seeds and options in use); older ones are removed."""

_SKIP_DIRS = frozenset({"__pycache__"})


def task_cache_dir(config: Any) -> Path | None:
    """The task cache folder for this pytest ``config``, or None when caching is off.

    ``<rootdir>/.egi_cache/tasks`` by default; ``DIR/tasks`` with ``--egi-cache DIR``
    (a relative DIR is taken from the invocation folder, as for the response cache);
    None with ``--egi-no-cache``. The folder is not created here.
    """
    opt = config.getoption
    if opt("egi_no_cache", False):
        return None
    given = opt("egi_cache", None)
    if not given:
        return Path(config.rootpath) / ".egi_cache" / "tasks"
    root = Path(given).expanduser()
    if not root.is_absolute():
        root = Path(config.invocation_params.dir) / root
    return root / "tasks"


def _walk(root: Path, out: list[str], seen: set[tuple[int, int]]) -> None:
    """Append ``relpath\\0size\\0mtime_ns\\0ctime_ns\\0ino`` for every file under ``root``."""
    stack = [(root, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:  # unreadable folder: its state is part of the fingerprint
            out.append(f"{prefix}\0error\0{type(exc).__name__}")
            continue
        for entry in entries:
            rel = prefix + entry.name
            try:
                st = entry.stat()  # follows symlinks: a link's target is what is read
            except OSError:
                out.append(f"{rel}\0broken")
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name in _SKIP_DIRS or (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                stack.append((Path(entry.path), rel + "/"))
            elif not entry.name.endswith(".pyc"):
                out.append(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}")


def fingerprint(path: str | os.PathLike[str]) -> list[Any]:
    """The stat fingerprint of a file or of every file under a folder (nothing is read).

    Returns:
        ``[absolute path, kind, number of files, sha256 hex]`` where kind is ``"file"``,
        ``"dir"`` or ``"missing"``; the hash covers each file's path relative to ``path``,
        size (bytes), ``mtime_ns``, ``ctime_ns`` and inode, sorted by path. ``__pycache__``
        folders and ``.pyc`` files are skipped; symlinks are followed (each folder once).
    """
    root = Path(path).expanduser().absolute()
    try:
        st = root.stat()
    except OSError:
        return [str(root), "missing", 0, ""]
    lines: list[str] = []
    if stat.S_ISDIR(st.st_mode):
        kind = "dir"
        _walk(root, lines, {(st.st_dev, st.st_ino)})
    else:
        kind = "file"
        lines.append(f"\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}")
    lines.sort()
    digest = hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()
    return [str(root), kind, len(lines), digest]


def _module_root(module_name: str) -> Path | None:
    """The folder of a package (or the file of a plain module) named ``module_name``."""
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    if not file:
        return None
    path = Path(file).absolute()
    return path.parent if path.name == "__init__.py" else path


def _option_paths(value: Any) -> Iterable[Path]:
    """Every path an option value points to (PurePaths, and strings with a ``/`` that exist)."""
    if isinstance(value, PurePath):
        yield Path(value)
    elif isinstance(value, str):
        if ("/" in value or os.sep in value) and os.path.exists(os.path.expanduser(value)):
            yield Path(value)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _option_paths(v)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _option_paths(v)


def source_paths(suite: Any, package: str, options: Any) -> list[Path]:
    """What the tasks of ``suite`` (imported as ``package``) can depend on, to fingerprint.

    The suite's folder (and the folder of the module defining its class, when elsewhere),
    every ``_``-prefixed entry of the parent package's folder (shared suite code and the
    parent's ``__init__.py``), ``pytest_egi/``, and every path in ``options`` (a pydantic
    model, dumped in python mode, or a plain dict). Order is stable; duplicates are dropped.
    """
    paths: list[Path] = []
    for name in (package, type(suite).__module__):
        root = _module_root(name)
        if root is not None:
            paths.append(root)
    parent = package.rpartition(".")[0]
    parent_root = _module_root(parent) if parent else None
    if parent_root is not None and parent_root.is_dir():
        try:
            shared = sorted(e.name for e in os.scandir(parent_root) if e.name.startswith("_"))
        except OSError:
            shared = []
        paths.extend(parent_root / name for name in shared if name not in _SKIP_DIRS)
    paths.append(Path(__file__).absolute().parent)
    dumped = options.model_dump() if hasattr(options, "model_dump") else options
    paths.extend(Path(p).expanduser().absolute() for p in _option_paths(dumped))
    unique: dict[str, Path] = {}
    for p in paths:
        unique.setdefault(str(p), p)
    return list(unique.values())


@functools.cache  # per process: what is imported is fixed
def _versions() -> dict[str, Any]:
    from importlib import metadata

    import pydantic

    try:
        egi = metadata.version("pytest-egi")
    except metadata.PackageNotFoundError:
        egi = None
    dists: set[str] = set()
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as it:
                dists.update(e.name for e in it if e.name.endswith((".dist-info", ".egg-info")))
        except OSError:  # not a folder (a zip file) or gone
            continue
    return {
        "python": sys.version,
        "cache_tag": sys.implementation.cache_tag,
        "prefix": sys.prefix,
        "pytest-egi": egi,
        "pydantic": pydantic.VERSION,
        "distributions": sorted(dists),
    }


def cache_key(name: str, key: object, paths: Iterable[str | os.PathLike[str]]) -> str:
    """The full key text of an entry: the format, ``name``, ``key`` (canonical text), the
    versions (:func:`_versions`) and the :func:`fingerprint` of each of ``paths``.

    Raises:
        TypeError: ``key`` cannot be canonicalised (see
            :func:`pytest_egi.cache.shared.canonical_key`).
    """
    from pytest_egi.cache.shared import canonical_key

    full = {
        "format": TASK_CACHE_FORMAT,
        "name": name,
        "key": canonical_key(key, name),
        "versions": _versions(),
        "files": [fingerprint(p) for p in paths],
    }
    return canonical_key(full, name)


def _prune(directory: Path, stem: str, keep: int) -> None:
    """Remove all but the ``keep`` most recently used ``<stem>-*.pkl`` entries."""
    try:
        entries = [(e.stat().st_mtime_ns, e.path) for e in os.scandir(directory)
                   if e.name.startswith(f"{stem}-") and e.name.endswith(".pkl")]  # fmt: skip
    except OSError:
        return
    for _, path in sorted(entries, reverse=True)[keep:]:
        try:
            os.unlink(path)
        except OSError:
            pass


class CacheEntries:
    """The task cache entries that share one key (a suite's tasks, and what is derived from
    them), with the key's text computed once, on the first :meth:`get` that reads the cache.

    Args:
        directory: the task cache folder (:func:`task_cache_dir`); None: :meth:`get` calls
            ``build()`` and neither reads nor writes anything.
        key: everything the caller knows the values depend on (suite, version, package,
            profile, options); see :func:`pytest_egi.cache.shared.canonical_key`.
        paths: files and folders the values can depend on, fingerprinted by stat
            (:func:`source_paths`); a callable returning them is called at most once, when
            the cache is first read.
    """

    def __init__(
        self,
        directory: Path | None,
        key: object,
        paths: Iterable[str | os.PathLike[str]] | Callable[[], Iterable[str | os.PathLike[str]]],
    ) -> None:
        self.directory = directory
        self._key = key
        self._paths = paths
        self._base: str | None = None

    def text(self, name: str) -> str:
        """The full key text of the entry ``name`` (see :func:`cache_key`).

        Raises:
            TypeError: the key cannot be canonicalised.
        """
        if self._base is None:
            paths = self._paths() if callable(self._paths) else self._paths
            self._base = cache_key("", self._key, paths)
        return f"{name}\n{self._base}"

    @staticmethod
    def _path(directory: Path, name: str, text: str) -> Path:
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        return directory / f"{stem}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:32]}.pkl"

    def has(self, name: str) -> bool:
        """True when the entry ``name`` exists for this key (its file is there; it is not read,
        so :meth:`get` may still find it unreadable and rebuild it). False with no cache folder.

        Raises:
            TypeError: the key cannot be canonicalised.
        """
        if self.directory is None:
            return False
        return self._path(self.directory, name, self.text(name)).is_file()

    def get(self, name: str, build: Callable[[], T]) -> T:
        """Return ``build()``, from the entry ``name`` when it is there for the same key.

        The entry is ``<directory>/<name>-<sha256 of its key text>.pkl``; ``name`` (such as
        ``tasks-crmarena``) is also what :data:`KEEP_PER_SUITE` counts by.

        Raises:
            TypeError: the key cannot be canonicalised.
            Exception: whatever ``build()`` raises, unchanged; nothing is written.

        An unreadable or corrupt entry is rebuilt and overwritten; a folder that cannot be
        written, or a value that cannot be pickled, just goes uncached. Nothing here warns.
        """
        directory = self.directory
        if directory is None:
            return build()
        from pytest_egi.cache.shared import _load, _store

        text = self.text(name)
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        path = self._path(directory, name, text)
        found, value = _load(path, text)
        if found:
            try:
                os.utime(path)  # most recently used: kept by _prune
            except OSError:
                pass
            return value
        value = build()
        try:
            directory.mkdir(parents=True, exist_ok=True)
            _store(path, text, value, name)
        except (OSError, TypeError):  # read-only or full disk, or not picklable: stay uncached
            return value
        _prune(directory, stem, KEEP_PER_SUITE)
        return value


def _restore_tasks(
    ids: tuple[str, ...],
    categories: tuple[str, ...],
    blob: bytes | None,
    blobs: tuple[bytes, ...] | None = None,
    source: str | None = None,
) -> LoadedTasks:
    loaded = LoadedTasks.__new__(LoadedTasks)
    loaded.ids, loaded.categories, loaded._tasks, loaded._last = ids, categories, None, None
    loaded._blob, loaded._blobs, loaded._source = blob, blobs, source
    loaded._loader = loaded._failure = None
    return loaded


SHARED_GAIN = 1.5
"""Tasks that share objects are held as one pickle of the list (unpickled whole, so what they
share stays shared) only when their pickles one by one would take more than this many times
that pickle: a world or a catalogue every task refers to. Tasks that share only small
things (UserBench's deep tasks share 56 small preference dicts: 4.6 MB one by one against
3.9 MB as a list) are pickled one by one, so an item unpickles only its own task (before:
the first item unpickled all 471, 29 MB of objects, kept while the suite ran)."""

_ATOMS = (str, bytes, int, float, complex, bool, type(None))
_MOST_WALKED = 2_000_000


def _tasks_share_objects(tasks: Sequence[Task], most: int = _MOST_WALKED) -> bool:
    """Whether two of ``tasks`` reach one object other than a str, number, None or class (a
    dict, list, set, tuple or instance held by both), following every reference; True too
    when the walk passes ``most`` objects (large tasks: assume they do)."""
    import gc

    owner: set[int] = set()
    walked = 0
    for task in tasks:
        mine: set[int] = set()
        stack: list[Any] = [task]
        while stack:
            obj = stack.pop()
            if type(obj) in _ATOMS or isinstance(obj, type):
                continue
            key = id(obj)
            if key in mine:
                continue
            if key in owner:
                return True
            mine.add(key)
            walked += 1
            if walked > most:
                return True
            stack.extend(gc.get_referents(obj))
        owner |= mine
    return False


class LoadedTasks:
    """A suite's loaded tasks: ids and categories at hand, the tasks unpickled when needed.

    Made from ``load_tasks``' list (:meth:`__init__`), or unpickled from the task cache or
    from the session's shared folder. Reading :attr:`ids`, :attr:`categories` or ``len()``
    unpickles nothing. The tasks are held in one of two ways:

    - **one pickle per task**, when no two tasks share an object (:func:`_tasks_share_objects`),
      or what they share is small (their pickles one by one take at most :data:`SHARED_GAIN`
      times the pickle of the list):
      :meth:`task` unpickles just the task asked for (the last one is kept, so an item's
      fixtures and recorder see one object), and once collection is over
      (:meth:`drop_objects`) the process never holds every Task object at once (20,000
      tasks of the throwaway suite of ``bench/bench_harness_cost.py``: about 4.5 MB of
      pickles against 15 MB of objects);
    - **one pickle of the list**, when tasks share large objects (a world, a catalogue): the first
      :meth:`task` or :meth:`all` unpickles the whole list, so what the tasks share stays
      shared, as in the list ``load_tasks`` returned; the pickle is then dropped.

    Under xdist the pickles are moved to a file of the session's shared folder (:meth:`spill`)
    before the tasks are handed to the workers: a worker then holds only the ids and
    categories of every suite, and reads a suite's pickles from that file when it first runs
    one of its items (and lets them go again with :meth:`unload`).

    Attributes:
        ids: each task's ``Task.id``, in ``load_tasks`` order.
        categories: each task's ``Task.category``, in the same order.
    """

    __slots__ = ("_blob", "_blobs", "_failure", "_last", "_loader", "_source", "_tasks", "categories", "ids")

    def __init__(self, tasks: Sequence[Task]) -> None:
        listed = list(tasks)
        self.ids: tuple[str, ...] = tuple(t.id for t in listed)
        self.categories: tuple[str, ...] = tuple(t.category for t in listed)
        self._source: str | None = None
        self._loader: Callable[[], LoadedTasks] | None = None
        self._failure: str | None = None
        self._blob: bytes | None = None
        self._last: tuple[int, Task] | None = None
        self._blobs: tuple[bytes, ...] | None = None
        self._tasks: list[Task] | None = listed  # (dropped by drop_objects when pickled per task)
        if not listed:
            return
        try:
            limit = None  # what they share is worth keeping shared only when it saves much
            if _tasks_share_objects(listed):
                limit = SHARED_GAIN * len(pickle.dumps(listed, protocol=pickle.HIGHEST_PROTOCOL))
            blobs, total = [], 0
            for task in listed:
                blobs.append(pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL))
                total += len(blobs[-1])
                if limit is not None and total > limit:
                    return  # (a world every task refers to: stop before pickling it N times)
        except (pickle.PicklingError, TypeError, AttributeError):
            return  # tasks that cannot be pickled stay the objects load_tasks returned
        self._blobs = tuple(blobs)

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def deferred(cls, index: Sequence[tuple[str, str]], load: Callable[[], LoadedTasks]) -> LoadedTasks:
        """Tasks known by their ``(id, category)`` only (a suite's ``task_index``), loaded by
        ``load()`` when this process first asks for a task (:meth:`task`, :meth:`all`):
        collecting items needs only :attr:`ids` and :attr:`categories`, so a collection, or a
        process that runs none of the suite's items, builds nothing. ``load`` returns the
        loaded :class:`LoadedTasks` (checked against the index by the caller's ``load``); its
        tasks are then held here. When ``load`` raises, its exception's text is kept: every
        later ask raises :class:`~pytest_egi.suite.TaskLoadError` with it, without loading
        again. A deferred object not yet loaded cannot be pickled (it holds ``load``)."""
        loaded = cls.__new__(cls)
        loaded.ids = tuple(task_id for task_id, _ in index)
        loaded.categories = tuple(category for _, category in index)
        loaded._tasks = loaded._blob = loaded._blobs = loaded._last = loaded._source = None
        loaded._loader, loaded._failure = load, None
        return loaded

    @property
    def pending(self) -> bool:
        """True while the tasks of a :meth:`deferred` object are not loaded yet."""
        return self._loader is not None or self._failure is not None

    def _load_deferred(self) -> None:
        """Load a :meth:`deferred` object's tasks (once) and hold them as ``load`` returned.

        Raises:
            TaskLoadError: ``load`` raised (now or on an earlier ask).
        """
        if self._failure is not None:
            from pytest_egi.suite import TaskLoadError

            raise TaskLoadError(self._failure)
        load, self._loader = self._loader, None
        if load is None:
            return
        try:
            full = load()
        except Exception as exc:
            self._failure = str(exc) or type(exc).__name__
            raise
        self._tasks, self._blob, self._blobs, self._last, self._source = (
            full._tasks, full._blob, full._blobs, full._last, full._source)

    @property
    def loaded(self) -> bool:
        """True once a Task object exists in this process."""
        return self._tasks is not None or self._last is not None

    def _released(self) -> RuntimeError:
        return RuntimeError(
            f"the {len(self.ids)} tasks were released when the session ended; nothing "
            "may read a task after the session's last item"
        )

    def all(self) -> list[Task]:
        """Every task, in ``load_tasks`` order (held as one pickle per task: a new list of
        new objects on each call; as one pickle of the list: unpickled on the first call).

        Raises:
            RuntimeError: the tasks were released (:meth:`release`).
            TaskLoadError: a :meth:`deferred` object's tasks could not be loaded.
        """
        if self.pending:
            self._load_deferred()
        tasks = self._tasks
        if tasks is None:
            self._read_source()
        if tasks is None and self._blobs is not None:
            return [pickle.loads(blob) for blob in self._blobs]
        if tasks is None:
            if self._blob is None:
                raise self._released()
            import gc

            enabled = gc.isenabled()
            gc.disable()  # many small objects that live as long as the session
            try:
                tasks = self._tasks = pickle.loads(self._blob)
            finally:
                if enabled:
                    gc.enable()
            self._blob = None
        return tasks

    def task(self, index: int) -> Task:
        """The task at ``index`` (as in :attr:`ids`).

        Raises:
            IndexError: no task there.
            RuntimeError: the tasks were released (:meth:`release`).
            TaskLoadError: a :meth:`deferred` object's tasks could not be loaded.
        """
        last = self._last  # (an item asks for its task several times)
        if last is not None and last[0] == index:
            return last[1]
        if self.pending:
            self._load_deferred()
        if self._tasks is None:
            self._read_source()
        blobs = self._blobs
        if blobs is None or self._tasks is not None:
            return self.all()[index]
        task = pickle.loads(blobs[index])
        self._last = (index, task)
        return task

    def drop_objects(self) -> None:
        """Held as one pickle per task: let go of the Task objects ``load_tasks`` returned in
        this process (kept through collection, for the suite's data checks); each item then
        unpickles its own task. Held as one pickle of the list: nothing changes. Spilled to a
        file (:meth:`spill`): whatever was read back from it (for the data checks) is let go
        of too."""
        if self._source is not None:
            self._tasks = self._blob = self._blobs = self._last = None
        elif self._blobs is not None:
            self._tasks = None

    def spill(self, path: str | os.PathLike[str]) -> None:
        """Move the tasks' pickles to the file ``path`` (written atomically) and hold only its
        name, with the ids and categories: this object then pickles small, and a process
        that never asks for a task never reads the file. :meth:`task` and :meth:`all` read it
        back when first asked (the file must then still be there). Tasks that cannot be
        pickled stay as they are.

        Raises:
            OSError: the file cannot be written (nothing changes).
        """
        from pytest_egi.cache.shared import write_pickle

        if self._source is not None:
            return
        if self._blobs is not None:
            payload: tuple[str, Any] = ("blobs", self._blobs)
        elif self._blob is not None:
            payload = ("blob", self._blob)
        else:
            try:
                payload = ("blob", pickle.dumps(self._tasks, protocol=pickle.HIGHEST_PROTOCOL))
            except (pickle.PicklingError, TypeError, AttributeError):
                return
        target = Path(path)
        write_pickle(target, payload)
        self._source = str(target)
        self._tasks = self._blob = self._blobs = self._last = None

    def _read_source(self) -> None:
        """Read the pickles back from the :meth:`spill` file, when they are not at hand.

        Raises:
            OSError: the file cannot be read.
            pickle.UnpicklingError: it holds no pickle of tasks.
        """
        if self._source is None or self._blob is not None or self._blobs is not None:
            return
        with open(self._source, "rb") as fh:
            kind, value = pickle.load(fh)
        if kind == "blobs":
            self._blobs = value
        else:
            self._blob = value

    def unload(self) -> None:
        """Let go of the Task objects this process unpickled, keeping the tasks pickled: a
        later :meth:`task` or :meth:`all` unpickles them again. Held as one pickle per task:
        the last task asked for is dropped. Held as one pickle of the list, once unpickled:
        the list is pickled again (what the tasks share stays shared) and dropped. Spilled
        to a file (:meth:`spill`): the pickles read from it are dropped too. Called when
        this process has run its last item of the suite
        (:func:`pytest_egi.run.items.release_suite`). Nothing changes for tasks that were
        never unpickled, nor for tasks that cannot be pickled (they stay objects).
        """
        self._last = None
        if self._source is not None:
            self._tasks = self._blob = self._blobs = None
            return
        if self._blobs is not None:
            self._tasks = None
            return
        if self._tasks is None:
            return
        try:
            self._blob = pickle.dumps(self._tasks, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            return
        self._tasks = None

    def release(self) -> None:
        """Drop the Task objects and their pickles; :attr:`ids` and :attr:`categories` stay.

        Called when the session ends, once every item has run: the records read back for
        aggregation then reuse the tasks' memory instead of adding to it. A later
        :meth:`task` or :meth:`all` raises ``RuntimeError``.
        """
        self._tasks = self._blob = self._blobs = self._last = self._source = None
        self._loader = self._failure = None

    def __reduce__(self) -> tuple[Any, ...]:
        if self.pending:
            raise TypeError(f"{len(self.ids)} deferred tasks cannot be pickled before they are loaded")
        if self._source is not None:
            return (_restore_tasks, (self.ids, self.categories, None, None, self._source))
        if self._blobs is not None:
            return (_restore_tasks, (self.ids, self.categories, None, self._blobs))
        blob = self._blob
        if blob is None:
            if self._tasks is None:
                raise self._released()
            blob = pickle.dumps(self._tasks, protocol=pickle.HIGHEST_PROTOCOL)
        return (_restore_tasks, (self.ids, self.categories, blob))
