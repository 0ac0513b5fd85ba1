"""The cross-run task cache (pytest_egi/cache/taskcache.py): a warm collection does not call the
suite's ``load_tasks``; a change to anything in the key rebuilds; a corrupt entry is rebuilt
silently; ``--egi-no-cache`` neither reads nor writes it."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

# pytester's in-process runs drop the modules first imported in them, but the plugin keeps its
# suite objects: their Task class must stay the importable one for pickling
import pytest_egi.suite  # noqa: F401
from pytest_egi.cache import taskcache
from tests.toy_project import SUITE_INIT, make_toy_project

# The toy suite (tests/toy_project.py) with a path option, in its own package so the plugin's
# per-process suite cache never hands these tests a toy suite without that option.
PACKAGE = "tcsuites"
INIT = SUITE_INIT.replace("import os\n", "import os\nfrom pathlib import Path\n", 1).replace(
    "    fail_every: int = 0\n", "    fail_every: int = 0\n    data: Path | None = None\n", 1
)
assert "data: Path | None" in INIT


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pkg = make_toy_project(pytester, PACKAGE, INIT)
    (pkg / "_common").mkdir()
    (pkg / "_common" / "__init__.py").write_text("")
    monkeypatch.setenv("TOY_LOAD_LOG", str(pytester.path / "loads.txt"))
    return pytester


def _collect(project: pytest.Pytester, *args: str) -> None:
    result = project.runpytest(PACKAGE, "--egi-model", "egi/oracle", "--collect-only", "-q", *args)
    assert result.ret == 0, result.stdout.str()
    deep = "deep" in args
    assert f"{10 if deep else 6} tests collected" in result.stdout.str()
    assert "warning" not in result.stdout.str().lower()


def _loads(project: pytest.Pytester) -> int:
    log = project.path / "loads.txt"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _entries(project: pytest.Pytester, root: str = ".egi_cache") -> list[Path]:
    return sorted((project.path / root / "tasks").glob("tasks-toy-*.pkl"))


def _later(path: Path, seconds: int = 10) -> None:
    """Move ``path``'s mtime ``seconds`` later, its content and size unchanged."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 10**9))


def test_a_warm_collection_does_not_load_the_tasks(project):
    _collect(project)
    assert _loads(project) == 1
    [entry] = _entries(project)
    _collect(project)
    _collect(project)
    assert _loads(project) == 1  # both answered from the cache
    assert _entries(project) == [entry]


