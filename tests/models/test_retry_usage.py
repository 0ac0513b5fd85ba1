"""Retry classification and waits; usage aggregation (hand-computed percentiles)."""

from __future__ import annotations

import email.utils
import random

import pytest

from pytest_egi.models.base import Usage
from pytest_egi.models.retry import Failure, RetryPolicy, classify, retry_after_seconds
from pytest_egi.models.usage import (
    format_usage_lines,
    percentile,
    summarize_usage,
    usage_record,
)


def test_retry_after_parsing():
    assert retry_after_seconds({"Retry-After": "2"}) == 2.0
    assert retry_after_seconds({"retry-after": "0.5"}) == 0.5
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    date = email.utils.formatdate(1_000_030.0, usegmt=True)
    assert retry_after_seconds({"Retry-After": date}, now=1_000_000.0) == pytest.approx(30.0)
    assert retry_after_seconds({"Retry-After": date}, now=2_000_000.0) == 0.0
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None and retry_after_seconds(None) is None


def test_retry_after_forwarded_by_a_litellm_proxy():
    """A LiteLLM proxy prefixes the provider's headers (and its own rate-limit wait) with
    ``llm_provider-``; the plain header wins when both are there."""
    assert retry_after_seconds({"llm_provider-retry-after": "60"}) == 60.0
    assert retry_after_seconds({"llm_provider-retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"Retry-After": "3", "llm_provider-retry-after": "60"}) == 3.0
    assert retry_after_seconds({"retry-after": "soon", "llm_provider-retry-after": "7"}) == 7.0
    assert retry_after_seconds({"llm_provider-retry-after": "later"}) is None


class _Exc(Exception):
    def __init__(self, status=None, headers=None):
        super().__init__("x")
        self.status_code = status
        self.headers = headers


def _named(name: str, base=_Exc):
    return type(name, (base,), {})


def test_classify():
    assert classify(_named("RateLimitError")(429, {"retry-after": "3"})) == Failure(
        True, "rate_limit", 429, 3.0)
    assert classify(_Exc(503)).retryable and classify(_Exc(503)).kind == "server_error"
    assert classify(_Exc(529)).retryable  # Anthropic "overloaded"
    assert classify(_named("Timeout")(408)).kind == "timeout"
    assert classify(_named("APIConnectionError")(500)).kind == "connection"
    assert classify(TimeoutError()).kind == "timeout"
    assert classify(ConnectionResetError()).kind == "connection"
    for fatal in (_named("AuthenticationError")(401), _named("BadRequestError")(400),
                  _named("ContextWindowExceededError")(400), _Exc(404), ValueError("bug")):
        assert not classify(fatal).retryable, fatal


def test_backoff_is_exponential_capped_and_jittered():
    policy = RetryPolicy(max_retries=5, base_s=1.0, max_s=8.0)
    rng = random.Random(0)
    plain = Failure(True, "server_error", 500)
    for retry, (lo, hi) in enumerate([(0.5, 1), (1, 2), (2, 4), (4, 8), (4, 8), (4, 8)]):
        draws = [policy.delay(retry, plain, rng) for _ in range(50)]
        assert lo <= min(draws) and max(draws) <= hi
        assert max(draws) - min(draws) > 0.1 * (hi - lo)  # jittered, not constant
    told = Failure(True, "rate_limit", 429, retry_after_s=2.0)
    draws = [policy.delay(0, told, rng) for _ in range(50)]
    assert 2.0 <= min(draws) and max(draws) <= 2.2
    capped = RetryPolicy(retry_after_max_s=10.0)
    assert 10.0 <= capped.delay(0, Failure(True, "rate_limit", 429, 3600.0), rng) <= 11.0


def test_percentile_matches_linear_interpolation():
    xs = [0.1 * k for k in range(1, 11)]  # 0.1 .. 1.0
    # position (n-1)q: p50 -> 4.5 -> (0.5+0.6)/2; p95 -> 8.55 -> 0.9 + 0.55*0.1
    assert percentile(xs, 50) == pytest.approx(0.55)
    assert percentile(xs, 95) == pytest.approx(0.955)
    assert percentile([3.0], 95) == 3.0 and percentile([], 50) is None


def _u(calls, lat, *, cached=0, pt=0, ct=0, cost=0.0, retries=0):
    return {"calls": calls, "cached_calls": cached, "prompt_tokens": pt, "completion_tokens": ct,
            "cost_usd": cost, "latency_s": sum(lat), "latencies_s": lat, "retries": retries,
            "wait_s": 0.0, "unpriced_calls": 0}


def test_summarize_usage_per_run_and_suite_hand_computed():
    records = [
        {"suite": "a", "usage": _u(3, [0.1, 0.2, 0.3], pt=100, ct=10, cost=0.01, retries=2)},
        {"suite": "a", "usage": _u(2, [0.4], cached=1, pt=50, ct=5, cost=0.02),
         "judge_usage": _u(2, [1.0, 3.0], pt=40, ct=4, cost=0.5)},
        {"suite": "b", "usage": _u(6, [0.5, 0.6, 0.7, 0.8, 0.9, 1.0], pt=600, ct=60, cost=0.03),
         "judge_usage": None},
        {"suite": "b", "status": "error"},  # an errored item without usage
    ]
    s = summarize_usage(records)
    m = s["model"]
    assert (m["items"], m["calls"], m["cached_calls"], m["network_calls"]) == (3, 11, 1, 10)
    assert (m["prompt_tokens"], m["completion_tokens"], m["total_tokens"]) == (750, 75, 825)
    assert m["cost_usd"] == pytest.approx(0.06)
    assert m["uncached_cost_usd"] == pytest.approx(0.06)  # absent in the records: = paid
    assert m["latency_s"] == pytest.approx(5.5)
    assert m["latency_p50_s"] == pytest.approx(0.55)  # same ten values as above
    assert m["latency_p95_s"] == pytest.approx(0.955)
    assert m["latency_max_s"] == 1.0 and m["retries"] == 2
    # suite a: [0.1, 0.2, 0.3, 0.4]: p50 at 1.5 -> 0.25, p95 at 2.85 -> 0.385
    a = s["suites"]["a"]["model"]
    assert (a["calls"], a["latency_p50_s"], a["latency_p95_s"]) == (
        5, pytest.approx(0.25), pytest.approx(0.385))
    # the judge is counted apart: [1.0, 3.0]: p50 2.0, p95 at 0.95 -> 2.9
    j = s["judge"]
    assert (j["items"], j["calls"], j["cost_usd"]) == (1, 2, 0.5)
    assert (j["latency_p50_s"], j["latency_p95_s"]) == (pytest.approx(2.0), pytest.approx(2.9))
    assert s["suites"]["b"]["judge"]["calls"] == 0
    assert s["simulator"]["items"] == 0 and s["simulator"]["latency_p50_s"] is None


def test_usage_record_and_terminal_lines():
    rec = usage_record(Usage(calls=2, prompt_tokens=3), [0.5, 1.5])
    assert rec["latencies_s"] == [0.5, 1.5] and rec["calls"] == 2
    lines = format_usage_lines(summarize_usage([{"suite": "a", "usage": rec}]),
                               {"model": "gpt-x", "judge": "egi/rules"})
    assert lines[0].startswith("model gpt-x: 2 calls (0 cached, 0 retries), 3 prompt + 0 "
                               "completion tokens, $0.0000, latency p50 1.00s p95 1.45s")
    assert lines[1] == "judge egi/rules: no calls"
    assert lines[2].startswith("  a: 2 calls, 3 tokens")


def test_an_offline_policys_usage_is_one_short_line():
    """Calls that went nowhere (an offline policy: no network call, no cache, no token, no
    cost) are one line without token, cost or latency figures, and no per-suite lines."""
    rec = usage_record(Usage(calls=4), [])
    lines = format_usage_lines(summarize_usage([{"suite": "a", "usage": rec}]), {"model": "egi/oracle"})
    assert lines == ["model egi/oracle: 4 calls, offline (no tokens, no cost)"]
