"""The real provider path end to end: a CRMArena task played by a LiteLLM model string
against a local OpenAI-compatible server on 127.0.0.1 serving canned replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_egi.suite import SuiteProfile
from suites.crmarena import SUITE, CrmArenaOptions
from suites.crmarena.data.reference import solve_directly
from tests.helpers.openai_server import OpenAIServer, chat_reply, tool_reply

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def first_ncr():
    tasks = SUITE.load_tasks(SuiteProfile(seed=42, per_category=6), CrmArenaOptions())
    task = next(t for t in tasks if t.category == "NCR")
    org = SUITE.org_for(task, CrmArenaOptions())
    assert solve_directly(org, task.data) == task.data["answer"]
    return task


def _run(pytester, server, task, *extra):
    # in a subprocess: litellm's lazy imports do not survive pytester's in-process
    # sys.modules snapshot/restore
    return pytester.runpytest_subprocess(
        str(ROOT / "suites" / "crmarena"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "openai/test-model", "--egi-api-base", server.url,
        "--egi-report-dir", str(pytester.path / "reports"), "--egi-bootstrap", "0",
        "-k", task.id, *extra,
    )


def _record(pytester) -> dict:
    run = next((pytester.path / "reports").iterdir())
    return json.loads((run / "records.jsonl").read_text().splitlines()[0])


def test_tool_call_strategy_over_http(pytester, monkeypatch, first_ncr):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    answer = first_ncr.data["answer"][0]
    query = "SELECT Id, OwnerId FROM Case WHERE Status = 'Closed' LIMIT 2"
    with OpenAIServer() as server:
        server.enqueue(
            tool_reply("issue_soql_query", json.dumps({"query": query}), call_id="c1"),
            tool_reply("respond", json.dumps({"content": answer}), call_id="c2"),
        )
        result = _run(pytester, server, first_ncr, "--egi-opt", "crmarena.strategy=tool_call",
                      "--egi-no-cache")
        result.assert_outcomes(passed=1)
        assert server.count == 2
        first, second = (r.body for r in server.completions)
    assert first["model"] == "test-model"
    assert {t["function"]["name"] for t in first["tools"]} == {
        "issue_soql_query", "issue_sosl_query", "respond"}
    # the second request carries the tool result the local org produced for the query
    tool_msg = second["messages"][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "c1"
    assert tool_msg["content"].startswith("Salesforce instance output: [{")
    record = _record(pytester)
    assert record["status"] == "passed" and record["got"] == answer
    assert record["usage"]["calls"] == 2 and record["usage"]["prompt_tokens"] > 0


def test_react_strategy_over_http_wrong_answer_is_a_failure(pytester, monkeypatch, first_ncr):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with OpenAIServer() as server:
        server.enqueue(
            chat_reply("<thought>count</thought><execute>SELECT COUNT() FROM Case</execute>"),
            chat_reply("no tags at all"),
            chat_reply("<thought>done</thought><respond>None</respond>"),
        )
        result = _run(pytester, server, first_ncr, "--egi-no-cache")
        result.assert_outcomes(failed=1)
        assert result.ret == 0  # a wrong answer is a failed task, not a failed session
        second, third = server.completions[1].body, server.completions[2].body
    assert second["messages"][-1]["content"] == "Salesforce instance output: [{'totalSize': 480}]"
    assert third["messages"][-1]["content"].startswith("Invalid output format!")
    record = _record(pytester)
    assert record["status"] == "failed" and record["got"] == "None"
