"""Build once per pytest session, share across xdist workers.

Under pytest-xdist every worker is its own process, so each would repeat a suite's
expensive one-time work (generating tasks, building a world, indexing a corpus).
:func:`build_once` lets the first process that asks do that work and hands the result to
every other process of the same session as a pickle file:

- The plugin gives each xdist worker the same directory, a fresh temporary directory the
  controller creates when it starts the workers and deletes when the session ends
  (``XdistHooks.pytest_configure_node`` in :mod:`pytest_egi.collect.xdist`, ``stop_sharing`` in
  :mod:`pytest_egi.run.settings`).
  The cache's scope is therefore one pytest session: nothing survives to the next run, so
  nothing can go stale across runs (code, data files or options changed between runs).
- With no directory configured (a serial run, or code running outside pytest)
  :func:`build_once` simply calls ``build()``; callers keep their own in-process caching.

What is shared is the pickled return value of ``build()``; every process gets its own
unpickled copy. The core knows no benchmark: callers (suites, or the plugin for
``load_tasks``) pick the ``name`` and the ``key``.
"""

from __future__ import annotations

import dataclasses
import enum
import gc
import hashlib
import json
import os
import pickle
import re
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path, PurePath
from typing import Any, TypeVar

__all__ = ["build_once", "canonical_key", "configure", "request_stop", "shared_dir", "stop_requested",
           "write_pickle"]

T = TypeVar("T")

_dir: Path | None = None


def configure(path: str | os.PathLike[str] | None) -> Path | None:
    """Set the shared directory of this process (None: no sharing, ``build_once`` just builds).

    A path that is not an existing directory on this host (e.g. a remote xdist worker given
    the controller's local path) also disables sharing.

    Returns:
        The previous setting, so a caller can restore it (nested in-process sessions).
    """
    global _dir
    previous = _dir
    _dir = Path(path) if path is not None and Path(path).is_dir() else None
    return previous


def shared_dir() -> Path | None:
    """The shared directory of this process, or None when nothing is shared."""
    return _dir


def _canonical(value: Any, where: str, name: str) -> Any:
    """A JSON-safe, order-independent form of ``value``; containers are tagged by kind."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        kind = type(value)
        return ["enum", f"{kind.__module__}.{kind.__qualname__}", _canonical(value.value, where, name)]
    from pydantic import BaseModel  # not at module level: the plugin imports this module

    if isinstance(value, BaseModel):
        kind = type(value)
        dumped = value.model_dump(mode="json")
        return ["model", f"{kind.__module__}.{kind.__qualname__}", _canonical(dumped, where, name)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = type(value)
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return ["dataclass", f"{kind.__module__}.{kind.__qualname__}", _canonical(fields, where, name)]
    if isinstance(value, PurePath):
        return ["path", str(value)]
    if isinstance(value, bytes):
        return ["bytes", value.hex()]
    if isinstance(value, dict):
        items = [
            (_canonical(k, f"{where} (a dict key)", name), _canonical(v, f"{where}[{k!r}]", name))
            for k, v in value.items()
        ]
        items.sort(key=lambda kv: json.dumps(kv[0], sort_keys=True))
        return ["dict", [list(kv) for kv in items]]
    if isinstance(value, (list, tuple)):
        return ["list", [_canonical(v, f"{where}[{i}]", name) for i, v in enumerate(value)]]
    if isinstance(value, (set, frozenset)):
        members = [_canonical(v, f"{where} (a set member)", name) for v in value]
        return ["set", sorted(members, key=lambda m: json.dumps(m, sort_keys=True))]
    raise TypeError(
        f"build_once({name!r}): cannot canonicalise the key: {where} is {value!r} of type "
        f"{type(value).__qualname__}; a key may hold None, bool, int, float, str, bytes, "
        "list, tuple, dict, set, pathlib paths, enums, dataclasses and pydantic models"
    )


def canonical_key(key: object, name: str = "key") -> str:
    """The stable text form of ``key`` that :func:`build_once` hashes.

    Equal keys give equal text in every process: dicts and sets are sorted, pydantic models
    are taken as ``model_dump(mode="json")`` (with their class name), tuples read as lists.

    Raises:
        TypeError: some value in ``key`` has no stable form (e.g. a function or an open
            file); the message names where it sits in the key and its type.
    """
    return json.dumps(_canonical(key, "key", name), sort_keys=True, separators=(",", ":"))


def _load(path: Path, text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``path`` holds a readable pickle made for key ``text``."""
    enabled = gc.isenabled()
    gc.disable()  # unpickling many small objects triggers GC passes that find no garbage
    try:
        with path.open("rb") as fh:
            stored = pickle.load(fh)
    except FileNotFoundError:
        return False, None
    except Exception:  # truncated, corrupted, or made by other code: rebuild it
        return False, None
    finally:
        if enabled:
            gc.enable()
    if isinstance(stored, tuple) and len(stored) == 2 and stored[0] == text:
        return True, stored[1]
    return False, None


