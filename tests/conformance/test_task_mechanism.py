"""DESIGN §9.3 for every suite: one task the suite cannot run (or that an offline policy cannot
play) is skipped or errors alone, with its reason; an exception while loading or preparing one
task names the file and the task and never crashes collection (issue 22).

The core's mechanism (``pytest_egi.suite``: ``load_each``, ``CannotRun``, ``Task.cannot_run``
/ ``load_error``) is proven on a toy suite through the real plugin, serially and under
``-n 2``; then, for every discovered suite, the calls the core makes per task before an item
runs (``reference_policy`` under each offline policy) either succeed or say ``CannotRun``.
"""

from __future__ import annotations

import json

import pytest

from pytest_egi.models import make_client
from pytest_egi.suite import CannotRun, Task, TaskIdError, load_each, load_suite
from tests.conformance.checks import ROOT, conformance_options, discover_suites
from tests.toy_project import SUITE_INIT, make_toy_project

PACKAGE = "mechsuites"  # a package of its own: the per-process suite cache never mixes variants

LOADER = '''
from pytest_egi.suite import CannotRun, load_each

ENTRIES = FIRST + [
    {"id": "alpha-0", "cat": "alpha", "item": 0},
    {"id": "alpha-1", "cat": "alpha", "item": 1},
    {"id": "alpha-2", "cat": "alpha"},                                   # no "item": KeyError
    {"id": "beta-0", "cat": "beta", "item": 100, "needs": "wards"},      # the suite cannot run it
    {"id": "beta-1", "cat": "beta", "item": 101},
    {"id": "beta-2", "cat": "beta", "item": 102, "no_reference": True},  # no oracle for it
    {"id": "beta-3", "cat": "beta", "item": 103, "policy_bug": True},    # its policy raises
]
ENTRIES += EXTRA


def load_tasks(self, profile, options):
    def build(e):
        if e.get("needs"):
            raise CannotRun(f"it needs the table {e['needs']!r}, absent from the data files")
        flags = {k: e[k] for k in ("no_reference", "policy_bug") if k in e}
        return Task(id=e["id"], category=e["cat"],
                    data={"item": e["item"], "gold": code_of(profile.seed, e["item"]),
                          "seed": profile.seed, **flags})
    return load_each(ENTRIES, build, file="tasks.json", category=lambda e: e["cat"])


def reference_policy(self, task, options, noise):
    if task.data.get("no_reference"):
        raise CannotRun("no reference solution on the local data")
    if task.data.get("policy_bug"):
        raise RuntimeError("the policy's lookup table is missing item 103")
    return _reference_policy(self, task, options, noise)


def prepare(self, tasks, options):
    bad = [t.id for t in tasks if not t.runnable]
    if bad:
        raise AssertionError(f"prepare was given tasks it cannot run: {bad}")
    PREPARE_FAULT()


def data_warnings(self, tasks, options):
    return {"beta": f"{len(tasks)} runnable tasks checked"}


_reference_policy = ToySuite.reference_policy
ToySuite.load_tasks = load_tasks
ToySuite.reference_policy = reference_policy
ToySuite.prepare = prepare
ToySuite.data_warnings = data_warnings
'''


def _project(pytester: pytest.Pytester, *, extra: str = "[]", prepare_fault: str = "None",
             first: str = "[]") -> None:
    init = SUITE_INIT.replace("SUITE = ToySuite()", "") + (
        f"EXTRA = {extra}\nFIRST = {first}\n\ndef PREPARE_FAULT():\n    {prepare_fault}\n" + LOADER
        + "\nSUITE = ToySuite()\n")
    make_toy_project(pytester, package=PACKAGE, init=init)
    routing = pytester.path / "routing.yaml"
    routing.write_text(routing.read_text().replace("toy: {per_category: 3}", "toy: {}"))


def _records(pytester: pytest.Pytester) -> dict[str, dict]:
    run = next((pytester.path / "reports").iterdir())
    return {r["task_id"]: r for r in map(json.loads, (run / "records.jsonl").read_text().splitlines())}


