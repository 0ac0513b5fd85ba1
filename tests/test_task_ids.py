"""A task id the core cannot use, read from a user's task file, is a usage error (exit 4)
naming the id, the allowed characters and the fix, not pydantic's raw text (issue 23)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.suite_run import ROOT

GOOD = {
    "category": "general",
    "question": "What was the closing price of AAPL on 2024-06-03?",
    "output_format": {"price": "[NUMBER]"},
    "evaluators": [{"func": "json -> get(price)", "op": "=", "value": 3}],
}


@pytest.mark.parametrize("task_id, example", [("../../etc/passwd", "etc_passwd"), ("a b", "a_b")])
def test_a_hostile_task_id_in_a_task_file_is_refused_naming_the_fix(pytester, task_id, example):
    folder = pytester.path / "tasks" / "financial_analysis"
    folder.mkdir(parents=True)
    (folder / "task_0001.json").write_text(json.dumps({**GOOD, "id": task_id}))
    result = pytester.runpytest_subprocess(
        str(ROOT / "suites" / "mcp_universe"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "egi/oracle", "--egi-report-dir", str(pytester.path / "reports"),
        "--egi-opt", f"mcp_universe.task_dir={pytester.path / 'tasks'}", "--egi-no-cache")
    assert result.ret == 4
    result.stderr.fnmatch_lines([
        f"ERROR: mcp_universe: task id {task_id!r} is not allowed: a task id may hold only letters, "
        "digits and _ . : - (pattern ^[A-Za-z0-9_.:-]+$), since it names the pytest item and the "
        f"trajectory file; fix: give the task an id of those characters (e.g. {example!r}) "
        f"(from --egi-opt mcp_universe.task_dir={pytester.path / 'tasks'})"])
    assert "validation error" not in result.stderr.str() + result.stdout.str()
