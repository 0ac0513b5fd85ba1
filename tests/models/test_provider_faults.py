"""Providers as they really behave: refused connections, context-window refusals, quota 429s,
finish reasons, replies without usage or choices, and parameters a model refuses.

Each test runs the real LiteLLM client against the local server, in this process and through
a model gateway (the ``transport`` fixture).
"""

from __future__ import annotations

import socket
import time
import warnings

import pytest

from pytest_egi.judges import LLMJudge
from pytest_egi.models import make_client
from pytest_egi.models.base import ContextWindowExceeded, ProviderError
from pytest_egi.models.usage import format_usage_lines, summarize_usage
from tests.helpers.openai_server import (
    OpenAIServer,
    Reply,
    chat_reply,
    context_window_reply,
    error_body_reply,
    error_reply,
    quota_reply,
)
from tests.models.conftest import MODEL

HI = [{"role": "user", "content": "hi"}]
PAID_DEFAULTS = {"backoff_base_s": 1.0, "backoff_max_s": 60.0, "max_retries": 6}
"""The shipped retry settings (the fixtures' are fast): a slow path would show in seconds."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- 1. a connection that cannot be made ------------------------------------------------------


@pytest.mark.parametrize("where", ["refused", "dns"])
def test_unreachable_provider_is_labelled_a_connection_failure_and_fails_in_seconds(
        where, make_settings, planted_key):
    base = (f"http://127.0.0.1:{_free_port()}/v1" if where == "refused"
            else "http://egi-no-such-host.invalid/v1")
    client = make_client(MODEL, provider=make_settings(None, api_base=base, cache_dir=None,
                                                       **PAID_DEFAULTS))
    start = time.monotonic()
    with pytest.raises(ProviderError) as info:
        client.generate(HI)
    elapsed = time.monotonic() - start
    text = str(info.value)
    # before: "server_error (HTTP 500) after 7 attempts", about a minute of backoff per call
    assert "HTTP 500" not in text and "server_error" not in text
    assert f"model {MODEL} at {base}: connection failed: " in text
    assert "after 3 attempts; no connection could be made" in text
    if where == "refused":
        assert "connection failed: Connection refused after 3 attempts" in text
    assert elapsed < 5.0, elapsed  # 2 retries, waits of at most 0.5 s and 1 s
    usage = client.usage_dict()
    assert (usage["calls"], usage["failed_calls"], usage["retries"]) == (0, 1, 2)


def test_a_dropped_connection_keeps_the_full_retry_budget(server, make_settings):
    """Only a connection that was never made gets the short budget."""
    from tests.helpers.openai_server import drop

    client = make_client(MODEL, provider=make_settings(server, cache_dir=None, max_retries=4))
    server.enqueue(drop(), drop(), drop(), chat_reply("fourth time lucky"))
    assert client.generate(HI).message["content"] == "fourth time lucky"
    assert client.usage_dict()["retries"] == 3


# --- 2. context window and finish_reason ------------------------------------------------------


@pytest.mark.parametrize("reply", [
    context_window_reply(),  # code context_length_exceeded, a message LiteLLM does not know
    error_reply(400, "This model's maximum context length is 8192 tokens. However, your "
                     "messages resulted in 9000 tokens.", err_type="invalid_request_error"),
], ids=["code", "message"])
def test_context_window_refusal_raises_context_window_exceeded_at_once(reply, server,
                                                                       make_settings):
    client = make_client(MODEL, provider=make_settings(server, **PAID_DEFAULTS))
    server.enqueue(reply)
    start = time.monotonic()
    with pytest.raises(ContextWindowExceeded) as info:
        client.generate(HI)
    assert time.monotonic() - start < 2.0
    assert not isinstance(info.value, ProviderError)  # the model's limit, not an infra fault
    assert server.count == 1  # not retried
    assert str(info.value).startswith(
        f"model {MODEL}: the request does not fit the model's context window: ")
    assert client.usage_dict()["failed_calls"] == 1


def test_finish_reason_is_filled_and_kept_through_the_cache(server, make_settings):
    settings = make_settings(server)
    server.enqueue(chat_reply("cut off mid-sen", finish_reason="length"))
    first = make_client(MODEL, provider=settings, trial=1).generate(HI)
    assert first.finish_reason == "length"
    again = make_client(MODEL, provider=settings, trial=1, shared={}).generate(HI)
    assert server.count == 1 and again.usage.cached_calls == 1
    assert again.finish_reason == "length"
    server.enqueue(chat_reply("done"))
    assert make_client(MODEL, provider=settings, trial=2).generate(HI).finish_reason == "stop"


# --- 6. the cache never stores an unusable reply ----------------------------------------------


def test_a_reply_without_choices_is_returned_but_never_cached(server, make_settings):
    settings = make_settings(server)
    server.enqueue(chat_reply(empty_choices=True), chat_reply("a real answer"))
    assert make_client(MODEL, provider=settings).generate(HI).message["content"] is None
    # the same call again (a retry, or a rerun) goes to the network
    response = make_client(MODEL, provider=settings, shared={}).generate(HI)
    assert response.message["content"] == "a real answer"
    assert server.count == 2


def test_an_error_body_is_never_cached_and_the_retry_goes_to_the_network(server, make_settings):
    settings = make_settings(server, max_retries=0)
    server.enqueue(error_body_reply())
    with pytest.raises(ProviderError):
        make_client(MODEL, provider=settings).generate(HI)
    server.enqueue(chat_reply("fine now"))
    assert make_client(MODEL, provider=settings, shared={}).generate(HI).message["content"] == (
        "fine now")
    assert server.count == 2


def test_judge_never_keeps_or_replays_an_unparsable_verdict(server, make_settings):
    settings = make_settings(server, judge_api_base=server.url)
    server.enqueue(chat_reply("I think it is fine."), chat_reply('{"verdict": "yes", "reason": "ok"}'))
    judge = LLMJudge(make_client(MODEL, provider=settings, role="judge"))
    # before: the bad reply was cached, so the judge's next attempts replayed it from the cache
    assert judge.verdict("Is 2+2=4?") == (True, "ok")
    assert server.count == 2
    rerun = LLMJudge(make_client(MODEL, provider=settings, role="judge", shared={}))
    assert rerun.verdict("Is 2+2=4?") == (True, "ok")
    assert server.count == 2  # the good verdict is what the cache holds


# --- 7. quota and billing; unknown cost --------------------------------------------------------


@pytest.mark.parametrize("reply", [
    quota_reply(),
    error_reply(429, "You exceeded your current quota.", code="billing_hard_limit_reached"),
    error_reply(402, "Insufficient credits. Add more using https://openrouter.ai/credits"),
    error_reply(400, "Your credit balance is too low to access the Anthropic API.",
                err_type="invalid_request_error"),
], ids=["insufficient_quota", "billing_hard_limit", "402", "credit_balance"])
def test_quota_or_billing_refusal_fails_at_once_saying_so(reply, server, make_settings):
    client = make_client(MODEL, provider=make_settings(server, cache_dir=None, **PAID_DEFAULTS))
    server.enqueue(reply)
    start = time.monotonic()
    with pytest.raises(ProviderError) as info:
        client.generate(HI)
    assert time.monotonic() - start < 2.0  # before: minutes of backoff for the 429s
    assert server.count == 1
    assert "quota or billing limit reached" in str(info.value)
    assert "waiting will not help" in str(info.value)


def test_a_per_minute_quota_with_a_retry_time_is_still_retried(server, make_settings):
    client = make_client(MODEL, provider=make_settings(server, cache_dir=None))
    server.enqueue(error_reply(429, "You exceeded your current quota, please check your plan "
                                    "and billing details. Please retry in 0.05s."),
                   chat_reply("after the minute"))
    assert client.generate(HI).message["content"] == "after the minute"


def test_a_call_without_usage_is_counted_and_its_cost_is_unknown_not_zero(server, make_settings,
                                                                          tmp_path):
    import json

    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({MODEL: {"input_cost_per_token": 0.001,
                                          "output_cost_per_token": 0.002}}))
    client = make_client(MODEL, provider=make_settings(server, cache_dir=None, price_file=prices))
    server.enqueue(chat_reply("priced", prompt_tokens=10, completion_tokens=5),
                   chat_reply("no usage reported", usage=False))
    client.generate(HI)
    client.generate(HI)
    usage = client.usage_dict()
    assert (usage["calls"], usage["no_usage_calls"], usage["unpriced_calls"]) == (2, 1, 1)
    summary = summarize_usage([{"suite": "toy", "usage": usage}])
    assert summary["model"]["cost_usd"] is None
    assert summary["model"]["priced_cost_usd"] == pytest.approx(0.02)
    line = format_usage_lines(summary)[0]
    assert "1 without usage" in line
    assert "cost unknown ($0.0200 priced + 1 call unpriced)" in line and "$0.0000" not in line


# --- 3. generation parameters ------------------------------------------------------------------


def test_parameters_a_model_refuses_are_dropped_with_a_warning(server, make_settings):
    """o3 refuses temperature=0 (LiteLLM knows): CRMArena's and the judge's default no longer
    make every call fail; max_tokens still goes out (LiteLLM maps it for o-series)."""
    client = make_client("openai/o3", provider=make_settings(server, cache_dir=None))
    with pytest.warns(UserWarning, match=r"model openai/o3: not sending temperature=0\.0: "
                                         r"O-series models don't support temperature=0\.0"):
        client.generate(HI, temperature=0.0, max_tokens=2000)
    body = server.completions[0].body
    assert "temperature" not in body
    assert body.get("max_completion_tokens", body.get("max_tokens")) == 2000
    assert client.params_record() == {
        "sent": {"max_tokens": 2000},
        "dropped": {"temperature": "O-series models don't support temperature=0.0. Only "
                                   "temperature=1 is supported."}}


def test_user_parameters_override_and_remove_the_callers_defaults(server, make_settings):
    settings = make_settings(server, cache_dir=None,
                             model_params={"max_tokens": 64, "temperature": None, "seed": 3})
    client = make_client(MODEL, provider=settings)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing dropped for an OpenAI-compatible model
        client.generate(HI, temperature=0.0, max_tokens=2000)
    body = server.completions[0].body
    assert (body["max_tokens"], body["seed"], "temperature" in body) == (64, 3, False)
    assert client.params_record() == {"sent": {"max_tokens": 64, "seed": 3}, "dropped": {}}


def test_a_refused_parameter_error_says_how_to_stop_sending_it(make_settings, planted_key):
    def strict(request: dict) -> Reply:
        if "temperature" in request:
            return error_reply(400, "Unsupported value: 'temperature' does not support 0.0 with "
                                    "this model. Only the default (1) value is supported.",
                               err_type="invalid_request_error")
        return chat_reply("ok")

    with OpenAIServer(reply_fn=strict) as srv:
        client = make_client(MODEL, provider=make_settings(srv, cache_dir=None))
        with pytest.raises(ProviderError) as info:
            client.generate(HI, temperature=0.0)
    assert "(to stop sending temperature, pass --egi-model-params temperature=null)" in str(
        info.value)


def test_a_tokens_per_minute_429_that_mentions_billing_is_still_a_rate_limit(server,
                                                                             make_settings):
    client = make_client(MODEL, provider=make_settings(server, cache_dir=None))
    server.enqueue(error_reply(429, "Rate limit reached for gpt-4o in organization org-x on tokens "
                                    "per min (TPM): Limit 30000, Used 30000. You can increase your "
                                    "rate limit by adding a payment method to your account at "
                                    "https://platform.openai.com/account/billing.",
                               code="rate_limit_exceeded"),
                   chat_reply("after the backoff"))
    assert client.generate(HI).message["content"] == "after the backoff"
    assert client.usage_dict()["retries"] == 1
