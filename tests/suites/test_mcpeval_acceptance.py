"""Acceptance of the MCPEval suite through the real plugin (quick profile: airbnb, 50 tasks,
every call executed on the airbnb MCP server as a stdio subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_egi.run.recorder import shorten
from pytest_egi.suite import TaskLoadError
from suites.mcpeval.data import generate_tasks
from tests.helpers.mcp_processes import killer_plugin, server_pids
from tests.helpers.suite_run import run_suite
from tests.suites.mcpeval.upstream import UPSTREAM

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM_TASKS = UPSTREAM / "benchmarks" / "filesystem" / "filesystem_test_tasks_verified.json"
PLAYWRIGHT = UPSTREAM / "benchmarks" / "playwright" / "llm_judger_results"
REAL_WORLD = ROOT / "tests" / "suites" / "mcpeval" / "data" / "real_world_tasks.jsonl"
"""Ten tasks in upstream's JSONL format whose ground truth names real-world values (Paris and
Austin stays, semaglutide, long COVID and U09.9, LeBron James and team 14, NFL game 7654321,
Yosemite and New York parks, AAPL and TSLA): our own wording, no upstream text."""


def run(pytester: pytest.Pytester, model: str, *extra: str) -> tuple[pytest.RunResult, dict | None]:
    return run_suite(pytester, "mcpeval", model, *extra)


def test_oracle_null_noisy_and_upstream_files(pytester):
    subs = {}
    for model in ("egi/oracle", "egi/noisy-0.2", "egi/noisy-0.5", "egi/null"):
        result, egi = run(pytester, model)
        subs[model] = egi["suites"]["mcpeval"]["sub_metrics"]
        if model == "egi/oracle":
            result.assert_outcomes(passed=50)
            run_dir = next((pytester.path / "reports-egi_oracle-0").iterdir())
            summary = json.loads((run_dir / "mcpeval" / "airbnb_summary_analysis.json").read_text())
            assert summary["summary"]["total_tasks"] == 50
            assert summary["summary"]["flexible_match"]["tasks_with_complete_success"] == 50
            metrics = json.loads((run_dir / "mcpeval" / "airbnb_task_metrics.json").read_text())
            assert len(metrics["task_results"]) == 50
            assert metrics["summary_metrics"]["exact_match"]["average_overall_score"] == 1.0
        if model == "egi/null":
            result.assert_outcomes(failed=50)
    assert subs["egi/oracle"]["airbnb.flexible_avg"] == 1.0
    assert subs["egi/oracle"]["airbnb.strict_success_rate"] == 1.0
    assert subs["egi/null"]["airbnb.flexible_avg"] == 0.0
    assert subs["egi/null"]["airbnb.flexible_success_rate"] == 0.0
    order = ("egi/oracle", "egi/noisy-0.2", "egi/noisy-0.5", "egi/null")
    flex = [subs[m]["airbnb.flexible_avg"] for m in order]
    assert flex[0] > flex[1] > flex[2] > flex[3], flex


def test_server_killed_mid_run_errors_that_item_and_restarts(pytester):
    pytester.makepyfile(mcp_killer=killer_plugin("airbnb-002"))
    pytester.syspathinsert()
    selection = "airbnb-001 or airbnb-002 or airbnb-003"
    result, egi = run(pytester, "egi/oracle", "-p", "mcp_killer", "-k", selection)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*ERROR*airbnb-002*"])
    assert "MCP server 'airbnb'" in result.stdout.str()
    # a one-line report: the message, not a traceback through the SDK's internals
    assert "mcp/client" not in result.stdout.str() and "Traceback" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*test_task?airbnb-002?: McpServerError: MCP server 'airbnb'*"])
    lines = next(pytester.path.glob("reports-*/*/records.jsonl")).read_text().splitlines()
    records = {r["task_id"]: r for r in map(json.loads, lines)}
    assert records["airbnb-002"]["status"] == "error"
    error = records["airbnb-002"]["error"]
    assert "McpServerError: MCP server 'airbnb'" in error, error
    assert records["airbnb-003"]["status"] == "passed"  # the server started again


def _servers_of(seed: int) -> list[int]:
    return server_pids(ROOT, seed, ["suites._common.mcp_servers.airbnb"])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "n2"])
def test_no_server_process_left_after_the_session(pytester, workers):
    seed = 4711 + len(workers)
    assert _servers_of(seed) == []
    result, egi = run(pytester, "egi/oracle", "--egi-seed", str(seed), "-k", "airbnb-00", *workers)
    result.assert_outcomes(passed=9)
    assert _servers_of(seed) == []


def _jsonl(path: Path, tasks: list[dict]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return path


def test_task_file_in_the_original_format_runs(pytester, tmp_path):
    tasks = [{k: v for k, v in t.items() if k != "plan"} for t in generate_tasks("sports", 42, 4)]
    tasks += [{k: v for k, v in t.items() if k != "plan"} for t in generate_tasks("airbnb", 42, 2)]
    path = _jsonl(tmp_path / "tasks.jsonl", tasks)
    result, egi = run(pytester, "egi/oracle", "--egi-opt", f"mcpeval.tasks={path}")
    result.assert_outcomes(passed=6)
    subs = egi["suites"]["mcpeval"]["sub_metrics"]
    assert subs["sports.flexible_avg"] == 1.0 and subs["airbnb.flexible_avg"] == 1.0
    assert subs["sports.n_tasks"] == 4.0


ALONE = "(this task errors alone; fix the entry or leave it out)"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([{"id": "t2", "name": "n"}],
         "task 't2' could not be loaded: ValueError: line 2: field 'description' is missing; fix: add "
         "'description' (str) to every task"),
        ([{"id": "t2", "name": "n", "description": "d", "tool_calls": {"tool_name": "get_teams"}}],
         "task 't2' could not be loaded: ValueError: line 2: field 'tool_calls' must be a list, got dict; "
         "fix: correct its type"),
        ([{"id": "t2", "name": "n", "description": "d", "tool_calls": [{"tool_name": "get_teams"}, "x"]}],
         "task 't2' could not be loaded: ValueError: line 2: field 'tool_calls[1]' must be an object with "
         "'tool_name' (str) and 'tool_parameters' (object); fix: correct that call"),
        (["{oops"],
         "task 'bad-line-2' could not be loaded: ValueError: line 2: not valid JSON (Expecting property name "
         "enclosed in double quotes); fix: one JSON task object per line"),
    ],
    ids=["missing-field", "wrong-type", "bad-call", "not-json"],
)  # fmt: skip
def test_a_malformed_task_among_good_ones_errors_alone(pytester, tmp_path, lines, message):
    """Behaviour changed on purpose (issue 22): a malformed record was a usage error (exit 4)
    for the whole file; now its item errors alone, naming the file, the task, the line, the
    field and the fix, and the good tasks run (the oracle passes them)."""
    good = [{k: v for k, v in t.items() if k != "plan"} for t in generate_tasks("sports", 42, 2)]
    path = tmp_path / "bad.jsonl"
    rows = [good[0], *lines, good[1]]
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in rows))
    result, egi = run(pytester, "egi/oracle", "--egi-opt", f"mcpeval.tasks={path}")
    result.assert_outcomes(passed=2, errors=1)
    run_dir = next((pytester.path / "reports-egi_oracle-2").iterdir())
    records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
    assert [r["error"] for r in records if r["status"] == "error"] == [
        shorten(f"TaskLoadError: {path}: {message} {ALONE}",
                hint=TaskLoadError(f"{path}: {message} {ALONE}").hint)
    ]
    assert egi["suites"]["mcpeval"]["sub_metrics"]["sports.flexible_avg"] == 1.0


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "n2"])
def test_a_whole_file_problem_is_still_a_usage_error(pytester, tmp_path, workers):
    path = tmp_path / "bad.jsonl"
    path.write_text("{oops\n{nope\n")
    result, _ = run(pytester, "egi/oracle", "--egi-opt", f"mcpeval.tasks={path}", *workers)
    assert result.ret == 4
    result.stderr.fnmatch_lines([f"*{path}: not JSON: no line is a JSON object; fix: a JSON array of task "
                                 "objects, or one JSON task object per line (JSONL)*"])  # fmt: skip


def test_a_task_that_cannot_run_is_skipped_alone_with_its_reason(pytester, tmp_path):
    """Behaviour changed on purpose (upstream files must run): a task with no ground-truth
    call, tools no local server serves, calls of two servers, or a ground truth the local
    server refuses is skipped with its reason; the other tasks run and are scored."""
    good = {k: v for k, v in generate_tasks("sports", 42, 1)[0].items() if k != "plan"}
    path = _jsonl(tmp_path / "mixed.jsonl", [
        good,
        {"id": "t-empty", "name": "n", "description": "d", "tool_calls": []},
        {"id": "t-unknown", "name": "n", "description": "d",
         "tool_calls": [{"tool_name": "get_teams", "tool_parameters": {}}, {"tool_name": "teleport_user"}]},
        {"id": "t-mixed", "name": "n", "description": "d",
         "tool_calls": [{"tool_name": "get_teams", "tool_parameters": {"league": "NBA"}},
                        {"tool_name": "get_stock_info", "tool_parameters": {"ticker": "AAPL"}}]},
        {"id": "t-typo", "name": "n", "description": "d",
         "tool_calls": [{"tool_name": "airbnb_search", "tool_parameters": {"locaton": "Paris"}}]},
    ])  # fmt: skip
    result, egi = run(pytester, "egi/oracle", "--egi-opt", f"mcpeval.tasks={path}", "-rs")
    assert result.ret == 0
    result.assert_outcomes(passed=1, skipped=4)
    # the items run by category: airbnb's first, then the unsupported ones in file order (the
    # core's skip line since issue 22: "cannot run: <line> of <file name>: <reason>")
    result.stdout.fnmatch_lines([
        "*cannot run: line 5 of mixed.jsonl: its ground truth cannot run on the local airbnb "
        "server (seed 42): tool_calls[[]0] airbnb_search fails on the local server (search() got an "
        "unexpected keyword argument 'locaton')*",
        "*cannot run: line 2 of mixed.jsonl: its ground truth lists no call (any agent that "
        "calls no tool would succeed)*",
        "*cannot run: line 3 of mixed.jsonl: no local MCP server serves teleport_user "
        "(served: the airbnb, healthcare, sports, national_parks and yfinance tools)*",
        "*cannot run: line 4 of mixed.jsonl: its calls use the tools of several servers "
        "(sports, yfinance); one MCPEval task here uses one domain's server*",
    ])  # fmt: skip
    assert egi["suites"]["mcpeval"]["sub_metrics"]["sports.flexible_avg"] == 1.0


def test_a_task_file_naming_real_world_values_runs(pytester):
    """Upstream's tasks name real cities, drugs, players, parks and tickers: the servers'
    open worlds answer them, and the oracle replays every ground-truth call at the ceiling."""
    result, egi = run(pytester, "egi/oracle", "--egi-opt", f"mcpeval.tasks={REAL_WORLD}")
    result.assert_outcomes(passed=10)
    subs = egi["suites"]["mcpeval"]["sub_metrics"]
    for domain in ("airbnb", "healthcare", "sports", "national_parks", "yfinance"):
        assert subs[f"{domain}.flexible_avg"] == 1.0 and subs[f"{domain}.n_tasks"] == 2.0


def _run_file(pytester: pytest.Pytester, path: Path, name: str, model: str = "egi/oracle",
              *extra: str) -> tuple[pytest.RunResult, dict | None]:  # fmt: skip
    """``mcpeval.tasks=path`` on the deep profile, reports in a folder of their own."""
    out = pytester.path / name
    result = pytester.runpytest(
        str(ROOT / "suites" / "mcpeval"), "--rootdir", str(ROOT), "-p", "no:cacheprovider", "-rs",
        "--egi-model", model, "--egi-mode", "deep", "--egi-report-dir", str(out), "--egi-bootstrap", "0",
        "--egi-opt", f"mcpeval.tasks={path}", *extra,
    )  # fmt: skip
    runs = list(out.iterdir()) if out.exists() else []
    return result, json.loads((runs[0] / "egi.json").read_text()) if runs else None


def test_real_world_tasks_give_the_same_records_serial_and_n2(pytester):
    """The open worlds answer a query the same in every process (records byte-identical)."""
    texts = []
    for workers in ([], ["-n", "2"]):
        result, _ = _run_file(pytester, REAL_WORLD, f"rw-{len(workers)}", "egi/noisy-0.5", *workers)
        assert result.ret in (0, 1)
        (run_dir,) = list((pytester.path / f"rw-{len(workers)}").iterdir())
        texts.append((run_dir / "records.jsonl").read_text())
    assert texts[0] == texts[1]
    assert '"status": "failed"' in texts[0]  # noisy-0.5 made mistakes: the queries differ from the gold


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason=f"upstream MCPEval files not found at {UPSTREAM}")
def test_every_upstream_task_file_loads_and_runs_each_task_alone(pytester):
    """Upstream's stored files hold no task we can run: the filesystem results have no ground
    truth (a failed run's records) and filesystem tools; the playwright task metrics have no
    task text and browser tools. Each loads, every task is an item skipped with its reason,
    and the session ends normally."""
    runs = [(UPSTREAM_TASKS, 2, "it is a result of upstream's evaluate: its 'tool_calls' are a model's "
                                "calls, and its task holds no ground-truth 'tool_calls'")]  # fmt: skip
    for folder in sorted(PLAYWRIGHT.iterdir()):
        runs.append((folder / "task_metrics.json", 62, "upstream's task-metrics files keep no task text "
                     "(name, description), so a model could not be told the task; no local MCP server serves "
                     "browser_"))  # fmt: skip
    for k, (path, n, reason) in enumerate(runs):  # the deep profile: every task (quick keeps 50)
        result, egi = _run_file(pytester, path, f"upstream-{k}")
        assert result.ret == 0, result.stdout.str()[-2000:]
        result.assert_outcomes(skipped=n)
        result.stdout.fnmatch_lines([f"*cannot run: * of {path.name}: {reason}*"])
        (warning,) = [w["warning"] for w in egi["data_warnings"] if w["category"] == "unsupported"]
        # the core's warning since issue 22 (the suite's own named the file)
        assert warning.startswith(f"unsupported: {n} of {n} task(s) cannot run and are skipped")
    # a summary analysis holds no task: refused with what to give instead
    summary = PLAYWRIGHT / "gpt-4o" / "summary_analysis.json"
    result, _ = _run_file(pytester, summary, "summary")
    assert result.ret == 4
    message = ("this is upstream's summary analysis (aggregates, no task); fix: give the task file, or the "
               "task_metrics.json of the same analysis")
    result.stderr.fnmatch_lines([f"*{summary}: {message}*"])
