"""A run file that cannot be written mid-run (a full disk, a folder turned read-only) stops the
session cleanly: exit status 2, one line naming the file, the error and ``--egi-resume``, never
an INTERNALERROR; ``run.json`` says ``stopped`` (or the line says it could not be marked); no
session-end file claims a complete run. Resuming once the disk is fixed gives the records of an
uninterrupted run. Serial and ``-n 2``.

The faults are injected the way they happen in the field:

- **a full disk**: a size-limited folder, a 40 KiB tmpfs mounted for the test (as root, with
  the right to mount); where mounting is impossible that test is skipped, and the same full
  disk is also injected by a file layer (below), which runs everywhere;
- **a folder turned read-only**: the tests run as root, and ``chmod`` does not stop root's
  writes, so a file layer plays the read-only folder: from the moment a marker file appears,
  opening a file for writing, making a folder, renaming or removing one inside the run folder
  fails with ``EACCES``; a file already open (the journal) still writes, as after a real
  ``chmod``.

The file layer is a plugin module (``egi_fault``) passed with ``-p``, so it is loaded in the
session's process and in every xdist worker (the fault is injected in the process that
writes). ``EGI_FAULT_MODE`` chooses ``enospc`` (every write to a file inside the folder fails
with ENOSPC, including files already open: a full disk) or ``readonly``; ``EGI_FAULT_FILES``
limits it to files of those names. The test project's conftest creates the marker when the
item named by ``EGI_TEST_FAULT_IN`` starts, or at the session's end (``end``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_resume_shard_interrupt import (
    CONFTEST,
    REPO,
    RUN,
    TASKS,
    _assert_same_run,
    _json,
    _project,
    _wait,
)

FAULT_PLUGIN = '''
"""Fault-injecting file layer for the run folder (see tests/test_write_faults.py)."""
import builtins
import errno
import os

DIR = os.path.realpath(os.environ["EGI_FAULT_DIR"]) + os.sep
MARK = os.environ["EGI_FAULT_MARK"]
MODE = os.environ.get("EGI_FAULT_MODE", "enospc")
FILES = {f for f in os.environ.get("EGI_FAULT_FILES", "").split(",") if f}
_open, _mkdir, _replace, _unlink = builtins.open, os.mkdir, os.replace, os.unlink
_os_open, _os_write = os.open, os.write
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT


def _inside(path):
    try:
        full = os.path.realpath(os.fspath(path))
    except TypeError:  # a file descriptor
        return False
    name = os.path.basename(full)
    if FILES and not any(name == f or name.startswith("." + f + ".") for f in FILES):
        return False
    return full.startswith(DIR) and os.path.exists(MARK)


def _refuse(path):
    if MODE == "enospc":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))


class _Full:
    """A file inside the folder: once the disk is full, every write fails with ENOSPC."""

    def __init__(self, fh, path):
        self._fh, self._path = fh, path

    def write(self, data):
        if _inside(self._path):
            _refuse(self._path)
        return self._fh.write(data)

    def __enter__(self):
        self._fh.__enter__()
        return self

    def __exit__(self, *exc):
        return self._fh.__exit__(*exc)

    def __iter__(self):
        return iter(self._fh)

    def __getattr__(self, name):
        return getattr(self._fh, name)


def open(file, mode="r", *args, **kwargs):
    writes = any(c in mode for c in "wax+")
    if writes and MODE == "readonly" and _inside(file):
        _refuse(file)
    fh = _open(file, mode, *args, **kwargs)
    if writes and MODE == "enospc" and not isinstance(file, int):
        return _Full(fh, file)
    return fh


def mkdir(path, *args, **kwargs):
    if MODE == "readonly" and _inside(path):
        _refuse(path)
    return _mkdir(path, *args, **kwargs)


def replace(src, dst, *args, **kwargs):
    if MODE == "readonly" and _inside(dst):
        _refuse(dst)
    return _replace(src, dst, *args, **kwargs)


def unlink(path, *args, **kwargs):
    if MODE == "readonly" and _inside(path):
        _refuse(path)
    return _unlink(path, *args, **kwargs)


def os_open(path, flags, *args, **kwargs):
    if flags & _WRITES and MODE == "readonly" and _inside(path):
        _refuse(path)
    return _os_open(path, flags, *args, **kwargs)


def os_write(fd, data):
    """A file opened before the fault (a trajectory store): its writes fail too."""
    try:
        path = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        path = None
    if path is not None and _inside(path):
        _refuse(path)
    return _os_write(fd, data)


builtins.open, os.mkdir, os.replace, os.unlink = open, mkdir, replace, unlink
os.open, os.write = os_open, os_write
'''

MARKER_CONFTEST = CONFTEST + '''

FAULT_IN = os.environ.get("EGI_TEST_FAULT_IN", "")


def _mark():
    with open(os.environ["EGI_FAULT_MARK"], "w") as fh:
        fh.write("full")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if FAULT_IN and item.nodeid.endswith(f"[{FAULT_IN}]"):
        _mark()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    if FAULT_IN == "end" and not hasattr(session.config, "workerinput"):
        _mark()  # every item ran and is journaled; the session's own files are not written yet
    return (yield)
'''


def _faulty_project(root: Path) -> Path:
    project = _project(root)
    (project / "conftest.py").write_text(MARKER_CONFTEST)
    (project / "egi_fault.py").write_text(FAULT_PLUGIN)
    return project


def _run(project: Path, *args: str, fault: dict[str, str] | None = None,
         **env: str) -> subprocess.CompletedProcess:
    """``python -m pytest`` of the toy's deep profile in ``project``, to its end; ``fault``: the
    file layer's settings (EGI_FAULT_DIR, EGI_FAULT_MODE, ...), loaded with ``-p egi_fault``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "EGI_TEST_", "EGI_FAULT"))}
    paths = [str(project), str(REPO), os.environ.get("PYTHONPATH")]
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    environ.update({f"EGI_TEST_{k.upper()}": v for k, v in env.items()})
    plugin: tuple[str, ...] = ()
    if fault is not None:
        environ.update(fault)
        plugin = ("-p", "egi_fault")
    return _wait(subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *plugin, *RUN, *args],
        cwd=project, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    ))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The uninterrupted run: reports/REF of a toy project."""
    project = _project(tmp_path_factory.mktemp("reference"))
    proc = _run(project, "--egi-run-id", "REF")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return project / "reports" / "REF"


def _egi_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stdout.splitlines() if line.startswith("egi: the run stopped")]


def _assert_stopped_cleanly(proc: subprocess.CompletedProcess, run: Path, file: Path | None, error: str,
                            fix: str) -> str:
    """Exit status 2, no INTERNALERROR, one line naming ``file`` (None: any file of the run
    folder), ``error``, ``fix`` and ``--egi-resume``; run.json marked stopped or the line saying
    it could not be; no egi.json. Returns the file named."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert "INTERNALERROR" not in out and "Traceback" not in out, out
    (line,) = _egi_lines(proc)
    named = line.removeprefix("egi: the run stopped: cannot write ").split(f" ({error})")[0]
    if file is not None:
        assert named == str(file), line
    assert Path(named).is_relative_to(run), line
    head = (f"egi: the run stopped: cannot write {named} ({error}); every item recorded before is kept; "
            f"{fix}, then continue it with --egi-resume {run}")
    manifest = _json(run / "run.json")
    if manifest["status"] == "stopped":
        assert line == head
        assert manifest["stop_reason"] == f"cannot write {named} ({error})"
    else:  # run.json itself could not be written: the line says so, and what it still says
        assert manifest["status"] == "running"
        assert line == (f"{head} (run.json could not be marked stopped either ({error}); it still says "
                        "running)")
    assert not (run / "egi.json").exists()  # no session-end file claims a complete run
    return named


