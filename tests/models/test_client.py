"""The LiteLLM client against a local OpenAI-compatible server (real HTTP, real LiteLLM)."""

from __future__ import annotations

import json
import time

import pytest

from pytest_egi.agents.loops import run_tool_loop
from pytest_egi.agents.tools import Tool, Toolkit
from pytest_egi.models import NullClient, make_client
from pytest_egi.models.base import ProviderError
from pytest_egi.models.litellm_client import LiteLLMClient, TrialClient
from pytest_egi.models.secrets import find_secret_leaks
from tests.helpers.openai_server import (
    chat_reply,
    drop,
    error_reply,
    hang,
    tool_reply,
)
from tests.models.conftest import MODEL, PLANTED_KEY, PLANTED_SECRET

HI = [{"role": "user", "content": "hi"}]


def test_plain_call_reports_message_usage_and_sends_the_key_only_as_auth(server, make_settings):
    client = make_client(MODEL, provider=make_settings(server, cache_dir=None))
    server.enqueue(chat_reply("hello there", prompt_tokens=12, completion_tokens=3))
    response = client.generate(HI, temperature=0.0)
    assert response.message == {"role": "assistant", "content": "hello there"}
    assert (response.usage.calls, response.usage.prompt_tokens,
            response.usage.completion_tokens, response.usage.cached_calls) == (1, 12, 3, 0)
    assert 0 < response.usage.latency_s < 2
    request = server.completions[0]
    assert request.body["model"] == "test-model"
    assert request.body["messages"] == HI
    assert request.body["temperature"] == 0.0
    assert request.headers["authorization"] == f"Bearer {PLANTED_KEY}"


def test_retry_on_429_honours_retry_after(server, make_settings):
    client = make_client(MODEL, provider=make_settings(server, cache_dir=None))
    server.enqueue(error_reply(429, retry_after=1), chat_reply("after the wait"))
    start = time.monotonic()
    response = client.generate(HI)
    elapsed = time.monotonic() - start
    assert response.message["content"] == "after the wait"
    assert server.count == 2
    gap = server.completions[1].t - server.completions[0].t
    # backoff alone would be <= 0.05 s: a gap of 1 s or more is Retry-After: 1 winning (how
    # much more depends on the machine's load, so the wait slept bounds it from above)
    assert gap >= 1.0, gap
    assert elapsed >= gap
    usage = client.usage_dict()
    assert usage["retries"] == 1
    # the wait slept is Retry-After (+ at most 10 % jitter), and no longer than the gap
    assert 1.0 <= usage["wait_s"] <= min(1.1, gap) + 0.05
    assert usage["latencies_s"] == [pytest.approx(response.usage.latency_s)]


def test_retry_after_milliseconds_and_5xx_and_dropped_connection(server, make_settings):
    client = make_client(MODEL, provider=make_settings(server, cache_dir=None, max_retries=4))
    server.enqueue(error_reply(500), error_reply(503), drop(), chat_reply("finally"))
    assert client.generate(HI).message["content"] == "finally"
    assert server.count == 4
    assert client.usage_dict()["retries"] == 3


def test_timeout_is_retried_then_succeeds(server, make_settings):
    client = make_client(MODEL, provider=make_settings(server, cache_dir=None, timeout_s=0.4))
    server.enqueue(hang(3), chat_reply("in time"))
    start = time.monotonic()
    assert client.generate(HI).message["content"] == "in time"
    # the first request hangs 3 s: under 3 s the client gave up on it at its 0.4 s timeout
    assert 0.4 <= time.monotonic() - start < 2.9
    assert server.count == 2


def test_give_up_raises_provider_error_with_provider_message_and_no_key(server, make_settings):
    client = make_client(MODEL, provider=make_settings(server, cache_dir=None, max_retries=2))
    leaky = f"upstream overloaded (key {PLANTED_KEY}, secret {PLANTED_SECRET})"
    server.enqueue(*[error_reply(503, leaky)] * 3)
    with pytest.raises(ProviderError) as info:
        client.generate(HI)
    text = str(info.value)
    assert server.count == 3  # first attempt + 2 retries
    assert "upstream overloaded" in text
    assert "after 3 attempts" in text and "HTTP 503" in text and MODEL in text
    assert PLANTED_KEY not in text and PLANTED_SECRET not in text
    assert "***" in text
    # no chained provider exception (its message and traceback locals may hold the key)
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_auth_error_is_not_retried_and_the_echoed_key_is_redacted(server, make_settings):
    client = make_client(MODEL, provider=make_settings(server, cache_dir=None))
    server.enqueue(error_reply(401, f"Incorrect API key provided: {PLANTED_KEY}",
                               err_type="invalid_request_error"))
    with pytest.raises(ProviderError) as info:
        client.generate(HI)
    assert server.count == 1
    assert "client_error (HTTP 401) after 1 attempt:" in str(info.value)
    assert "Incorrect API key provided: ***" in str(info.value)
    assert PLANTED_KEY not in str(info.value)


