"""Acceptance of the MCP-Universe suite through the real plugin: every call executed on the
local MCP servers as stdio subprocesses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers.mcp_processes import killer_plugin, server_pids
from tests.helpers.suite_run import run_suite
from tests.suites.mcp_universe import upstream
from tests.suites.mcp_universe.test_task_files import GOOD, WEB_SEARCH_REAL_WORLD, write

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = upstream.TASK_ROOT
FIRSTS = "financial_analysis-001 or location_navigation-001 or web_search-001 or repository_management-001"


def run(
    pytester: pytest.Pytester, model: str, *extra: str, mode: str = "quick"
) -> tuple[pytest.RunResult, dict | None]:
    return run_suite(pytester, "mcp_universe", model, *extra, mode=mode)


def test_quick_oracle_and_null(pytester):
    result, egi = run(pytester, "egi/oracle")
    result.assert_outcomes(passed=20)
    subs = egi["suites"]["mcp_universe"]["sub_metrics"]
    assert subs["financial_analysis.pass_rate"] == 1.0
    assert subs["financial_analysis.evaluator_score"] == 1.0
    run_dir = next((pytester.path / "reports-egi_oracle-0").iterdir())
    results = json.loads((run_dir / "mcp_universe" / "financial_analysis_results.json").read_text())
    assert len(results) == 20 and all(r["passed"] and r["score"] == 1.0 for r in results.values())
    result, egi = run(pytester, "egi/null")
    result.assert_outcomes(failed=20)
    subs = egi["suites"]["mcp_universe"]["sub_metrics"]
    assert subs["financial_analysis.pass_rate"] == 0.0
    assert subs["financial_analysis.evaluator_score"] == 0.0


MODULES = [f"suites._common.mcp_servers.{m}" for m in
           ("finance", "calculator", "maps", "search", "fetch", "repository")]  # fmt: skip


def _servers_of(seed: int) -> list[int]:
    return server_pids(ROOT, seed, MODULES)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "n2"])
def test_every_domain_runs_and_no_server_process_is_left(pytester, workers):
    seed = 4811 + len(workers)
    assert _servers_of(seed) == []
    result, egi = run(pytester, "egi/oracle", "--egi-seed", str(seed), "-k", FIRSTS, *workers, mode="deep")
    result.assert_outcomes(passed=4)
    subs = egi["suites"]["mcp_universe"]["sub_metrics"]
    for domain in ("financial_analysis", "location_navigation", "web_search", "repository_management"):
        assert subs[f"{domain}.pass_rate"] == 1.0, domain
    assert _servers_of(seed) == []


def test_repository_server_killed_mid_run_errors_that_item_and_restarts_clean(pytester):
    pytester.makepyfile(mcp_killer=killer_plugin("repository_management-002", server="github"))
    pytester.syspathinsert()
    selection = "repository_management-001 or repository_management-002 or repository_management-003"
    result, egi = run(pytester, "egi/oracle", "-p", "mcp_killer", "-k", selection, mode="deep")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        ["*test_task?repository_management-002?: McpServerError: MCP server 'github'*"]
    )
    # the short test summary says ERROR too, as the progress line and the section header do
    summary = result.stdout.lines[result.stdout.lines.index(next(
        line for line in result.stdout.lines if "short test summary info" in line)):]  # fmt: skip
    assert [line.split()[0] for line in summary if "repository_management-002]" in line] == ["ERROR"]
    lines = next(pytester.path.glob("reports-*/*/records.jsonl")).read_text().splitlines()
    records = {r["task_id"]: r for r in map(json.loads, lines)}
    assert records["repository_management-002"]["status"] == "error"
    assert records["repository_management-003"]["status"] == "passed"  # a fresh server, reset world


def test_a_server_killed_between_items_is_restarted_for_the_next_item(pytester):
    """The repository server SIGKILLed before repository_management-002 uses it: that item finds
    it dead, gets a fresh server (a reset world) and passes, as do the others."""
    pytester.makepyfile(
        mcp_killer=killer_plugin("repository_management-002", server="github", when="between_items")
    )
    pytester.syspathinsert()
    selection = "repository_management-001 or repository_management-002 or repository_management-003"
    result, egi = run(pytester, "egi/oracle", "-p", "mcp_killer", "-k", selection, mode="deep")
    result.assert_outcomes(passed=3)
    assert egi["suites"]["mcp_universe"]["sub_metrics"]["repository_management.pass_rate"] == 1.0


def test_a_bad_task_file_errors_alone_and_the_others_run(pytester, tmp_path, monkeypatch):
    """An unknown op, and an evaluator the local data cannot check: each file's item errors with
    the file, the task and the fix; the good file runs (the old loader refused the whole folder:
    a usage error, nothing ran)."""
    monkeypatch.setenv("COLUMNS", "1000")  # one data warning per line (not wrapped at 80)
    folder = tmp_path / "location_navigation"
    folder.mkdir()
    task = {"question": "Find a cafe.", "mcp_servers": [{"name": "google-maps"}],
            "evaluators": [{"func": "json", "op": "google_maps.teleport"}]}  # fmt: skip
    (folder / "task_0001.json").write_text(json.dumps(task))
    finance = tmp_path / "financial_analysis"
    finance.mkdir()
    op_args = {"tickers": ["MSFT"], "start_date": "2010-01-04", "end_date": "2011-01-04",
               "initial_investment": 1000.0, "split": [1.0]}  # fmt: skip
    task = {
        "question": "Value of $1000 in MSFT?",
        "output_format": {"total value": "[NUMBER]"},
        "evaluators": [{"func": "json", "op": "yfinance.check_portfolio_task_output", "op_args": op_args}],
    }
    (finance / "t.json").write_text(json.dumps(task))
    good = json.loads((UPSTREAM / "financial_analysis" / "yfinance_task_0001.json").read_text()) \
        if UPSTREAM.is_dir() else None  # fmt: skip
    if good is not None:
        (finance / "yfinance_task_0001.json").write_text(json.dumps(good))
    result, egi = run(pytester, "egi/oracle", "--egi-opt", f"mcp_universe.task_dir={tmp_path}", mode="deep")
    result.assert_outcomes(errors=2, passed=1 if good is not None else 0)
    out = result.stdout.str()
    lines = next(pytester.path.glob("reports-*/*/records.jsonl")).read_text().splitlines()
    records = {r["task_id"]: r for r in map(json.loads, lines)}
    assert records["task_0001"]["status"] == records["t"]["status"] == "error"
    # the core's TaskLoadError since issue 22 (it was the suite's TaskFileError); the record holds
    # its one-line rendering (cut to 300 characters, the trailing hint kept)
    from pytest_egi.run.recorder import shorten
    from pytest_egi.suite import SuiteProfile, TaskLoadError
    from suites.mcp_universe import SUITE, McpUniverseOptions

    loaded = {t.id: t for t in SUITE.load_tasks(SuiteProfile(), McpUniverseOptions(task_dir=tmp_path))}
    for task_id, want in (
        ("task_0001", f"{folder / 'task_0001.json'}: task 'task_0001' could not be loaded: evaluators[0].op: "
                      "unknown op 'google_maps.teleport'; fix: use an op the suite implements"),
        ("t", f"{finance / 't.json'}: task 't' could not be loaded: its evaluators cannot be checked on the "
              "local data: no MSFT price on or before 2010-01-04 / 2011-01-04 (the local history starts "
              "2014-01-02)"),
    ):
        assert loaded[task_id].load_error.startswith(want), loaded[task_id].load_error
        assert records[task_id]["error"] == shorten(f"TaskLoadError: {loaded[task_id].load_error}",
                                                   hint=TaskLoadError(loaded[task_id].load_error).hint)
    assert records["t"]["error_kind"] == "task_load"
    assert ("data warning (mcp_universe): location_navigation: 1 of 1 task(s) could "
            "not be loaded and error alone (first: task_0001)") in out  # fmt: skip


@upstream.needs_upstream()
def test_upstream_files_run_and_web_search_files_are_skipped_with_a_warning(pytester, tmp_path):
    files = (
        ("financial_analysis", "yfinance_task_0001"),
        ("repository_management", "github_task_0001"),
        ("location_navigation", "google_maps_task_0001"),
        ("web_search", "info_search_task_0001"),
    )
    for domain, stem in files:
        (tmp_path / domain).mkdir()
        (tmp_path / domain / f"{stem}.json").write_text((UPSTREAM / domain / f"{stem}.json").read_text())
    result, egi = run(pytester, "egi/oracle", "--egi-opt", f"mcp_universe.task_dir={tmp_path}", "-rs")
    result.assert_outcomes(passed=3, skipped=1)  # the quick profile's categories do not cut a folder
    out = result.stdout.str()
    source = tmp_path / "web_search" / "info_search_task_0001.json"
    # the core's warning and skip line since issue 22 (the warning wraps at the terminal's width,
    # which the length of the temporary path decides: compared with its whitespace made one space)
    assert (
        "data warning (mcp_universe): web_search: 1 of 1 task(s) cannot run and are skipped "
        f"(first: info_search_task_0001: {source}: this web_search question asks about the real world"
    ) in " ".join(out.split())
    assert f"cannot run: {source}: this web_search question asks about the real world" in out
    assert any("web_search: 1 of 1 task(s) cannot run" in str(w) for w in egi["data_warnings"])
    assert "web_search.pass_rate" not in egi["suites"]["mcp_universe"]["sub_metrics"]


UPSTREAM_FILES = sorted(UPSTREAM.rglob("*.json")) if UPSTREAM.is_dir() else []
"""Every upstream task file (the domains' folders and multi_server)."""
SAMPLE = "yfinance_task_0001 or google_search_notion_0001 or playwright_github_0002 or info_search_task_0002"
"""One runnable file and three the suite cannot run (a notion op, a playwright server, a
real-world web_search question)."""


@upstream.needs_upstream()
@pytest.mark.parametrize("model", ["egi/oracle", "egi/null", "egi/noisy-0.2", "egi/noisy-0.5"])
def test_every_upstream_task_file_collects_and_those_that_cannot_run_are_skipped_alone(pytester, model):
    """The whole upstream tree as the task folder (deep: no limit): every file is an item, none
    crashes collection (the old loader stopped at the first multi_server file, and an upstream
    repository file it solved raised an IndexError); a sample runs, the files the suite cannot
    run skipped alone, each with its reason."""
    result, _ = run(pytester, model, "--egi-opt", f"mcp_universe.task_dir={UPSTREAM}", "--collect-only", "-q",
                    mode="deep")  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    assert f"{len(UPSTREAM_FILES)} tests collected" in result.stdout.str()
    assert len(UPSTREAM_FILES) == 118
    result, _ = run(pytester, model, "--egi-opt", f"mcp_universe.task_dir={UPSTREAM}", "-k", SAMPLE, "-rs",
                    mode="deep")  # fmt: skip
    outcomes = result.parseoutcomes()
    assert outcomes.get("skipped") == 3 and "error" not in outcomes and "errors" not in outcomes, outcomes
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 1
    if model == "egi/oracle":
        assert outcomes.get("passed") == 1
    out = result.stdout.str()
    assert (
        "'notion.compare_page_text' is an op of upstream's notion server, which the suite does not offer"
        in out
    )
    assert "no local server plays 'playwright' (upstream's playwright server needs a live browser)" in out
    assert "info_search_task_0002" in out and "this web_search question asks about the real world" in out


LOAD_TASKS_REFUSED = """
import suites.mcp_universe as _mcp_universe


def _refused(*args, **kwargs):
    raise AssertionError("load_tasks was called")


_mcp_universe.SUITE.load_tasks = _refused
"""


def test_unanswerable_files_are_warned_about_on_a_warm_task_cache_run(pytester, tmp_path, monkeypatch):
    """A collection without a model caches the tasks but not the data checks; a run with a
    model in a fresh process then reads the tasks from the cache (``load_tasks`` is not called:
    it would raise) and still names the task file it skips."""
    monkeypatch.setenv("COLUMNS", "1000")  # one data warning per line (not wrapped at 80)
    folder, cache = tmp_path / "tasks", tmp_path / "cache"
    write(folder, GOOD)
    write(folder, WEB_SEARCH_REAL_WORLD, "world_cup.json", "web_search")
    common = (str(ROOT / "suites" / "mcp_universe"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
              "--egi-opt", f"mcp_universe.task_dir={folder}", "--egi-cache", str(cache))  # fmt: skip
    result = pytester.runpytest(*common, "--collect-only", "-q")
    assert result.ret == 0, result.stdout.str()
    assert len(list((cache / "tasks").glob("tasks-mcp_universe-*.pkl"))) == 1
    assert list((cache / "tasks").glob("checks-mcp_universe-*.pkl")) == []  # no model: not checked
    pytester.makepyfile(refuse_load=LOAD_TASKS_REFUSED)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    out = pytester.path / "reports"
    result = pytester.runpytest_subprocess(
        *common, "-p", "refuse_load", "--egi-model", "egi/null", "--egi-report-dir", str(out),
        "--egi-bootstrap", "0")  # fmt: skip
    result.assert_outcomes(failed=1, skipped=1)  # the financial file; the web_search one is skipped
    warning = (  # the core's warning since issue 22
        f"web_search: 1 of 1 task(s) cannot run and are skipped (first: world_cup: {folder}/web_search/"
        "world_cup.json: this web_search question asks about the real world (reference answer 'France'); "
        "the local search and fetch servers serve only an invented corpus, which holds no real-world facts, "
        "so no local search can support the answer)"
    )
    assert f"data warning (mcp_universe): {warning}" in result.stdout.lines
    egi = json.loads(next(out.iterdir()).joinpath("egi.json").read_text())
    assert {"suite": "mcp_universe", "category": "web_search", "warning": warning} in egi["data_warnings"]
