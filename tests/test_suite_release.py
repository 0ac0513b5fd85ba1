"""A suite is released (its optional ``release`` hook, its MCP servers, its Task objects) once a
process has run its last item of it, so a process does not hold every suite's world at once.

Two toy suites (``toy`` and ``other``) log their ``prepare``, ``release`` and each item to one
file, with the process id. The subprocess runs import ``pytest_egi`` from ``PYTHONPATH``.
"""

from __future__ import annotations

import pickle

import pytest

from pytest_egi.cache.taskcache import LoadedTasks
from pytest_egi.suite import Task
from tests.toy_project import ROUTING, SUITE_INIT, TEST_MODULE

LOGGED = """

import os as _os


def _log(*words):
    with open(_os.environ["RELEASE_LOG"], "a") as fh:
        fh.write(" ".join([str(_os.getpid()), *map(str, words)]) + "\\n")


def _prepare(self, tasks, options):
    _log("prepare", self.name)


def _release(self, options):
    _log("release", self.name)
    if _os.environ.get("RELEASE_FAILS"):
        raise RuntimeError("the world would not let go")


_score = ToySuite.score


def _logged_score(self, task, trajectory, options, judge=None):
    _log("item", self.name, task.id)
    echo = _os.environ.get("ECHO_SERVER")
    if echo:  # toy's items use an MCP server; other's say how many are running
        import sys
        from pytest_egi.mcp.client import ServerSpec, running_servers, shared_server
        if self.name == "toy":
            shared_server(ServerSpec.of("echo", sys.executable, [echo])).call_tool("echo", {"text": "x"})
        else:
            _log("servers", self.name, len(running_servers()))
    return _score(self, task, trajectory, options, judge)


ToySuite.prepare = _prepare
ToySuite.release = _release
ToySuite.score = _logged_score
"""

INTERLEAVE = """
def pytest_collection_modifyitems(items):
    # toy and other alternate: alpha-0 of toy, alpha-0 of other, alpha-1 of toy, ...
    toy = [i for i in items if "/toy/" in i.nodeid]
    other = [i for i in items if "/other/" in i.nodeid]
    items[:] = [i for pair in zip(toy, other) for i in pair]
"""


