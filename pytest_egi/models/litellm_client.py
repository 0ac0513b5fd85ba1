"""The LiteLLM client: every ``--egi-model`` that is not an ``egi/`` policy.

LiteLLM is imported lazily (first call), always with ``LITELLM_LOCAL_MODEL_COST_MAP=True``
so that import never reaches for the network.

One :class:`LiteLLMClient` per model identity and process holds the shared machinery
(response cache, rate limiter, retry policy, prices); :meth:`LiteLLMClient.for_trial` hands
each trial a light :class:`TrialClient` that carries the trial index into the cache key and
keeps that trial's per-call log (latencies, tokens, retries) for the record.

Each attempt goes through a :mod:`~pytest_egi.models.transport`: LiteLLM in this process, or,
on xdist workers, the session's gateway process (``ProviderSettings.gateway``), which holds
the only LiteLLM import. Everything else here runs in the worker either way.

Failure handling (DESIGN §3.4): rate limits, 5xx, timeouts and dropped connections are
retried with backoff (honouring ``Retry-After``); when retries run out, or the failure is not
retryable (auth, bad request), a :class:`~pytest_egi.models.base.ProviderError` carries the
provider's message with every key redacted: the item is an error, not a wrong answer.
A malformed answer is the model's own: empty ``choices`` becomes an assistant message with
``content=None``; tool-call arguments and names pass through raw for the scaffold to judge.
"""

from __future__ import annotations

import functools
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pytest_egi.models.base import ModelResponse, ProviderError, Usage
from pytest_egi.models.cache import ResponseCache, cache_key
from pytest_egi.models.ratelimit import RateLimiter, estimate_tokens
from pytest_egi.models.retry import RetryPolicy
from pytest_egi.models.secrets import redact
from pytest_egi.models.settings import ProviderSettings, load_price_file
from pytest_egi.models.transport import (
    Attempt,
    GatewayTransport,
    InProcessTransport,
    Transport,
)

__all__ = ["CallInfo", "LiteLLMClient", "TrialClient"]


@functools.lru_cache(maxsize=8)
def _prices(path: str) -> dict[str, dict[str, float]]:
    return load_price_file(Path(path))


@dataclass
class CallInfo:
    """One logical call (all its attempts) as seen by a trial.

    Attributes:
        latency_s: seconds of the successful request (0.0 for a cache hit).
        prompt_tokens: input tokens reported by the provider.
        completion_tokens: output tokens reported by the provider.
        cost_usd: price in USD actually paid (0.0 for a cache hit or an unknown price).
        uncached_cost_usd: what the call cost when it went to the network (a cache hit
            keeps its original price here), USD.
        cached: answered from the response cache.
        priced: a price was known for the model (False: cost reported as 0).
        retries: failed attempts before the answer.
        wait_s: seconds spent in backoff and rate-limit waits.
    """

    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    uncached_cost_usd: float = 0.0
    cached: bool = False
    priced: bool = True
    retries: int = 0
    wait_s: float = 0.0

    def usage(self) -> Usage:
        """This call as a :class:`Usage` (one call)."""
        return Usage(calls=1, prompt_tokens=self.prompt_tokens,
                     completion_tokens=self.completion_tokens, cost_usd=self.cost_usd,
                     latency_s=self.latency_s, cached_calls=int(self.cached))


