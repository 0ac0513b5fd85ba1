"""End-to-end behaviour of the plugin on the toy suite (pytester, in process)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_egi.records import load_records
from pytest_egi.trajectories import TrajectoryReader, read_trajectory


def _run_dir(pytester: pytest.Pytester) -> Path:
    runs = sorted((pytester.path / "reports").iterdir())
    assert len(runs) == 1, runs
    return runs[0]


def _egi(pytester: pytest.Pytester) -> dict:
    return json.loads((_run_dir(pytester) / "egi.json").read_text())


def _trajectory(pytester: pytest.Pytester, task_id: str) -> dict:
    """The stored trajectory of the run's (only) trial of ``task_id``."""
    run = _run_dir(pytester)
    [record] = [r for r in load_records(run) if r["task_id"] == task_id]
    return read_trajectory(run, record)


def test_oracle_reaches_ceiling_and_exit_0(toy_project):
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0",
                                   "--egi-gate", "point")
    result.assert_outcomes(passed=6)
    assert result.ret == 0
    egi = _egi(toy_project)
    assert egi["suites"]["toy"]["sub_metrics"] == {"acc": 1.0, "acc_alpha": 1.0, "acc_beta": 1.0}
    assert egi["buckets"]["M1"]["value"] == 100.0
    assert egi["buckets"]["M4"]["value"] == 100.0
    # partial: M1 (0.28) and M4 (0.14) are covered, so there is no EGI, only the partial figure
    assert egi["egi"] == {
        "value": None, "partial": True, "partial_value": 100.0, "covered_weight": 0.42,
        "covered_buckets": ["M1", "M4"], "ci95": None, "partial_ci95": None,
        "status": "valid", "flags": [], "flag_reasons": [], "subset": [],
        "headline": "EGI (partial: M1 M4, 42% of weight) 100.0  — not comparable to a full EGI",
    }
    assert egi["session"] == {
        "exit_status": 0, "reasons": [], "crashes": [], "items_collected": 6, "items_ran": 6,
        "items_deselected": 0, "stop_reason": None, "interrupted": False, "resumed_from": None,
        "resumed_items": 0, "merged_from": None, "shard": None,
    }
    assert egi["gate"] == {"release_ready": False, "breached": [], "unmeasured": ["M2", "M5"],
                           "judged": True, "not_judged_reason": None}
    reasons = {m["route"]: m["reason"] for m in egi["missing"]}
    assert reasons == {
        "absent/whatever": "not collected: no absent test under the paths given"
    }
    result.stdout.fnmatch_lines(
        [
            "*EGI summary*",
            "*EGI (partial: M1 M4, 42% of weight) 100.0*",
            "*release gate: NOT READY — M2 not measured (floor 70); M5 not measured (floor 70)*",
            "*egi report: *",
        ]
    )


def test_null_is_floor_failures_do_not_fail_session(toy_project):
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/null", "--egi-bootstrap", "0")
    result.assert_outcomes(failed=6)
    assert result.ret == 0
    egi = _egi(toy_project)
    assert egi["suites"]["toy"]["sub_metrics"]["acc"] == 0.0
    assert (egi["egi"]["value"], egi["egi"]["partial_value"]) == (None, 0.0)
    # a failed benchmark item is counted in the EGI summary with its failure kinds and its
    # one-line reason, which names the kind and how the episode ended (issue 28)
    result.stdout.fnmatch_lines(["  toy: 6 failed*",
                                 "    alpha-0*gave_up: expected C*, got I don't know. (ended: text_answer)*"])


def test_strict_makes_failed_item_fail_session(toy_project):
    result = toy_project.runpytest(
        "toysuites", "--egi-model", "egi/null", "--egi-strict", "--egi-bootstrap", "0"
    )
    assert result.ret == 1


