"""Runs that survive a kill, a Ctrl-C and a spread over machines, end to end on the toy suite:
SIGKILL then ``--egi-resume``, the resume's refusals, errored items run again, Ctrl-C once and
twice, ``--egi-shard K/N`` then ``egi-bench report --merge`` and its refusals.

Every run is a subprocess in its own session (``start_new_session``): the Ctrl-C cases signal
their whole process group, which must not be the test runner's. The deep profile of the toy
suite has 10 items; ``egi/noisy-0.3`` fails two of them (beta-0, beta-2), so a resumed or merged
run that mixed up items would show in its records and its EGI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_egi.cli import main
from tests.toy_project import ROUTING, SUITE_INIT, TEST_MODULE

REPO = Path(__file__).resolve().parents[1]
RUN = ("toysuites", "--egi-model", "egi/noisy-0.3", "--egi-mode", "deep", "--egi-bootstrap", "0")
NODE = "toysuites/toy/test_toy.py::test_task"
TASKS = [f"alpha-{k}" for k in range(5)] + [f"beta-{k}" for k in range(5)]
SAME_KEYS = ("egi", "buckets", "suites", "counts", "gate", "missing", "profile", "usage", "error_rate")

CONFTEST = """
import os
import signal
import time

import pytest

KILL_AT = os.environ.get("EGI_TEST_KILL_AT", "")  # SIGKILL at the start of the n-th item, or "end"
SIGINT_IN = os.environ.get("EGI_TEST_SIGINT_IN", "")  # Ctrl-C to the process group in this item
SIGINTS = int(os.environ.get("EGI_TEST_SIGINTS") or 1)
SIGTERM_IN = os.environ.get("EGI_TEST_SIGTERM_IN", "")  # SIGTERM in this item, to SIGTERM_TO:
SIGTERM_TO = os.environ.get("EGI_TEST_SIGTERM_TO", "")  # "self", "parent" (the controller) or "group"
SIGTERMS = int(os.environ.get("EGI_TEST_SIGTERMS") or 1)
FAIL = [t for t in os.environ.get("EGI_TEST_FAIL", "").split(",") if t]  # these items raise
SLOW = float(os.environ.get("EGI_TEST_SLOW") or 0)  # seconds each item sleeps
HOLD = os.environ.get("EGI_TEST_HOLD", "")  # each item waits (up to 120 s) until this file exists
_started = 0


def pytest_runtest_logstart(nodeid, location):
    global _started
    _started += 1
    if KILL_AT == str(_started):
        os.kill(os.getpid(), signal.SIGKILL)


def pytest_runtest_call(item):
    time.sleep(SLOW)
    deadline = time.monotonic() + 120
    while HOLD and not os.path.exists(HOLD) and time.monotonic() < deadline:
        time.sleep(0.05)
    if SIGINT_IN and item.nodeid.endswith(f"[{SIGINT_IN}]"):
        for _ in range(SIGINTS):
            os.killpg(os.getpgid(0), signal.SIGINT)
            time.sleep(0.3)
    if SIGTERM_IN and item.nodeid.endswith(f"[{SIGTERM_IN}]"):
        for _ in range(SIGTERMS):
            if SIGTERM_TO == "group":
                os.killpg(os.getpgid(0), signal.SIGTERM)
            else:
                os.kill(os.getppid() if SIGTERM_TO == "parent" else os.getpid(), signal.SIGTERM)
            time.sleep(0.3)
    if any(item.nodeid.endswith(f"[{task}]") for task in FAIL):
        raise RuntimeError("simulated outage")


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session):
    if KILL_AT == "end":  # after every item, before the session's report
        os.kill(os.getpid(), signal.SIGKILL)
    return (yield)
"""


def _project(root: Path) -> Path:
    """The toy suite, its routing file and the fault-injecting conftest in ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "routing.yaml").write_text(ROUTING)
    (root / "conftest.py").write_text(CONFTEST)
    toy = root / "toysuites" / "toy"
    toy.mkdir(parents=True)
    (root / "toysuites" / "__init__.py").write_text("")
    (toy / "__init__.py").write_text(SUITE_INIT)
    (toy / "test_toy.py").write_text(TEST_MODULE)
    return root


def _start(project: Path, *args: str, **env: str) -> subprocess.Popen:
    """Start ``python -m pytest`` of the toy suite's deep profile in ``project``, in a session of
    its own, importing this checkout's pytest_egi; ``env`` sets the conftest's EGI_TEST_* faults."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "EGI_TEST_"))}
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    environ.update({f"EGI_TEST_{k.upper()}": v for k, v in env.items()})
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *RUN, *args],
        cwd=project, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )


def _wait(proc: subprocess.Popen) -> subprocess.CompletedProcess:
    try:
        out, err = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _pytest(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """Run ``python -m pytest`` as :func:`_start` does, to its end."""
    return _wait(_start(project, *args, **env))


def _usage_error(proc: subprocess.CompletedProcess) -> list[str]:
    """pytest's usage-error message: the non-blank stderr lines from ``ERROR:`` on."""
    lines = proc.stderr.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("ERROR: ")), len(lines))
    return [line for line in lines[start:] if line.strip()]


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def _journal(run: Path) -> list[dict]:
    """Every line of the run's journal, parsed (a line that does not parse fails the test)."""
    return [json.loads(line) for line in (run / "journal.jsonl").read_text().splitlines()]


def _tasks(records: list[dict]) -> list[str]:
    return [r["task_id"] for r in records]


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes, but the session lock (``run.lock``: who holds
    the folder now, rewritten by every session that takes it)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "run.lock"}


def _trajectories(folder: Path) -> dict[tuple[str, str, int], str]:
    """Each record's stored trajectory (its JSON text), by (suite, task, trial): where it is
    stored (``raw_at``: which process wrote it, at which offset) differs run to run."""
    from pytest_egi.records import load_records
    from pytest_egi.trajectories import TrajectoryReader

    with TrajectoryReader(folder) as reader:
        return {(r["suite"], r["task_id"], r["trial"]): reader.read_text(r)
                for r in load_records(folder) if r.get("raw_path")}


