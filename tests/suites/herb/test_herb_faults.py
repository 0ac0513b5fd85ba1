"""HERB tool calls: the model's bad arguments are ``Error: ...`` observations without Python
exception names; a fault in the retrieval index or the look-up tables is an error for the item,
with the trajectory so far, and never reaches the model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_egi.models import make_client
from pytest_egi.suite import Task
from suites.herb import SUITE, HerbOptions
from suites.herb.agent import run_trial
from suites.herb.env import HerbEnv
from tests.helpers.exception_names import PYTHON_EXCEPTION

BAD_CALLS: list[tuple[str, Any, str]] = [
    ("retrieve_all", {"query": "budget"},
     "Error: bad arguments for 'retrieve_all': missing a required argument: 'input'"),
    ("retrieve_all", {"input": 42},
     "Error: bad arguments for 'retrieve_all': 42 is not of type 'string' (at 'input')"),
    ("name_to_id_search", {"content": ["Ann", "Bo"]},
     "Error: bad arguments for 'name_to_id_search': ['Ann', 'Bo'] is not of type 'string' (at 'content')"),
    ("name_to_id_search", {"content": None},
     "Error: bad arguments for 'name_to_id_search': None is not of type 'string' (at 'content')"),
    ("pr_search", {"link": "https://github.com/x/y/pull/1"},
     "Error: bad arguments for 'pr_search': missing a required argument: 'content'"),
    ("pr_search", {"content": "see https://github.com/x/y/pull/1", "link": "x"},
     "Error: bad arguments for 'pr_search': got an unexpected keyword argument 'link'"),
    ("id_to_role_search", "{\"content\": ", "Error: arguments are not valid JSON (Expecting value)"),
    ("url_search", "[\"https://x\"]", "Error: arguments must be a JSON object"),
    ("search_everything", {"input": "x"}, "Error: unknown tool 'search_everything'. Available tools: "
     "retrieve_all, role_to_id_search, name_to_id_search, company_to_id_search, id_to_company_search, "
     "id_to_name_search, id_to_role_search, pr_search, url_search, submit"),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "arguments", "expected"), BAD_CALLS,
                         ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(BAD_CALLS)])  # fmt: skip
def test_bad_arguments_are_readable_errors(env: HerbEnv, tool, arguments, expected) -> None:
    outcome = env.toolkit().call(tool, arguments)
    assert outcome.error and outcome.content == expected
    assert not PYTHON_EXCEPTION.search(outcome.content)


def test_faithful_role_lookup_names_no_python_exception(env: HerbEnv) -> None:
    outcome = env.toolkit(faithful_tool_bugs=True).call("role_to_id_search", {"text": "QA Specialist"})
    assert outcome.error and outcome.content.startswith("Error: role_to_id_search failed")
    assert not PYTHON_EXCEPTION.search(outcome.content)


def test_odd_but_valid_arguments_never_raise(env: HerbEnv) -> None:
    """Strings the tools must take as they come (empty, huge, regex metacharacters)."""
    kit = env.toolkit()
    texts = ["", " ", "((((", "\\", "[", "(?", "$1", "eid_", "CUST-", "http://", "🙂" * 50, "a" * 100_000]
    for name, tool in kit.tools.items():
        if name == "submit":
            continue
        (arg,) = tool.parameters["required"]
        for text in texts:
            outcome = kit.call(name, {arg: text})
            assert not outcome.error and not PYTHON_EXCEPTION.search(outcome.content), (name, text[:20])


class BrokenIndex(RuntimeError):
    """Stands in for a corrupt or unreadable retrieval index."""


def test_retrieval_index_fault_is_an_error_with_partial_trajectory(
    quick_tasks: list[Task], opts: HerbOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    def oracle(task: Task) -> Any:
        return make_client("egi/oracle", suite=SUITE, task=task, options=opts,
                           noise_key=f"42|herb|{task.id}|0")  # fmt: skip

    # a task whose reference recipe looks a name up, then searches: the search is turn 2
    task = next(t for t in quick_tasks if t.category == "url"
                and [c["name"] for c in run_trial(t, oracle(t), opts).tool_calls][:2]
                == ["name_to_id_search", "retrieve_all"])  # fmt: skip

    def unreadable(self: HerbEnv, query: str, top_k: int) -> list[int]:
        raise BrokenIndex("bm25 index shard 3 is unreadable")

    monkeypatch.setattr(HerbEnv, "search", unreadable)
    with pytest.raises(BrokenIndex) as info:
        run_trial(task, oracle(task), opts)
    partial = info.value.partial_trajectory
    assert partial["final_answer"] is None and partial["turns"] == 2
    tool_messages = [m["content"] for m in partial["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 1 and json.loads(tool_messages[0])  # the look-up's ids, no error
    assert "unreadable" not in json.dumps(partial["messages"])


def test_lookup_table_fault_propagates(env: HerbEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    kit = env.toolkit()

    def broken(text: str) -> dict[str, str]:
        raise KeyError("id2name")

    monkeypatch.setattr(env, "id_to_name", broken)
    with pytest.raises(KeyError, match="id2name"):
        kit.call("id_to_name_search", {"content": "who is eid_12345678?"})
    assert kit.calls == []