def test_floor_breach_on_present_bucket_exits_1(toy_project):
    routing = toy_project.path / "routing.yaml"
    routing.write_text(routing.read_text().replace("bucket: M4", "bucket: M5"))
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/noisy-0.5", "--egi-bootstrap", "0",
                                   "--egi-gate", "point")
    assert result.ret == 1
    egi = _egi(toy_project)
    m5 = egi["buckets"]["M5"]["value"]
    assert m5 < 70
    # a complete run is judged: NOT READY, and the breach fails the session
    assert egi["gate"] == {"release_ready": False, "breached": ["M5"], "unmeasured": ["M2"],
                           "judged": True, "not_judged_reason": None}
    assert egi["session"]["reasons"] == [f"release floor breached: M5 {m5:.1f} < 70"]
    lines = result.stdout.lines
    assert f"release gate: NOT READY — M5 {m5:.1f} below floor 70; M2 not measured (floor 70)" in lines
    assert f"session fails: release floor breached: M5 {m5:.1f} < 70" in lines
    html = (_run_dir(toy_project) / "report.html").read_text()
    assert '<span class="badge notready">not release-ready</span>' in html and "not judged" not in html
    # the same run with a floor the score meets exits 0
    result = toy_project.runpytest(
        "toysuites", "--egi-model", "egi/noisy-0.5", "--egi-floor", "M5=0", "--egi-bootstrap", "0"
    )
    assert result.ret == 0


def test_noisy_is_monotone(toy_project):
    values = {}
    for p in ("0.0", "0.2", "0.5", "1.0"):
        toy_project.runpytest(
            "toysuites",
            "--egi-model",
            f"egi/noisy-{p}",
            "--egi-mode",
            "deep",
            "--egi-bootstrap",
            "0",
            "--egi-report-dir",
            f"r{p}",
        )
        run = next((toy_project.path / f"r{p}").iterdir())
        values[p] = json.loads((run / "egi.json").read_text())["suites"]["toy"]["sub_metrics"]["acc"]
    assert values["0.0"] == 1.0 and values["1.0"] == 0.0
    assert 1.0 > values["0.2"] > 0.0
    assert values["0.5"] <= values["0.2"]


def test_provider_failure_is_error_not_wrong_answer(toy_project):
    result = toy_project.runpytest(
        "toysuites",
        "--egi-model",
        "egi/oracle",
        "--egi-opt",
        "toy.fail_env=true",
        "--egi-bootstrap",
        "0",
        "--egi-max-error-rate",
        "1",  # errors tolerated: no early stop, and no failure for the error rate
    )
    result.assert_outcomes(errors=6)
    assert result.ret == 0
    egi = _egi(toy_project)
    assert egi["counts"] == {"error": 6}
    assert egi["suites"]["toy"]["sub_metrics"] == {}
    assert egi["suites"]["toy"]["note"] == "no scored item (6 errored, 0 skipped)"


def test_error_rate_above_the_limit_fails_the_session(toy_project):
    result = toy_project.runpytest(
        "toysuites", "--egi-model", "egi/oracle", "--egi-opt", "toy.fail_every=2",
        "--egi-mode", "deep", "--egi-bootstrap", "0",
    )
    result.assert_outcomes(passed=4, errors=6)
    assert result.ret == 1
    egi = _egi(toy_project)
    # errors are excluded from scoring: the 4 scored items are all correct
    assert egi["suites"]["toy"]["sub_metrics"]["acc"] == 1.0
    assert egi["error_rate"] == 0.6
    result.stdout.fnmatch_lines(["*session fails: errored items 60.0% above --egi-max-error-rate 5.0%*"])


def test_outage_stops_the_session_after_five_errors(toy_project):
    result = toy_project.runpytest(
        "toysuites", "--egi-model", "egi/oracle", "--egi-opt", "toy.fail_env=true",
        "--egi-mode", "deep", "--egi-bootstrap", "0",
    )
    result.assert_outcomes(errors=5)
    assert result.ret == 1  # our own early stop: the error rate fails the session, not "interrupted"
    result.stdout.fnmatch_lines([
        "*egi: stopping, the first 5 items all errored (last: ProviderError: simulated provider "
        "outage); the remaining items would repeat it*"
    ])
    assert _egi(toy_project)["counts"] == {"error": 5}
    records = [json.loads(x) for x in (_run_dir(toy_project) / "records.jsonl").read_text().splitlines()]
    assert {r["error"] for r in records} == {"ProviderError: simulated provider outage"}
    # the partial trajectory is kept with the error
    raw = _trajectory(toy_project, "alpha-0")
    assert raw["error"] == "ProviderError: simulated provider outage"
    assert raw["trajectory"]["turns"] == 1


