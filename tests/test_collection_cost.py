"""What a warm collection does not do (docs/performance.md): it builds no Task object (the
tasks stay one pickle until an item needs them, ``pytest_egi.cache.taskcache.LoadedTasks``), runs
no suite data check (their results are cached beside the tasks), parses no routing file
(its parsed YAML is cached too), and imports none of the heavy modules a run may need.
Each cache is rebuilt when what it depends on changes."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# pytester's in-process runs drop the modules first imported in them, but the plugin keeps its
# suite objects: their Task class must stay the importable one for pickling
import pytest_egi.suite  # noqa: F401
from pytest_egi.cache.taskcache import LoadedTasks
from pytest_egi.run.state import SETTINGS_KEY, Case
from pytest_egi.scoring import config as egi_config
from pytest_egi.suite import Task
from tests.toy_project import ROUTING, SUITE_INIT, make_toy_project

ROOT = Path(__file__).resolve().parents[1]

# The toy suite whose tasks log each unpickling, with a data check that logs each call and
# reads its warning from the file named by the path option ``data``; in its own package so
# the plugin's per-process suite cache never hands these tests another toy suite.
PACKAGE = "ccsuites"
INIT = (
    SUITE_INIT.replace("import os\n", "import os\nfrom pathlib import Path\n", 1)
    .replace("    fail_every: int = 0\n", "    fail_every: int = 0\n    data: Path | None = None\n", 1)
    .replace("tasks.append(Task(", "tasks.append(LoggedTask(", 1)
    .replace(
        "\n\nclass Options(BaseModel):",
        textwrap.dedent('''

        def _log(variable, line):
            if os.environ.get(variable):
                with open(os.environ[variable], "a") as fh:
                    fh.write(line + "\\n")


        class LoggedTask(Task):
            def __setstate__(self, state):
                _log("TOY_UNPICKLE_LOG", str(os.getpid()))
                super().__setstate__(state)


        class Options(BaseModel):'''),
        1,
    )
    .replace(
        "    def reference_policy(",
        textwrap.indent(textwrap.dedent('''\
        def constant_answer_check(self, tasks, options):
            _log("TOY_CHECK_LOG", str(len(tasks)))
            if options.data is None:
                return {}
            return {"alpha": "alpha: " + Path(options.data).read_text().strip()}

        '''), "    ") + "    def reference_policy(",
        1,
    )
)
assert "class LoggedTask(Task)" in INIT and "def constant_answer_check" in INIT and "LoggedTask(id=" in INIT


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    make_toy_project(pytester, PACKAGE, INIT)
    for name in ("TOY_LOAD_LOG", "TOY_UNPICKLE_LOG", "TOY_CHECK_LOG"):
        monkeypatch.setenv(name, str(pytester.path / f"{name.lower()}.txt"))
    return pytester


def _lines(project: pytest.Pytester, name: str) -> list[str]:
    log = project.path / f"{name.lower()}.txt"
    return log.read_text().splitlines() if log.exists() else []


def _collect(project: pytest.Pytester, *args: str) -> list[dict[str, str]]:
    """Collect the toy suite in-process; return the session's data warnings."""
    reprec = project.inline_run(PACKAGE, "--egi-model", "egi/oracle", "--collect-only", "-q", *args)
    assert reprec.ret == 0
    [call] = reprec.getcalls("pytest_collection_finish")
    assert len(call.session.items) == 6
    return list(call.session.config.stash[SETTINGS_KEY].data_warnings)


def test_a_warm_collection_builds_no_task_and_a_run_unpickles_each_task_once(project):
    _collect(project)
    assert len(_lines(project, "TOY_LOAD_LOG")) == 1
    assert _lines(project, "TOY_UNPICKLE_LOG") == []  # a cold collection keeps the loaded tasks
    _collect(project)
    _collect(project)
    assert len(_lines(project, "TOY_LOAD_LOG")) == 1  # answered from the task cache ...
    assert _lines(project, "TOY_UNPICKLE_LOG") == []  # ... without making a Task
    project.runpytest(PACKAGE, "--egi-model", "egi/oracle", "--egi-bootstrap", "0").assert_outcomes(passed=6)
    assert len(_lines(project, "TOY_UNPICKLE_LOG")) == 6  # six tasks, each unpickled once
    assert len(_lines(project, "TOY_LOAD_LOG")) == 1