def _run(pytester: pytest.Pytester, *extra: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(PACKAGE, "--egi-model", "egi/oracle", "--egi-bootstrap", "0",
                                         "--egi-max-error-rate", "1", "--egi-no-cache", *extra)


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "n2"])
def test_a_task_that_cannot_run_is_skipped_and_one_that_fails_errors_alone(pytester, workers):
    _project(pytester)
    result = _run(pytester, *workers)
    result.assert_outcomes(passed=3, skipped=2, errors=2)
    assert result.ret == 0  # the session completes; nothing crashed collection
    records = _records(pytester)
    got = {k: (r["status"], r["error"]) for k, r in sorted(records.items())}
    assert got == {
        "alpha-0": ("passed", None),
        "alpha-1": ("passed", None),
        "alpha-2": ("error", "TaskLoadError: tasks.json: task 'alpha-2' could not be loaded: KeyError: "
                             "'item' (this task errors alone; fix the entry or leave it out)"),
        "beta-0": ("skipped", "Skipped: cannot run: it needs the table 'wards', absent from the data files"),
        "beta-1": ("passed", None),
        "beta-2": ("skipped", "Skipped: cannot run: no reference solution on the local data"),
        "beta-3": ("error", "RuntimeError: the policy's lookup table is missing item 103"),
    }
    # the core says what will not run, per category; the suite's data checks saw the runnable
    # tasks only (one line per category)
    egi = json.loads((next((pytester.path / "reports").iterdir()) / "egi.json").read_text())
    assert egi["data_warnings"] == [
        {"suite": "toy", "category": "alpha", "warning": "alpha: 1 of 3 task(s) could not be loaded and "
                                                         "error alone (first: alpha-2)"},
        {"suite": "toy", "category": "beta", "warning": "beta: 1 of 4 task(s) cannot run and are skipped "
                                                        "(first: beta-0: it needs the table 'wards', absent "
                                                        "from the data files); 5 runnable tasks checked"},
    ]
    # (wrapped at the terminal's width, 80 here)
    result.stdout.fnmatch_lines(
        ["data warning (toy): alpha: 1 of 3 task(s) could not be loaded and error alone",
         "  (first: alpha-2)"])


def test_tasks_that_could_not_be_loaded_never_stop_the_session_early(pytester):
    """Five errored items in a row stop a session whose provider is down; five tasks that
    could not be loaded say nothing about the provider, and the rest still runs."""
    _project(pytester, first='[{"id": f"alpha-9{k}", "cat": "alpha"} for k in range(6)]')
    result = pytester.runpytest_subprocess(PACKAGE, "--egi-model", "egi/oracle", "--egi-bootstrap",
                                           "0", "--egi-no-cache")  # the default error rate: 5 %
    result.assert_outcomes(passed=3, skipped=2, errors=8)
    assert result.ret == 1  # 8 of 13 items errored: above --egi-max-error-rate
    assert "stopping" not in result.stdout.str()
    records = _records(pytester)
    assert records["alpha-95"]["error_kind"] == "task_load" and records["beta-1"]["status"] == "passed"


def test_a_task_id_the_core_cannot_use_is_a_usage_error_naming_the_file(pytester):
    _project(pytester, extra='[{"id": "../../etc/passwd", "cat": "alpha", "item": 9}]')
    result = _run(pytester)
    assert result.ret == 4
    result.stderr.fnmatch_lines([
        "ERROR: toy: tasks.json: task id '../../etc/passwd' is not allowed: a task id may hold only "
        "letters, digits and _ . : - (pattern ^[A-Za-z0-9_.:-]+$), since it names the pytest item and "
        "the trajectory file; fix: give the task an id of those characters (e.g. 'etc_passwd')"])


@pytest.mark.parametrize("fault, outcome, error", [
    ("raise RuntimeError('the world server did not start')", "errors",
     "TaskLoadError: toy: prepare failed, so none of its tasks can run: RuntimeError: the world "
     "server did not start"),
    ("raise CannotRun('docker is not available on this machine')", "skipped",
     "Skipped: cannot run: docker is not available on this machine"),
])
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "n2"])
def test_a_failed_prepare_is_reported_on_the_suites_items_not_as_a_crash(
        pytester, fault, outcome, error, workers):
    _project(pytester, prepare_fault=fault)
    result = _run(pytester, *workers)
    assert result.ret in (0, 1), result.stdout.str()[-2000:]  # not 3 (internal error)
    records = _records(pytester)
    # the tasks the loader already settled keep their own outcome
    assert records["alpha-2"]["status"] == "error" and records["beta-0"]["status"] == "skipped"
    settled = {"alpha-2", "beta-0"}
    rest = {k: (r["status"], r["error"]) for k, r in records.items() if k not in settled}
    status = "error" if outcome == "errors" else "skipped"
    assert rest == {k: (status, error) for k in rest} and len(rest) == 5