def test_xdist_gives_same_numbers_as_serial(toy_project):
    toy_project.runpytest(
        "toysuites", "--egi-model", "egi/noisy-0.3", "--egi-mode", "deep", "--egi-report-dir", "serial"
    )
    result = toy_project.runpytest(
        "toysuites",
        "--egi-model",
        "egi/noisy-0.3",
        "--egi-mode",
        "deep",
        "--egi-report-dir",
        "dist",
        "-n",
        "2",
    )
    assert result.ret == 0
    serial = next((toy_project.path / "serial").iterdir())
    dist = next((toy_project.path / "dist").iterdir())
    a, b = (json.loads((d / "egi.json").read_text()) for d in (serial, dist))
    for key in ("egi", "buckets", "suites", "gate", "missing", "counts"):
        assert a[key] == b[key], key
    assert (serial / "records.jsonl").read_text().replace("serial", "") != ""
    strip = lambda d: [  # noqa: E731 - node ids are equal; only the run folder differs
        {k: v for k, v in json.loads(line).items()} for line in (d / "records.jsonl").read_text().splitlines()
    ]
    assert strip(serial) == strip(dist)
    # each trajectory the same; where it is stored (which process wrote it) differs
    with TrajectoryReader(serial) as a, TrajectoryReader(dist) as b:
        texts = [(a.read_text(r), b.read_text(d)) for r, d in zip(load_records(serial), load_records(dist),
                                                                  strict=True)]
    assert len(texts) == 10 and all(x == y for x, y in texts)


def test_trials_give_pass_hat_k_and_ids(toy_project):
    result = toy_project.runpytest(
        "toysuites",
        "--egi-model",
        "egi/noisy-0.3",
        "--egi-trials",
        "3",
        "--egi-bootstrap",
        "0",
        "--collect-only",
        "-q",
    )
    result.stdout.fnmatch_lines(["*test_task[[]alpha-0-t1[]]*", "*test_task[[]beta-2-t3[]]*"])
    result = toy_project.runpytest(
        "toysuites", "--egi-model", "egi/noisy-0.3", "--egi-trials", "3", "--egi-bootstrap", "0"
    )
    egi = _egi(toy_project)
    assert set(egi["suites"]["toy"]["pass_k"]) == {"pass^1", "pass^2", "pass^3"}
    pk = egi["suites"]["toy"]["pass_k"]
    assert pk["pass^1"] >= pk["pass^2"] >= pk["pass^3"]
    [rec] = [r for r in load_records(_run_dir(toy_project)) if r["task_id"] == "alpha-0" and r["trial"] == 2]
    assert rec["raw_path"] == "raw/toy/alpha-0-t2.json"
    assert read_trajectory(_run_dir(toy_project), rec)["trial"] == 2


def test_markers_select_suite_and_category(toy_project):
    result = toy_project.runpytest(
        "toysuites", "--egi-model", "egi/oracle", "-m", "beta", "--egi-bootstrap", "0"
    )
    result.assert_outcomes(passed=3)
    result = toy_project.runpytest(
        "toysuites", "--egi-model", "egi/oracle", "-k", "toy and alpha", "--egi-bootstrap", "0"
    )
    result.assert_outcomes(passed=3)
    egi = _egi(toy_project) if False else None  # noqa: F841 - two runs, two dirs


def test_without_model_selected_items_are_a_usage_error(toy_project):
    # a CI job that forgot --egi-model must not be green: exit status 4, saying what to pass
    result = toy_project.runpytest("toysuites")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "ERROR: 6 benchmark items selected but no model under test: pass --egi-model egi/oracle (the "
        "offline reference policy) or a real model (e.g. --egi-model openai/gpt-4o-mini); "
        "--collect-only lists the items without one",
    ])
    assert not (toy_project.path / "reports").exists()
    # listing them needs no model
    listed = toy_project.runpytest("toysuites", "--collect-only", "-q")
    assert listed.ret == pytest.ExitCode.OK
    listed.stdout.fnmatch_lines(["*6 tests collected*"])