def _outcomes(reference: Path, tasks: list[str]) -> str:
    """pytest's count line for running ``tasks`` (their statuses in the reference run)."""
    statuses = [r["status"] for r in _journal(reference) if r["task_id"] in tasks]
    parts = [f"{statuses.count(s)} {s}" for s in ("failed", "passed") if s in statuses]
    return ", ".join(parts) or "no tests ran"


def _outcome_line(proc: subprocess.CompletedProcess) -> str:
    """``2 failed, 5 passed`` of pytest's last line ``=== 2 failed, 5 passed in 1.23s ===``."""
    return proc.stdout.splitlines()[-1].strip("= ").rsplit(" in ", 1)[0]


def _assert_same_run(run: Path, reference: Path) -> None:
    """Records, trajectories and the EGI of ``run`` are those of the uninterrupted run."""
    assert (run / "records.jsonl").read_bytes() == (reference / "records.jsonl").read_bytes()
    assert _trajectories(run) == _trajectories(reference)
    a, b = _json(run / "egi.json"), _json(reference / "egi.json")
    for key in SAME_KEYS:
        assert a[key] == b[key], key
    assert {**a["routing"], "path": None} == {**b["routing"], "path": None}  # each project has its own


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The uninterrupted run: reports/REF of a toy project."""
    project = _project(tmp_path_factory.mktemp("reference"))
    proc = _pytest(project, "--egi-run-id", "REF")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = project / "reports" / "REF"
    assert _json(run / "egi.json")["counts"] == {"failed": 2, "passed": 8}
    return run


# -- SIGKILL, then --egi-resume --------------------------------------------------------------


@pytest.mark.parametrize(("kill_at", "journaled", "workers"), [
    ("4", 3, ()),  # after 3 items finished
    ("4", 3, ("-n", "2")),  # resumed with two workers
    ("10", 9, ()),  # at the last item
    ("end", 10, ()),  # every item done, the session's report not yet written
])
def test_a_killed_run_resumed_equals_an_uninterrupted_run(tmp_path, reference, kill_at, journaled, workers):
    project = _project(tmp_path / "p")
    killed = _pytest(project, "--egi-run-id", "K", kill_at=kill_at)
    assert killed.returncode == -9
    run = project / "reports" / "K"
    assert _tasks(_journal(run)) == TASKS[:journaled]
    assert _json(run / "run.json")["status"] == "running"
    assert not (run / "egi.json").exists()

    resumed = _pytest(project, "--egi-resume", "reports/K", *workers)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_same_run(run, reference)
    session = _json(run / "egi.json")["session"]
    assert (session["resumed_items"], session["items_ran"], session["items_collected"]) == (journaled, 10, 10)
    assert session["resumed_from"] == str(run) and session["interrupted"] is False
    manifest = _json(run / "run.json")
    assert manifest["status"] == "complete" and manifest["run_id"] == "K"
    assert manifest["plan"] == [f"{NODE}[{t}]" for t in TASKS]
    assert len(manifest["resumed"]) == 1
    assert sorted(_tasks(_journal(run))) == sorted(TASKS)  # each item journaled once
    assert _outcome_line(resumed) == _outcomes(reference, TASKS[journaled:])  # only the rest ran


def test_a_run_killed_before_its_first_record_is_started_again(tmp_path, reference):
    project = _project(tmp_path / "p")
    assert _pytest(project, "--egi-run-id", "K", kill_at="1").returncode == -9
    assert not (project / "reports" / "K" / "run.json").exists()
    refused = _pytest(project, "--egi-resume", "reports/K")
    assert refused.returncode == 4
    assert _usage_error(refused) == [
        f"ERROR: --egi-resume {project}/reports/K: the run stopped before its first item finished, "
        "so there is nothing to continue; start it again without --egi-resume"]
    again = _pytest(project, "--egi-run-id", "K")  # the user starts it again, same name
    assert again.returncode == 0, again.stdout + again.stderr
    _assert_same_run(project / "reports" / "K", reference)


def test_a_journal_line_cut_by_the_kill_is_dropped_and_its_item_runs_again(tmp_path, reference):
    project = _project(tmp_path / "p")
    assert _pytest(project, "--egi-run-id", "K", kill_at="4").returncode == -9
    run = project / "reports" / "K"
    whole = (reference / "journal.jsonl").read_bytes().splitlines(keepends=True)[3]  # alpha-3's line
    with open(run / "journal.jsonl", "ab") as fh:
        fh.write(whole[: len(whole) // 2])
    resumed = _pytest(project, "--egi-resume", "reports/K")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_same_run(run, reference)
    assert _json(run / "egi.json")["session"]["resumed_items"] == 3
    assert _tasks(_journal(run)) == TASKS  # the cut line is gone, alpha-3 ran again


def test_errored_items_and_only_they_run_again(tmp_path, reference):
    project = _project(tmp_path / "p")
    first = _pytest(project, "--egi-run-id", "E", fail="alpha-3,beta-1")
    assert first.returncode == 1  # 2 errors of 10: above --egi-max-error-rate 5%
    run = project / "reports" / "E"
    assert _json(run / "egi.json")["counts"] == {"error": 2, "failed": 2, "passed": 6}
    errors = {r["task_id"]: r["error"] for r in _journal(run) if r["status"] == "error"}
    assert errors == {"alpha-3": "RuntimeError: simulated outage", "beta-1": "RuntimeError: simulated outage"}

    resumed = _pytest(project, "--egi-resume", "reports/E")  # the outage is over
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert _outcome_line(resumed) == "2 passed"
    journal = _journal(run)
    assert len(journal) == 12
    assert [(r["task_id"], r["status"]) for r in journal[10:]] == [
        ("alpha-3", "passed"), ("beta-1", "passed")]
    _assert_same_run(run, reference)
    assert _json(run / "egi.json")["session"]["resumed_items"] == 8


# -- every record read back is checked -------------------------------------------------------

BAD_RECORDS = [
    ({"values": {"correct": "yes"}},
     'field \'values\': sub-metric \'correct\' is a str ("yes"), expected a number or null'),
    ({"values": "1.0"},
     'field \'values\': expected a mapping of sub-metric name to a number or null, got a str ("1.0")'),
    ({"status": "timeout"},
     "field 'status': 'timeout' is not a record status (passed, failed, error, skipped)"),
]


def _spoil_line(path: Path, index: int, fields: dict) -> list[str]:
    """Overwrite fields of the record on line ``index`` (0-based) of a JSONL file; returns
    the file's lines as they were."""
    lines = path.read_text().splitlines(keepends=True)
    spoiled = list(lines)
    spoiled[index] = json.dumps({**json.loads(lines[index]), **fields}, sort_keys=True) + "\n"
    path.write_text("".join(spoiled))
    return lines


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
@pytest.mark.parametrize(("fields", "problem"), BAD_RECORDS)
def test_a_malformed_journal_line_is_named_and_the_run_resumes_once_it_is_removed(
        tmp_path, reference, workers, fields, problem):
    """Before, a malformed ``values`` passed the key check and crashed aggregation at session end,
    and an unknown status was silently run again."""
    project = _project(tmp_path / "p")
    assert _pytest(project, "--egi-run-id", "K", kill_at="4").returncode == -9
    run = project / "reports" / "K"
    lines = _spoil_line(run / "journal.jsonl", 1, fields)  # alpha-1's record
    before = _files(run)
    refused = _pytest(project, "--egi-resume", "reports/K", *workers)
    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert _usage_error(refused) == [
        f"ERROR: {run}/journal.jsonl:2: {problem}; remove the line and resume with --egi-resume {run} "
        "(its item runs again)"]
    assert _files(run) == before  # the refused session changed nothing
    (run / "journal.jsonl").write_text("".join(lines[:1] + lines[2:]))  # the fix the message gives
    resumed = _pytest(project, "--egi-resume", "reports/K", *workers)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_same_run(run, reference)
    assert _json(run / "egi.json")["session"]["resumed_items"] == 2
    assert _outcome_line(resumed) == _outcomes(reference, ["alpha-1", *TASKS[3:]])