def test_repeated_timeouts_give_up_as_provider_error(server, make_settings):
    client = make_client(MODEL, provider=make_settings(server, cache_dir=None, timeout_s=0.3,
                                                       max_retries=1))
    server.enqueue(hang(3), hang(3))
    with pytest.raises(ProviderError, match=r"timeout \(HTTP 408\) after 2 attempts"):
        client.generate(HI)


def test_malformed_tool_calls_and_empty_choices_are_the_models_answer(server, make_settings):
    """Bad JSON, an unknown tool and empty choices come back as-is and are scored, not errors."""
    client = make_client(MODEL, provider=make_settings(server, cache_dir=None))
    server.enqueue(
        tool_reply("lookup", '{"item": 3,', call_id="c1"),  # truncated JSON
        tool_reply("delete_everything", "{}", call_id="c2"),  # unknown tool
        chat_reply(empty_choices=True),  # nothing at all
    )
    toolkit = Toolkit.of(
        Tool("lookup", "Look up", {"type": "object", "properties": {"item": {"type": "integer"}}},
             lambda item: {"code": "C1"}),
        Tool("submit", "Submit", {"type": "object", "properties": {"code": {"type": "string"}}},
             lambda code: code, kind="submit"),
    )
    traj = run_tool_loop(client, [{"role": "user", "content": "find item 3"}], toolkit,
                         max_turns=5)
    assert traj.turns == 3 and server.count == 3
    bad_call = traj.messages[1]["tool_calls"][0]["function"]
    assert bad_call == {"name": "lookup", "arguments": '{"item": 3,'}
    assert traj.messages[2]["content"].startswith("Error: arguments are not valid JSON")
    assert traj.messages[3]["tool_calls"][0]["function"]["name"] == "delete_everything"
    assert traj.messages[4]["content"].startswith("Error: unknown tool 'delete_everything'")
    assert traj.messages[5] == {"role": "assistant", "content": None}
    assert traj.termination == "text_answer" and traj.final_answer is None
    assert [c["error"] for c in toolkit.calls] == [True, True]
    # the model's tools went out on the wire in OpenAI format
    assert [t["function"]["name"] for t in server.completions[0].body["tools"]] == [
        "lookup", "submit"]


def test_cache_hit_on_rerun_makes_zero_requests(server, make_settings):
    settings = make_settings(server)
    first = make_client(MODEL, provider=settings, trial=1)
    server.enqueue(chat_reply("cached answer", prompt_tokens=7, completion_tokens=2))
    a = first.generate(HI, temperature=0.0)
    assert server.count == 1
    # a new client (a second run) over the same cache directory
    second = make_client(MODEL, provider=settings, trial=1, shared={})
    b = second.generate(HI, temperature=0.0)
    assert server.count == 1
    assert b.message == a.message == {"role": "assistant", "content": "cached answer"}
    assert (b.usage.calls, b.usage.cached_calls, b.usage.latency_s, b.usage.cost_usd) == (
        1, 1, 0.0, 0.0)
    assert (b.usage.prompt_tokens, b.usage.completion_tokens) == (7, 2)
    assert second.usage_dict()["uncached_cost_usd"] == first.usage_dict()["uncached_cost_usd"]
    assert second.latencies_s == []  # cache hits do not enter latency percentiles
    # nothing secret in the cache files
    assert find_secret_leaks(settings.cache_dir, [PLANTED_KEY, PLANTED_SECRET]) == []