def test_the_data_check_is_cached_and_rerun_when_its_input_changes(project):
    data = project.path / "check.txt"
    data.write_text("first\n")
    opt = ("--egi-opt", f"toy.data={data}")
    expected = [{"suite": "toy", "category": "alpha", "warning": "alpha: first"}]
    assert _collect(project, *opt) == expected
    assert _lines(project, "TOY_CHECK_LOG") == ["6"]  # called once, with the six tasks
    assert _collect(project, *opt) == expected  # from the cache: not called again
    assert _lines(project, "TOY_CHECK_LOG") == ["6"]
    data.write_text("second\n")  # the file a path option names is part of the key
    assert _collect(project, *opt) == [{"suite": "toy", "category": "alpha", "warning": "alpha: second"}]
    assert _lines(project, "TOY_CHECK_LOG") == ["6", "6"]
    assert _collect(project) == []  # another option value: another entry, computed
    assert _lines(project, "TOY_CHECK_LOG") == ["6", "6", "6"]
    assert _collect(project, "--egi-no-cache", *opt) == [
        {"suite": "toy", "category": "alpha", "warning": "alpha: second"}
    ]
    assert _lines(project, "TOY_CHECK_LOG") == ["6", "6", "6", "6"]  # no cache: computed


def test_the_parsed_routing_file_is_cached_and_reparsed_when_it_changes(tmp_path, monkeypatch):
    parses = []
    parse = egi_config._parse_yaml
    monkeypatch.setattr(egi_config, "_parse_yaml", lambda path, raw: parses.append(path) or parse(path, raw))
    path = tmp_path / "routing.yaml"
    path.write_text(ROUTING)
    cache = tmp_path / "cache"
    first, digest = egi_config.load_routing(path, cache)
    again, digest_again = egi_config.load_routing(path, cache)
    assert len(parses) == 1 and again == first and digest_again == digest
    assert first.buckets["M2"].floor == 70
    path.write_text(ROUTING.replace("floor: 70", "floor: 65", 1))
    changed, changed_digest = egi_config.load_routing(path, cache)
    assert len(parses) == 2 and changed_digest != digest
    assert changed.buckets["M2"].floor == 65
    path.write_text(ROUTING.replace("weight: 0.28", "weight: [", 1))  # malformed: never cached
    with pytest.raises(pytest.UsageError, match="malformed YAML at line 3"):
        egi_config.load_routing(path, cache)
    assert len(parses) == 3
    path.write_text(ROUTING)
    assert egi_config.load_routing(path, cache)[0] == first and len(parses) == 3  # the first entry
    egi_config.load_routing(path)  # no cache folder: parsed every time
    assert len(parses) == 4


def _tasks() -> list[Task]:
    shared = {"catalogue": list(range(1000))}  # large enough to keep shared (taskcache.SHARED_GAIN)
    return [Task(id=f"t{i}", category="ab"[i % 2], data={"i": i, "shared": shared}) for i in range(3)]


def test_loaded_tasks_unpickle_on_first_use_and_keep_what_the_tasks_share():
    tasks = _tasks()
    loaded = pickle.loads(pickle.dumps(LoadedTasks(tasks)))
    assert (loaded.ids, loaded.categories, len(loaded)) == (("t0", "t1", "t2"), ("a", "b", "a"), 3)
    assert not loaded.loaded
    case = Case(object(), "pkg.suite", loaded, 1, 2, 3, None, 7)
    assert (case.id, case.task_id, case.category, loaded.loaded) == ("t1-t2", "t1", "b", False)
    assert case.task == tasks[1] and loaded.loaded
    assert loaded.all() == tasks
    assert loaded.task(0).data["shared"] is loaded.task(2).data["shared"]  # shared, as loaded
    again = pickle.loads(pickle.dumps(loaded))  # pickled again once unpickled
    assert again.all() == tasks and again.ids == loaded.ids


HEAVY = ("bm25s", "httpx", "jinja2", "litellm", "mcp", "numpy", "openai", "rich", "scipy", "yaml")
PROBE = """
import sys, pytest
code = pytest.main(["suites", "--collect-only", "-q", "-p", "no:cacheprovider", "--egi-model", "egi/oracle",
                    "--egi-mode", "quick", "--egi-cache", sys.argv[1]])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in set(sys.argv[2].split(",")))
print("EXIT", int(code), "HEAVY", heavy)
"""


def test_a_warm_collection_of_the_shipped_suites_imports_no_heavy_module(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    cmd = [sys.executable, "-c", PROBE, str(tmp_path / "cache"), ",".join(HEAVY)]
    for _ in range(2):  # cold (the task cache is filled), then warm
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert last == "EXIT 0 HEAVY []", proc.stdout[-2000:]