@pytest.fixture
def two_suites(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """``toysuites/toy`` and ``toysuites/other`` (the toy suite under another name), both
    routed, 6 items each in the quick profile; ``RELEASE_LOG`` names the log file."""
    routing = ROUTING.replace("suites: [toy, absent]", "suites: [toy, other, absent]").replace(
        "  - {suite: absent,",
        "  - {suite: other, sub_metric: acc, bucket: M2, transform: fraction}\n  - {suite: absent,",
    ).replace("      toy: {per_category: 3}", "      toy: {per_category: 3}\n      other: {per_category: 3}")
    pytester.makefile(".yaml", routing=routing)
    pytester.makeconftest("")
    pkg = pytester.mkpydir("toysuites")
    for name in ("toy", "other"):
        folder = pkg / name
        folder.mkdir()
        init = SUITE_INIT.replace('name = "toy"', f'name = "{name}"') + LOGGED
        (folder / "__init__.py").write_text(init)
        (folder / f"test_{name}.py").write_text(TEST_MODULE.replace("toysuites.toy", f"toysuites.{name}"))
    monkeypatch.setenv("RELEASE_LOG", str(pytester.path / "release.log"))
    return pytester


def _log(pytester: pytest.Pytester) -> list[tuple[str, ...]]:
    """The log's lines as ``(pid, event, suite[, task id])``."""
    path = pytester.path / "release.log"
    return [tuple(line.split()) for line in path.read_text().splitlines()] if path.exists() else []


def _events(log: list[tuple[str, ...]]) -> list[str]:
    """``"prepare toy"``, ``"item toy"`` (one per run of consecutive items), ``"release toy"``."""
    out: list[str] = []
    for _pid, event, suite, *_ in log:
        entry = f"{event} {suite}"
        if not (event == "item" and out and out[-1] == entry):
            out.append(entry)
    return out


RUN = ("toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "--egi-no-cache")


def test_serially_each_suite_is_released_after_its_last_item(two_suites):
    """Serially (every suite prepared before the first item, as before), each suite is
    released right after its last item, before the next suite's first one; the last suite
    too (the session's end, its report, comes after). Before: nothing was released."""
    result = two_suites.runpytest_subprocess(*RUN)
    result.assert_outcomes(passed=12)
    events = _events(_log(two_suites))
    assert events[:2] == ["prepare other", "prepare toy"] or events[:2] == ["prepare toy", "prepare other"]
    first, second = events[2].split()[1], events[4].split()[1]
    assert events[2:] == [f"item {first}", f"release {first}", f"item {second}", f"release {second}"]


def test_a_worker_releases_a_suite_before_its_next_suites_first_item(two_suites):
    """One xdist worker runs both suites one after the other: it prepares each just before its
    first item and releases the first one between the two; the worker's last suite is not
    released (the process ends). Before: the first suite's world was kept to the end."""
    result = two_suites.runpytest_subprocess(*RUN, "-n", "1")
    result.assert_outcomes(passed=12)
    log = _log(two_suites)
    assert len({pid for pid, *_ in log}) == 1  # the one worker
    events = _events(log)
    first, second = events[0].split()[1], events[3].split()[1]
    assert {first, second} == {"toy", "other"}
    assert events == [f"prepare {first}", f"item {first}", f"release {first}",
                      f"prepare {second}", f"item {second}"]  # fmt: skip


def test_the_mcp_servers_of_a_released_suite_are_stopped(two_suites, monkeypatch):
    """toy's items use an MCP server (started on first use, process-wide): once the worker
    has run toy's last item, the server is stopped before other's items run (before: it ran
    to the end of the session, with every other suite's)."""
    from pathlib import Path

    monkeypatch.setenv("ECHO_SERVER", str(Path(__file__).parent / "mcp" / "echo_server.py"))
    two_suites.makeconftest(
        "def pytest_collection_modifyitems(items):\n"
        "    items.sort(key=lambda i: '/other/' in i.nodeid)  # toy first\n")
    result = two_suites.runpytest_subprocess(*RUN, "-n", "1", "--dist", "load")
    result.assert_outcomes(passed=12)
    log = _log(two_suites)
    assert _events(log)[:3] == ["prepare toy", "item toy", "release toy"]
    assert [line[3] for line in log if line[1] == "servers"] == ["0"] * 6


def test_a_suite_whose_items_come_back_is_prepared_again_and_then_kept(two_suites):
    """Items of two suites that alternate on a worker (``--dist load``, a conftest that
    interleaves them): each suite is released once, when the other's item comes next, and
    prepared again when its own comes back; from then on it is kept (no world rebuilt at
    every switch). Every item runs with its suite prepared."""
    two_suites.makeconftest(INTERLEAVE)
    result = two_suites.runpytest_subprocess(*RUN, "-n", "1", "--dist", "load")
    result.assert_outcomes(passed=12)
    events = _events(_log(two_suites))
    assert events[:6] == ["prepare toy", "item toy", "release toy", "prepare other", "item other",
                          "release other"]  # fmt: skip
    assert events[6:8] == ["prepare toy", "item toy"]
    assert events.count("release toy") == 1 and events.count("release other") == 1
    assert events.count("prepare toy") == 2 and events.count("prepare other") == 2


def test_serially_interleaved_suites_are_released_only_after_their_last_item(two_suites):
    """Serially the session knows every item: alternating suites are released once each,
    after their last item, and never prepared again."""
    two_suites.makeconftest(INTERLEAVE)
    result = two_suites.runpytest_subprocess(*RUN)
    result.assert_outcomes(passed=12)
    events = _events(_log(two_suites))
    assert events.count("prepare toy") == 1 and events.count("prepare other") == 1
    assert events[-3:] == ["release toy", "item other", "release other"]


def test_a_release_that_fails_is_a_warning_and_the_items_pass(two_suites, monkeypatch):
    monkeypatch.setenv("RELEASE_FAILS", "1")
    result = two_suites.runpytest_subprocess(*RUN, "-W", "always::RuntimeWarning")
    result.assert_outcomes(passed=12, warnings=2)
    result.stdout.fnmatch_lines(["*toy: release failed: RuntimeError: the world would not let go*"])


def _tasks(shared: bool) -> list[Task]:
    world = {"name": "one world"}
    return [Task(id=f"t{i}", category="c", data={"i": i, "world": world if shared else dict(world)})
            for i in range(3)]


def test_unload_drops_the_tasks_of_a_list_pickle_and_keeps_them_readable():
    """Tasks that share an object are held as one pickle of the list, unpickled as a whole on
    first use; ``unload`` pickles them again and drops the objects (before: they stayed for
    the rest of the process); what they share is shared again once read back."""
    loaded = pickle.loads(pickle.dumps(LoadedTasks(_tasks(shared=True))))
    first = loaded.task(1)
    assert loaded.loaded
    loaded.unload()
    assert not loaded.loaded
    again = loaded.task(1)
    assert again is not first and again == first
    assert loaded.task(0).data["world"] is loaded.task(2).data["world"]


def test_unload_of_tasks_pickled_one_by_one_drops_the_last_one():
    loaded = LoadedTasks(_tasks(shared=False))
    loaded.drop_objects()
    first = loaded.task(2)
    assert loaded.loaded
    loaded.unload()
    assert not loaded.loaded
    assert loaded.task(2) == first and loaded.task(2) is not first


def test_spilled_tasks_pickle_small_and_are_read_back_when_first_needed(tmp_path):
    """Under xdist the tasks' pickles go to a file of the shared folder: what the workers
    receive holds the ids and categories only; a task is read from the file when first
    asked for, and ``unload`` lets the pickles go again (before: every worker held every
    suite's pickles to the end, about 12 MB at the deep profile)."""
    made = _tasks(shared=False)
    whole = LoadedTasks(made)
    whole.spill(tmp_path / "tasks.pickles")
    assert len(pickle.dumps(whole)) < len(pickle.dumps(LoadedTasks(made))) - 100
    held = pickle.loads(pickle.dumps(whole))
    assert held.ids == ("t0", "t1", "t2") and held._blobs is None
    assert held.task(1) == made[1] and held._blobs is not None
    held.unload()
    assert held._blobs is None and not held.loaded
    assert held.all() == made
    shared = LoadedTasks(_tasks(shared=True))
    shared.spill(tmp_path / "shared.pickles")
    back = pickle.loads(pickle.dumps(shared))
    assert back.task(0).data["world"] is back.task(2).data["world"]


HOLDS = """
import os

import pytest


@pytest.hookimpl(trylast=True)  # after the plugin's end of collection
def pytest_collection_finish(session):
    if hasattr(session.config, "workerinput"):
        from pytest_egi.run.state import case_of
        seen = {}
        for item in session.items:
            case = case_of(item)
            seen[case.suite.name] = case.tasks._blobs is not None or case.tasks._blob is not None
        with open(os.environ["RELEASE_LOG"], "a") as fh:
            fh.write(f"{os.getpid()} holds " + " ".join(f"{k}={v}" for k, v in sorted(seen.items())) + "\\n")
"""


def test_workers_hold_no_task_pickles_after_collection(two_suites):
    two_suites.makeconftest(HOLDS)
    result = two_suites.runpytest_subprocess(*RUN, "-n", "2")
    result.assert_outcomes(passed=12)
    holds = [line for line in _log(two_suites) if line[1] == "holds"]
    assert len(holds) == 2 and all(line[2:] == ("other=False", "toy=False") for line in holds)


KEPT_REPORTS = """
import os

import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    if hasattr(session.config, "workerinput"):
        terminal = session.config.pluginmanager.get_plugin("terminalreporter")
        kept = sum(isinstance(r, pytest.TestReport) for reports in terminal.stats.values() for r in reports)
        with open(os.environ["RELEASE_LOG"], "a") as fh:
            fh.write(f"{os.getpid()} reports {kept} {session.testscollected}\\n")
"""


def test_a_worker_keeps_no_report_of_the_items_it_ran(two_suites):
    """xdist's worker writes its terminal to /dev/null, whose stats kept every report (three per
    item, about 2.3 KB) to the end; they leave once sent to the controller."""
    two_suites.makeconftest(KEPT_REPORTS)
    result = two_suites.runpytest_subprocess(*RUN, "-n", "1")
    result.assert_outcomes(passed=12)
    [line] = [line for line in _log(two_suites) if line[1] == "reports"]
    assert line[2:] == ("0", "12")