def test_rescore_and_report_name_a_malformed_record(tmp_path, reference, egi_bench):
    run = tmp_path / "REF"
    shutil.copytree(reference, run)
    _spoil_line(run / "records.jsonl", 4, {"values": {"correct": [1]}})
    message = (f"egi-bench: error: {run}/records.jsonl:5: field 'values': sub-metric 'correct' is a list "
               f"([1]), expected a number or null; remove the line and resume with --egi-resume {run} (its "
               "item runs again)\n")
    assert egi_bench("report", "--rescore", run) == (2, "", message)
    assert egi_bench("report", run) == (2, "", message)
    assert not any(p.name.startswith("rescore-") for p in run.iterdir())


# -- the resume's refusals -------------------------------------------------------------------


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A toy project whose run reports/X was killed after 3 items."""
    project = _project(tmp_path_factory.mktemp("stopped"))
    assert _pytest(project, "--egi-run-id", "X", kill_at="4").returncode == -9
    return project


DIFFERS = ". Resume with the run's options, or start a new run without --egi-resume"
UNNAMED_SHARD = (
    "--egi-shard 2/3 needs --egi-run-id: without it this shard would write into a run folder of its "
    "own, which egi-bench report --merge cannot join with the other shards; pass --egi-run-id NAME so "
    "the 3 shards share one run folder (reports/NAME/shard-K-of-3)")


@pytest.mark.parametrize(("args", "message"), [
    (("--egi-resume", "reports/X", "--egi-model", "egi/oracle"),
     "--egi-resume reports/X: this session differs from the run: --egi-model: egi/noisy-0.3 in the run, "
     "egi/oracle here" + DIFFERS),
    (("--egi-resume", "reports/X", "--egi-seed", "5"),
     "--egi-resume reports/X: this session differs from the run: --egi-seed: none in the run, 5 here"
     + DIFFERS),
    (("--egi-resume", "reports/X", "--egi-opt", "toy.max_turns=4"),
     "--egi-resume reports/X: this session differs from the run: --egi-opt: none in the run, "
     '{"toy": {"max_turns": "4"}} here' + DIFFERS),
    (("--egi-resume", "reports/X", "-k", "alpha"),
     "--egi-resume reports/X: this session differs from the run: the selection (-k, -m, --lf, --deselect, "
     'node ids): none in the run, {"-k": "alpha"} here' + DIFFERS),
    (("--egi-resume", "reports/X", "--egi-model", "egi/oracle", "--egi-mode", "quick"),
     "--egi-resume reports/X: this session differs from the run: --egi-model: egi/noisy-0.3 in the run, "
     "egi/oracle here; --egi-mode: deep in the run, quick here" + DIFFERS),
    (("--egi-resume", "reports/X", "--egi-shard", "1/2"),
     "--egi-resume reports/X: the run is not a shard, not --egi-shard 1/2; drop --egi-shard (a resumed run "
     "keeps its own)"),
    (("--egi-resume", "reports/X", "--egi-run-id", "Y"),
     "--egi-resume reports/X: the run's id is X, not --egi-run-id Y; drop --egi-run-id"),
    (("--egi-resume", "reports/missing"),
     "--egi-resume {project}/reports/missing: no such folder; pass a run folder (reports/<run_id>)"),
    (("--egi-resume", "reports"),
     "--egi-resume {project}/reports: run.json not found; is it a run folder made by pytest-egi "
     "(reports/<run_id>, or reports/<run_id>/shard-K-of-N)?"),
    (("--egi-run-id", "X"),
     "--egi-run-id X: {project}/reports/X already holds a run; continue it with --egi-resume "
     "{project}/reports/X, or pick another --egi-run-id"),
    (("--egi-shard", "0/3"), "--egi-shard: expected K/N with 1 <= K <= N (e.g. 2/3), got '0/3'"),
    (("--egi-shard", "2/3"), UNNAMED_SHARD),  # its random run folder could never be merged
    (("--egi-shard", "2/3", "-n", "2"), UNNAMED_SHARD),
])
def test_a_resume_unlike_the_run_is_refused_and_changes_nothing(stopped, args, message):
    before = _files(stopped / "reports")
    proc = _pytest(stopped, *args)
    assert proc.returncode == 4
    assert _usage_error(proc) == ["ERROR: " + message.replace("{project}", str(stopped))]
    assert _files(stopped / "reports") == before


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
def test_a_resume_with_another_suite_version_is_refused_and_changes_nothing(tmp_path, stopped, workers):
    project = tmp_path / "p"
    shutil.copytree(stopped, project)
    init = project / "toysuites" / "toy" / "__init__.py"
    init.write_text(init.read_text().replace('version = "1"', 'version = "2"'))
    before = _files(project / "reports")
    proc = _pytest(project, "--egi-resume", "reports/X", *workers)
    assert proc.returncode == 4
    assert _usage_error(proc) == [
        "ERROR: --egi-resume: suite toy is version 2 here, but the run's records were made by version 1; "
        "resume with the code the run was made with, or start a new run without --egi-resume"]
    assert "EGI summary" not in proc.stdout
    assert _files(project / "reports") == before  # no report over 3 of 10 items, still "running"


# -- Ctrl-C ----------------------------------------------------------------------------------

CTRL_C_LINE = "egi: Ctrl-C: finishing the items in flight, then stopping; every finished item is kept in"


def _assert_stopped_after_the_items_in_flight(proc, run, line: str, workers, reason: str) -> int:
    """A first Ctrl-C or SIGTERM sent while alpha-2 ran: the session printed ``line``, let the
    items in flight finish (alpha-2 kept) and ended interrupted (exit 2, no traceback), with
    ``reason`` in run.json and egi.json; returns how many items ran."""
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output
    assert "Traceback" not in output
    assert line in proc.stdout.splitlines()
    journal = _journal(run)
    ran = len(journal)
    assert "alpha-2" in _tasks(journal)  # the item in flight finished and is kept
    if workers:
        assert 3 <= ran < 10
    else:
        assert _tasks(journal) == ["alpha-0", "alpha-1", "alpha-2"]
    assert all(r["status"] in ("passed", "failed") for r in journal)
    manifest = _json(run / "run.json")
    assert (manifest["status"], manifest["stop_reason"]) == ("interrupted", reason)
    egi = _json(run / "egi.json")
    assert egi["session"]["interrupted"] is True
    assert (egi["session"]["items_ran"], egi["session"]["stop_reason"]) == (ran, reason)
    headline = f"EGI INTERRUPTED: {ran} of 10 items ran ({reason}) — the figure over the items"
    assert egi["egi"]["headline"].startswith(headline)
    # the release gate is not judged on it (the toy routes feed neither floored bucket)
    gate = f"interrupted after {ran} of 10 items; continue it with --egi-resume {run}"
    assert egi["gate"] == {"release_ready": None, "breached": [], "unmeasured": ["M2", "M5"],
                           "judged": False, "not_judged_reason": gate}
    assert f"release gate: NOT JUDGED — {gate}" in proc.stdout.splitlines()
    assert sum(f"--egi-resume {run}" in line for line in proc.stdout.splitlines()) == 1  # said once
    if not workers:  # the beta items were not reached
        missing = {m["route"]: m["reason"] for m in egi["missing"]}
        assert missing["toy/acc_beta"] == (
            f"stopped before it: the run stopped ({reason}) before any beta item ran")
    return ran


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
def test_ctrl_c_finishes_the_items_in_flight_and_the_run_resumes(tmp_path, reference, workers):
    project = _project(tmp_path / "p")
    # items take 0.2 s, so that under -n 2 the other worker has items left when alpha-2 is hit
    proc = _pytest(project, "--egi-run-id", "C", *workers, sigint_in="alpha-2", slow="0.2")
    run = project / "reports" / "C"
    line = f"{CTRL_C_LINE} {run} (--egi-resume continues it). Press Ctrl-C again to stop at once."
    ran = _assert_stopped_after_the_items_in_flight(proc, run, line, workers, "interrupted by Ctrl-C")

    resumed = _pytest(project, "--egi-resume", "reports/C")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_same_run(run, reference)
    assert _json(run / "egi.json")["session"]["resumed_items"] == ran
    manifest = _json(run / "run.json")
    assert (manifest["status"], "stop_reason" in manifest) == ("complete", False)


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
def test_a_second_ctrl_c_stops_at_once_and_loses_nothing_finished(tmp_path, reference, workers):
    project = _project(tmp_path / "p")
    proc = _pytest(project, "--egi-run-id", "C", *workers, sigint_in="alpha-2", sigints="2")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output
    assert "Traceback" not in output
    assert CTRL_C_LINE in proc.stdout
    run = project / "reports" / "C"
    journal = _journal(run)  # every line parses
    assert "alpha-2" not in _tasks(journal)  # it was cut short: no record at all
    assert all(r["status"] in ("passed", "failed") for r in journal)
    if not workers:
        assert _tasks(journal) == ["alpha-0", "alpha-1"]
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert sorted(_tasks(records)) == sorted(_tasks(journal))
    egi = _json(run / "egi.json")
    assert egi["session"]["interrupted"] is True
    headline = f"EGI INTERRUPTED: {len(journal)} of 10 items ran (interrupted by Ctrl-C)"
    assert egi["egi"]["headline"].startswith(headline)
    assert _json(run / "run.json")["status"] == "interrupted"
    resumed = _pytest(project, "--egi-resume", "reports/C")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_same_run(run, reference)


SIGTERM_LINE = "egi: SIGTERM: finishing the items in flight, then stopping; every finished item is kept in"


@pytest.mark.parametrize(("to", "workers"), [
    ("self", ()),
    ("parent", ("-n", "2")),  # the controller alone (kill PID, docker stop, a pod's deletion)
    ("group", ("-n", "2")),  # the controller and every worker (kill -TERM -PGID, systemd)
])
def test_sigterm_finishes_the_items_in_flight_like_ctrl_c_and_the_run_resumes(tmp_path, reference, to,
                                                                              workers):
    project = _project(tmp_path / "p")
    proc = _pytest(project, "--egi-run-id", "T", *workers, sigterm_in="alpha-2", sigterm_to=to, slow="0.2")
    # exit status 2, as an interrupted session; not 143, killed by the signal
    run = project / "reports" / "T"
    line = f"{SIGTERM_LINE} {run} (--egi-resume continues it). Send SIGTERM again to stop at once."
    _assert_stopped_after_the_items_in_flight(proc, run, line, workers, "interrupted by SIGTERM")

    resumed = _pytest(project, "--egi-resume", "reports/T")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_same_run(run, reference)
    assert _json(run / "run.json")["status"] == "complete"


@pytest.mark.parametrize(("to", "workers"), [("self", ()), ("group", ("-n", "2"))])
def test_a_second_sigterm_stops_at_once_and_the_run_says_interrupted(tmp_path, reference, to, workers):
    project = _project(tmp_path / "p")
    proc = _pytest(project, "--egi-run-id", "T", *workers, sigterm_in="alpha-2", sigterm_to=to, sigterms="2")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output
    assert "KeyboardInterrupt: a second SIGTERM: stopped at once" in proc.stdout
    run = project / "reports" / "T"
    journal = _journal(run)
    assert "alpha-2" not in _tasks(journal)  # it was cut short: no record at all
    assert all(r["status"] in ("passed", "failed") for r in journal)
    if not workers:
        assert _tasks(journal) == ["alpha-0", "alpha-1"]
    manifest = _json(run / "run.json")
    assert (manifest["status"], manifest["stop_reason"]) == ("interrupted", "interrupted by SIGTERM")
    resumed = _pytest(project, "--egi-resume", "reports/T")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_same_run(run, reference)


# -- shard, then merge -----------------------------------------------------------------------

SHARDS = {  # the toy items sorted by (suite, category, task), dealt to shards 1 2 3 1 2 3 ...
    1: ["alpha-0", "alpha-3", "beta-1", "beta-4"],
    2: ["alpha-1", "alpha-4", "beta-2"],
    3: ["alpha-2", "beta-0", "beta-3"],
}


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A toy project with reports/S/shard-K-of-3 for K = 1..3, and two odd shards made with
    other options: odd-seed/S/shard-2-of-3 (--egi-seed 5), odd-model/S/shard-3-of-3 (egi/oracle)."""
    project = _project(tmp_path_factory.mktemp("sharded"))
    runs = [("reports", k, ()) for k in (1, 2, 3)]  # as 3 machines would: at the same time
    runs += [("odd-seed", 2, ("--egi-seed", "5")), ("odd-model", 3, ("--egi-model", "egi/oracle"))]
    started = [_start(project, "--egi-run-id", "S", "--egi-shard", f"{k}/3", "--egi-report-dir", folder,
                      *extra) for folder, k, extra in runs]
    for proc in map(_wait, started):
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return project


