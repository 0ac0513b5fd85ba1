"""Acceptance of the MCPEval suite through the real plugin (quick profile: airbnb, 50 tasks,
every call executed on the airbnb MCP server as a stdio subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from suites.mcpeval.tasks import generate_tasks
from tests.helpers.mcp_processes import killer_plugin, server_pids
from tests.helpers.suite_run import run_suite

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT.parent / "shared" / "upstream" / "mcpeval" / "benchmarks" / "filesystem"
UPSTREAM_TASKS = UPSTREAM / "filesystem_test_tasks_verified.json"


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


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([{"id": "t1", "name": "n", "description": "d",
           "tool_calls": [{"tool_name": "get_teams", "tool_parameters": {}}]}, {"id": "t2", "name": "n"}],
         "line 2: field 'description' is missing; fix: add 'description' (str) to every task"),
        ([{"id": "t1", "name": "n", "description": "d", "tool_calls": []}],
         "line 1: field 'tool_calls' is empty, so no prediction could match it; fix: list the "
         "ground-truth calls"),
        ([{"id": "t1", "name": "n", "description": "d", "tool_calls": {"tool_name": "get_teams"}}],
         "line 1: field 'tool_calls' must be a list, got dict; fix: correct its type"),
        ([{"id": "t1", "name": "n", "description": "d",
           "tool_calls": [{"tool_name": "get_teams", "tool_parameters": {}},
                          {"tool_name": "get_stock_info"}]}],
         "line 1: field 'tool_calls' mixes the tools of several servers (sports, yfinance); fix: one "
         "MCPEval task uses the tools of one domain"),
        ([{"id": "t1", "name": "n", "description": "d",
           "tool_calls": [{"tool_name": "get_teams", "tool_parameters": {}},
                          {"tool_name": "teleport_user"}]}],
         "line 1: field 'tool_calls' names tools no local MCP server serves: teleport_user; fix: use "
         "tasks over the airbnb, healthcare, sports, national_parks or yfinance tools"),
        ([{"id": "t1", "name": "n", "description": "d",
           "tool_calls": [{"tool_name": "airbnb_search",
                           "tool_parameters": {"locaton": "Paris", "adults": "many"}}]}],
         "task 't1': its ground truth cannot be right: tool_calls[[]0] airbnb_search fails on the local "
         "server (search() got an unexpected keyword argument 'locaton'); fix: give calls whose "
         "arguments fit the tool and exist in the local airbnb world "
         "(seed 42)"),
    ],
    ids=["missing-field", "empty-gold", "wrong-type", "mixed-domains", "unknown-tool", "gold-not-replayable"],
)
def test_bad_task_file_is_a_usage_error(pytester, tmp_path, lines, message):
    path = _jsonl(tmp_path / "bad.jsonl", lines)
    result, _ = run(pytester, "egi/oracle", "--egi-opt", f"mcpeval.tasks={path}")
    assert result.ret == 4
    result.stderr.fnmatch_lines([f"*{path}: {message}*"])


@pytest.mark.skipif(not UPSTREAM_TASKS.exists(), reason="upstream MCPEval task files not present")
def test_upstream_task_file(pytester, tmp_path):
    # upstream's verified filesystem tasks are a JSON array of results: refused with the fix
    result, _ = run(pytester, "egi/oracle", "--egi-opt", f"mcpeval.tasks={UPSTREAM_TASKS}")
    assert result.ret == 4
    result.stderr.fnmatch_lines([f"*{UPSTREAM_TASKS}: line 1: the file is a JSON array; fix: write one task "
                                 "object per line (JSONL)*"])  # fmt: skip
    # its tasks as JSONL: they hold no ground-truth calls
    tasks = [r["task"] for r in json.loads(UPSTREAM_TASKS.read_text())]
    path = _jsonl(tmp_path / "fs.jsonl", tasks)
    result, _ = run(pytester, "egi/oracle", "--egi-opt", f"mcpeval.tasks={path}")
    assert result.ret == 4
    result.stderr.fnmatch_lines([f"*{path}: line 1: field 'tool_calls' is missing*"])
    # with filesystem calls: no local server serves those tools
    path = _jsonl(tmp_path / "fs2.jsonl", [{**t, "tool_calls": [
        {"tool_name": "create_directory", "tool_parameters": {"path": "docs"}},
        {"tool_name": "write_file", "tool_parameters": {"path": "docs/README.md", "content": "x"}},
    ]} for t in tasks])
    result, _ = run(pytester, "egi/oracle", "--egi-opt", f"mcpeval.tasks={path}")
    assert result.ret == 4
    result.stderr.fnmatch_lines([f"*{path}: line 1: field 'tool_calls' names tools no local MCP server "
                                 "serves: create_directory, write_file*"])  # fmt: skip
