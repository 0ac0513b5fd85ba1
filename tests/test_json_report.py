"""pytest-json-report (``--json-report``): each benchmark item's entry carries its record under
``metadata.egi``, and the report's ``summary.egi`` carries egi.json's EGI, buckets and gate;
serial and under ``-n 2`` (the records come from the workers)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_egi.records import split_timing

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def on_path(monkeypatch):
    # the subprocess imports this checkout's pytest_egi (pytester puts only its folder first)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))


@pytest.mark.parametrize("extra", [[], ["-n", "2"]], ids=["serial", "n2"])
def test_each_test_carries_its_record_and_the_summary_the_result(toy_project, on_path, extra):
    out = toy_project.path / "report.json"
    result = toy_project.runpytest_subprocess(
        "toysuites", "--egi-model", "egi/noisy-0.5", "--egi-bootstrap", "200", "--json-report",
        f"--json-report-file={out}", "-p", "no:cacheprovider", *extra,
    )
    assert result.ret in (0, 1), result.stdout.str()
    (run,) = (toy_project.path / "reports").iterdir()
    written = {r["task_id"]: r for r in map(json.loads, (run / "records.jsonl").read_text().splitlines())}
    report = json.loads(out.read_text())
    found = {}
    for test in report["tests"]:
        record = test["metadata"]["egi"]
        assert record["status"] == test["outcome"], test["nodeid"]
        found[record["task_id"]] = record
        assert split_timing(record)[0] == written[record["task_id"]]
    assert sorted(found) == sorted(written) and len(found) == 6
    assert {r["status"] for r in found.values()} == {"passed", "failed"}

    egi = json.loads((run / "egi.json").read_text())
    summary = report["summary"]["egi"]
    assert report["summary"]["total"] == 6  # pytest-json-report's own counts are kept
    assert summary["egi"] is None and egi["egi"]["value"] is None  # M1 and M4 only: partial
    assert summary["egi_partial_value"] == egi["egi"]["partial_value"] is not None
    assert summary["egi_partial_ci95"] == egi["egi"]["partial_ci95"] is not None
    assert summary["egi_covered_buckets"] == ["M1", "M4"]
    for bucket in ("M1", "M2", "M3", "M4", "M5", "M6"):
        assert summary[bucket] == egi["buckets"][bucket]["value"]
        assert summary[f"{bucket}_ci95"] == egi["buckets"][bucket]["ci95"]
    assert summary["M1"] is not None and summary["M3"] is None
    assert summary["gate"] == "NOT READY" == egi["gate"]["verdict"]
    assert summary["gate_unmeasured"] == ["M2", "M5"]
    assert summary["run_dir"] == str(run)


def test_the_summary_is_added_when_json_report_built_its_report_first(tmp_path):
    """pytest-json-report builds and saves its report in a tryfirst pytest_sessionfinish, as the
    EGI session writes egi.json in one: their order is their registration order. When the
    report was built first, the summary is added after every sessionfinish and saved again."""
    from types import SimpleNamespace

    from pytest_egi.report.jsonreport import JsonReportEgi
    from pytest_egi.run.state import SESSION_KEY

    egi = {"egi": {"value": 91.5, "ci95": [90.0, 93.0], "status": "valid"},
           "buckets": {"M2": {"value": 71.0, "ci95": [69.0, 73.0]}},
           "gate": {"judged": True, "release_ready": False, "verdict": "UNDECIDED", "reason": "M2 too close"},
           "run_id": "R"}
    (tmp_path / "egi.json").write_text(json.dumps(egi))
    saved = []
    json_plugin = SimpleNamespace(report={"summary": {"total": 1}, "tests": []},
                                  save_report=lambda path: saved.append(path))
    config = SimpleNamespace(stash={}, option=SimpleNamespace(json_report_file="out.json"),
                             _json_report=json_plugin)
    hooks = JsonReportEgi(config)
    hooks.pytest_json_modifyreport(json_plugin.report)  # the session has written nothing yet
    assert "egi" not in json_plugin.report["summary"]
    config.stash[SESSION_KEY] = SimpleNamespace(written={"run_dir": str(tmp_path),
                                                         "egi_json": str(tmp_path / "egi.json")})
    hooks.pytest_sessionfinish(None)
    summary = json_plugin.report["summary"]["egi"]
    assert (summary["egi"], summary["egi_ci95"], summary["M2"], summary["gate"]) == (
        91.5, [90.0, 93.0], 71.0, "UNDECIDED")
    assert saved == ["out.json"]
    hooks.pytest_sessionfinish(None)  # already there: not saved again
    assert saved == ["out.json"]


def test_a_crashed_workers_item_carries_its_error_record(toy_project, on_path, monkeypatch):
    from pytest_egi.report.session import CRASH_TEXT
    from tests.test_session_faults import CRASH_CONFTEST

    toy_project.makeconftest(CRASH_CONFTEST)
    monkeypatch.setenv("EGI_TEST_CRASH", "kill")
    out = toy_project.path / "report.json"
    result = toy_project.runpytest_subprocess(
        "toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "--json-report",
        f"--json-report-file={out}", "-p", "no:cacheprovider", "-n", "2",
    )
    assert result.ret == 1, result.stdout.str()
    (run,) = (toy_project.path / "reports").iterdir()
    written = {r["task_id"]: r for r in map(json.loads, (run / "records.jsonl").read_text().splitlines())}
    tests = json.loads(out.read_text())["tests"]
    found = {t["metadata"]["egi"]["task_id"]: t["metadata"]["egi"] for t in tests}
    assert sorted(found) == sorted(written)
    assert (found["alpha-1"]["status"], found["alpha-1"]["error"]) == ("error", CRASH_TEXT)
    assert split_timing(found["alpha-1"])[0] == written["alpha-1"]


def test_inert_without_the_option(toy_project, on_path):
    """Installed but not asked for: no report file, and no unknown-hook complaint."""
    result = toy_project.runpytest_subprocess(
        "toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "-p", "no:cacheprovider",
        "-W", "error",
    )
    assert result.ret == 0, result.stdout.str()
    assert not (toy_project.path / ".report.json").exists()


def test_without_the_plugin_the_egi_run_is_unchanged(toy_project, on_path):
    """With pytest-json-report disabled (``-p no:pytest_jsonreport``) the hooks are not
    registered: pytest would otherwise refuse them as unknown hooks."""
    result = toy_project.runpytest_subprocess(
        "toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "-p", "no:cacheprovider",
        "-p", "no:pytest_jsonreport",
    )
    assert result.ret == 0, result.stdout.str()
    assert "egi report:" in result.stdout.str()
