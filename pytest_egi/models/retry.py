"""Which provider failures to retry, and how long to wait before the next attempt.

Retried: rate limits (429), server errors (500, 502, 503, 504, 520-529), request timeouts
(408), conflicts/too-early (409, 425), timeouts and dropped connections. Everything else
(400 bad request, 401/403 auth, 404 unknown model, context window exceeded, no API key in
the environment) fails at once.

Waits: a ``Retry-After`` / ``retry-after-ms`` header is honoured (capped) with up to 10 %
extra jitter so that many workers told the same instant do not return together; otherwise
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
            ``timeout``, ``connection``, ``client_error``, ``no_credentials``, ``gateway``,
            ``unknown``).
        status: HTTP status when known.
        retry_after_s: seconds the provider asked us to wait (``Retry-After``), if any.
    """

    retryable: bool
    kind: str
    status: int | None = None
    retry_after_s: float | None = None


def retry_after_seconds(headers: Any, now: float | None = None) -> float | None:
    """Parse ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date) from headers.

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

    ms = get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = get("retry-after")
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


def classify(exc: BaseException) -> Failure:
    """Decide whether a provider exception is worth retrying.

    Works on LiteLLM's exception types (which carry ``status_code`` and the response
    headers), the OpenAI SDK's, httpx's and the builtin ``TimeoutError``/``ConnectionError``.
    """
    names = {cls.__name__ for cls in type(exc).__mro__}
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    retry_after = retry_after_seconds(_headers_of(exc))
    if names & _FATAL_TYPES:
        return Failure(False, "client_error", status, retry_after)
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
    """

    max_retries: int = 6
    base_s: float = 1.0
    max_s: float = 60.0
    retry_after_max_s: float = 300.0

    def delay(self, retry: int, failure: Failure, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0 for the first retry).

        With ``failure.retry_after_s`` set: that value (capped at ``retry_after_max_s``)
        plus 0-10 % jitter; never less than asked. Otherwise ``d = min(max_s,
        base_s * 2**retry)`` and a uniform draw in ``[d/2, d]``.
        """
        r = rng or random
        if failure.retry_after_s is not None:
            wait = min(failure.retry_after_s, self.retry_after_max_s)
            return wait + r.uniform(0.0, 0.1 * wait)
        d = min(self.max_s, self.base_s * (2.0 ** retry))
        return r.uniform(d / 2.0, d)
