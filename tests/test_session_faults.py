"""Faults land as errors and a run whose figure is not a score says so on its EGI line:
xdist worker crashes, interrupted and invalid runs, usage errors with and without ``-n``,
subsets chosen on the command line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from markupsafe import escape

from pytest_egi.report.session import CRASH_TEXT

REPO = Path(__file__).resolve().parents[1]
NODE = "toysuites/toy/test_toy.py::test_task"
FLAGS = ("--egi-model", "egi/oracle", "--egi-bootstrap", "0")


def _flags(model: str) -> tuple[str, ...]:
    return ("--egi-model", model, "--egi-bootstrap", "0")


@pytest.fixture(autouse=True)
def _subprocesses_import_this_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytester's subprocess runs start in a temporary folder: import this checkout's
    pytest_egi there, not whichever copy is installed."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))


def _run_dir(pytester: pytest.Pytester, reports: str = "reports") -> Path:
    runs = sorted((pytester.path / reports).iterdir())
    assert len(runs) == 1, runs
    return runs[0]


def _egi(pytester: pytest.Pytester, reports: str = "reports") -> dict:
    return json.loads((_run_dir(pytester, reports) / "egi.json").read_text())


def _records(pytester: pytest.Pytester) -> dict[str, dict]:
    lines = (_run_dir(pytester) / "records.jsonl").read_text().splitlines()
    return {r["task_id"]: r for r in map(json.loads, lines)}


def _summary(result: pytest.RunResult) -> list[str]:
    """The lines after the 'EGI summary' separator."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "EGI summary" in line)
    return lines[start + 1:]


# -- xdist worker crashes --------------------------------------------------------------------

CRASH_CONFTEST = """
import ctypes
import os
import signal
import time

import pytest

HOW = os.environ.get("EGI_TEST_CRASH", "")


def pytest_runtest_call(item):
    if not item.nodeid.endswith("[alpha-1]"):
        return
    if HOW == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif HOW == "segfault":
        ctypes.string_at(0)
    elif HOW == "abort":
        os.abort()
    elif HOW == "hang":
        time.sleep(120)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    # after the test recorded its trial, before the report (and with it the record) reaches
    # the controller
    if HOW == "after-record" and item.nodeid.endswith("[alpha-1]") and call.when == "call":
        os.kill(os.getpid(), signal.SIGKILL)
    return report
"""


@pytest.mark.parametrize(("how", "extra", "raw_path"), [
    ("kill", (), None),
    ("segfault", (), None),
    ("abort", (), None),
    ("hang", ("--timeout", "5", "--timeout-method", "thread"), None),  # pytest-timeout os._exit
    ("after-record", (), None),  # the trajectory died with the worker: no file, no stale path
])
def test_a_crashed_worker_leaves_an_error_record(toy_project, monkeypatch, how, extra, raw_path):
    toy_project.makeconftest(CRASH_CONFTEST)
    monkeypatch.setenv("EGI_TEST_CRASH", how)
    result = toy_project.runpytest_subprocess("toysuites", *FLAGS, "-n", "2", *extra)
    assert result.ret == 1  # 1 errored item of 6 is above the default --egi-max-error-rate 0.05
    records = _records(toy_project)
    assert sorted(records) == ["alpha-0", "alpha-1", "alpha-2", "beta-0", "beta-1", "beta-2"]
    crashed = records["alpha-1"]
    assert (crashed["status"], crashed["error"], crashed["raw_path"]) == ("error", CRASH_TEXT, raw_path)
    assert crashed["nodeid"] == f"{NODE}[alpha-1]" and crashed["category"] == "alpha"
    assert all(r["status"] == "passed" for k, r in records.items() if k != "alpha-1")
    egi = _egi(toy_project)
    assert egi["counts"] == {"error": 1, "passed": 5}
    assert egi["error_rate"] == pytest.approx(1 / 6)
    (crash,) = egi["session"]["crashes"]
    assert re.fullmatch(rf"worker gw\d+ crashed running {re.escape(NODE)}\[alpha-1\]", crash)
    assert egi["session"]["reasons"] == ["errored items 16.7% above --egi-max-error-rate 5.0%", crash]
    assert egi["egi"]["flags"] == ["INVALID"]
    headline = (
        "EGI INVALID: errored items 16.7% above --egi-max-error-rate 5.0% — the figure over the "
        "items that were scored (100.0, partial: 42% of weight) is not a score"
    )
    assert egi["egi"]["headline"] == headline
    summary = _summary(result)
    assert summary[0] == headline
    assert f"egi: {crash} (an error record; it counts toward --egi-max-error-rate)" in summary