def test_the_cached_tasks_run_like_loaded_ones(project):
    project.runpytest(PACKAGE, "--egi-model", "egi/oracle", "--egi-bootstrap", "0").assert_outcomes(passed=6)
    result = project.runpytest(PACKAGE, "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "-v")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["*test_task?alpha-0? PASSED*", "*test_task?beta-2? PASSED*"])
    assert _loads(project) == 1


@pytest.mark.parametrize(
    "change",
    [
        "suite file mtime",
        "suite file size",
        "file added to the suite",
        "shared suite code",
        "parent package init",
    ],
)
def test_a_changed_source_file_rebuilds(project, change):
    suite = project.path / PACKAGE / "toy"
    _collect(project)
    if change == "suite file mtime":
        _later(suite / "__init__.py")
    elif change == "suite file size":
        (suite / "test_toy.py").write_text((suite / "test_toy.py").read_text() + "\n# edited\n")
    elif change == "file added to the suite":
        (suite / "world.json").write_text("{}")
    elif change == "shared suite code":
        (project.path / PACKAGE / "_common" / "__init__.py").write_text("X = 1\n")
    else:
        _later(project.path / PACKAGE / "__init__.py")
    _collect(project)
    assert _loads(project) == 2
    assert len(_entries(project)) == 2
    _collect(project)
    assert _loads(project) == 2  # the new state is cached in turn


@pytest.mark.parametrize(
    "first, second",
    [
        ((), ("--egi-opt", "toy.max_turns=4")),
        ((), ("--egi-seed", "8")),
        ((), ("--egi-mode", "deep")),
    ],
    ids=["option", "seed", "profile"],
)
def test_a_changed_option_seed_or_profile_rebuilds(project, first, second):
    _collect(project, *first)
    _collect(project, *second)
    assert _loads(project) == 2
    assert len(_entries(project)) == 2
    _collect(project, *first)
    _collect(project, *second)
    assert _loads(project) == 2  # both entries kept


@pytest.mark.parametrize("target", ["file", "folder"])
def test_a_changed_file_under_a_path_option_rebuilds(project, target):
    data = project.path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "sub" / "tasks.jsonl").write_text('{"id": 1}\n')
    path = data / "sub" / "tasks.jsonl" if target == "file" else data
    _collect(project, "--egi-opt", f"toy.data={path}")
    _collect(project, "--egi-opt", f"toy.data={path}")
    assert _loads(project) == 1
    (data / "sub" / "tasks.jsonl").write_text('{"id": 2}\n')  # same size, new mtime and ctime
    _collect(project, "--egi-opt", f"toy.data={path}")
    assert _loads(project) == 2
    if target == "folder":
        (data / "more.jsonl").write_text("")
        _collect(project, "--egi-opt", f"toy.data={path}")
        assert _loads(project) == 3


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "other key"])
def test_a_corrupt_entry_is_rebuilt_silently(project, damage):
    _collect(project)
    [entry] = _entries(project)
    good = entry.read_bytes()
    if damage == "garbage":
        entry.write_bytes(b"not a pickle at all")
    elif damage == "truncated":
        entry.write_bytes(good[: len(good) // 2])
    elif damage == "empty":
        entry.write_bytes(b"")
    else:  # a readable pickle made for another key
        entry.write_bytes(pickle.dumps(("another key", [])))
    _collect(project)  # no error, no warning (checked in _collect)
    assert _loads(project) == 2
    assert _entries(project) == [entry]
    assert pickle.loads(entry.read_bytes())[0] == pickle.loads(good)[0]  # rewritten whole
    _collect(project)
    assert _loads(project) == 2


def test_no_cache_neither_reads_nor_writes(project):
    _collect(project, "--egi-no-cache")
    _collect(project, "--egi-no-cache")
    assert _loads(project) == 2
    assert not (project.path / ".egi_cache").exists()
    _collect(project)  # now a cached entry exists ...
    [entry] = _entries(project)
    stamp = entry.stat().st_mtime_ns
    os.utime(entry, ns=(stamp, stamp - 10**9))
    _collect(project, "--egi-no-cache")  # ... and is not used, nor touched
    assert _loads(project) == 4
    assert entry.stat().st_mtime_ns == stamp - 10**9


def test_egi_cache_dir_holds_the_task_cache(project):
    _collect(project, "--egi-cache", "elsewhere")  # relative to the invocation folder
    _collect(project, "--egi-cache", "elsewhere")
    assert _loads(project) == 1
    assert len(_entries(project, "elsewhere")) == 1
    assert not (project.path / ".egi_cache").exists()


def test_an_unwritable_cache_folder_is_no_error(project):
    (project.path / "blocked").write_text("a file where the cache folder would be")
    _collect(project, "--egi-cache", "blocked")
    _collect(project, "--egi-cache", "blocked")
    assert _loads(project) == 2


def test_a_warm_xdist_run_loads_nothing(project):
    _collect(project)
    result = project.runpytest(PACKAGE, "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "-n", "2")
    result.assert_outcomes(passed=6)
    assert _loads(project) == 1


def test_old_entries_are_pruned(project, monkeypatch):
    monkeypatch.setattr(taskcache, "KEEP_PER_SUITE", 2)
    for seed in (1, 2, 3):
        _collect(project, "--egi-seed", str(seed))
    assert len(_entries(project)) == 2
    _collect(project, "--egi-seed", "1")  # the oldest was removed
    assert _loads(project) == 4


def test_fingerprint_is_stat_only_and_skips_bytecode(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    first = taskcache.fingerprint(tmp_path)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "b.pyc").write_bytes(b"\0")
    assert taskcache.fingerprint(tmp_path) == first
    _later(tmp_path / "a.py")
    assert taskcache.fingerprint(tmp_path) != first
    assert taskcache.fingerprint(tmp_path / "missing") == [str(tmp_path / "missing"), "missing", 0, ""]
    assert taskcache.fingerprint(tmp_path / "a.py")[1:3] == ["file", 1]


def test_source_paths_of_a_shipped_suite():
    import suites.crmarena

    root = Path(suites.crmarena.__file__).parent
    paths = taskcache.source_paths(suites.crmarena.SUITE, "suites.crmarena", {"tasks": Path("x/y.json")})
    assert paths[0] == root
    assert root.parent / "_common" in paths and root.parent / "__init__.py" in paths
    assert root.parent / "herb" not in paths
    assert Path(taskcache.__file__).parent in paths
    assert paths[-1] == Path("x/y.json").absolute()


def test_released_tasks_keep_their_ids_and_refuse_to_be_read():
    from pytest_egi.cache.taskcache import LoadedTasks
    from pytest_egi.suite import Task

    tasks = LoadedTasks([Task(id=f"t{i}", category="c", data={"i": i}) for i in range(3)])
    again = pickle.loads(pickle.dumps(tasks))  # as a worker or the task cache holds them
    for loaded in (tasks, again):
        assert loaded.task(1).data == {"i": 1}
        loaded.release()
        assert not loaded.loaded and loaded.ids == ("t0", "t1", "t2") and len(loaded) == 3
        with pytest.raises(RuntimeError, match=r"^the 3 tasks were released when the session ended; "
                                               r"nothing may read a task after the session's last item$"):
            loaded.task(0)


def test_tasks_that_share_nothing_are_held_as_one_pickle_each():
    from pytest_egi.cache.taskcache import LoadedTasks, _tasks_share_objects
    from pytest_egi.suite import Task

    made = [Task(id=f"t{i}", category="c", data={"i": i, "tags": ["x"]}) for i in range(4)]
    assert not _tasks_share_objects(made)
    tasks = LoadedTasks(made)
    assert tasks.all() is not None and tasks.task(2) is made[2]  # collection: load_tasks' own objects
    tasks.drop_objects()  # collection over: from here each item unpickles its own task
    for held in (tasks, pickle.loads(pickle.dumps(tasks))):  # a worker, the task cache
        assert not held.loaded
        two = held.task(2)
        assert two == made[2] and two is not made[2] and held.loaded
        assert held.task(2) is two  # the item's fixtures and recorder see one object
        assert held.task(3) == made[3] and held.task(2) is not two  # the next item: its own
        assert held.all() == made and held.all()[0] is not held.all()[0]  # fresh on each call
        held.release()
        with pytest.raises(RuntimeError, match="released"):
            held.task(0)


def test_tasks_that_share_a_large_object_are_held_as_one_pickle_of_the_list():
    from pytest_egi.cache.taskcache import LoadedTasks, _tasks_share_objects
    from pytest_egi.suite import Task

    world = {"orders": list(range(2000))}  # pickled once per task, it would take 3x the list's pickle
    made = [Task(id=f"t{i}", category="c", data={"i": i, "world": world}) for i in range(3)]
    assert _tasks_share_objects(made)
    assert _tasks_share_objects([Task(id=f"t{i}", category="c", data={"i": i}) for i in range(3)], most=5)
    held = pickle.loads(pickle.dumps(LoadedTasks(made)))
    held.drop_objects()  # nothing to drop: the list stays one pickle, unpickled once
    assert held.task(0).data["world"] is held.task(2).data["world"]


def test_tasks_that_share_only_small_objects_are_held_as_one_pickle_each():
    """What they share (a small preference dict, as UserBench's deep tasks) is worth less than
    unpickling every task at the first item: each item unpickles its own, the shared dict then
    a copy per task (before: the whole list, 29 MB of objects for UserBench's 471 deep tasks)."""
    from pytest_egi.cache.taskcache import SHARED_GAIN, LoadedTasks, _tasks_share_objects
    from pytest_egi.suite import Task

    rule = {"field": "rating", "op": ">=", "value": 4.5}
    made = [Task(id=f"t{i}", category="c", data={"i": i, "text": f"{i}" + "x" * 500, "rule": rule})
            for i in range(20)]
    assert _tasks_share_objects(made)
    one_by_one = sum(len(pickle.dumps(t, protocol=pickle.HIGHEST_PROTOCOL)) for t in made)
    assert one_by_one <= SHARED_GAIN * len(pickle.dumps(made, protocol=pickle.HIGHEST_PROTOCOL))
    held = pickle.loads(pickle.dumps(LoadedTasks(made)))
    assert held.task(3) == made[3] and not held._tasks  # one task unpickled, not the list
    assert held.task(0).data["rule"] == held.task(2).data["rule"] == rule


def test_tasks_that_cannot_be_pickled_stay_the_objects_load_tasks_returned():
    from pytest_egi.cache.taskcache import LoadedTasks
    from pytest_egi.suite import Task

    made = [Task(id=f"t{i}", category="c", data={"check": (lambda i=i: i)}) for i in range(2)]
    tasks = LoadedTasks(made)
    tasks.drop_objects()
    assert tasks.task(1) is made[1] and tasks.all() == made
