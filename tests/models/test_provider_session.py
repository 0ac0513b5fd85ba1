"""Provider faults seen through a whole pytest session on the toy suite (pytester)."""

from __future__ import annotations

import json
import socket
import time

import pytest

from pytest_egi.records import load_records
from tests.helpers.openai_server import OpenAIServer, Reply
from tests.models.test_e2e_provider import latest_run, toy_agent

MODEL = "openai/test-model"


def _run(pytester: pytest.Pytester, *extra: str):
    return pytester.runpytest("toysuites", "--egi-model", MODEL, "--egi-bootstrap", "0", *extra)


def test_a_session_that_cannot_reach_its_provider_stops_within_seconds(
        toy_project, planted_key, monkeypatch):
    """No --egi-api-base (so no pre-flight check): the provider's address comes from the
    environment, and nothing listens there."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    start = time.monotonic()
    result = _run(toy_project, "--egi-no-cache", "--egi-mode", "deep")
    elapsed = time.monotonic() - start
    # before: 6 retries with backoff up to 60 s, about four minutes for the first 5 items
    assert elapsed < 30, elapsed
    result.assert_outcomes(errors=5)
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        "*egi: stopping, the first 5 items all errored (last: ProviderError: model "
        f"{MODEL}: connection failed: Connection refused after 3 attempts; no connection could "
        "be made*"])
    assert "HTTP 500" not in result.stdout.str()
    result.stdout.fnmatch_lines(["toy v1: 5 errors*"])


def test_an_errored_items_calls_retries_and_tokens_are_in_its_usage(toy_project, planted_key):
    """The first call answers, the second fails for good: the record keeps both."""
    calls = {"n": 0}

    def first_ok_then_down(request: dict) -> Reply:
        calls["n"] += 1
        if request["messages"][-1]["role"] == "tool":
            return Reply(503, {"error": {"message": "maintenance window"}})
        return toy_agent(request)

    with OpenAIServer(reply_fn=first_ok_then_down) as server:
        result = _run(toy_project, "--egi-api-base", server.url, "--egi-no-cache",
                      "--egi-max-retries", "2", "-k", "alpha-0", "--egi-max-error-rate", "1")
    result.assert_outcomes(errors=1)
    (record,) = load_records(latest_run(toy_project))
    usage = record["usage"]
    # before: {} (the error path built the record without usage)
    assert (usage["calls"], usage["failed_calls"], usage["retries"]) == (1, 1, 2)
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert len(usage["latencies_s"]) == 1
    assert record["params"] == {"model": {"sent": {}, "dropped": {}}}


def test_records_are_byte_identical_between_a_cold_and_a_warm_cache_run(toy_project, planted_key):
    with OpenAIServer(reply_fn=toy_agent) as server:
        args = ("--egi-api-base", server.url, "--egi-seed", "7")
        _run(toy_project, *args).assert_outcomes(passed=6)
        cold_dir = latest_run(toy_project)
        _run(toy_project, *args).assert_outcomes(passed=6)
        warm_dir = latest_run(toy_project)
        assert server.count == 12  # the second run came from the cache
    assert cold_dir != warm_dir
    cold = (cold_dir / "records.jsonl").read_bytes()
    warm = (warm_dir / "records.jsonl").read_bytes()
    assert cold == warm  # before: unpriced_calls 12 vs 0
    # what differs lives in timings.jsonl
    cold_t = [json.loads(x) for x in (cold_dir / "timings.jsonl").read_text().splitlines()]
    warm_t = [json.loads(x) for x in (warm_dir / "timings.jsonl").read_text().splitlines()]
    assert sum(t["usage"]["cached_calls"] for t in cold_t) == 0
    assert sum(t["usage"]["cached_calls"] for t in warm_t) == 12
    assert sum(t["usage"]["unpriced_network_calls"] for t in cold_t) == 12
    assert sum(t["usage"]["unpriced_network_calls"] for t in warm_t) == 0


def test_unknown_cost_is_shown_as_unknown_everywhere_and_params_are_in_egi_json(
        toy_project, planted_key):
    with OpenAIServer(reply_fn=toy_agent) as server:
        result = _run(toy_project, "--egi-api-base", server.url, "--egi-no-cache",
                      "--egi-model-params", "temperature=0.2,max_tokens=256,stop=null")
        result.assert_outcomes(passed=6)
        assert {r.body["temperature"] for r in server.completions} == {0.2}
        assert {r.body["max_tokens"] for r in server.completions} == {256}
    run = latest_run(toy_project)
    egi = json.loads((run / "egi.json").read_text())
    # test-model has no price: its cost is unknown, never $0
    assert egi["usage"]["model"]["cost_usd"] is None
    assert egi["usage"]["model"]["unpriced_calls"] == 12
    result.stdout.fnmatch_lines([f"model {MODEL}: 12 calls (0 cached, 0 retries), * tokens, "
                                 "cost unknown (12 calls unpriced), latency*"])
    assert "$0.0000" not in result.stdout.str()
    assert "cost unknown (12 calls unpriced)" in (run / "report.html").read_text()
    assert egi["config"]["params"] == {
        "given": {"model": {"temperature": 0.2, "max_tokens": 256, "stop": None}},
        "sent": {"model": {"toy": {"temperature": 0.2, "max_tokens": 256}}},
        "dropped": {},
    }


@pytest.mark.parametrize("flag", ["--egi-model-params", "--egi-judge-params",
                                  "--egi-simulator-params"])
def test_bad_params_syntax_is_a_usage_error_naming_the_flag(toy_project, flag):
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", flag,
                                   "temperature=0,max_tokens")
    assert result.ret == 4
    assert (f"ERROR: {flag}: expected KEY=VALUE[,KEY=VALUE...], got 'max_tokens' (e.g. {flag} "
            "temperature=0,max_tokens=1024)") in result.stderr.str()


SLOW_START = """
import time