def test_without_model_an_xdist_session_ends_as_a_usage_error():
    # under xdist the workers skip the items; the controller ends the session with status 4
    from types import SimpleNamespace

    from pytest_egi.run.fixtures import NO_MODEL_REASON, NoModelCheck

    check = NoModelCheck()
    skip = SimpleNamespace(skipped=True, longrepr=("x.py", 1, f"Skipped: {NO_MODEL_REASON}"))
    check.pytest_runtest_logreport(skip)
    session = SimpleNamespace(exitstatus=pytest.ExitCode.OK)
    check.pytest_sessionfinish(session, pytest.ExitCode.OK)
    assert session.exitstatus == pytest.ExitCode.USAGE_ERROR


def test_bootstrap_ci_brackets_the_estimate(toy_project):
    result = toy_project.runpytest(
        "toysuites", "--egi-model", "egi/noisy-0.3", "--egi-mode", "deep", "--egi-bootstrap", "300"
    )
    egi = _egi(toy_project)
    # the toy routing covers M1 and M4 only: the interval is of the partial figure, and says so
    assert egi["egi"]["value"] is None and egi["egi"]["ci95"] is None
    lo, hi = egi["egi"]["partial_ci95"]
    assert lo <= egi["egi"]["partial_value"] <= hi
    assert lo < hi
    summary = result.stdout.lines[result.stdout.lines.index(next(
        line for line in result.stdout.lines if "EGI summary" in line)) + 1]
    assert summary == (f"EGI (partial: M1 M4, 42% of weight) {egi['egi']['partial_value']:.1f}  partial "
                       f"95% CI [{lo:.1f}, {hi:.1f}]  — not comparable to a full EGI")
    html = (_run_dir(toy_project) / "report.html").read_text()
    assert f"partial 95% CI [{lo:.1f}, {hi:.1f}]" in html
    assert "partial: M1 M4, 42% of weight covered" in html


def test_run_files_exist(toy_project):
    toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0")
    run = _run_dir(toy_project)
    assert run.name.split("-")[-2] == "quick" and "egi" in run.name
    for name in ("egi.json", "records.jsonl", "timings.jsonl", "report.html", "results.csv"):
        assert (run / name).stat().st_size > 0, name
    html = (run / "report.html").read_text()
    # a partial figure (M1 and M4 only) is labelled partial, never shown as a plain EGI
    assert "EGI 100.0" not in html and "alpha-0" in html
    assert 'EGI <span class="badge partial" style="font-size:1.2rem">partial</span> 100.0' in html
    csv_lines = (run / "results.csv").read_text().splitlines()
    assert csv_lines[0].startswith("suite,category,task_id,trial,status")
    assert len(csv_lines) == 7


def test_noisy_policy_mistakes_are_in_the_raw_file(toy_project):
    toy_project.runpytest("toysuites", "--egi-model", "egi/noisy-1.0", "--egi-bootstrap", "0")
    raw = _trajectory(toy_project, "alpha-0")
    assert raw["policy_mistakes"] == ["wrong_answer"]
    assert raw["trajectory"]["final_answer"] == "WRONG"


DIST_PROBE = """
from pathlib import Path


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):
        Path("dist.txt").write_text(session.config.option.dist)
"""


@pytest.mark.parametrize(("extra", "dist", "header"), [
    ((), "worksteal", True),  # -n alone: pytest-egi picks worksteal (uneven task durations)
    (("--dist", "load"), "load", False),  # an explicit choice is kept
    (("-d",), "load", False),
])
def test_xdist_distributes_with_worksteal_unless_told_otherwise(
    toy_project, extra, dist, header, monkeypatch
):
    repo = Path(__file__).resolve().parents[1]  # this checkout's pytest_egi, not an installed one
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")])))
    toy_project.makeconftest(DIST_PROBE)
    result = toy_project.runpytest_subprocess("toysuites", "--egi-model", "egi/oracle",
                                              "--egi-bootstrap", "0", "-n", "2", "-v", *extra)
    result.assert_outcomes(passed=6)
    assert (toy_project.path / "dist.txt").read_text() == dist
    # a first run: nothing learned yet
    line = ("egi: xdist suite-affine work stealing, suites placed by declared item times, else item counts "
            "(no item times learned for this model and profile); --dist to choose")
    assert (line in result.stdout.str()) is header