def test_items_left_unrun_by_dead_workers_make_the_run_incomplete(toy_project, monkeypatch):
    toy_project.makeconftest(CRASH_CONFTEST)
    monkeypatch.setenv("EGI_TEST_CRASH", "kill")
    result = toy_project.runpytest_subprocess(
        "toysuites", *FLAGS, "-n", "1", "--max-worker-restart", "0", "--egi-max-error-rate", "1"
    )
    assert result.ret == 1
    egi = _egi(toy_project)
    assert egi["counts"] == {"error": 1, "passed": 1}  # alpha-0 passed, alpha-1 crashed the worker
    headline = (
        "EGI INCOMPLETE: 2 of 6 items ran; the others reported no result — the figure over the "
        "items that were scored (100.0, partial: 42% of weight) is not a score"
    )
    assert (egi["egi"]["status"], egi["egi"]["headline"]) == ("incomplete", headline)
    assert _summary(result)[0] == headline
    assert "session fails: incomplete: 2 of 6 items ran; the others reported no result" in _summary(result)
    run = _run_dir(toy_project)
    reason = f"incomplete: 2 of 6 items reported a result; run the others with --egi-resume {run}"
    assert (egi["gate"]["release_ready"], egi["gate"]["not_judged_reason"]) == (None, reason)
    assert f"release gate: NOT JUDGED — {reason}" in _summary(result)


# -- INVALID / INTERRUPTED on the EGI line -----------------------------------------------------


def _assert_flagged_everywhere(pytester, result, headline: str, status: str, figure: str,
                               gate: str) -> None:
    """The run is labelled ``headline`` and its release gate is not judged, with reason ``gate``
    (``{run}``: the run's folder), in the terminal, egi.json and report.html alike."""
    egi = _egi(pytester)
    assert egi["egi"]["headline"] == headline
    assert egi["egi"]["status"] == status
    assert _summary(result)[0] == headline
    run = _run_dir(pytester)
    reason = gate.format(run=run)
    assert (egi["gate"]["release_ready"], egi["gate"]["judged"], egi["gate"]["not_judged_reason"]) == (
        None, False, reason)
    assert f"release gate: NOT JUDGED — {reason}" in _summary(result)
    assert not any(line.startswith("release gate: NOT READY") for line in _summary(result))
    html = (run / "report.html").read_text()
    assert f'<span class="badge notready" style="font-size:1.6rem">{status.upper()}' in html
    assert f"<b>{headline}</b>" in html
    assert f"EGI {figure}" not in html  # never a plain score above the reason
    assert f'<span class="badge notjudged">release gate not judged</span> {escape(reason)}' in html
    assert "release-ready" not in html


def test_error_rate_above_the_limit_makes_the_egi_invalid(toy_project):
    result = toy_project.runpytest(
        "toysuites", *FLAGS, "--egi-opt", "toy.fail_every=2", "--egi-mode", "deep",
    )
    assert result.ret == 1
    headline = (
        "EGI INVALID: errored items 60.0% above --egi-max-error-rate 5.0% — the figure over the "
        "items that were scored (100.0, partial: 42% of weight) is not a score"
    )
    _assert_flagged_everywhere(toy_project, result, headline, "invalid", "100.0", INVALID_GATE)
    assert _egi(toy_project)["egi"]["flags"] == ["INVALID"]


INVALID_GATE = ("invalid: errored items 60.0% above --egi-max-error-rate 5.0%, so the buckets hold the "
                "scored items only; run the errored items again with --egi-resume {run}")


def test_a_floor_breached_on_an_invalid_run_does_not_add_to_why_it_fails(toy_project):
    routing = toy_project.path / "routing.yaml"
    routing.write_text(routing.read_text().replace("bucket: M4", "bucket: M5"))
    result = toy_project.runpytest(
        "toysuites", *_flags("egi/noisy-1.0"), "--egi-opt", "toy.fail_every=2", "--egi-mode", "deep",
    )
    assert result.ret == 1  # for its errors
    egi = _egi(toy_project)
    assert egi["gate"]["breached"] == ["M5"]  # computed, informative
    assert egi["session"]["reasons"] == ["errored items 60.0% above --egi-max-error-rate 5.0%"]
    assert not any("release floor breached" in line for line in result.stdout.lines)
    headline = (
        "EGI INVALID: errored items 60.0% above --egi-max-error-rate 5.0% — the figure over the "
        "items that were scored (0.0, partial: 42% of weight) is not a score"
    )
    _assert_flagged_everywhere(toy_project, result, headline, "invalid", "0.0", INVALID_GATE)