class LiteLLMClient:
    """Calls any LiteLLM model string (``gpt-4o-mini``, ``hosted_vllm/...``, ``ollama/...``).

    Thread-safe; share one per model identity and process (``make_client`` does).

    Args:
        model: the LiteLLM model string.
        api_base: OpenAI-compatible base URL; None takes ``settings.api_base_for(role)``.
        timeout_s: per-call timeout in seconds; None takes ``settings.timeout_s``.
        settings: cache, retry, rate-limit and price settings (default: no cache, no limit).
        role: ``model``, ``judge`` or ``simulator``: separates cache entries and limits.
    """

    def __init__(self, model: str, *, api_base: str | None = None,
                 timeout_s: float | None = None, settings: ProviderSettings | None = None,
                 role: str = "model") -> None:
        self.settings = settings or ProviderSettings()
        self.name = model
        self.role = role
        self.api_base = api_base if api_base is not None else self.settings.api_base_for(role)
        self.timeout_s = timeout_s if timeout_s is not None else self.settings.timeout_s
        s = self.settings
        self.policy = RetryPolicy(s.max_retries, s.backoff_base_s, s.backoff_max_s,
                                  s.retry_after_max_s)
        self.cache = ResponseCache(s.cache_dir) if s.cache_dir is not None else None
        self.limiter = RateLimiter(f"{model}|{self.api_base or ''}", rpm=s.rpm, tpm=s.tpm,
                                   state_dir=s.state_dir)
        self.prices = _prices(str(s.price_file)) if s.price_file is not None else {}
        self.transport: Transport = (GatewayTransport(s.gateway, self.timeout_s) if s.gateway
                                     else InProcessTransport())
        self._rng = random.Random()
        self._warm = False
        self._default = TrialClient(self, 0, "")

    # -- the ModelClient protocol (trial 0) for callers that do not bind a trial
    def generate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 **params: Any) -> ModelResponse:
        """One chat completion as trial 0 (see :meth:`TrialClient.generate`)."""
        return self._default.generate(messages, tools, **params)

    def for_trial(self, trial: int, namespace: str = "") -> TrialClient:
        """A client bound to one trial: its index enters the cache key, its calls are logged.

        Args:
            trial: the trial index (0-based).
            namespace: extra cache-key text (e.g. the run seed); "" for none.
        """
        return TrialClient(self, trial, namespace)

    # -- the call itself
    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                 params: dict[str, Any], *, trial: int, namespace: str) -> tuple[dict, CallInfo]:
        """One logical call: cache lookup, rate limit, retries, pricing, cache store.

        Returns:
            (assistant message in OpenAI format, the call's :class:`CallInfo`).

        Raises:
            ProviderError: retries exhausted or a non-retryable failure; the message names
                the model, the failure kind, the attempts and the provider's (redacted) text.
        """
        key = None
        if self.cache is not None:
            key = cache_key(
                model=self.name, api_base=self.api_base, messages=messages, tools=tools,
                params=params, trial=trial if self.settings.independent_trials else None,
                namespace=f"{self.role}|{namespace}")
            hit = self.cache.get(key)
            if hit is not None:
                return hit["message"], CallInfo(
                    prompt_tokens=int(hit.get("prompt_tokens", 0)),
                    completion_tokens=int(hit.get("completion_tokens", 0)),
                    uncached_cost_usd=float(hit.get("cost_usd", 0.0)),
                    cached=True, priced=bool(hit.get("priced", True)))
        attempt, info = self._call_with_retries(messages, tools, params)
        message = attempt.message
        info.prompt_tokens = attempt.prompt_tokens
        info.completion_tokens = attempt.completion_tokens
        info.cost_usd, info.priced = self._cost(attempt)
        info.uncached_cost_usd = info.cost_usd
        if self.cache is not None and key is not None:
            self.cache.put(key, {"message": message, "prompt_tokens": info.prompt_tokens,
                                 "completion_tokens": info.completion_tokens,
                                 "cost_usd": info.cost_usd, "priced": info.priced},
                           model=self.name)
        return message, info

    def _call_with_retries(self, messages: list[dict[str, Any]],
                           tools: list[dict[str, Any]] | None,
                           params: dict[str, Any]) -> tuple[Attempt, CallInfo]:
        kwargs: dict[str, Any] = {"model": self.name, "messages": messages,
                                  "timeout": self.timeout_s, "max_retries": 0,
                                  "num_retries": 0}
        if tools:
            kwargs["tools"] = tools
        if self.api_base:
            kwargs["api_base"] = self.api_base
        kwargs.update(params)
        info = CallInfo()
        estimate = estimate_tokens(messages, tools, params) if self.limiter.tpm else 0
        if not self._warm:  # LiteLLM's import is no part of the first call's latency
            self.transport.warm()
            self._warm = True
        retry = 0
        while True:
            info.wait_s += self.limiter.acquire(estimate)
            start = time.perf_counter()
            attempt = self.transport.attempt(kwargs)
            failure = attempt.failure
            if failure is None:
                info.latency_s = time.perf_counter() - start
                if self.limiter.tpm:
                    self.limiter.settle(estimate, attempt.total_tokens or estimate)
                return attempt, info
            if self.limiter.tpm:
                self.limiter.settle(estimate, 0)
            if not failure.retryable or retry >= self.policy.max_retries:
                raise self._give_up(attempt.error_text, failure.kind, failure.status, retry + 1)
            delay = self.policy.delay(retry, failure, self._rng)
            if failure.kind == "rate_limit":
                self.limiter.pause(delay)
            time.sleep(delay)
            info.wait_s += delay
            info.retries += 1
            retry += 1

    def _give_up(self, text: str, kind: str, status: int | None, attempts: int) -> ProviderError:
        """The ProviderError for a call that failed for good (``text`` already redacted)."""
        where = f" at {redact(self.api_base)}" if self.api_base else ""
        code = f" (HTTP {status})" if status else ""
        return ProviderError(
            f"{self.role} {self.name}{where}: {kind}{code} after {attempts} attempt"
            f"{'s' if attempts != 1 else ''}: {text}"
        )

    def _cost(self, attempt: Attempt) -> tuple[float, bool]:
        """(USD, priced) for one answer: the user price file first, then LiteLLM's local
        price map (looked up where the call ran: here or in the gateway)."""
        bare = self.name.split("/", 1)[1] if "/" in self.name else self.name
        price = self.prices.get(self.name) or self.prices.get(bare)
        if price is not None:
            return (attempt.prompt_tokens * price["input_cost_per_token"]
                    + attempt.completion_tokens * price["output_cost_per_token"]), True
        if attempt.litellm_cost_usd is None:
            return 0.0, False
        return attempt.litellm_cost_usd, True


