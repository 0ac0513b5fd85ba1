"""Text a model sends that is not valid Unicode (a lone surrogate, ``"\\ud800"``) is cleaned
where every reply arrives, its raw form is kept in the trajectory, and nothing that writes a
record, a trajectory, the journal or the response cache aborts on one (issue 23).

The faults are injected the way they happen in the field: a scripted OpenAI-compatible server
sends the surrogate as the JSON escape ``\\ud800`` in its reply body.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from pytest_egi.models import make_client
from pytest_egi.models.replies import clean_arguments, clean_reply, escape_obj, escape_text
from pytest_egi.records import atomic_write_text
from pytest_egi.run.runlog import Journal
from pytest_egi.trajectories import read_trajectory
from tests.helpers.openai_server import OpenAIServer, Reply, chat_reply, tool_reply
from tests.helpers.suite_run import ROOT

MODEL = "openai/test-model"
HI = [{"role": "user", "content": "hi"}]
LONE = "\ud800"


# --- the cleaning itself --------------------------------------------------------------------


def test_clean_reply_cleans_every_field_and_keeps_the_raw_form():
    message = {
        "role": "assistant",
        "content": f"Paris{LONE}",
        "reasoning_content": f"think {LONE}",
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": f"look{LONE}", "arguments": f'{{"q": "a{LONE}"}}'}}],
    }
    cleaned, raw = clean_reply(message)
    assert cleaned == {
        "role": "assistant",
        "content": "Paris\ufffd",
        "reasoning_content": "think \ufffd",
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "look\ufffd", "arguments": '{"q": "a\ufffd"}'}}],
    }
    assert raw == {
        "content": "Paris\\ud800",
        "reasoning_content": "think \\ud800",
        "tool_calls[0].function.name": "look\\ud800",
        "tool_calls[0].function.arguments": '{"q": "a\\ud800"}',
    }
    assert message["content"] == f"Paris{LONE}"  # the input is not modified
    json.dumps(raw).encode("utf-8")  # the raw form is JSON-safe
    clean = {"role": "assistant", "content": "déjà vu \U0001f600"}
    assert clean_reply(clean) == (clean, None) and clean_reply(clean)[0] is clean


def test_clean_arguments_replaces_lone_surrogate_escapes_only():
    # an escaped lone surrogate would become a lone surrogate again once the tool parses it
    assert clean_arguments('{"q": "a\\ud800b"}') == '{"q": "a\\ufffdb"}'
    assert clean_arguments('{"q": "\\udc00"}') == '{"q": "\\ufffd"}'
    assert json.loads(clean_arguments('{"q": "\\uD83D x"}')) == {"q": "\ufffd x"}
    # a valid escaped pair is an emoji; an escaped backslash before "ud800" is plain text
    assert clean_arguments('{"q": "\\ud83d\\ude00"}') == '{"q": "\\ud83d\\ude00"}'
    assert clean_arguments('{"q": "\\\\ud800"}') == '{"q": "\\\\ud800"}'
    assert clean_arguments('{"q": "\\\\\\ud800"}') == '{"q": "\\\\\\ufffd"}'
    assert clean_arguments("not json \\") == "not json \\"


def test_escape_obj_escapes_keys_and_values_and_copies_only_what_changes():
    inner = {"ok": [1, "fine"]}
    obj = {"a": inner, f"k{LONE}": (f"v{LONE}",)}
    out = escape_obj(obj)
    assert out == {"a": inner, "k\\ud800": ("v\\ud800",)} and out["a"] is inner
    assert escape_obj(inner) is inner
    assert escape_text("x\udfff") == "x\\udfff"


# --- the client: one place where every reply arrives ------------------------------------------


def test_a_reply_with_a_lone_surrogate_is_cleaned_from_the_network_and_the_cache(
        make_settings, planted_key):
    args = f'{{"query": "Zürich {LONE}"}}'
    with OpenAIServer([tool_reply(f"search{LONE}", args)]) as srv:
        client = make_client(MODEL, provider=make_settings(srv))
        first = client.generate(HI)
        again = make_client(MODEL, provider=make_settings(srv)).generate(HI)  # a cache hit
        assert srv.count == 1
    call = first.message["tool_calls"][0]["function"]
    assert call == {"name": "search\ufffd", "arguments": '{"query": "Zürich \ufffd"}'}
    assert first.raw == {"tool_calls[0].function.name": "search\\ud800",
                         "tool_calls[0].function.arguments": '{"query": "Zürich \\ud800"}'}
    assert (again.message, again.raw, again.usage.cached_calls) == (first.message, first.raw, 1)
    # stored as the provider sent it, in JSON escapes: it reads back raw, and is cleaned again
    [(value,)] = sqlite3.connect(client.core.cache.path).execute("SELECT value FROM responses")
    assert "\\ud800" in value and "Zürich" in value


def test_escaped_lone_surrogates_in_tool_arguments_are_cleaned(make_settings, planted_key):
    with OpenAIServer([tool_reply("search", '{"query": "a\\ud800"}'), chat_reply(f"ok{LONE}")]) as srv:
        client = make_client(MODEL, provider=make_settings(srv, cache_dir=None))
        first, second = client.generate(HI), client.generate(HI)
    assert json.loads(first.message["tool_calls"][0]["function"]["arguments"]) == {"query": "a\ufffd"}
    assert first.raw == {"tool_calls[0].function.arguments": '{"query": "a\\ud800"}'}
    assert (second.message["content"], second.raw) == ("ok\ufffd", {"content": "ok\\ud800"})


def test_a_conversation_holding_a_lone_surrogate_is_sent_cleaned(make_settings, planted_key):
    """A tool's output may hold one (it reached the conversation some other way): no provider
    takes it (its UTF-8 encoding fails before anything is sent), so it goes out as U+FFFD
    instead of failing the call as a server error, and the call is cached."""
    messages = [{"role": "user", "content": f"tool said {LONE}"}]
    with OpenAIServer([chat_reply("ok")]) as srv:
        client = make_client(MODEL, provider=make_settings(srv))
        assert client.generate(messages).message["content"] == "ok"
        assert srv.completions[0].body["messages"] == [{"role": "user", "content": "tool said \ufffd"}]
        assert client.generate(messages).usage.cached_calls == 1 and srv.count == 1
    assert messages[0]["content"] == f"tool said {LONE}"  # the caller's list is not modified


# --- the writers never abort on one -----------------------------------------------------------


def test_writers_escape_a_lone_surrogate_instead_of_aborting(tmp_path: Path):
    path = tmp_path / "raw" / "t.json"
    atomic_write_text(path, json.dumps({"a": f"x{LONE}"}, ensure_ascii=False))
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": f"x{LONE}"}
    journal = Journal(tmp_path)
    journal.append({"got": f"y{LONE}"})
    journal.close()
    line = (tmp_path / "journal.jsonl").read_bytes().decode("utf-8")
    assert json.loads(line) == {"got": f"y{LONE}"}


# --- end to end: real suites through the plugin, serial and under -n 2 -----------------------


def _herb_agent(request: dict) -> Reply:
    """A final answer (submit) with a lone surrogate for half of the questions, a plain text
    reply with one for the other half (chosen by the question's hash)."""
    question = next(m["content"] for m in request["messages"] if m["role"] == "user")
    if hashlib.sha256(question.encode()).digest()[0] % 2:
        return chat_reply(f"I found nothing certain {LONE} about it.")
    args = json.dumps({"answer": "Goldleaf Logistics \ud800", "entities": [], "answerable": True})
    return tool_reply("submit", args)


@pytest.fixture(scope="module")
def task_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A task cache shared by this module's runs (each has a response cache of its own)."""
    return tmp_path_factory.mktemp("egi-task-cache")


def _run(pytester: pytest.Pytester, server: OpenAIServer, suite: str, select: str, *extra: str,
         tasks: Path):
    out = pytester.path / f"reports-{suite}-{len(extra)}"
    shutil.copytree(tasks, pytester.path / "cache" / "tasks", dirs_exist_ok=True)
    result = pytester.runpytest_subprocess(
        str(ROOT / "suites" / suite), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", MODEL, "--egi-api-base", server.url, "--egi-report-dir", str(out),
        "--egi-bootstrap", "0", "--egi-cache", str(pytester.path / "cache"), "-k", select,
        "--egi-max-error-rate", "1", *extra)
    shutil.copytree(pytester.path / "cache" / "tasks", tasks, dirs_exist_ok=True)
    runs = list(out.iterdir()) if out.exists() else []
    return result, (runs[0] if runs else None)


HERB_ITEMS = "herb-content-047 or herb-content-045 or herb-content-137 or herb-content-143"


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "n2"])
def test_herb_session_with_lone_surrogates_completes_and_records_every_item(
        pytester, planted_key, task_cache, workers):
    with OpenAIServer(reply_fn=_herb_agent) as server:
        result, run = _run(pytester, server, "herb", HERB_ITEMS, *workers, tasks=task_cache)
    assert result.ret in (0, 1), result.stdout.str()[-3000:]  # no INTERNALERROR (3)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 4, outcomes
    records = [json.loads(line) for line in (run / "records.jsonl").read_text("utf-8").splitlines()]
    assert len(records) == 4 and {r["status"] for r in records} <= {"passed", "failed"}
    from suites.herb import SUITE

    kinds = set()
    for rec in records:
        raw = read_trajectory(run, rec)
        traj = raw["trajectory"]
        [entry] = traj["info"]["raw_replies"]
        assert entry["turn"] == 1
        if "content" in entry["fields"]:  # a text reply: the cleaned text is the answer
            kinds.add("text")
            assert entry["fields"] == {"content": "I found nothing certain \\ud800 about it."}
            assert traj["final_answer"] == "I found nothing certain \ufffd about it."
        else:  # the submit tool's answer
            kinds.add("final answer")
            assert entry["fields"] == {"tool_calls[0].function.arguments": (
                '{"answer": "Goldleaf Logistics \\ud800", "entities": [], "answerable": true}')}
            assert traj["final_answer"]["answer"] == "Goldleaf Logistics \ufffd"
        # the record's values are the suite's score of the cleaned trajectory
        task = next(t for t in _herb_tasks() if t.id == rec["task_id"])
        assert SUITE.score(task, traj, SUITE.options_model()).values == rec["values"]
    assert kinds == {"text", "final answer"}