def test_the_early_stop_is_interrupted_and_invalid(toy_project):
    result = toy_project.runpytest(
        "toysuites", *FLAGS, "--egi-opt", "toy.fail_env=true", "--egi-mode", "deep",
    )
    assert result.ret == 1
    headline = (
        "EGI INTERRUPTED, INVALID: 5 of 10 items ran (the first 5 items all errored); errored "
        "items 100.0% above --egi-max-error-rate 5.0% — no figure (nothing was scored)"
    )
    _assert_flagged_everywhere(toy_project, result, headline, "interrupted", "—",
                               "interrupted after 5 of 10 items; continue it with --egi-resume {run}")
    session = _egi(toy_project)["session"]
    assert (session["items_collected"], session["items_ran"]) == (10, 5)


@pytest.mark.parametrize(("args", "ran", "why", "ret"), [
    (("-x",), 1, "stopping after 1 failures", 1),
    (("--maxfail", "2"), 2, "stopping after 2 failures", 1),
])
def test_a_stopped_serial_run_is_interrupted(toy_project, args, ran, why, ret):
    result = toy_project.runpytest("toysuites", *_flags("egi/null"), *args)
    assert result.ret == ret  # model failures alone exit 0; a run cut short does not
    headline = (
        f"EGI INTERRUPTED: {ran} of 6 items ran ({why}) — the figure over the items that were "
        "scored (0.0, partial: 42% of weight) is not a score"
    )
    _assert_flagged_everywhere(toy_project, result, headline, "interrupted", "0.0",
                               f"interrupted after {ran} of 6 items; continue it with --egi-resume {{run}}")
    session = _egi(toy_project)["session"]
    assert (session["items_collected"], session["items_ran"], session["stop_reason"]) == (6, ran, why)
    assert f"session fails: interrupted: {ran} of 6 items ran ({why})" in _summary(result)


CTRL_C_CONFTEST = """
def pytest_runtest_setup(item):
    if item.nodeid.endswith("[alpha-2]"):
        raise KeyboardInterrupt
"""


def test_ctrl_c_is_interrupted(toy_project):
    toy_project.makeconftest(CTRL_C_CONFTEST)
    result = toy_project.runpytest_subprocess("toysuites", *FLAGS)
    assert result.ret == 2
    headline = (
        "EGI INTERRUPTED: 2 of 6 items ran (KeyboardInterrupt) — the figure over the items that "
        "were scored (100.0, partial: 42% of weight) is not a score"
    )
    _assert_flagged_everywhere(toy_project, result, headline, "interrupted", "100.0",
                               "interrupted after 2 of 6 items; continue it with --egi-resume {run}")
    # the beta items were never reached: their sub-metric's reason says so first
    reasons = {m["route"]: m["reason"] for m in _egi(toy_project)["missing"]}
    assert reasons == {
        "toy/acc_beta": "stopped before it: the run stopped (KeyboardInterrupt) before any beta item ran",
        "absent/whatever": "not collected: no absent test under the paths given",
    }
    # (the terminal wraps the line at its width)
    assert ("toy/acc_beta: stopped before it: the run stopped (KeyboardInterrupt) before any beta item "
            "ran") in " ".join(result.stdout.str().split())


def test_a_stopped_xdist_run_is_interrupted(toy_project):
    result = toy_project.runpytest_subprocess("toysuites", *_flags("egi/null"),
                                              "-x", "-n", "2")
    assert result.ret == 2  # xdist reports -x as an interruption
    egi = _egi(toy_project)
    ran = egi["session"]["items_ran"]
    assert ran in (1, 2)  # each worker stops at its first failure
    headline = (
        f"EGI INTERRUPTED: {ran} of 6 items ran (stopping after 1 failures) — the figure over "
        "the items that were scored (0.0, partial: 42% of weight) is not a score"
    )
    _assert_flagged_everywhere(toy_project, result, headline, "interrupted", "0.0",
                               f"interrupted after {ran} of 6 items; continue it with --egi-resume {{run}}")