def write_pickle(path: Path, value: Any) -> None:
    """Pickle ``value`` to ``path`` atomically (a temp file beside it, then ``os.replace``): a
    reader never sees half a file, and a failure leaves no temp file. The pickle is written to
    the file as it is made (no copy of it in memory: a world can be tens of MB).

    Raises:
        OSError: the file cannot be written.
        Exception: whatever pickling ``value`` raises.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _store(path: Path, text: str, value: Any, name: str) -> None:
    """Write ``(text, value)`` to ``path`` atomically (:func:`write_pickle`).

    Raises:
        OSError: the file cannot be written.
        TypeError: ``value`` cannot be pickled (the message names ``name`` and the type).
    """
    try:
        write_pickle(path, (text, value))
    except OSError:
        raise
    except Exception as exc:
        raise TypeError(
            f"build_once({name!r}): the built {type(value).__qualname__} cannot be pickled "
            f"to share it across pytest-xdist workers: {type(exc).__name__}: {exc}"
        ) from exc


def build_once(name: str, key: object, build: Callable[[], T], *, isolate: bool = False) -> T:
    """Return ``build()``, built by one process per session and shared with the others.

    With a shared directory (:func:`configure`; the plugin sets it on every xdist worker),
    the result is stored as ``<dir>/<name>-<sha256(canonical key)[:16]>.pkl``. The first
    process to ask builds it while holding a file lock beside that file; the others wait on
    the lock, then unpickle the file. The pickle also holds the full canonical key, so a
    file is only used for exactly the key it was built for. A file that cannot be unpickled
    is rebuilt and overwritten. Without a shared directory ``build()`` is simply called, on
    every call: callers keep their own in-process caching (e.g. ``functools.lru_cache``).

    The scope is one pytest session: the directory is a fresh temporary directory deleted
    when the session ends, so a result is never reused across runs.

    Args:
        name: what is built (``tasks-crmarena``, ``herb-env``); part of the file name.
        key: everything the result depends on within the session (suite name and version,
            seed, options, ...); see :func:`canonical_key` for what it may hold.
        build: makes the value; its result must be picklable when sharing is on.
        isolate: when sharing is on and this process is the one to build, build in a forked
            child process (POSIX), which stores the pickle and exits; this process then reads
            it like the others. What ``build()`` allocates on the way (a world an index is made
            from, the indexer's temporaries) then never counts in this process's memory, which
            holds only the result. A child that fails (an exception, a crash) leaves no file:
            this process then builds itself, so ``build()``'s exception is raised here.

    Raises:
        TypeError: ``key`` cannot be canonicalised (the message names the offending value),
            or, when sharing, the built value cannot be pickled.
        Exception: whatever ``build()`` raises propagates unchanged and nothing is written,
            so every process that asks builds (and raises) for itself.

    An unusable shared directory (lock or write fails with ``OSError``) is not an error: a
    ``RuntimeWarning`` says so and the value is built in this process.
    """
    text = canonical_key(key, name)
    directory = _dir
    if directory is None:
        return build()
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    path = directory / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}-{digest}.pkl"
    found, value = _load(path, text)  # fast path: already built (files appear atomically)
    if found:
        return value
    from filelock import FileLock  # not at module level: the plugin imports this module

    lock = FileLock(f"{path}.lock")
    try:
        lock.acquire()
    except OSError as exc:  # the directory is unusable here: build without sharing
        _warn_unshared(name, exc)
        return build()
    try:
        found, value = _load(path, text)  # built while we waited for the lock
        if found:
            return value
        if isolate and _build_in_child(path, text, build, name):
            found, value = _load(path, text)
            if found:
                return value
        value = build()
        try:
            _store(path, text, value, name)
        except OSError as exc:  # e.g. disk full: this process still has its value
            _warn_unshared(name, exc)
        return value
    finally:
        lock.release()


def _build_in_child(path: Path, text: str, build: Callable[[], Any], name: str) -> bool:
    """Run ``build()`` in a forked child that stores its result at ``path``; True when the
    child exited cleanly (False where ``os.fork`` is missing, or the child failed).

    The child runs only ``build()`` and the pickling, and leaves by ``os._exit`` (no atexit
    handler, no buffered output of this process flushed twice)."""
    if not hasattr(os, "fork"):
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork of a threaded process
        pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            _store(path, text, build(), name)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _warn_unshared(name: str, exc: OSError) -> None:
    warnings.warn(
        f"build_once({name!r}): cannot use the shared directory {_dir} ({exc}); "
        "building in this process instead",
        RuntimeWarning,
        stacklevel=3,
    )


STOP_FILE = "egi-stop"
"""Written by the controller to stop every worker (see :func:`request_stop`)."""


def request_stop(directory: Path, reason: str) -> None:
    """Ask every worker of the session to stop after its current item.

    xdist's own stop (``dsession.shouldstop``) only shuts workers down after the items
    already queued on them, which under ``worksteal`` is all of them: the controller writes
    ``reason`` to ``<directory>/egi-stop`` and each worker checks it after every item
    (:func:`stop_requested`). Atomic (temp file, then ``os.replace``).
    """
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".stop.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(reason)
    os.replace(tmp, Path(directory) / STOP_FILE)


def stop_requested() -> str | None:
    """The reason the controller asked this worker to stop, or None (also when nothing is
    shared, i.e. outside an xdist worker)."""
    if _dir is None:
        return None
    try:
        return (_dir / STOP_FILE).read_text(encoding="utf-8") or "egi: stop requested"
    except OSError:
        return None
