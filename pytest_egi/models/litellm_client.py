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
retried with backoff (honouring ``Retry-After``); a connection that cannot be made gets a
short budget of its own (a dead provider fails each call in about 1.5 s). When retries run
out, or the failure is not retryable (auth, bad request, quota or billing), a
:class:`~pytest_egi.models.base.ProviderError` carries the provider's message with every key
redacted: the item is an error, not a wrong answer. A refusal for length raises
:class:`~pytest_egi.models.base.ContextWindowExceeded` instead (the model's limit).
A malformed answer is the model's own: empty ``choices`` becomes an assistant message with
``content=None`` (never cached); tool-call arguments and names pass through raw for the
scaffold to judge. Every reply, from the network or the cache, arrives through one place
(:meth:`LiteLLMClient._arrived`): secrets are redacted (the cache stores redacted replies) and
text that is not valid Unicode (a lone surrogate) is replaced by U+FFFD, its raw form kept in
``ModelResponse.raw`` (:mod:`pytest_egi.models.replies`).

Generation parameters: each call's parameters (the suite's defaults) are overlaid with the
user's for this role (``--egi-model-params`` ...), then checked against LiteLLM's knowledge of
the model (:mod:`~pytest_egi.models.params`); refused ones are dropped with a warning.
"""

from __future__ import annotations

import functools
import json
import random
import re
import threading
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pytest_egi.models.base import ContextWindowExceeded, ModelResponse, ProviderError, Usage
from pytest_egi.models.cache import ResponseCache, cache_key
from pytest_egi.models.params import merge_params
from pytest_egi.models.ratelimit import RateLimiter, estimate_tokens
from pytest_egi.models.replies import clean_obj, clean_reply, has_lone_surrogate
from pytest_egi.models.retry import RetryPolicy
from pytest_egi.models.secrets import mask_secret_params, redact, redact_json_safe
from pytest_egi.models.settings import ProviderSettings, load_price_file
from pytest_egi.models.transport import (
    Attempt,
    GatewayTransport,
    InProcessTransport,
    Transport,
)

__all__ = ["PARAMS_FLAGS", "CallInfo", "LiteLLMClient", "TrialClient"]

PARAMS_FLAGS = {"model": "--egi-model-params", "judge": "--egi-judge-params",
                "simulator": "--egi-simulator-params"}
"""The option that sets each role's generation parameters (named in messages)."""


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
        priced: the cost is known: a price for the model and token usage from the provider
            (False: the cost is unknown, shown as such, never as $0).
        retries: failed attempts before the answer (for a failed call: after the first).
        wait_s: seconds spent in backoff and rate-limit waits.
        usage_reported: the provider reported token usage (False: tokens unknown).
        failed: the call raised (provider failure or context window): no answer, but its
            retries and waits count.
        finish_reason: the provider's ``finish_reason``, or None.
        raw: the reply's fields that held text that is not valid Unicode (a lone surrogate),
            as sent, in JSON-safe form (``{"content": "...\\ud800..."}``); None when the
            reply was clean (see :mod:`pytest_egi.models.replies`).
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
    usage_reported: bool = True
    failed: bool = False
    finish_reason: str | None = None
    raw: dict[str, str] | None = None

    def usage(self) -> Usage:
        """This call as a :class:`Usage` (one call; zero calls when it failed)."""
        return Usage(calls=0 if self.failed else 1, prompt_tokens=self.prompt_tokens,
                     completion_tokens=self.completion_tokens, cost_usd=self.cost_usd,
                     latency_s=self.latency_s, cached_calls=int(self.cached))


_EXCEPTION_PREFIX = re.compile(r"^(?:[\w.]*(?:Error|Exception)\s*[:-]\s*)+")