def test_a_floor_breach_keeps_the_score_and_the_gate_says_so(toy_project):
    routing = toy_project.path / "routing.yaml"
    routing.write_text(routing.read_text().replace("bucket: M4", "bucket: M5"))
    result = toy_project.runpytest("toysuites", *_flags("egi/null"), "--egi-gate", "point")
    assert result.ret == 1
    egi = _egi(toy_project)
    assert egi["egi"]["flags"] == [] and egi["egi"]["status"] == "valid"
    assert _summary(result)[0] == (
        "EGI (partial: M1 M5, 42% of weight) 0.0  — not comparable to a full EGI"
    )
    result.stdout.fnmatch_lines(["release gate: NOT READY — M5 0.0 below floor 70*"])


# -- usage errors, with and without -n -------------------------------------------------------


def _error_lines(stderr: list[str]) -> list[str]:
    """pytest's usage-error message: the non-blank stderr lines from ``ERROR:`` on (other
    plugins may warn before it)."""
    start = next((i for i, line in enumerate(stderr) if line.startswith("ERROR: ")), len(stderr))
    return [line for line in stderr[start:] if line.strip()]


def _usage_error(result: pytest.RunResult) -> list[str]:
    return _error_lines(result.stderr.lines)


@pytest.mark.parametrize(("args", "message"), [
    (("--egi-opt", "toy.max_turns=abc"), [
        "ERROR: --egi-opt toy.max_turns: Input should be a valid integer, unable to parse string "
        "as an integer",
        "(valid keys for toy: max_turns, fail_env, fail_every)",
    ]),
    (("--egi-opt", "toy.max_turn=3"), [
        "ERROR: --egi-opt toy.max_turn: unknown option for toy; valid keys for toy: max_turns, "
        "fail_env, fail_every",
    ]),
])
def test_a_usage_error_is_the_same_with_xdist(toy_project, args, message):
    serial = toy_project.runpytest_subprocess("toysuites", *FLAGS, *args)
    dist = toy_project.runpytest_subprocess("toysuites", *FLAGS, *args, "-n", "2")
    for result in (serial, dist):
        assert result.ret == 4
        assert _usage_error(result) == message
        assert "passed" not in result.stdout.str()
    assert not (toy_project.path / "reports").exists()


def test_a_route_the_suite_never_produces_is_a_usage_error(toy_project):
    routing = toy_project.path / "routing.yaml"
    routing.write_text(routing.read_text().replace("sub_metric: acc_beta", "sub_metric: acc_betta"))
    message = [
        f"ERROR: invalid routing file {routing}: route 2 (toy/acc_betta): sub_metric 'acc_betta' "
        "is not a sub-metric of toy; its sub-metrics: acc, acc_alpha, acc_beta"
    ]
    for extra in ((), ("-n", "2")):
        result = toy_project.runpytest_subprocess("toysuites", *FLAGS, *extra)
        assert result.ret == 4
        assert _usage_error(result) == message


def _repo_pytest(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=cwd, capture_output=True, text=True, timeout=600,
    )


def test_a_broken_task_file_under_xdist_exits_4_like_a_serial_run(tmp_path):
    bad = tmp_path / "tasks.json"
    bad.write_text('[{"idx": 1, ')
    reports = tmp_path / "reports"
    args = ["suites", "--egi-model", "egi/oracle", "--egi-report-dir", str(reports),
            "--egi-opt", f"crmarena.tasks={bad}"]
    serial, dist = _repo_pytest(*args), _repo_pytest(*args, "-n", "2")
    message = (
        f"ERROR: crmarena: {bad}: not valid JSON (Expecting property name enclosed in double "
        "quotes at line 1). Fix: the file must hold a JSON list of task records. "
        f"(from --egi-opt crmarena.tasks={bad})"
    )
    for result in (serial, dist):
        assert result.returncode == 4, result.stdout[-2000:]
        assert _error_lines(result.stderr.splitlines()) == [message]
    assert not reports.exists()  # no item ran, no EGI over the other suite


def test_a_missing_task_file_under_xdist_exits_4(tmp_path):
    result = _repo_pytest("suites", "--egi-model", "egi/oracle", "--egi-report-dir",
                          str(tmp_path / "r"), "--egi-opt", "crmarena.tasks=/nonexistent", "-n", "2")
    assert result.returncode == 4
    assert _error_lines(result.stderr.splitlines()) == [
        "ERROR: crmarena: /nonexistent: no such task file (from --egi-opt crmarena.tasks=/nonexistent)"
    ]