def _mount_tmpfs(where: Path, size: str) -> None:
    mount = shutil.which("mount")
    if mount is None:
        pytest.skip("no mount command here; the file-layer tests inject the full disk")
    done = subprocess.run([mount, "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}); the file-layer tests inject "
                    "the full disk")


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 24 KiB tmpfs (six pages): a folder on a disk that fills up after a few items (the run
    folder's files, its journal and its trajectory stores, outgrow it mid-run)."""
    where = tmp_path / "disk"
    where.mkdir()
    _mount_tmpfs(where, "24k")
    yield where
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
def test_a_full_disk_stops_the_run_cleanly_and_it_resumes_once_space_is_freed(
        tmp_path, small_disk, reference, workers):
    project = _project(tmp_path / "p")
    run = small_disk / "reports" / "K"
    proc = _run(project, "--egi-run-id", "K", "--egi-report-dir", str(small_disk / "reports"), *workers)
    _assert_stopped_cleanly(proc, run, None, "No space left on device", "free space on that disk")
    journaled = [json.loads(line) for line in (run / "journal.jsonl").read_text().splitlines()
                 if line.endswith("}")]
    assert 0 < len(journaled) < len(TASKS)  # it stopped mid-run
    subprocess.run(["mount", "-o", "remount,size=4m", str(small_disk)], check=True)  # space freed
    resumed = _run(project, "--egi-resume", str(run), *workers)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_same_run(run, reference)
    assert _json(run / "run.json")["status"] == "complete"


FULL = ("enospc", "No space left on device", "free space on that disk")
READ_ONLY = ("readonly", "Permission denied", "make the folder writable")


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
@pytest.mark.parametrize(("mode", "error", "fix"), [FULL, READ_ONLY], ids=["full", "read-only"])
def test_a_run_folder_that_fails_mid_run_stops_the_run_and_it_resumes_once_fixed(
        tmp_path, reference, workers, mode, error, fix):
    project = _faulty_project(tmp_path / "p")
    run = project / "reports" / "K"
    fault = {"EGI_FAULT_DIR": str(run), "EGI_FAULT_MARK": str(tmp_path / "mark"), "EGI_FAULT_MODE": mode}
    proc = _run(project, "--egi-run-id", "K", *workers, fault=fault, fault_in="alpha-4")
    named = _assert_stopped_cleanly(proc, run, None, error, fix)
    # a trajectory store (raw/<writer>-<pid>.jsonl) or the journal
    assert Path(named).name.endswith(".jsonl") and Path(named).name != "records.jsonl"
    lines = (run / "journal.jsonl").read_text().splitlines()
    assert 0 < len([x for x in lines if x.endswith("}")]) < len(TASKS)  # it stopped mid-run
    (tmp_path / "mark").unlink()  # the disk is fixed
    resumed = _run(project, "--egi-resume", "reports/K", *workers, fault=fault)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_same_run(run, reference)
    assert _json(run / "run.json")["status"] == "complete"


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
@pytest.mark.parametrize(("files", "status"), [
    ("egi.json", "stopped"),  # records.jsonl written, egi.json not: run.json says stopped
    ("report.html", "stopped"),  # report.html is written before egi.json: neither is there
    ("", "running"),  # nothing can be written: run.json keeps its last status, the line says so
])
def test_a_disk_that_fills_at_the_session_end_never_leaves_a_complete_run_without_egi_json(
        tmp_path, reference, workers, files, status):
    """Before, run.json was marked complete first, then egi.json failed with an INTERNALERROR:
    a run that said complete with no egi.json."""
    project = _faulty_project(tmp_path / "p")
    run = project / "reports" / "K"
    fault = {"EGI_FAULT_DIR": str(run), "EGI_FAULT_MARK": str(tmp_path / "mark"), "EGI_FAULT_MODE": "enospc",
             "EGI_FAULT_FILES": files}
    proc = _run(project, "--egi-run-id", "K", *workers, fault=fault, fault_in="end")
    named = _assert_stopped_cleanly(proc, run, None, "No space left on device", "free space on that disk")
    assert Path(named).name == (files or "records.jsonl")
    assert not (run / "report.html").exists()
    assert _json(run / "run.json")["status"] == status
    assert sorted(json.loads(x)["task_id"] for x in (run / "journal.jsonl").read_text().splitlines()) == TASKS
    (tmp_path / "mark").unlink()
    resumed = _run(project, "--egi-resume", "reports/K", *workers, fault=fault)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_same_run(run, reference)
    assert _json(run / "egi.json")["session"]["resumed_items"] == len(TASKS)


# -- the response cache degrades ----------------------------------------------------------------

MODEL = "openai/test-model"


def _toy_agent(request: dict):
    """A competent agent behind the local server: look the item up, submit its code."""
    import re

    from tests.helpers.openai_server import tool_reply

    last = request["messages"][-1]
    if last["role"] == "tool":
        return tool_reply("submit", json.dumps({"code": json.loads(last["content"])["code"]}), call_id="c2")
    item = int(re.search(r"item (\d+)", last["content"]).group(1))
    return tool_reply("lookup", json.dumps({"item": item}), call_id="c1")


CACHE_WARNING = "unusable, calls go to the network"


@pytest.mark.parametrize(("disk", "workers"), [("full", ()), ("read-only", ("-n", "2"))])
def test_a_response_cache_that_cannot_be_written_warns_and_the_run_goes_on(tmp_path, monkeypatch, disk,
                                                                           workers):  # fmt: skip
    """The cache is a speed-up, not a result: a cache folder on a full disk (a 40 KiB tmpfs,
    filled) or turned read-only (the file layer) warns once per process and every call goes to
    the network; the run's records are those of a run without a cache."""
    from tests.helpers.openai_server import OpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    project = _faulty_project(tmp_path / "p")
    cache = tmp_path / "disk" / "cache"
    fault = None
    if disk == "full":
        cache.parent.mkdir()
        _mount_tmpfs(cache.parent, "40k")
        try:
            with open(cache.parent / "filler", "wb") as fh:  # the disk fills up
                fh.write(b"x" * 64 * 1024)
        except OSError:
            pass
    else:
        (tmp_path / "mark").write_text("read-only")
        fault = {"EGI_FAULT_DIR": str(cache.parent), "EGI_FAULT_MARK": str(tmp_path / "mark"),
                 "EGI_FAULT_MODE": "readonly"}
    try:
        with OpenAIServer(reply_fn=_toy_agent) as server:
            model = ("--egi-model", MODEL, "--egi-api-base", server.url)
            proc = _run(project, *model, "--egi-run-id", "C", "--egi-cache", str(cache), *workers,
                        "-W", "always::RuntimeWarning", fault=fault)
            plain = _run(project, *model, "--egi-run-id", "N", "--egi-no-cache", *workers)
    finally:
        if disk == "full":
            subprocess.run(["umount", "-l", str(cache.parent)], capture_output=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "INTERNALERROR" not in out and "errored" not in out
    assert out.count(CACHE_WARNING) >= 1 and f"response cache {cache}/responses.sqlite3" in out
    assert plain.returncode == 0, plain.stdout + plain.stderr
    run, no_cache = project / "reports" / "C", project / "reports" / "N"
    assert _json(run / "egi.json")["counts"] == {"passed": 10}
    assert (run / "records.jsonl").read_bytes() == (no_cache / "records.jsonl").read_bytes()
    assert _json(run / "run.json")["status"] == "complete"


def test_a_resumed_run_removes_the_temp_files_failed_writes_left(tmp_path):
    """A write that failed in a folder turned read-only keeps its temp file (it cannot remove
    it); resuming the run removes such leftovers, and only them, so the resumed run's files are
    those of an uninterrupted run."""
    from pytest_egi.records import _TEMP_NAME, atomic_file, remove_stale_temp_files

    raw = tmp_path / "K" / "raw" / "toy"
    raw.mkdir(parents=True)
    left = [raw / ".beta-2.json.5827-140028181502848.tmp", tmp_path / "K" / ".egi.json.12-34.tmp"]
    kept = [raw / "beta-2.json", raw / ".hidden.tmp", raw / "x.json.5827-1.tmp",
            tmp_path / "K" / "journal.jsonl"]  # fmt: skip
    for path in left + kept:
        path.write_text("{}")
    assert sorted(remove_stale_temp_files(tmp_path / "K")) == sorted(left)
    assert [p.exists() for p in left + kept] == [False] * len(left) + [True] * len(kept)
    with atomic_file(raw / "alpha-0.json") as fh:  # the temp name atomic_file really uses is one
        fh.write("{}")
        (temp,) = raw.glob(".alpha-0.json.*.tmp")
        assert _TEMP_NAME.match(temp.name)
    assert (raw / "alpha-0.json").read_text() == "{}"