def _in_process(monkeypatch, capsys, *prefix: str):
    """Yield ``run(*args)``: ``egi-bench *prefix *args`` in this process, as (exit status,
    stdout, stderr); the toy suite it imports is forgotten afterwards."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in [m for m in sys.modules if m.split(".")[0] == "toysuites"]:
        monkeypatch.delitem(sys.modules, name)

    def run(*args: Path | str) -> tuple[int, str, str]:
        capsys.readouterr()
        status = main([*prefix, *map(str, args)])
        out = capsys.readouterr()
        return status, out.out, out.err

    yield run
    for name in [m for m in sys.modules if m.split(".")[0] == "toysuites"]:
        del sys.modules[name]


@pytest.fixture
def merge(monkeypatch, capsys):
    """``egi-bench report --merge ARGS...`` in this process: (exit status, stdout, stderr)."""
    yield from _in_process(monkeypatch, capsys, "report", "--merge")


@pytest.fixture
def egi_bench(monkeypatch, capsys):
    """``egi-bench ARGS...`` in this process: (exit status, stdout, stderr)."""
    yield from _in_process(monkeypatch, capsys)


def _shard(root: Path, k: int) -> Path:
    return root / "S" / f"shard-{k}-of-3"


def _copy_shards(sharded: Path, dest: Path, ks=(1, 2, 3), odd: dict[int, str] | None = None) -> Path:
    """Copy shards ``ks`` of run S (shard k from ``odd[k]`` when given) to ``dest/S``."""
    for k in ks:
        source = sharded / (odd or {}).get(k, "reports")
        shutil.copytree(_shard(source, k), _shard(dest, k))
    return dest / "S"


def test_shards_are_disjoint_balanced_and_labelled(sharded, reference):
    for k, tasks in SHARDS.items():
        run = _shard(sharded / "reports", k)
        assert _tasks(_journal(run)) == tasks
        egi = _json(run / "egi.json")
        assert egi["egi"]["subset"] == [f'--egi-shard "{k}/3"']
        assert egi["egi"]["headline"].startswith(f'EGI (subset: --egi-shard "{k}/3"; partial: M1 M4')
        assert (egi["session"]["shard"], egi["session"]["items_collected"]) == ([k, 3], len(tasks))
        manifest = _json(run / "run.json")
        assert (manifest["status"], manifest["shard"], manifest["run_id"]) == ("complete", [k, 3], "S")
        assert manifest["plan"] == [f"{NODE}[{t}]" for t in tasks]
    assert sorted(t for tasks in SHARDS.values() for t in tasks) == TASKS


def test_merged_shards_equal_a_single_run(tmp_path, sharded, reference, merge):
    run = _copy_shards(sharded, tmp_path)
    status, out, err = merge(run)
    assert (status, err) == (0, "")
    assert out.splitlines()[-1] == f"egi report: {run} (merged from 3 shards, no model called)"
    _assert_same_run(run, reference)
    egi = _json(run / "egi.json")
    assert egi["session"]["merged_from"] == [str(_shard(tmp_path, k)) for k in (1, 2, 3)]
    single = _json(reference / "egi.json")["session"]
    assert single.pop("merged_from") is None
    assert {k: v for k, v in egi["session"].items() if k != "merged_from"} == single
    assert (egi["session"]["items_collected"], egi["session"]["items_ran"]) == (10, 10)
    assert egi["egi"]["subset"] == [] and not egi["egi"]["headline"].startswith("EGI (subset")
    manifest = _json(run / "run.json")
    assert manifest["merged_from"] == [str(_shard(tmp_path, k)) for k in (1, 2, 3)]
    assert (manifest["status"], manifest["shard"], manifest["run_id"]) == ("complete", None, "S")
    assert manifest["plan"] == [f"{NODE}[{t}]" for t in TASKS]
    # the shard folders themselves can be named instead of their run's folder
    again = tmp_path / "again"
    _copy_shards(sharded, again)
    status, _, _ = merge(*(_shard(again, k) for k in (3, 1, 2)))
    assert status == 0
    assert (again / "S" / "records.jsonl").read_bytes() == (reference / "records.jsonl").read_bytes()


def test_a_merged_run_resumed_keeps_where_it_was_merged_from(tmp_path, sharded, reference, merge):
    project = _project(tmp_path / "p")
    run = _copy_shards(sharded, project / "reports")
    assert merge(run)[0] == 0
    shards = [str(_shard(project / "reports", k)) for k in (1, 2, 3)]
    resumed = _pytest(project, "--egi-resume", "reports/S")  # every item complete: nothing runs
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_same_run(run, reference)
    manifest = _json(run / "run.json")
    assert (manifest["merged_from"], len(manifest["resumed"]), manifest["status"]) == (shards, 1, "complete")
    session = _json(run / "egi.json")["session"]
    assert (session["merged_from"], session["resumed_from"], session["resumed_items"]) == (
        shards, str(run), 10)


def test_a_missing_shard_is_named_with_the_command_that_makes_it(tmp_path, sharded, merge):
    run = _copy_shards(sharded, tmp_path, ks=(1, 3))
    assert merge(run) == (2, "", (
        "egi-bench: error: --merge: shard 2/3 of run S missing (expected folder shard-2-of-3); run it with "
        "--egi-run-id S --egi-shard 2/3, or pass its folder\n"))
    assert not (run / "egi.json").exists()


def test_a_shard_given_twice_is_refused(tmp_path, sharded, merge):
    run = _copy_shards(sharded, tmp_path)
    one = _shard(tmp_path, 1)
    assert merge(one, one, _shard(tmp_path, 2), _shard(tmp_path, 3)) == (
        2, "", f"egi-bench: error: --merge: shard 1/3 given twice ({one} and {one})\n")
    assert not (run / "egi.json").exists()


@pytest.mark.parametrize(("k", "odd", "difference"), [
    (2, "odd-seed", "--egi-seed: none in shard-1-of-3, 5 in shard-2-of-3"),
    (3, "odd-model", "--egi-model: egi/noisy-0.3 in shard-1-of-3, egi/oracle in shard-3-of-3"),
])
def test_a_shard_run_with_other_options_is_refused(tmp_path, sharded, merge, k, odd, difference):
    run = _copy_shards(sharded, tmp_path, odd={k: odd})
    assert merge(run) == (2, "", (
        f"egi-bench: error: --merge: {_shard(tmp_path, k)} and {_shard(tmp_path, 1)} were not run alike: "
        f"{difference}; rerun the odd shard with the others' options\n"))
    assert not (run / "egi.json").exists()


def test_an_unfinished_shard_is_refused(tmp_path, sharded, merge):
    run = _copy_shards(sharded, tmp_path)
    two = _shard(tmp_path, 2)
    manifest = _json(two / "run.json")
    (two / "run.json").write_text(json.dumps({**manifest, "status": "running"}))
    assert merge(run) == (2, "", (
        f"egi-bench: error: --merge: shard 2/3 ({two}) did not finish (status running); continue it with "
        f"pytest ... --egi-resume {two}\n"))


def test_a_shard_lacking_a_record_is_refused_until_it_is_resumed(tmp_path, sharded, reference, merge):
    project = tmp_path / "p"
    shutil.copytree(sharded, project)
    two = _shard(project / "reports", 2)
    lines = (two / "journal.jsonl").read_text().splitlines(keepends=True)
    (two / "journal.jsonl").write_text("".join(lines[1:]))  # alpha-1's record is lost
    assert merge(project / "reports" / "S") == (2, "", (
        f"egi-bench: error: --merge: shard 2/3 ({two}) has no record for 1 item(s) of its plan, e.g. "
        f"{NODE}[alpha-1]; continue it with pytest ... --egi-resume {two}\n"))
    resumed = _pytest(project, "--egi-resume", "reports/S/shard-2-of-3")  # what the message says
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert _tasks(_journal(two)) == ["alpha-4", "beta-2", "alpha-1"]
    assert _json(two / "egi.json")["session"]["resumed_items"] == 2
    status, _, err = merge(project / "reports" / "S")
    assert (status, err) == (0, "")
    _assert_same_run(project / "reports" / "S", reference)


def test_shards_in_different_folders_need_out(tmp_path, sharded, reference, merge):
    _copy_shards(sharded, tmp_path / "a", ks=(1, 3))
    _copy_shards(sharded, tmp_path / "b", ks=(2,))
    shards = [_shard(tmp_path / "a", 1), _shard(tmp_path / "b", 2), _shard(tmp_path / "a", 3)]
    assert merge(*shards) == (2, "", (
        "egi-bench: error: --merge: the shards are in different folders; say where the merged run goes "
        "with --out DIR\n"))
    status, _, err = merge(*shards, "--out", tmp_path / "merged")
    assert (status, err) == (0, "")
    _assert_same_run(tmp_path / "merged", reference)


def test_merging_a_run_that_is_not_a_shard_is_refused(reference, merge):
    assert merge(reference) == (
        2, "", f"egi-bench: error: --merge {reference}: not a shard (run without --egi-shard); nothing to "
        "merge\n")


def test_a_shard_with_a_malformed_record_is_named_until_it_is_resumed(tmp_path, sharded, reference, merge):
    project = tmp_path / "p"
    shutil.copytree(sharded, project)
    two = _shard(project / "reports", 2)
    lines = _spoil_line(two / "journal.jsonl", 0, {"values": {"correct": None, "acc": "x"}})
    assert merge(project / "reports" / "S") == (2, "", (
        f"egi-bench: error: {two}/journal.jsonl:1: field 'values': sub-metric 'acc' is a str (\"x\"), "
        f"expected a number or null; remove the line and resume with --egi-resume {two} (its item runs "
        "again)\n"))
    assert not (project / "reports" / "S" / "egi.json").exists()
    (two / "journal.jsonl").write_text("".join(lines[1:]))
    resumed = _pytest(project, "--egi-resume", "reports/S/shard-2-of-3")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    status, _, err = merge(project / "reports" / "S")
    assert (status, err) == (0, "")
    _assert_same_run(project / "reports" / "S", reference)


# -- a merge judges with its own floors and weights -------------------------------------------


@pytest.fixture(scope="module")
def odd_judged(sharded: Path) -> Path:
    """Shard 2 of run S made with --egi-floor M4=90 (in odd-floor/), shard 3 with --egi-weights
    M1=0.5 (in odd-weights/): the same records as the others', judged otherwise."""
    started = [_start(sharded, "--egi-run-id", "S", "--egi-shard", f"{k}/3", "--egi-report-dir", folder,
                      *extra)
               for folder, k, extra in (("odd-floor", 2, ("--egi-floor", "M4=90")),
                                        ("odd-weights", 3, ("--egi-weights", "M1=0.5")))]  # fmt: skip
    for proc in map(_wait, started):
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return sharded