def test_a_repository_route_to_an_unknown_sub_metric_is_refused(tmp_path):
    routing = tmp_path / "routing.yaml"
    routing.write_text((REPO / "routing.yaml").read_text().replace(
        "{suite: crmarena, sub_metric: NCR,", "{suite: crmarena, sub_metric: NCRR,"))
    result = _repo_pytest("suites/crmarena", "--egi-model", "egi/oracle", "--egi-routing",
                          str(routing), "--co")
    assert result.returncode == 4
    assert _error_lines(result.stderr.splitlines()) == [
        f"ERROR: invalid routing file {routing}: route 1 (crmarena/NCRR): sub_metric 'NCRR' is "
        "not a sub-metric of crmarena; its sub-metrics: BRI, HTU, KQA, KQA_em, MTA, NCR, NED, PVI, "
        "TCU, TII, overall"
    ]


# -- subsets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "selection", "subset", "deselected", "ran"), [
    (("--deselect", f"{NODE}[alpha-0]"), {"--deselect": [f"{NODE}[alpha-0]"]},
     [f"--deselect {NODE}[alpha-0]"], 1, 5),
    ((f"{NODE}[alpha-1]", f"{NODE}[beta-2]"), {"node ids": [f"{NODE}[alpha-1]", f"{NODE}[beta-2]"]},
     [f"node ids {NODE}[alpha-1] {NODE}[beta-2]"], 0, 2),
    (("-k", "alpha"), {"-k": "alpha"}, ['-k "alpha"'], 3, 3),
])
def test_a_selection_is_recorded_and_flagged_as_a_subset(toy_project, args, selection, subset,
                                                         deselected, ran):
    paths = () if any("::" in a for a in args) else ("toysuites",)
    result = toy_project.runpytest(*paths, *FLAGS, *args)
    assert result.ret == 0
    egi = _egi(toy_project)
    assert egi["config"]["selection"] == selection
    assert egi["egi"]["subset"] == subset
    assert egi["egi"]["status"] == "valid"
    assert (egi["session"]["items_deselected"], egi["session"]["items_ran"]) == (deselected, ran)
    headline = (
        f"EGI (subset: {', '.join(subset)}; partial: M1 M4, 42% of weight) 100.0  — not "
        "comparable to a full EGI"
    )
    assert egi["egi"]["headline"] == headline
    assert _summary(result)[0] == headline
    html = (_run_dir(toy_project) / "report.html").read_text()
    assert f'<span class="badge partial">{escape("subset: " + ", ".join(subset))}</span>' in html


def test_last_failed_is_a_subset_and_failed_first_is_not(toy_project):
    toy_project.runpytest("toysuites", *_flags("egi/noisy-0.5"),
                          "--egi-report-dir", "first")
    first = _egi(toy_project, "first")
    failed = first["counts"]["failed"]
    assert 0 < failed < 6
    toy_project.runpytest("toysuites", *FLAGS, "--lf", "--egi-report-dir", "lf")
    lf = _egi(toy_project, "lf")
    assert lf["config"]["selection"] == {"--lf": True}
    assert lf["egi"]["subset"] == ["--lf"]
    # --lf drops the passed items while collecting (no deselection): flagged because it was given
    assert (lf["session"]["items_ran"], lf["session"]["items_collected"]) == (failed, failed)
    assert lf["egi"]["headline"].startswith("EGI (subset: --lf; partial: M1 M4, 42% of weight) 100.0")
    toy_project.runpytest("toysuites", *FLAGS, "--ff", "--egi-report-dir", "ff")
    ff = _egi(toy_project, "ff")
    assert ff["config"]["selection"] == {"--ff": True}  # recorded: it only reorders
    assert ff["egi"]["subset"] == [] and ff["session"]["items_ran"] == 6


def test_a_selection_under_xdist_counts_the_workers_deselection(toy_project):
    result = toy_project.runpytest_subprocess("toysuites", *FLAGS, "-k", "beta", "-n", "2")
    assert result.ret == 0
    egi = _egi(toy_project)
    assert egi["egi"]["subset"] == ['-k "beta"']
    session = egi["session"]
    assert (session["items_collected"], session["items_ran"], session["items_deselected"]) == (3, 3, 3)
