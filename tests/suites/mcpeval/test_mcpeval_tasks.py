"""MCPEval task generation, replay on the real servers, and the reference policy."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from pytest_egi.mcp import close_all, shared_server
from pytest_egi.models.offline import Noise
from pytest_egi.suite import SuiteProfile
from suites._common.mcp_servers import server_spec
from suites.mcpeval import SUITE
from suites.mcpeval.data import DOMAINS, SERVER_OF, generate_tasks, load_task_file
from suites.mcpeval.policy import McpevalPolicy


@pytest.fixture(scope="module")
def servers():
    yield {d: shared_server(server_spec(SERVER_OF[d], 42)) for d in DOMAINS}
    close_all()


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_gold_call_list_replays_on_the_stdio_server(servers, domain):
    tasks = generate_tasks(domain, 42)
    assert len(tasks) == 100 and len({t["id"] for t in tasks}) == 100
    for task in tasks:
        for call in task["tool_calls"]:
            result = servers[domain].call_tool(call["tool_name"], call["tool_parameters"])
            assert not result.is_error, (task["id"], call, result.text)
            assert result.text.strip() not in ("", "[]", "{}"), (task["id"], call)


def test_tasks_span_one_to_five_calls_with_dependent_arguments():
    sizes: Counter[int] = Counter()
    dependent = 0
    for domain in DOMAINS:
        for task in generate_tasks(domain, 42):
            sizes[len(task["tool_calls"])] += 1
            dependent += '"$ref"' in json.dumps(task["plan"])
            assert "goal" in task and task["description"] and task["final_response"]
    assert set(sizes) == {1, 2, 3, 4, 5}
    assert dependent >= 200


def test_generation_is_deterministic_and_seeded():
    assert generate_tasks("airbnb", 42, 10) == generate_tasks("airbnb", 42, 10)
    assert generate_tasks("airbnb", 42, 10) != generate_tasks("airbnb", 7, 10)


def test_oracle_reads_later_arguments_from_its_own_results():
    task = next(t for t in generate_tasks("airbnb", 42) if len(t["tool_calls"]) == 2)
    policy = McpevalPolicy(task, "airbnb", Noise(0.0, "k"))
    first = policy([{"role": "user", "content": "x"}], None)["tool_calls"][0]["function"]
    assert first["name"] == "airbnb_search"
    # the search returned a different first listing than the gold: the oracle follows it
    seen = {"searchResults": [{"id": "999"}]}
    msgs = [{"role": "tool", "tool_call_id": "call_1", "content": json.dumps(seen)}]
    second = policy(msgs, None)["tool_calls"][0]["function"]
    assert second["name"] == "airbnb_listing_details"
    assert json.loads(second["arguments"])["id"] == "999" != task["tool_calls"][1]["tool_parameters"]["id"]
    final = policy([{"role": "tool", "tool_call_id": "call_2", "content": "details"}], None)
    assert "tool_calls" not in final and "details" in final["content"]


def test_oracle_skips_a_step_whose_source_call_failed():
    task = next(t for t in generate_tasks("airbnb", 42) if len(t["tool_calls"]) == 2)
    policy = McpevalPolicy(task, "airbnb", Noise(0.0, "k"))
    policy([{"role": "user", "content": "x"}], None)
    msgs = [{"role": "tool", "tool_call_id": "call_1", "content": "Error executing tool airbnb_search: x"}]
    assert "tool_calls" not in policy(msgs, None)


def test_no_tool_call_is_a_failure_with_zero_scores():
    task = SUITE.load_tasks(SuiteProfile(categories=["airbnb"], limit=3), None)[0]
    score = SUITE.score(task, {"final_answer": "I don't know.", "tool_calls": []}, None)
    assert not score.success
    assert score.values["flexible_overall"] == 0.0 and score.values["name"] == 0.0
    assert score.got == "no prediction (no tool call made)"


def test_bad_json_line_names_file_line_and_fix(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "a", "name": "n", "description": "d", '
                    '"tool_calls": [{"tool_name": "get_teams", "tool_parameters": {}}]}\n{oops\n')
    with pytest.raises(ValueError) as err:
        load_task_file(path)
    assert str(err.value) == (
        f"{path}: line 2: not valid JSON (Expecting property name enclosed in double quotes); "
        "fix: one JSON task object per line"
    )