def test_a_merge_judges_with_its_own_floor(tmp_path, sharded, reference, merge):
    """The toy's M4 (acc) is 80.0 on these records: --egi-floor M4=90 given to the merge
    breaches it (before, the merge took shard 1's floors and ignored its own flag)."""
    run = _copy_shards(sharded, tmp_path)
    status, out, err = merge(run, "--egi-floor", "M4=90", "--egi-gate", "point")
    assert (status, err) == (1, "")
    egi = _json(run / "egi.json")
    assert egi["routing"]["floors"] == {"M2": 70, "M4": 90, "M5": 70}
    assert (egi["gate"]["breached"], egi["gate"]["judged"]) == (["M4"], True)
    assert egi["session"]["reasons"] == ["release floor breached: M4 80.0 < 90"]
    assert "release gate: NOT READY — M4 80.0 below floor 90; M2 not measured (floor 70); M5 not measured " \
           "(floor 70)" in out.splitlines()
    assert (run / "records.jsonl").read_bytes() == (reference / "records.jsonl").read_bytes()
    status, _, err = merge(run, "--egi-floor", "M4=80", "--egi-gate", "point")  # met: the same records pass
    assert (status, err) == (0, "")
    assert _json(run / "egi.json")["gate"]["breached"] == []


def test_a_merge_applies_its_own_partial_weights_over_the_shards(tmp_path, sharded, merge):
    run = _copy_shards(sharded, tmp_path)
    status, out, err = merge(run, "--egi-weights", "M1=0.20,M5=0.30")
    assert (status, err) == (0, "")
    egi = _json(run / "egi.json")
    assert egi["routing"]["weights"] == pytest.approx(
        {"M1": 0.2, "M2": 0.11 / 0.58, "M3": 0.08 / 0.58, "M4": 0.07 / 0.58, "M5": 0.3, "M6": 0.03 / 0.58},
        abs=1e-12)
    assert egi["routing"]["weights_given"] == {"M1": 0.2, "M5": 0.3}
    assert ("bucket weights (--egi-weights M1=0.2,M5=0.3; the other buckets scaled to fill 0.5): M1 0.2, "
            "M2 0.189655, M3 0.137931, M4 0.12069, M5 0.3, M6 0.051724") in out.splitlines()


