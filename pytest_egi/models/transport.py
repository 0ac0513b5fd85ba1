"""How one attempt of a chat completion reaches LiteLLM: in this process, or through the gateway.

:class:`InProcessTransport` calls ``litellm.completion`` here (serial runs; the gateway
itself). :class:`GatewayTransport` sends the same call to the session's gateway process
(:mod:`pytest_egi.models.gateway`) over a local socket, so that pytest-xdist workers do not
each import LiteLLM (about 3 s of CPU per process) and do not each pay its per-call CPU.

Both return an :class:`Attempt`: the assistant message, token counts and LiteLLM's price, or
the failure (classified for retrying, text already redacted). Retries, the response cache, the
rate limiter and usage stay in :class:`~pytest_egi.models.litellm_client.LiteLLMClient`, in
the worker, and work the same over either transport.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from pytest_egi.models.base import ProviderError, assistant_message
from pytest_egi.models.retry import Failure, classify
from pytest_egi.models.secrets import redact, register_secrets, secret_param_values

__all__ = ["Attempt", "GatewayTransport", "InProcessTransport", "Transport", "finish_reason_of",
           "import_litellm", "to_message"]

_IMPORT_LOCK = threading.Lock()
_WARMED = False


def import_litellm() -> Any:
    """Import litellm with the local cost map (no network at import), quietly, and warm it.

    LiteLLM imports a further ~0.7 s of modules on its first completion; one offline
    ``mock_response`` call here pays that once per process, before any call is timed, so the
    first real call's latency is not inflated.

    Raises:
        ProviderError: litellm is not installed.
    """
    global _WARMED
    with _IMPORT_LOCK:
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        try:
            import litellm
        except ImportError as exc:  # pragma: no cover - litellm is a dependency
            raise ProviderError(f"litellm is not installed ({exc}); pip install pytest-egi") from None
        litellm.telemetry = False
        litellm.suppress_debug_info = True
        if not _WARMED:
            _WARMED = True
            try:
                litellm.completion(
                    model="openai/egi-warm-up", messages=[{"role": "user", "content": "."}],
                    mock_response=".", api_key="offline", max_retries=0)
            except Exception:  # noqa: BLE001 - warming is an optimisation only
                pass
    return litellm


def to_message(response: Any) -> dict[str, Any]:
    """A LiteLLM ``ModelResponse`` as one OpenAI-format assistant message (plain dict).

    A malformed answer stays the model's own: empty ``choices`` gives ``content=None``; tool
    call names and argument strings pass through raw for the scaffold to judge.
    """
    choices = getattr(response, "choices", None) or []
    msg = getattr(choices[0], "message", None) if choices else None
    if msg is None:
        return assistant_message(None)
    tool_calls = []
    for i, tc in enumerate(getattr(msg, "tool_calls", None) or []):
        fn = getattr(tc, "function", None)
        tool_calls.append({
            "id": getattr(tc, "id", None) or f"call_{i}",
            "type": "function",
            "function": {"name": getattr(fn, "name", None) or "",
                         "arguments": getattr(fn, "arguments", None) or ""},
        })
    content = getattr(msg, "content", None)
    return assistant_message(content if content is None else str(content), tool_calls or None)


def finish_reason_of(response: Any) -> str | None:
    """The first choice's ``finish_reason`` (``stop``, ``length``, ``tool_calls``, ...), or
    None when the response has no choices or the provider gave none."""
    choices = getattr(response, "choices", None) or []
    reason = getattr(choices[0], "finish_reason", None) if choices else None
    return str(reason) if reason else None


@dataclass
class Attempt:
    """The outcome of one request to the provider.

    Attributes:
        message: the assistant message (OpenAI format), or None when the attempt failed.
        prompt_tokens, completion_tokens, total_tokens: as reported by the provider.
        litellm_cost_usd: USD for this answer from LiteLLM's local price map, or None when
            the model is not in it.
        failure: how the attempt failed (None on success).
        error_text: ``ExceptionType: message`` with every secret redacted ("" on success).
        finish_reason: the provider's ``finish_reason`` of the first choice, or None.
        usable: the reply had at least one choice (False: an empty ``choices`` list; the
            message is then ``content=None`` and the reply must not be cached).
        usage_reported: the provider reported token usage (False: no or all-zero usage, so
            tokens and cost of this call are unknown).
    """

    message: dict[str, Any] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    litellm_cost_usd: float | None = None
    failure: Failure | None = None
    error_text: str = ""
    finish_reason: str | None = None
    usable: bool = True
    usage_reported: bool = True

    def to_wire(self) -> dict[str, Any]:
        """This attempt as JSON-ready builtins (the gateway's answer)."""
        out = asdict(self)
        out["failure"] = asdict(self.failure) if self.failure is not None else None
        return out

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Attempt:
        """Inverse of :meth:`to_wire`."""
        failure = data.get("failure")
        return cls(**{**data, "failure": Failure(**failure) if failure else None})


class Transport(Protocol):
    """Sends one completion request; never raises for a provider failure (see Attempt)."""

    def attempt(self, kwargs: dict[str, Any]) -> Attempt:
        """One request with ``litellm.completion(**kwargs)`` semantics."""
        ...

    def warm(self) -> None:
        """Make LiteLLM ready (import it, or wait for the gateway's import), so that the
        first attempt's measured latency is the provider's alone."""
        ...

    def check_params(self, model: str, params: dict[str, Any]) -> dict[str, Any]:
        """:func:`pytest_egi.models.params.check_params` where LiteLLM lives."""
        ...


class InProcessTransport:
    """Calls ``litellm.completion`` in this process (imported on first use)."""

    def __init__(self) -> None:
        self._unpriced: set[str] = set()

    def warm(self) -> None:
        """Import LiteLLM now (see :func:`import_litellm`)."""
        import_litellm()

    def check_params(self, model: str, params: dict[str, Any]) -> dict[str, Any]:
        """Which ``params`` the model accepts (:func:`pytest_egi.models.params.check_params`)."""
        from pytest_egi.models.params import check_params

        return check_params(import_litellm(), model, params)

    def attempt(self, kwargs: dict[str, Any]) -> Attempt:
        """One request; provider exceptions become a failed :class:`Attempt`.

        Raises:
            ProviderError: litellm is not installed.
        """
        litellm = import_litellm()
        # a key given as a parameter (api_key=...) is redacted from what the provider echoes,
        # here too (the gateway process builds no settings of its own)
        register_secrets(secret_param_values({k: v for k, v in kwargs.items()
                                              if k not in ("messages", "tools")}))
        try:
            response = litellm.completion(**kwargs)
        except Exception as exc:  # litellm maps provider errors to its own types
            # keep only a redacted text: the exception (whose message may hold a key) must
            # not outlive this block, where a traceback would show it
            failure = classify(exc)
            text = f"{type(exc).__name__}: {exc}"
            if failure.kind == "connect":
                text = f"connection failed: {failure.detail}"
            return Attempt(failure=failure, error_text=redact(text))
        usage = getattr(response, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        reported = usage is not None and (prompt > 0 or completion > 0)
        return Attempt(
            message=to_message(response), prompt_tokens=prompt, completion_tokens=completion,
            total_tokens=int(getattr(usage, "total_tokens", 0) or 0),
            litellm_cost_usd=(self._price(litellm, kwargs["model"], prompt, completion)
                              if reported else None),
            finish_reason=finish_reason_of(response),
            usable=bool(getattr(response, "choices", None)), usage_reported=reported)

    def _price(self, litellm: Any, model: str, prompt: int, completion: int) -> float | None:
        if model in self._unpriced:
            return None
        try:
            cost_in, cost_out = litellm.cost_per_token(
                model=model, prompt_tokens=prompt, completion_tokens=completion)
        except Exception:  # not in the price map: remember, the lookup is not free
            self._unpriced.add(model)
            return None
        return float(cost_in) + float(cost_out)


class GatewayTransport:
    """Sends each request to the session's gateway over its Unix socket.

    One connection per thread, opened on first use and reopened once if the gateway closed
    it. The socket timeout is the call timeout plus 60 s, so the provider's own timeout (run
    in the gateway) fires first.

    Args:
        socket_path: the gateway's socket (``node.workerinput["egi_gateway"]``).
        timeout_s: the per-call timeout in seconds.
    """

    def __init__(self, socket_path: str, timeout_s: float) -> None:
        self.socket_path = socket_path
        self.timeout_s = timeout_s
        self._local = threading.local()

    def attempt(self, kwargs: dict[str, Any]) -> Attempt:
        """One request through the gateway.

        Raises:
            ProviderError: the gateway cannot be reached or answered nonsense (an infra
                failure: the item is an error).
        """
        line = json.dumps({"op": "complete", "kwargs": kwargs}, separators=(",", ":")) + "\n"
        return Attempt.from_wire(self._exchange(line.encode()))

    def warm(self) -> None:
        """Wait until the gateway has imported LiteLLM (at most the call timeout)."""
        self.request({"op": "ping", "wait_s": self.timeout_s})

    def check_params(self, model: str, params: dict[str, Any]) -> dict[str, Any]:
        """Ask the gateway which ``params`` the model accepts (LiteLLM lives there).

        Raises:
            ProviderError: the gateway cannot be reached or answered nonsense.
        """
        answer = self.request({"op": "params", "model": model, "params": params})
        if not isinstance(answer, dict) or "sent" not in answer:
            raise ProviderError(f"model gateway at {self.socket_path}: bad answer to a "
                                f"parameter check: {str(answer)[:200]}")
        return answer

    def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Send any gateway request (e.g. ``{"op": "ping"}``); returns its JSON answer."""
        return self._exchange((json.dumps(payload) + "\n").encode())

    def _exchange(self, data: bytes) -> dict[str, Any]:
        last: Exception | None = None
        for _ in range(2):  # a connection the gateway dropped between calls is reopened once
            conn = getattr(self._local, "conn", None)
            try:
                if conn is None:
                    conn = self._connect()
                sock, reader = conn
                sock.sendall(data)
                answer = reader.readline()
                if not answer:
                    raise ConnectionError("the gateway closed the connection")
                return json.loads(answer)
            except (OSError, ValueError) as exc:
                last = exc
                self.close()
                if isinstance(exc, TimeoutError):  # no answer in time: asking again won't help
                    break
        raise ProviderError(
            f"model gateway at {self.socket_path} failed: {type(last).__name__}: {last} "
            "(the gateway process is gone or overloaded; run with --egi-gateway off to call "
            "the provider from each worker)")

    def _connect(self) -> tuple[socket.socket, Any]:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout_s + 60.0)
        sock.connect(self.socket_path)
        conn = (sock, sock.makefile("rb"))
        self._local.conn = conn
        return conn

    def close(self) -> None:
        """Close this thread's connection (the next request reconnects)."""
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            for part in reversed(conn):
                try:
                    part.close()
                except OSError:
                    pass