class TrialClient:
    """A :class:`LiteLLMClient` bound to one trial (satisfies ``ModelClient``).

    Attributes:
        name: the model string.
        trial: the trial index in the cache key.
        calls: one :class:`CallInfo` per ``generate`` call, in order.
    """

    def __init__(self, core: LiteLLMClient, trial: int, namespace: str) -> None:
        self.core = core
        self.name = core.name
        self.trial = trial
        self.namespace = namespace
        self.calls: list[CallInfo] = []

    def generate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 **params: Any) -> ModelResponse:
        """The next assistant turn for ``messages``.

        Args:
            messages: the conversation so far, OpenAI format.
            tools: tool schemas offered, or None.
            **params: sampling parameters passed to LiteLLM (and into the cache key).

        Returns:
            The assistant message and this call's usage (``cached_calls=1``, zero latency
            and zero cost when answered from the cache).

        Raises:
            ProviderError: the provider failed after retries (message redacted).
        """
        message, info = self.core.complete(messages, tools, params, trial=self.trial,
                                           namespace=self.namespace)
        self.calls.append(info)
        return ModelResponse(message, info.usage())

    @property
    def usage(self) -> Usage:
        """All calls of this trial, summed."""
        total = Usage()
        for c in self.calls:
            total.add(c.usage())
        return total

    @property
    def latencies_s(self) -> list[float]:
        """Per-call latency in seconds of the calls that went to the network (cache hits are
        left out, so they do not drag p50/p95 towards zero)."""
        return [c.latency_s for c in self.calls if not c.cached]

    def usage_dict(self) -> dict[str, Any]:
        """The record's usage: ``Usage.to_dict()`` plus ``latencies_s`` (list of seconds),
        ``retries``, ``wait_s`` (backoff and rate-limit seconds), ``unpriced_calls`` and
        ``uncached_cost_usd`` (USD including cache hits at their original price)."""
        out = self.usage.to_dict()
        out["latencies_s"] = self.latencies_s
        out["retries"] = sum(c.retries for c in self.calls)
        out["wait_s"] = sum(c.wait_s for c in self.calls)
        out["unpriced_calls"] = sum(1 for c in self.calls if not c.priced and not c.cached)
        out["uncached_cost_usd"] = sum(c.uncached_cost_usd for c in self.calls)
        return out

    def call_log(self) -> list[dict[str, Any]]:
        """Every call as a plain dict (for the trajectory's ``info``)."""
        return [asdict(c) for c in self.calls]
