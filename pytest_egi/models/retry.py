"""Which provider failures to retry, and how long to wait before the next attempt.

Retried: rate limits (429), server errors (500, 502, 503, 504, 520-529), request timeouts
(408), conflicts/too-early (409, 425), timeouts and dropped connections. A connection that
cannot be made at all (refused, DNS failure, no route) gets a short budget of its own
(:attr:`RetryPolicy.connect_retries`, sub-second waits): it is cheap to detect and, when it
persists, every later call would repeat it. Everything else fails at once: 400 bad request,
401/403 auth, 404 unknown model, no API key in the environment, a quota or billing limit
(``insufficient_quota``, ``billing_hard_limit_reached``, HTTP 402 and their equivalents: a
429 that waiting cannot cure), and a context-window refusal (``context_window``, which the
client raises as :class:`~pytest_egi.models.base.ContextWindowExceeded`).

Waits: a ``Retry-After`` / ``retry-after-ms`` header is honoured (capped) with up to 10 %
extra jitter so that many workers told the same instant do not return together (a LiteLLM
proxy passes the wait on as ``llm_provider-retry-after``, also when its own rpm/tpm limit
refused the request, and that is read too); otherwise
exponential backoff with "equal jitter": ``d = min(max, base * 2**attempt)``, wait uniform in
``[d/2, d]``.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["Failure", "RetryPolicy", "classify", "retry_after_seconds"]

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, *range(520, 530)})
"""HTTP statuses worth another attempt."""

_RETRY_TYPES = frozenset({
    "RateLimitError", "InternalServerError", "ServiceUnavailableError", "BadGatewayError",
    "Timeout", "APITimeoutError", "APIConnectionError", "TimeoutError", "ConnectionError",
    "ConnectError", "ReadTimeout", "ConnectTimeout", "RemoteProtocolError", "ReadError",
})
_FATAL_TYPES = frozenset({
    "AuthenticationError", "PermissionDeniedError", "NotFoundError", "BadRequestError",
    "ContextWindowExceededError", "ContentPolicyViolationError", "UnsupportedParamsError",
    "UnprocessableEntityError", "InvalidRequestError",
})


_QUOTA = re.compile(
    r"(?i)insufficient_quota|billing_hard_limit_reached|billing_not_active|exceeded your current"
    r" quota|check your plan and billing|credit balance is too low|insufficient (credits|balance"
    r"|funds)|out of credits|payment required")
"""A 429 (or 402/400/403) that means the account is out of quota or credit, not busy:
OpenAI's ``insufficient_quota`` / ``billing_hard_limit_reached`` codes and text, Anthropic's
"credit balance is too low", OpenRouter's and DeepSeek's "insufficient credits/balance"
(402). A quota message that also says when to retry (a ``Retry-After`` header, "Please retry
in 32s" as Gemini's per-minute quota does) is a rate limit and is retried."""

_RETRY_IN = re.compile(r"(?i)retry (in|after) [\d.]+ ?(s|sec|seconds)\b")

_CONTEXT_WINDOW = re.compile(
    r"(?i)context_length_exceeded|maximum context length|context[ _]window[ _]exceeded"
    r"|prompt is too long|input is too long for (the )?model")
"""Refusals for length that LiteLLM does not map to ``ContextWindowExceededError`` (an
OpenAI-style body whose ``code`` is ``context_length_exceeded`` with a custom message)."""

_CONNECT_TYPES = frozenset({"ConnectError", "ConnectTimeout", "ConnectionRefusedError",
                            "gaierror", "NameResolutionError", "NewConnectionError"})
"""Exceptions (anywhere in the cause chain) meaning no connection was made: refused, DNS
failure, no route, connect timeout. A connection dropped after it was made is not one."""

_NO_CREDENTIALS = re.compile(
    r"(?i)missing credentials|api_key client option must be set|no api key (was )?(provided|found)"
    r"|missing (an? )?api[ _]key|api[ _]key (is )?(required|not set|missing)")
"""Messages of a call refused for want of a key: retrying cannot help."""


@dataclass(frozen=True)
class Failure:
    """What a failed attempt means for retrying.

    Attributes:
        retryable: worth another attempt.
        kind: short label for messages and counters (``rate_limit``, ``server_error``,
            ``timeout``, ``connection`` (dropped after connecting), ``connect`` (no
            connection could be made), ``quota`` (out of quota or credit),
            ``context_window``, ``client_error``, ``no_credentials``, ``gateway``,
            ``unknown``).
        status: HTTP status when known (None for ``connect``: no HTTP exchange happened).
        retry_after_s: seconds the provider asked us to wait (``Retry-After``), if any.
        detail: a short human reason when the exception's own text is vague (``connect``:
            ``Connection refused``, ``Name or service not known``), else "".
    """

    retryable: bool
    kind: str
    status: int | None = None
    retry_after_s: float | None = None
    detail: str = ""


def retry_after_seconds(headers: Any, now: float | None = None) -> float | None:
    """Parse ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date) from headers.

    A LiteLLM proxy forwards the provider's headers with an ``llm_provider-`` prefix and
    sends its own rate-limit wait (60 s when its rpm/tpm budget for the minute is spent) only
    as ``llm_provider-retry-after``; those are read when the plain headers are absent.

    Args:
        headers: a mapping with case-insensitive ``get`` (httpx ``Headers``) or a plain dict.
        now: the current epoch seconds for date values (default ``time.time()``).

    Returns:
        Seconds to wait (>= 0), or None when absent or unparsable.
    """
    if headers is None:
        return None

    def get(name: str) -> Any:
        try:
            value = headers.get(name)
        except Exception:
            return None
        if value is None and isinstance(headers, dict):
            value = next((v for k, v in headers.items() if str(k).lower() == name), None)
        return value

    for prefix in ("", "llm_provider-"):
        found = _parse_retry_after(get(prefix + "retry-after-ms"), get(prefix + "retry-after"),
                                   now)
        if found is not None:
            return found
    return None


def _parse_retry_after(ms: Any, value: Any, now: float | None) -> float | None:
    """Seconds from a ``retry-after-ms`` value (preferred) or a ``Retry-After`` value
    (seconds or an HTTP date); None when both are absent or unparsable."""
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _headers_of(exc: BaseException) -> Any:
    for attr in ("litellm_response_headers", "headers"):
        headers = getattr(exc, attr, None)
        if headers:
            return headers
    response = getattr(exc, "response", None)
    return getattr(response, "headers", None)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes (``__cause__`` or ``__context__``), outermost first."""
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(out) < 12 and all(current is not x for x in out):
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _error_codes(chain: list[BaseException]) -> str:
    """The ``code`` / ``type`` fields the OpenAI SDK keeps from an error body, joined."""
    parts = []
    for e in chain:
        for attr in ("code", "type"):
            value = getattr(e, attr, None)
            if isinstance(value, str):
                parts.append(value)
        body = getattr(e, "body", None)
        if isinstance(body, dict):
            inner = body.get("error") if isinstance(body.get("error"), dict) else body
            parts += [str(inner.get(k)) for k in ("code", "type") if inner.get(k)]
    return " ".join(parts)


def _connect_detail(chain: list[BaseException]) -> str:
    innermost = chain[-1]
    text = getattr(innermost, "strerror", None) or str(innermost) or type(innermost).__name__
    return str(text).strip()


def classify(exc: BaseException) -> Failure:
    """Decide whether a provider exception is worth retrying.

    Works on LiteLLM's exception types (which carry ``status_code`` and the response
    headers), the OpenAI SDK's, httpx's and the builtin ``TimeoutError``/``ConnectionError``;
    the cause chain is searched too (LiteLLM reports a refused connection as a 500 whose
    cause is httpx's ``ConnectError``, and keeps the error body's ``code`` only there).
    """
    chain = _chain(exc)
    names = {cls.__name__ for cls in type(exc).__mro__}
    chain_names = {cls.__name__ for e in chain for cls in type(e).__mro__}
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    retry_after = retry_after_seconds(_headers_of(exc))
    text = " ".join(str(e) for e in chain)
    codes = _error_codes(chain)
    if "ContextWindowExceededError" in names or _CONTEXT_WINDOW.search(codes) or (
            status in (400, 413, None) and _CONTEXT_WINDOW.search(text)):
        return Failure(False, "context_window", status, None)
    if status == 402 or _QUOTA.search(codes) or (
            (status in (400, 403, 429) or "RateLimitError" in names) and _QUOTA.search(text)):
        if retry_after is None and not _RETRY_IN.search(text):
            return Failure(False, "quota", status, None)
    if names & _FATAL_TYPES:
        return Failure(False, "client_error", status, retry_after)
    if chain_names & _CONNECT_TYPES:
        return Failure(True, "connect", None, None, _connect_detail(chain))
    if _NO_CREDENTIALS.search(str(exc)):
        # the SDK refuses before any request; LiteLLM reports that as a 500
        return Failure(False, "no_credentials", None, None)
    if status == 429 or "RateLimitError" in names:
        return Failure(True, "rate_limit", status or 429, retry_after)
    if names & {"Timeout", "APITimeoutError", "TimeoutError", "ReadTimeout", "ConnectTimeout"}:
        return Failure(True, "timeout", status, retry_after)
    if names & {"APIConnectionError", "ConnectionError", "ConnectError", "RemoteProtocolError",
                "ReadError"}:
        return Failure(True, "connection", status, retry_after)
    if status is not None:
        if status in RETRY_STATUSES:
            return Failure(True, "server_error" if status >= 500 else "transient", status,
                           retry_after)
        return Failure(False, "client_error", status, retry_after)
    if names & _RETRY_TYPES:
        return Failure(True, "server_error", status, retry_after)
    return Failure(False, "unknown", status, retry_after)


@dataclass(frozen=True)
class RetryPolicy:
    """How many retries and how long to wait between them.

    Attributes:
        max_retries: retries after the first attempt (total attempts = max_retries + 1).
        base_s: backoff before the first retry, seconds (doubles each retry).
        max_s: cap of one backoff, seconds.
        retry_after_max_s: cap on an honoured ``Retry-After``, seconds.
        connect_retries: retries of a connection that could not be made (``connect``),
            never more than ``max_retries``; waits start at ``connect_base_s``.
        connect_base_s: the first wait after a failed connect, seconds (doubles, jittered).
    """

    max_retries: int = 6
    base_s: float = 1.0
    max_s: float = 60.0
    retry_after_max_s: float = 300.0
    connect_retries: int = 2
    connect_base_s: float = 0.5

    def allows(self, retry: int, failure: Failure) -> bool:
        """Whether retry number ``retry`` (0 for the first) may follow ``failure``.

        A refused or unresolvable connection gets ``min(connect_retries, max_retries)``
        retries (about 1.5 s in all with the defaults): a provider that cannot be reached
        fails its call within seconds, so a session that cannot reach it stops early instead
        of backing off for minutes per item.
        """
        if not failure.retryable:
            return False
        if failure.kind == "connect":
            return retry < min(self.connect_retries, self.max_retries)
        return retry < self.max_retries

    def delay(self, retry: int, failure: Failure, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0 for the first retry).

        With ``failure.retry_after_s`` set: that value (capped at ``retry_after_max_s``)
        plus 0-10 % jitter; never less than asked. Otherwise ``d = min(max_s,
        base_s * 2**retry)`` and a uniform draw in ``[d/2, d]``.
        """
        r = rng or random
        if failure.kind == "connect":
            d = min(self.max_s, self.connect_base_s * (2.0 ** retry))
            return r.uniform(d / 2.0, d)
        if failure.retry_after_s is not None:
            wait = min(failure.retry_after_s, self.retry_after_max_s)
            return wait + r.uniform(0.0, 0.1 * wait)
        d = min(self.max_s, self.base_s * (2.0 ** retry))
        return r.uniform(d / 2.0, d)