@pytest.mark.parametrize(("k", "odd", "message"), [
    (2, "odd-floor", "the shards were judged with different floors: M4 none in shard-1-of-3, 90 in "
                     "shard-2-of-3; the shards of one run must agree: give the merge the floors to judge "
                     "with (--egi-floor M4=0), or rerun the odd shard with the others' options"),
    (3, "odd-weights", "the shards were judged with different weights: M1 0.28 in shard-1-of-3, 0.5 in "
                       "shard-3-of-3; M2 0.22 in shard-1-of-3, 0.152778 in shard-3-of-3; M3 0.16 in "
                       "shard-1-of-3, 0.111111 in shard-3-of-3; M4 0.14 in shard-1-of-3, 0.0972222 in "
                       "shard-3-of-3; M5 0.14 in shard-1-of-3, 0.0972222 in shard-3-of-3; M6 0.06 in "
                       "shard-1-of-3, 0.0416667 in shard-3-of-3; the shards of one run must agree: give the "
                       "merge the weights to judge with (--egi-weights M1=0.28,M2=0.22,M3=0.16,M4=0.14,"
                       "M5=0.14,M6=0.06), or rerun the odd shard with the others' options"),
])
def test_shards_judged_with_other_floors_or_weights_are_refused(tmp_path, odd_judged, merge, k, odd,
                                                                 message):  # fmt: skip
    """Shard 1 alone no longer decides: which shard carried a flag must not change the verdict."""
    run = _copy_shards(odd_judged, tmp_path, odd={k: odd})
    assert merge(run) == (2, "", f"egi-bench: error: --merge: {message}\n")
    assert not (run / "egi.json").exists() and not (run / "raw").exists()  # nothing written