def test_load_each_unit():
    def build(e):
        if e == "boom":
            raise ValueError("field 'when' is not a date; fix: write YYYY-MM-DD")
        if e == "skip":
            raise CannotRun("needs a GPU")
        if e == "bad id":
            return Task(id="a b", category="x", data={})
        return None if e == "drop" else Task(id=e, category="x", data={})

    tasks = load_each(["t1", "boom", "drop", "skip"], build, category="x", file="data/tasks.jsonl")
    assert [(t.id, t.runnable, t.cannot_run, t.load_error) for t in tasks] == [
        ("t1", True, None, None),
        ("tasks.jsonl-2", False, None, "data/tasks.jsonl: task 'tasks.jsonl-2' could not be loaded: "
         "ValueError: field 'when' is not a date; fix: write YYYY-MM-DD (this task errors alone; fix "
         "the entry or leave it out)"),
        ("tasks.jsonl-4", False, "needs a GPU", None),
    ]
    with pytest.raises(TaskIdError) as info:
        load_each(["bad id"], build, category="x", file="data/tasks.jsonl")
    assert str(info.value).startswith("data/tasks.jsonl: task id 'a b' is not allowed: ")
    assert str(info.value).endswith("fix: give the task an id of those characters (e.g. 'a_b')")


# --- every discovered suite --------------------------------------------------------------------

SUITES = discover_suites()


@pytest.mark.parametrize("name", SUITES)
def test_every_task_can_be_set_up_under_each_offline_policy_or_says_why_not(name):
    """What the core calls per task before an item runs (the offline policy's construction,
    which calls the suite's ``reference_policy``) either works or raises ``CannotRun``; any
    other exception would error that item, and says nothing the user can act on."""
    from pytest_egi.scoring.config import load_routing

    suite = load_suite(f"suites.{name}")
    routing, _ = load_routing(ROOT / "routing.yaml")
    options = suite.options_model.model_validate(conformance_options(name))
    tasks = suite.load_tasks(routing.profile("quick", name), options)
    assert tasks and all(isinstance(t, Task) for t in tasks)
    problems = []
    for task in tasks:
        if not task.runnable:
            continue
        for policy in ("egi/oracle", "egi/noisy-0.5", "egi/null"):
            try:
                make_client(policy, suite=suite, task=task, options=options,
                            noise_key=f"42|{name}|{task.id}|1")
            except CannotRun:
                continue
            except Exception as exc:  # noqa: BLE001 - collected, reported together
                problems.append(f"{name}: {policy}: task {task.id}: {type(exc).__name__}: {exc}")
    assert not problems, "\n".join(problems[:20])


def test_a_task_load_error_on_a_long_path_keeps_the_suites_fix_whole():
    """The one-line reason is cut to MAX_RENDER characters around the suite's fix, never
    through it: a long file path costs the middle of the message."""
    from pytest_egi.run.recorder import MAX_RENDER, shorten
    from pytest_egi.suite import TaskLoadError

    path = "/data/" + "nested/" * 40 + "tasks.jsonl"
    message = (f"{path}: task 'NCR-0007' could not be loaded: KeyError: 'answer'; fix: give the record "
               "its 'answer' field (a list of ids) (this task errors alone; fix the entry or leave it out)")
    error = TaskLoadError(message)
    assert error.hint == ("fix: give the record its 'answer' field (a list of ids) (this task errors "
                          "alone; fix the entry or leave it out)")
    reason = shorten(f"TaskLoadError: {error}", hint=error.hint)
    assert len(reason) <= MAX_RENDER and reason.endswith(error.hint)
    assert reason.startswith("TaskLoadError: /data/nested/") and "..." in reason
    assert TaskLoadError("no fix given here").hint is None
