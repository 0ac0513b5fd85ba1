"""A suite's optional ``task_index`` (pytest_egi/suite.py): a cold collection lists the items from
it without calling ``load_tasks``; the tasks are loaded once, when an item first needs one, stored
in the task cache for the next run, checked against the index, and their data checks still reach
the run's warnings (serial and ``-n 2``). A wrong index or a failed load errors the suite's items
with a message that says which, never a silently different run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pytest_egi.suite  # noqa: F401 - (pytester's in-process runs: see tests/test_taskcache.py)
from tests.toy_project import SUITE_INIT, make_toy_project

PACKAGE = "tisuites"
INDEX = '''
    def task_index(self, profile, options):
        if os.environ.get("TOY_INDEX") == "none":
            return None
        pairs = [(f"{cat}-{k}", cat) for cat in profile.categories or self.categories
                 for k in range(profile.per_category or 5)]
        if os.environ.get("TOY_INDEX") == "wrong":
            pairs[-1] = (pairs[-1][0], "alpha")
        if os.environ.get("TOY_INDEX") == "bad":
            pairs[0] = ("alpha-0", 7)
        return pairs

    def data_warnings(self, tasks, options):
        return {"beta": f"beta: {len(tasks)} toy tasks checked"}

    def load_tasks(self, profile, options):
        if os.environ.get("TOY_LOAD_FAILS"):
            with open(os.environ["TOY_LOAD_LOG"], "a") as fh:
                fh.write("failed\\n")
            raise ValueError("the toy world could not be built")
        return self._load(profile, options)

    def _load(self, profile, options):'''
INIT = SUITE_INIT.replace("\n    def load_tasks(self, profile, options):", INDEX, 1)
assert "def _load(self" in INIT


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    make_toy_project(pytester, PACKAGE, INIT)
    monkeypatch.setenv("TOY_LOAD_LOG", str(pytester.path / "loads.txt"))
    return pytester


def _loads(project: pytest.Pytester) -> int:
    log = project.path / "loads.txt"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _run(project: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    out = project.path / f"r{len(list(project.path.glob('r*')))}"
    result = project.runpytest_subprocess(PACKAGE, "--egi-model", "egi/oracle", "--egi-bootstrap", "0",
                                          "--egi-report-dir", str(out), "-p", "no:cacheprovider", *args)
    runs = list(out.iterdir()) if out.exists() else []
    egi = json.loads((runs[0] / "egi.json").read_text()) if runs else {}
    return result, egi


def test_a_cold_collection_lists_the_items_without_loading_the_tasks(project):
    result = project.runpytest(PACKAGE, "--egi-model", "egi/oracle", "--collect-only", "-q")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*test_task?alpha-0?", "*test_task?beta-2?", "6 tests collected*"])
    assert _loads(project) == 0
    assert not list((project.path / ".egi_cache" / "tasks").glob("tasks-toy-*.pkl"))


@pytest.mark.parametrize("dist", [[], ["-n", "2"], ["-n", "2", "--dist", "load"]],
                         ids=["serial", "n2", "n2-load"])
def test_the_tasks_load_once_when_an_item_needs_them_and_the_next_run_is_warm(project, dist):
    result, egi = _run(project, *dist)
    result.assert_outcomes(passed=6)
    assert _loads(project) == 1  # one process of the session loaded them (--dist load: both
    # workers run toy items, the second waits for the first's build in the shared folder)
    assert [w["warning"] for w in egi["data_warnings"]] == ["beta: 6 toy tasks checked"]
    assert len(list((project.path / ".egi_cache" / "tasks").glob("tasks-toy-*.pkl"))) == 1
    result, again = _run(project, *dist)
    result.assert_outcomes(passed=6)
    assert _loads(project) == 1  # the task cache answered
    assert again["data_warnings"] == egi["data_warnings"]
    assert again["egi"] == egi["egi"]


def test_without_an_index_the_collection_loads_as_before(project, monkeypatch):
    monkeypatch.setenv("TOY_INDEX", "none")
    result = project.runpytest(PACKAGE, "--egi-model", "egi/oracle", "--collect-only", "-q")
    assert result.ret == 0, result.stdout.str()
    assert _loads(project) == 1


def test_an_index_that_differs_from_the_loaded_tasks_errors_every_item(project, monkeypatch):
    monkeypatch.setenv("TOY_INDEX", "wrong")
    result, _ = _run(project)
    result.assert_outcomes(errors=6)
    result.stdout.fnmatch_lines([
        "*toy: task_index() does not list the tasks load_tasks() returns (a bug of the suite): 6 listed "
        "against 6 loaded; at position 5 the index has ('beta-2', 'alpha') and load_tasks ('beta-2', "
        "'beta'); fix: make task_index return exactly load_tasks' (id, category) pairs*"])
    assert _loads(project) == 1  # not loaded again for each item
    assert result.ret == 1


def test_a_load_that_fails_at_the_first_item_errors_the_suite_once(project, monkeypatch):
    monkeypatch.setenv("TOY_LOAD_FAILS", "1")
    result, _ = _run(project)
    result.assert_outcomes(errors=6)
    result.stdout.fnmatch_lines(["*toy: loading its tasks failed when its first item was about to run: "
                                 "ValueError: the toy world could not be built*"])
    assert Path(project.path / "loads.txt").read_text() == "failed\n"


def test_an_index_of_the_wrong_shape_is_a_usage_error(project, monkeypatch):
    monkeypatch.setenv("TOY_INDEX", "bad")
    result = project.runpytest(PACKAGE, "--egi-model", "egi/oracle", "--collect-only", "-q")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["ERROR: suite toy: task_index() must return (task id, category) pairs of "
                                 "strings or None, but gave ('alpha-0', 7); fix the suite's task_index*"])


def test_profile_categories_keeps_the_profile_or_the_known_order_and_names_unknown_ones():
    from pytest_egi.suite import SuiteProfile, profile_categories

    known = ("a", "b", "c")
    assert profile_categories(SuiteProfile(), known) == ["a", "b", "c"]
    assert profile_categories(SuiteProfile(categories=["c", "a"]), known) == ["c", "a"]
    assert profile_categories(SuiteProfile(categories=["c", "a"]), known, ordered=True) == ["a", "c"]
    with pytest.raises(ValueError, match=r"^unknown envs \['x'\]; known: \['a', 'b', 'c'\]$"):
        profile_categories(SuiteProfile(categories=["a", "x"]), known,
                           message="unknown envs {unknown}; known: {known}")