import pytest_egi.models.transport as transport

_import = transport.import_litellm
_slow = {"first": True}


def slow_import_litellm():
    if _slow["first"]:  # a cold machine: the first import takes longer than an item's budget
        _slow["first"] = False
        time.sleep(3)
    return _import()


transport.import_litellm = slow_import_litellm
"""

SLOW_PREPARE = """

import time as _time


def _prepare(self, tasks, options):
    _time.sleep(3)  # a world build longer than an item's budget
    with open("prepared.txt", "a") as fh:
        fh.write(" ".join(sorted(t.id for t in tasks)) + "\\n")


ToySuite.prepare = _prepare
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_start_up_happens_before_the_first_item_outside_its_timeout(
        toy_project, planted_key, workers):
    """pytest-timeout's per-item budget (2 s) never counts LiteLLM's import or a world build."""
    toy_project.makeconftest(SLOW_START)
    init = toy_project.path / "toysuites" / "toy" / "__init__.py"
    init.write_text(init.read_text() + SLOW_PREPARE)
    with OpenAIServer(reply_fn=toy_agent) as server:
        result = toy_project.runpytest_subprocess(
            "toysuites", "--egi-model", MODEL, "--egi-api-base", server.url, "--egi-bootstrap",
            "0", "--egi-no-cache", "--timeout", "2", *workers)
    # before: the first item (serial) or each worker's first item timed out in the import
    result.assert_outcomes(passed=6)
    prepared = (toy_project.path / "prepared.txt").read_text().splitlines()
    # once per process that runs items, with the tasks that process collected
    assert len(prepared) == (2 if workers else 1)
    assert set(prepared) == {"alpha-0 alpha-1 alpha-2 beta-0 beta-1 beta-2"}


def test_a_missing_api_key_stops_the_session_at_the_first_item(toy_project, monkeypatch):
    """No key: nothing is sent, and since no later call can do better, the session stops
    after the first errored item (before: five errored items, then a chain of exception
    names) with a message that says what to do."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = OpenAIServer()
    with server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        result = _run(toy_project, "--egi-no-cache", "--egi-mode", "deep")
    assert server.count == 0
    result.assert_outcomes(errors=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        f"*egi: stopping, ProviderError: model {MODEL}: no API key, nothing was sent (set the "
        "provider's key in the environment or a .env file, or any value for a keyless local "
        f"server; egi-bench doctor --egi-model {MODEL} names it): Missing credentials. *"])
    run = latest_run(toy_project)
    egi = json.loads((run / "egi.json").read_text())
    assert egi["session"]["stop_reason"] == "a provider failure no later call can escape (no_credentials)"
    assert [r["error_kind"] for r in load_records(run)] == ["no_credentials"]