def test_shards_judged_otherwise_merge_once_the_merge_names_the_value(tmp_path, odd_judged, reference, merge):
    run = _copy_shards(odd_judged, tmp_path, odd={2: "odd-floor"})
    status, _, err = merge(run, "--egi-floor", "M4=90")
    assert (status, err) == (1, "")  # M4 80.0 < 90, whichever shard carried the flag
    assert _json(run / "egi.json")["routing"]["floors"] == {"M2": 70, "M4": 90, "M5": 70}
    status, _, err = merge(run, "--egi-floor", "M4=80")
    assert (status, err) == (0, "")
    assert (run / "records.jsonl").read_bytes() == (reference / "records.jsonl").read_bytes()


# -- more shards than items --------------------------------------------------------------------


@pytest.fixture(scope="module")
def sparse(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, subprocess.CompletedProcess]]:
    """The 10 toy items in 12 shards (reports/T/shard-K-of-12): shards 11 and 12 are dealt no
    item; shard 12 runs with two xdist workers. The toy project and each shard's session."""
    project = _project(tmp_path_factory.mktemp("sparse"))
    procs = {}
    for batch in ((1, 2, 3, 4, 5, 6), (7, 8, 9, 10, 11, 12)):  # two cores: six at a time
        started = {k: _start(project, "--egi-run-id", "T", "--egi-shard", f"{k}/12",
                             *(("-n", "2") if k == 12 else ())) for k in batch}
        procs.update({k: _wait(p) for k, p in started.items()})
    return project, procs