def _without_exception_names(text: str) -> str:
    """The provider's sentence without the chain of exception names LiteLLM puts before it
    (``InternalServerError: litellm.InternalServerError: OpenAIException - Missing ...``)."""
    return _EXCEPTION_PREFIX.sub("", text).strip() or text


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
        self.user_params = s.params_for(role)
        self.dropped_params: dict[str, str] = {}
        """Parameters not sent because the model refuses them: name -> reason (this process)."""
        self._checked: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._rng = random.Random()
        self._warm = False
        self._default = TrialClient(self, 0, "")

    def warm(self) -> None:
        """Make LiteLLM ready now (import it here, or wait for the gateway's import), so no
        item pays for it; later calls skip this."""
        if not self._warm:
            self.transport.warm()
            self._warm = True

    def check_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """The parameters to send for one call: ``params`` (the caller's, e.g. a suite's
        defaults) overlaid with the user's for this role, minus what the model refuses.

        Returns:
            ``{"sent": {...}, "dropped": {name: reason}, "reasoning": bool}`` (see
            :func:`pytest_egi.models.params.check_params`); memoised per parameter set.
            The first time a parameter is dropped, a ``UserWarning`` names it and the reason.
        """
        merged = merge_params(params, self.user_params)
        key = json.dumps(merged, sort_keys=True, default=str)
        checked = self._checked.get(key)
        if checked is None:
            self.warm()
            checked = self.transport.check_params(self.name, merged)
            with self._lock:
                self._checked[key] = checked
                new = {k: v for k, v in checked["dropped"].items() if k not in self.dropped_params}
                self.dropped_params.update(new)
            for name, reason in new.items():
                warnings.warn(redact(f"egi: {self.role} {self.name}: not sending {name}="
                                     f"{merged[name]!r}: {reason}"), UserWarning, stacklevel=2)
        return checked

    @property
    def reasoning(self) -> bool:
        """LiteLLM marks the model as a reasoning model (``supports_reasoning``)."""
        return bool(self.check_params({}).get("reasoning"))

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
                 params: dict[str, Any], *, trial: int, namespace: str,
                 info: CallInfo | None = None) -> tuple[dict, CallInfo, str | None]:
        """One logical call: parameter check, cache lookup, rate limit, retries, pricing,
        cache store.

        Args:
            messages, tools: the request (a lone surrogate in a message, text that is not
                valid Unicode, is sent as U+FFFD: no provider accepts one).
            params: the caller's generation parameters (before the user's and the check).
            trial, namespace: enter the cache key.
            info: the :class:`CallInfo` to fill (a failed call keeps its retries and waits
                there); a new one when None.

        Returns:
            (assistant message in OpenAI format, the call's :class:`CallInfo`, its cache key
            or None). A reply without choices is returned but never cached. The message has
            every secret redacted (as the cache stores it) and every lone surrogate replaced
            by U+FFFD, from the network and the cache alike; ``info.raw`` keeps the raw form
            of the fields that were cleaned.

        Raises:
            ProviderError: retries exhausted or a non-retryable failure; the message names
                the model, the failure kind, the attempts and the provider's (redacted) text.
            ContextWindowExceeded: the provider refused the request for its length.
        """
        info = info if info is not None else CallInfo()
        sent = self.check_params(params)["sent"]
        if has_lone_surrogate(json.dumps(messages, ensure_ascii=False, default=str)):
            messages = clean_obj(messages)  # no provider takes one: it fails before sending
        key = None
        if self.cache is not None:
            key = cache_key(
                model=self.name, api_base=self.api_base, messages=messages, tools=tools,
                params=sent, trial=trial if self.settings.independent_trials else None,
                namespace=f"{self.role}|{namespace}")
            hit = self.cache.get(key)
            if hit is not None and isinstance(hit.get("message"), dict):
                info.prompt_tokens = int(hit.get("prompt_tokens", 0))
                info.completion_tokens = int(hit.get("completion_tokens", 0))
                info.uncached_cost_usd = float(hit.get("cost_usd", 0.0))
                info.cached, info.priced = True, bool(hit.get("priced", True))
                info.usage_reported = bool(hit.get("usage_reported", True))
                info.finish_reason = hit.get("finish_reason")
                return self._arrived(hit["message"], info), info, key
        attempt = self._call_with_retries(messages, tools, sent, info)
        message = redact_json_safe(attempt.message)  # never stored (nor replayed) with a key
        info.prompt_tokens = attempt.prompt_tokens
        info.completion_tokens = attempt.completion_tokens
        info.usage_reported = attempt.usage_reported
        info.finish_reason = attempt.finish_reason
        info.cost_usd, info.priced = self._cost(attempt)
        info.uncached_cost_usd = info.cost_usd
        if self.cache is not None and key is not None and attempt.usable:
            self.cache.put(key, {"message": message, "prompt_tokens": info.prompt_tokens,
                                 "completion_tokens": info.completion_tokens,
                                 "cost_usd": info.cost_usd, "priced": info.priced,
                                 "usage_reported": info.usage_reported,
                                 "finish_reason": info.finish_reason},
                           model=self.name)
        return self._arrived(message, info), info, key

    @staticmethod
    def _arrived(message: dict[str, Any], info: CallInfo) -> dict[str, Any]:
        """Where every reply arrives, from the network or the cache: secrets redacted (an
        old cache entry may hold one), lone surrogates replaced by U+FFFD
        (:func:`~pytest_egi.models.replies.clean_reply`; their raw form goes to
        ``info.raw``)."""
        cleaned, info.raw = clean_reply(redact_json_safe(message))
        return cleaned

    def _call_with_retries(self, messages: list[dict[str, Any]],
                           tools: list[dict[str, Any]] | None,
                           params: dict[str, Any], info: CallInfo) -> Attempt:
        kwargs: dict[str, Any] = {"model": self.name, "messages": messages,
                                  "timeout": self.timeout_s, "max_retries": 0,
                                  "num_retries": 0}
        if tools:
            kwargs["tools"] = tools
        if self.api_base:
            kwargs["api_base"] = self.api_base
        kwargs.update(params)
        estimate = estimate_tokens(messages, tools, params) if self.limiter.tpm else 0
        self.warm()  # LiteLLM's import is no part of the first call's latency
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
                return attempt
            if self.limiter.tpm:
                self.limiter.settle(estimate, 0)
            if failure.kind == "context_window":
                raise ContextWindowExceeded(
                    f"{self.role} {self.name}: the request does not fit the model's context "
                    f"window: {attempt.error_text}")
            if not self.policy.allows(retry, failure):
                raise self._give_up(attempt.error_text, failure.kind, failure.status, retry + 1,
                                    params)
            delay = self.policy.delay(retry, failure, self._rng)
            if failure.kind == "rate_limit":
                self.limiter.pause(delay)
            time.sleep(delay)
            info.wait_s += delay
            info.retries += 1
            retry += 1

    def _give_up(self, text: str, kind: str, status: int | None, attempts: int,
                 params: dict[str, Any] | None = None) -> ProviderError:
        """The ProviderError for a call that failed for good (``text`` already redacted)."""
        where = f" at {redact(self.api_base)}" if self.api_base else ""
        code = f" (HTTP {status})" if status else ""
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if kind == "connect":
            hint = "(check the network, the host name and that the server is running)"
            return ProviderError(
                f"{self.role} {self.name}{where}: {text} after {tries}; no connection could "
                f"be made {hint}", kind, hint)
        if kind == "quota":
            hint = ("(add credit or raise the limit in the provider's billing settings; waiting "
                    "will not help)")
            return ProviderError(
                f"{self.role} {self.name}{where}: quota or billing limit reached{code}, not "
                f"retried: {text} {hint}", kind, hint)
        if kind == "no_credentials":
            hint = ("(set the provider's key in the environment or a .env file, or any value "
                    f"for a keyless local server; egi-bench doctor --egi-model {self.name} "
                    "names it)")
            return ProviderError(
                f"{self.role} {self.name}{where}: no API key, nothing was sent {hint}: "
                f"{_without_exception_names(text)}", kind, hint)
        hint = ""
        if kind == "client_error" and re.search(r"(?i)unsupported|not support|unrecognized|"
                                                r"unknown (parameter|field)|extra_forbidden", text):
            named = [k for k in (params or {}) if re.search(rf"\b{re.escape(k)}\b", text)]
            if named:
                hint = (f"(to stop sending {named[0]}, pass {PARAMS_FLAGS.get(self.role, '')} "
                        f"{named[0]}=null)")
        return ProviderError(f"{self.role} {self.name}{where}: {kind}{code} after {tries}: "
                             f"{text}{' ' + hint if hint else ''}", kind, hint or None)

    def _cost(self, attempt: Attempt) -> tuple[float, bool]:
        """(USD, priced) for one answer: the user price file first, then LiteLLM's local
        price map (looked up where the call ran: here or in the gateway). Unknown (0.0,
        False) when the provider reported no token usage or no price is known."""
        if not attempt.usage_reported:
            return 0.0, False
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
        self.sent_params: dict[str, Any] | None = None
        """The parameters of this trial's last call as sent (after the user's and the
        model check); None before any call."""
        self._last_key: str | None = None

    @property
    def reasoning(self) -> bool:
        """LiteLLM marks the model as a reasoning model (a suite may raise its limits)."""
        return self.core.reasoning

    def generate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 **params: Any) -> ModelResponse:
        """The next assistant turn for ``messages``.

        Args:
            messages: the conversation so far, OpenAI format.
            tools: tool schemas offered, or None.
            **params: sampling parameters passed to LiteLLM (and into the cache key).

        Returns:
            The assistant message, this call's usage (``cached_calls=1``, zero latency and
            zero cost when answered from the cache) and the provider's ``finish_reason``
            (kept through the cache).

        Raises:
            ProviderError: the provider failed after retries (message redacted).
            ContextWindowExceeded: the provider refused the request for its length.
        """
        info = CallInfo()
        self.sent_params = self.core.check_params(params)["sent"]
        try:
            message, info, self._last_key = self.core.complete(
                messages, tools, params, trial=self.trial, namespace=self.namespace, info=info)
        except (ProviderError, ContextWindowExceeded):
            info.failed = True
            raise
        finally:
            self.calls.append(info)
        return ModelResponse(message, info.usage(), info.finish_reason, info.raw)

    def invalidate_last(self) -> None:
        """Remove this trial's last reply from the response cache (a caller found it
        unusable, e.g. a judge verdict that does not parse), so the next identical call goes
        to the network. No-op without a cache or before any call."""
        if self._last_key is not None and self.core.cache is not None:
            self.core.cache.delete(self._last_key)
        self._last_key = None

    def params_record(self) -> dict[str, Any] | None:
        """``{"sent": {...}, "dropped": {name: reason}}`` for the record (None before any
        call): what the last call sent (a secret-named parameter's value shown as ``***``),
        and what the model refused of the parameters."""
        if self.sent_params is None:
            return None
        return {"sent": mask_secret_params(self.sent_params),
                "dropped": dict(self.core.dropped_params)}

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
        return [c.latency_s for c in self.calls if not c.cached and not c.failed]

    def usage_dict(self) -> dict[str, Any]:
        """The record's usage: ``Usage.to_dict()`` plus ``latencies_s`` (list of seconds),
        ``retries``, ``wait_s`` (backoff and rate-limit seconds), ``uncached_cost_usd`` (USD
        including cache hits at their original price), ``unpriced_calls`` (calls whose cost
        is unknown: no price or no usage reported, cached or not), ``unpriced_network_calls``
        (those of them that went to the network: the paid cost is unknown when > 0),
        ``no_usage_calls`` (the provider reported no token usage) and ``failed_calls``
        (calls that raised; their retries and waits are included)."""
        out = self.usage.to_dict()
        out["latencies_s"] = self.latencies_s
        out["retries"] = sum(c.retries for c in self.calls)
        out["wait_s"] = sum(c.wait_s for c in self.calls)
        done = [c for c in self.calls if not c.failed]
        out["unpriced_calls"] = sum(1 for c in done if not c.priced)
        out["unpriced_network_calls"] = sum(1 for c in done if not c.priced and not c.cached)
        out["no_usage_calls"] = sum(1 for c in done if not c.usage_reported)
        out["failed_calls"] = len(self.calls) - len(done)
        out["uncached_cost_usd"] = sum(c.uncached_cost_usd for c in self.calls)
        return out

    def call_log(self) -> list[dict[str, Any]]:
        """Every call as a plain dict (for the trajectory's ``info``)."""
        return [asdict(c) for c in self.calls]
