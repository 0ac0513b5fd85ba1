"""pytest_egi.cache.shared: one build per session, shared across processes through a directory."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from enum import Enum
from pathlib import Path

import pytest
from pydantic import BaseModel

from pytest_egi.cache import shared
from pytest_egi.cache.shared import build_once, canonical_key

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def shared_dir(tmp_path: Path):
    """Sharing on, in ``tmp_path/shared``; the test process's own setting restored after."""
    directory = tmp_path / "shared"
    directory.mkdir()
    previous = shared.configure(directory)
    yield directory
    shared.configure(previous)


@pytest.fixture
def no_shared_dir():
    previous = shared.configure(None)
    yield
    shared.configure(previous)


class Counter:
    """A build function that counts its calls."""

    def __init__(self, value: object = "built") -> None:
        self.calls = 0
        self.value = value

    def __call__(self) -> object:
        self.calls += 1
        return self.value


def _pickles(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.pkl"))


WORKER = textwrap.dedent(
    """
    import os, sys, time
    from pytest_egi.cache import shared

    directory, count_file = sys.argv[1], sys.argv[2]
    shared.configure(directory)

    def build():
        with open(count_file, "a") as fh:
            fh.write(f"{os.getpid()}\\n")
        time.sleep(0.5)  # long enough for the other process to arrive and wait on the lock
        return {"rows": list(range(1000)), "by": os.getpid()}

    value = shared.build_once("rows", {"seed": 7, "suite": "toy"}, build)
    print(value["by"], len(value["rows"]))
    """
)


def test_two_processes_build_once(tmp_path: Path, shared_dir: Path):
    count = tmp_path / "builds.txt"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(shared_dir), str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    builders = count.read_text().split()
    assert len(builders) == 1  # build() ran in exactly one process
    # both processes got the builder's value (built by, and pickled from, that one process)
    assert [out.split() for out, _ in outputs] == [[builders[0], "1000"]] * 2
    assert len(_pickles(shared_dir)) == 1


def test_serial_calls_build_every_time(no_shared_dir):
    assert shared.shared_dir() is None
    build = Counter([1, 2])
    assert build_once("rows", {"seed": 1}, build) == [1, 2]
    assert build_once("rows", {"seed": 1}, build) == [1, 2]
    assert build.calls == 2


def test_second_call_unpickles_a_copy(shared_dir: Path):
    build = Counter({"a": [1, 2, 3]})
    first = build_once("rows", {"seed": 1}, build)
    second = build_once("rows", {"seed": 1}, build)
    assert build.calls == 1
    assert first == second == {"a": [1, 2, 3]}
    assert second is not first  # read back from the file
    [path] = _pickles(shared_dir)
    assert path.name.startswith("rows-") and len(path.stem) == len("rows-") + 16


def test_different_keys_give_different_files(shared_dir: Path):
    build_once("rows", {"seed": 1}, Counter(1))
    build_once("rows", {"seed": 2}, Counter(2))
    build_once("other", {"seed": 1}, Counter(3))
    assert len(_pickles(shared_dir)) == 3
    assert build_once("rows", {"seed": 2}, Counter("not called")) == 2


class Options(BaseModel):
    retriever: str = "bm25"
    top_k: int = 20


class Colour(Enum):
    RED = "red"


def test_canonical_key_is_stable_and_distinguishes_values():
    assert canonical_key({"b": 1, "a": {"y": 2, "x": 3}}) == canonical_key({"a": {"x": 3, "y": 2}, "b": 1})
    assert canonical_key({1, 2, 3}) == canonical_key({3, 2, 1})
    assert canonical_key(Options()) == canonical_key(Options(top_k=20))
    assert canonical_key(Options()) != canonical_key(Options(top_k=5))
    assert canonical_key((1, 2)) == canonical_key([1, 2])
    assert canonical_key(Path("/a/b")) == canonical_key(Path("/a/b"))
    assert canonical_key(Colour.RED) != canonical_key("red")
    # values that print alike stay apart
    distinct = [1, 1.0, "1", True, None, [1], {"1": 1}, {1: 1}]
    assert len({canonical_key(v) for v in distinct}) == len(distinct)


def test_same_key_in_another_order_reuses_the_file(shared_dir: Path):
    build_once("tasks", {"options": Options(), "seed": 1, "suite": "toy"}, Counter("x"))
    again = Counter("y")
    assert build_once("tasks", {"suite": "toy", "seed": 1, "options": Options()}, again) == "x"
    assert again.calls == 0


def test_corrupted_pickle_is_rebuilt_and_overwritten(shared_dir: Path):
    build_once("rows", {"seed": 1}, Counter([1, 2, 3]))
    [path] = _pickles(shared_dir)
    path.write_bytes(path.read_bytes()[:10])  # truncated
    rebuild = Counter([1, 2, 3])
    assert build_once("rows", {"seed": 1}, rebuild) == [1, 2, 3]
    assert rebuild.calls == 1
    untouched = Counter("not called")
    assert build_once("rows", {"seed": 1}, untouched) == [1, 2, 3]  # the file was rewritten
    assert untouched.calls == 0


def test_file_for_another_key_is_never_returned(shared_dir: Path):
    build_once("rows", {"seed": 1}, Counter("right"))
    [path] = _pickles(shared_dir)
    path.write_bytes(pickle.dumps(("some other key", "wrong")))  # as if the short hash collided
    assert build_once("rows", {"seed": 1}, Counter("right")) == "right"


def test_failing_build_writes_nothing_and_reraises(shared_dir: Path):
    def broken() -> None:
        raise ValueError("bad data in corpus.json")

    with pytest.raises(ValueError, match="bad data in corpus.json"):
        build_once("world", {"seed": 1}, broken)
    assert _pickles(shared_dir) == []
    assert [p for p in shared_dir.iterdir() if not p.name.endswith(".lock")] == []  # no temp file
    # the next caller builds for itself
    assert build_once("world", {"seed": 1}, Counter("ok")) == "ok"


@pytest.mark.parametrize("configured", [True, False], ids=["shared", "serial"])
def test_key_that_cannot_be_canonicalised_raises_type_error(configured: bool, tmp_path: Path):
    previous = shared.configure(tmp_path if configured else None)
    try:
        build = Counter()
        with pytest.raises(TypeError) as info:
            build_once("tasks", {"suite": "toy", "options": [1, object()]}, build)
        assert build.calls == 0
    finally:
        shared.configure(previous)
    message = str(info.value)
    assert "build_once('tasks')" in message
    assert "key['options'][1] is <object object at" in message
    assert "of type object" in message


def test_unpicklable_value_raises_type_error_naming_it(shared_dir: Path):
    with pytest.raises(TypeError, match=r"build_once\('gen'\): the built generator cannot be pickled"):
        build_once("gen", {"seed": 1}, lambda: (i for i in range(3)))
    assert _pickles(shared_dir) == []


def test_configure_returns_previous_and_ignores_missing_directories(tmp_path: Path):
    previous = shared.configure(tmp_path)
    try:
        assert shared.shared_dir() == tmp_path
        assert shared.configure(tmp_path / "missing") == tmp_path
        assert shared.shared_dir() is None  # e.g. a remote worker: nothing shared, nothing fails
    finally:
        shared.configure(previous)


def test_herb_world_and_env_are_built_once_and_unpickle_equal(shared_dir: Path):
    from suites.herb import HerbOptions
    from suites.herb.data import _cached_world, world_spec
    from suites.herb.env import _cached_env

    spec = json.dumps(world_spec(90417, HerbOptions(products=2)), sort_keys=True)
    # the unwrapped functions bypass the in-process lru caches: each call is what a fresh
    # worker does
    built_world = _cached_world.__wrapped__(spec)
    built_env = _cached_env.__wrapped__(spec, "bm25", None, False)
    names = sorted(p.name.rsplit("-", 1)[0] for p in _pickles(shared_dir))
    assert names == ["herb-env", "herb-world"]
    loaded_world = _cached_world.__wrapped__(spec)
    loaded_env = _cached_env.__wrapped__(spec, "bm25", None, False)
    assert loaded_world is not built_world and loaded_world == built_world
    assert loaded_env is not built_env
    # the env carries no copy of the world (a worker that unpickles it builds no world)
    assert not hasattr(built_env, "world") and not hasattr(loaded_env, "world")
    for question in (q["question"] for q in built_world.questions[:20]):
        assert loaded_env.retrieve(question, 20) == built_env.retrieve(question, 20)
        assert loaded_env.names_in(question) == built_env.names_in(question)


def _load_log(path: Path) -> list[tuple[int, str]]:
    return [
        (int(pid), directory)
        for pid, directory in (line.split(" ", 1) for line in path.read_text().splitlines())
    ]


def test_xdist_session_loads_tasks_once_and_removes_its_directory(toy_project, monkeypatch):
    log = toy_project.path / "loads.txt"
    monkeypatch.setenv("TOY_LOAD_LOG", str(log))
    before = shared.shared_dir()
    result = toy_project.runpytest(
        "toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "-n", "2"
    )
    result.assert_outcomes(passed=6)  # both workers collected the same 6 items
    [(pid, directory)] = _load_log(log)  # load_tasks ran once for the whole session
    assert pid != os.getpid()  # in a worker
    assert Path(directory).name.startswith("egi-shared-")
    assert not Path(directory).exists()  # removed at the end of the session
    assert shared.shared_dir() == before  # this process's own setting is untouched


def test_xdist_workers_load_tasks_in_a_child_process(toy_project, monkeypatch):
    """Cold (no task cache): the session's one ``load_tasks`` runs in a child of the worker
    that builds, so whatever world it made is never in a worker, which may run no item of the
    suite (before: in the worker, which kept it to the end)."""
    log, workers = toy_project.path / "loads.txt", toy_project.path / "workers.txt"
    monkeypatch.setenv("TOY_LOAD_LOG", str(log))
    toy_project.makeconftest(
        "import os\n"
        "def pytest_configure(config):\n"
        "    if hasattr(config, 'workerinput'):\n"
        f"        open({str(workers)!r}, 'a').write(f'{{os.getpid()}}\\n')\n")
    result = toy_project.runpytest_subprocess(
        "toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "--egi-no-cache", "-n", "2")
    result.assert_outcomes(passed=6)
    [(pid, _directory)] = _load_log(log)
    worker_pids = {int(line) for line in workers.read_text().split()}
    assert len(worker_pids) == 2 and pid not in worker_pids


def test_serial_session_shares_nothing(toy_project, monkeypatch):
    log = toy_project.path / "loads.txt"
    monkeypatch.setenv("TOY_LOAD_LOG", str(log))
    for _ in range(2):
        toy_project.runpytest(
            "toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "--egi-no-cache"
        ).assert_outcomes(passed=6)
    # (without the cross-run task cache, tests/test_taskcache.py) one load per session, and no
    # shared directory, even when this test process is itself an xdist worker with a directory
    # of its own
    assert _load_log(log) == [(os.getpid(), "None")] * 2


def test_isolated_build_runs_in_a_child_and_this_process_reads_its_file(shared_dir: Path):
    """``isolate=True``: ``build()`` runs in another process (its pid is not ours), which
    stores the file; we read it. A second call reads the same file."""
    value = build_once("iso", {"k": 1}, lambda: {"pid": os.getpid(), "data": list(range(5))}, isolate=True)
    assert value["pid"] != os.getpid() and value["data"] == [0, 1, 2, 3, 4]
    assert len(list(shared_dir.glob("iso-*.pkl"))) == 1
    assert build_once("iso", {"k": 1}, lambda: {"pid": os.getpid()}, isolate=True) == value


def test_isolated_build_that_fails_in_the_child_raises_here(shared_dir: Path):
    """The child fails and stores nothing: this process builds and raises the error itself."""
    calls: list[int] = []

    def build() -> int:
        calls.append(os.getpid())  # the child's append is lost with the child
        raise ValueError("tasks.json: field 'gold' is missing")

    with pytest.raises(ValueError, match="field 'gold' is missing"):
        build_once("iso-bad", {"k": 1}, build, isolate=True)
    assert calls == [os.getpid()]
    assert list(shared_dir.glob("iso-bad-*.pkl")) == []


def test_isolated_build_without_sharing_builds_here(no_shared_dir):
    assert build_once("iso", {"k": 1}, lambda: os.getpid(), isolate=True) == os.getpid()