@pytest.mark.parametrize("k", [11, 12])
def test_a_shard_dealt_no_item_is_complete_and_empty(sparse, k):
    project, procs = sparse
    proc = procs[k]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = project / "reports" / "T" / f"shard-{k}-of-12"
    lines = proc.stdout.splitlines()
    at = lines.index(f"egi: shard {k}/12 of run T had no items to run (fewer selected items than "
                     "shards); it is complete with an empty plan, and egi-bench report --merge takes it "
                     "with the others")
    assert lines[at + 1] == f"egi report: {run}"
    manifest = _json(run / "run.json")
    assert (manifest["status"], manifest["shard"], manifest["run_id"], manifest["plan"]) == (
        "complete", [k, 12], "T", [])
    assert (run / "records.jsonl").read_text() == ""
    session = _json(run / "egi.json")["session"]
    assert (session["exit_status"], session["items_collected"], session["items_ran"], session["shard"]) == (
        0, 0, 0, [k, 12])


def test_shards_dealt_no_item_are_merged_with_the_others(tmp_path, sparse, reference, merge):
    project, procs = sparse
    assert [k for k, p in procs.items() if p.returncode != 0] == []
    run = tmp_path / "T"
    shutil.copytree(project / "reports" / "T", run)
    status, out, err = merge(run)
    assert (status, err) == (0, "")
    assert out.splitlines()[-1] == f"egi report: {run} (merged from 12 shards, no model called)"
    _assert_same_run(run, reference)
    assert _json(run / "egi.json")["session"]["items_collected"] == 10


def test_every_missing_shard_is_named(tmp_path, sparse, merge):
    project, _ = sparse
    run = tmp_path / "T"
    shutil.copytree(project / "reports" / "T", run)
    for k in (4, 11, 12):
        shutil.rmtree(run / f"shard-{k}-of-12", ignore_errors=True)  # 11 and 12: none before the fix
    assert merge(run) == (2, "", (
        "egi-bench: error: --merge: shard 4/12, shard 11/12, shard 12/12 of run T missing (expected folders "
        "shard-4-of-12, shard-11-of-12, shard-12-of-12); run each with --egi-run-id T and --egi-shard 4/12, "
        "--egi-shard 11/12, --egi-shard 12/12, or pass their folders\n"))
    assert not (run / "egi.json").exists()


def test_a_session_that_is_not_a_shard_and_collects_nothing_exits_5(tmp_path):
    project = _project(tmp_path / "p")
    proc = _pytest(project, "--egi-run-id", "NONE", "-k", "no_such_item")
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert not (project / "reports" / "NONE").exists()


def _session_summary(proc: subprocess.CompletedProcess) -> list[str]:
    """The lines a session printed under ``=== EGI summary ===``, to its ``egi report:`` line."""
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if " EGI summary " in line) + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("egi report: "))
    return lines[start:end + 1]


def test_report_on_a_shard_prints_the_sessions_headline_and_labels(sparse, egi_bench):
    project, procs = sparse
    run = project / "reports" / "T" / "shard-1-of-12"
    session = _session_summary(procs[1])
    assert session[0] == ('EGI (subset: --egi-shard "1/12"; partial: M1 M4, 42% of weight) 100.0  — not '
                          "comparable to a full EGI")
    status, out, err = egi_bench("report", run)
    assert (status, err) == (0, "")
    lines = out.splitlines()  # the suites' lines, then the verdict last: the session's
    assert lines[lines.index(session[0]):] == session