_HERB_TASKS: list = []


def _herb_tasks() -> list:
    if not _HERB_TASKS:
        from pytest_egi.scoring.config import load_routing
        from suites.herb import SUITE

        routing, _ = load_routing(ROOT / "routing.yaml")
        _HERB_TASKS.extend(SUITE.load_tasks(routing.profile("quick", "herb"), SUITE.options_model()))
    return _HERB_TASKS


def _mcp_agent(request: dict) -> Reply:
    """Call the first offered tool with a lone surrogate in every string argument it requires
    (raw in the arguments text), then answer with a text holding one."""
    if request["messages"][-1]["role"] == "tool":
        return chat_reply(f"Done {LONE}.")
    tool = request["tools"][0]["function"]
    props = tool["parameters"].get("properties", {})
    args = {k: f"Paris {LONE}" for k in tool["parameters"].get("required", list(props))
            if props.get(k, {}).get("type") == "string"}
    return tool_reply(tool["name"], json.dumps(args, ensure_ascii=False), call_id="c1")


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "n2"])
def test_mcp_suite_with_a_lone_surrogate_in_tool_arguments_scores_the_cleaned_call(
        pytester, planted_key, task_cache, workers):
    with OpenAIServer(reply_fn=_mcp_agent) as server:
        result, run = _run(pytester, server, "mcpeval", "airbnb-001 or airbnb-002 or airbnb-003",
                           *workers, tasks=task_cache)
        sent = [r.body for r in server.completions]
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors", 0) == 0, result.stdout.str()[-3000:]  # no server fault
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 3, outcomes
    records = [json.loads(line) for line in (run / "records.jsonl").read_text("utf-8").splitlines()]
    assert len(records) == 3
    for rec in records:
        traj = read_trajectory(run, rec)["trajectory"]
        first, second = traj["info"]["raw_replies"]
        assert "\\ud800" in first["fields"]["tool_calls[0].function.arguments"]
        assert second["fields"] == {"content": "Done \\ud800."}
        # the MCP server got the cleaned argument and answered: the call is in the trajectory
        call = traj["tool_calls"][0]
        assert all(v == "Paris \ufffd" for v in call["arguments"].values()), call
        assert traj["final_answer"] == "Done \ufffd."
    # the conversation sent back to the provider holds the cleaned reply, never the raw one
    replayed = [m for body in sent for m in body["messages"] if m.get("role") == "assistant"]
    assert replayed and all("\ufffd" in json.dumps(m, ensure_ascii=False) for m in replayed)