def test_cache_key_separates_trials_params_roles_and_namespaces(server, make_settings):
    settings = make_settings(server, judge_api_base=server.url)
    shared: dict = {}
    make_client(MODEL, provider=settings, trial=1, shared=shared).generate(HI)
    assert server.count == 1
    make_client(MODEL, provider=settings, trial=2, shared=shared).generate(HI)
    assert server.count == 2  # another trial is an independent attempt
    make_client(MODEL, provider=settings, trial=1, shared=shared).generate(HI, temperature=0.7)
    assert server.count == 3  # other sampling parameters
    make_client(MODEL, provider=settings, trial=1, shared=shared, role="judge").generate(HI)
    assert server.count == 4  # the judge has its own entries
    make_client(MODEL, provider=settings, trial=1, shared=shared,
                cache_namespace="seed=7").generate(HI)
    assert server.count == 5
    make_client(MODEL, provider=settings, trial=2, shared=shared).generate(HI)
    assert server.count == 5  # and each of them hits on repeat


def test_no_cache_always_calls(server, make_settings):
    settings = make_settings(server, cache_dir=None)
    for _ in range(2):
        make_client(MODEL, provider=settings, shared={}).generate(HI)
    assert server.count == 2


def test_failures_are_not_cached(server, make_settings):
    settings = make_settings(server, max_retries=0)
    server.enqueue(error_reply(500))
    with pytest.raises(ProviderError):
        make_client(MODEL, provider=settings).generate(HI)
    assert make_client(MODEL, provider=settings).generate(HI).message["content"] == "echo: hi"
    assert server.count == 2


def test_cost_from_price_file_and_from_litellm_local_map(server, make_settings, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({MODEL: {"input_cost_per_token": 0.001,
                                          "output_cost_per_token": 0.002}}))
    settings = make_settings(server, price_file=prices)
    client = make_client(MODEL, provider=settings)
    server.enqueue(chat_reply("x", prompt_tokens=10, completion_tokens=5))
    assert client.generate(HI).usage.cost_usd == pytest.approx(10 * 0.001 + 5 * 0.002)
    # a cache hit pays nothing but keeps its list price in uncached_cost_usd
    rerun = make_client(MODEL, provider=settings, shared={})
    assert rerun.generate(HI).usage.cost_usd == 0.0
    assert rerun.usage_dict()["uncached_cost_usd"] == pytest.approx(0.02)
    # gpt-4o-mini in LiteLLM's bundled price map: $0.15 / 1M input, $0.60 / 1M output
    mini = make_client("openai/gpt-4o-mini", provider=make_settings(server, cache_dir=None))
    server.enqueue(chat_reply("y", prompt_tokens=1000, completion_tokens=500))
    assert mini.generate(HI).usage.cost_usd == pytest.approx(1000 * 0.15e-6 + 500 * 0.60e-6)
    # an unknown model costs 0 and is counted as unpriced
    unknown = make_client(MODEL, provider=make_settings(server, cache_dir=None))
    assert unknown.generate(HI).usage.cost_usd == 0.0
    assert unknown.usage_dict()["unpriced_calls"] == 1


def test_make_client_shares_one_core_per_identity_and_keeps_offline_policies(make_settings):
    settings = make_settings(None, api_base="http://127.0.0.1:1/v1")
    shared: dict = {}
    a = make_client(MODEL, provider=settings, shared=shared, trial=1)
    b = make_client(MODEL, provider=settings, shared=shared, trial=2)
    j = make_client(MODEL, provider=settings, shared=shared, role="judge")
    assert isinstance(a, TrialClient) and a.core is b.core and j.core is not a.core
    assert (a.trial, b.trial, a.name) == (1, 2, MODEL)
    assert a.core.api_base == "http://127.0.0.1:1/v1" and j.core.api_base is None
    assert isinstance(make_client("egi/null"), NullClient)
    legacy = LiteLLMClient(MODEL, api_base="http://127.0.0.1:1/v1")
    assert legacy.cache is None and not legacy.limiter.active


def test_missing_api_key_fails_at_once_without_a_request(server, make_settings, monkeypatch):
    """The SDK refuses before sending (LiteLLM reports a 500): one attempt, a clear error."""
    monkeypatch.delenv("OPENAI_API_KEY")
    client = make_client(MODEL, provider=make_settings(server, cache_dir=None, max_retries=6,
                                                       backoff_base_s=1.0, backoff_max_s=60.0))
    start = time.monotonic()
    with pytest.raises(ProviderError) as info:
        client.generate(HI)
    assert time.monotonic() - start < 2.0  # no backoff: 6 retries would take ~30 s
    assert server.count == 0
    text = str(info.value)
    assert "no API key, nothing was sent" in text and "OPENAI_API_KEY" in text
    assert "InternalServerError" not in text  # the provider's sentence, not LiteLLM's chain
