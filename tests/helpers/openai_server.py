"""A local OpenAI-compatible chat-completions server for tests and benchmarks.

Stdlib only (``http.server``), threaded, bound to ``127.0.0.1`` on a free port. It speaks
``POST /v1/chat/completions``, ``GET /v1/models``, ``GET /stats`` (request and injected-
error counts, first and last arrival, for out-of-process use) and ``POST /reset``, and can
be scripted to misbehave:

* a reply queue (:meth:`OpenAIServer.enqueue`) or a reply function
  ``(request_json) -> Reply | dict`` decides each answer; otherwise it echoes the last user
  message, deterministically;
* ``latency`` seconds of delay before every answer;
* ``error_rate``: that share of completion requests (seeded) answers 429 or 500 instead;
* :func:`error_reply` (any status, optional ``Retry-After`` and error ``code``),
  :func:`quota_reply` (429 ``insufficient_quota``), :func:`context_window_reply` (400
  ``context_length_exceeded``), :func:`error_body_reply` (200 with an error body),
  :func:`drop` (close the connection without a response) and :func:`hang` (answer nothing
  for a while); :func:`chat_reply` can set ``finish_reason`` or leave ``usage`` out;
* a request log (:attr:`OpenAIServer.requests`: path, headers, JSON body, monotonic time),
  so a test can assert zero requests on a cache hit or that a key never leaked.

Use as a context manager::

    with OpenAIServer() as server:
        server.enqueue(chat_reply("hi"))
        ... api_base=server.url ...
        assert server.count == 1

or as a script for the benchmarks::

    python -m tests.helpers.openai_server --port 8765 --latency 0.3 --error-rate 0.1
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "OpenAIServer",
    "RecordedRequest",
    "Reply",
    "chat_reply",
    "context_window_reply",
    "drop",
    "echo_reply",
    "error_body_reply",
    "error_reply",
    "hang",
    "quota_reply",
    "tool_reply",
]


@dataclass
class Reply:
    """One scripted answer.

    Attributes:
        status: HTTP status code.
        body: JSON body (dict), or None for an empty body.
        headers: extra response headers (e.g. ``{"Retry-After": "1"}``).
        action: ``"respond"`` (normal), ``"drop"`` (close the socket without answering) or
            ``"hang"`` (sleep ``hang_s`` seconds, then close without answering).
        hang_s: seconds to hang for ``action="hang"``.
        delay_s: extra seconds before answering (added to the server latency).
    """

    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    action: str = "respond"
    hang_s: float = 0.0
    delay_s: float = 0.0


@dataclass
class RecordedRequest:
    """One request as the server saw it (``t`` is ``time.monotonic()`` on arrival)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    t: float


def _completion(message: dict[str, Any], model: str, prompt_tokens: int, completion_tokens: int,
                finish_reason: str = "stop", choices: list | None = None,
                usage: bool = True) -> dict[str, Any]:
    body = {
        "id": "chatcmpl-" + hashlib.sha1(json.dumps(message, sort_keys=True).encode()).hexdigest()[:12],
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": choices if choices is not None else [
            {"index": 0, "message": message, "finish_reason": finish_reason}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    if not usage:
        del body["usage"]
    return body


def chat_reply(content: str | None = "ok", *, tool_calls: list[dict[str, Any]] | None = None,
               model: str = "test-model", prompt_tokens: int = 10, completion_tokens: int = 5,
               empty_choices: bool = False, finish_reason: str | None = None,
               usage: bool = True) -> Reply:
    """A 200 chat completion with ``content`` and/or ``tool_calls`` (OpenAI wire format).

    ``empty_choices=True`` answers ``"choices": []`` (a malformed but well-formed-JSON reply);
    ``finish_reason`` overrides the default (``tool_calls`` or ``stop``), e.g. ``"length"``;
    ``usage=False`` leaves the ``usage`` object out (a provider that reports none).
    """
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    finish = finish_reason or ("tool_calls" if tool_calls else "stop")
    body = _completion(message, model, prompt_tokens, completion_tokens, finish,
                       [] if empty_choices else None, usage)
    return Reply(200, body)


def tool_reply(name: str, arguments: str, *, call_id: str = "call_1", **kw: Any) -> Reply:
    """A 200 reply with one tool call; ``arguments`` is sent verbatim (it may be bad JSON)."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    return chat_reply(None, tool_calls=[call], **kw)


def error_reply(status: int, message: str = "", *, retry_after: float | str | None = None,
                err_type: str | None = None, code: str | None = None) -> Reply:
    """An OpenAI-style error body ``{"error": {"message", "type", "code"}}`` with ``status``.

    Args:
        status: HTTP status (429, 500, 503, 401, ...).
        message: the provider's message (default: a stock one per status).
        retry_after: value of the ``Retry-After`` header (seconds or an HTTP date), if any.
        err_type: the error ``type`` field.
        code: the error ``code`` field (default: the status as text), e.g.
            ``insufficient_quota`` or ``context_length_exceeded``.
    """
    message = message or {429: "Rate limit reached for test-model", 500: "Internal server error",
                          503: "Service unavailable"}.get(status, f"HTTP {status}")
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    body = {"error": {"message": message, "type": err_type or ("rate_limit_error" if status == 429
                                                                else "server_error"),
                      "param": None, "code": code or str(status)}}
    return Reply(status, body, headers)


def quota_reply() -> Reply:
    """OpenAI's out-of-quota answer: a 429 whose ``code`` is ``insufficient_quota``."""
    return error_reply(429, "You exceeded your current quota, please check your plan and "
                            "billing details.", err_type="insufficient_quota",
                       code="insufficient_quota")


def context_window_reply(message: str = "Input too long for this deployment.") -> Reply:
    """A 400 whose ``code`` is ``context_length_exceeded`` (the message need not say so)."""
    return error_reply(400, message, err_type="invalid_request_error",
                       code="context_length_exceeded")


def error_body_reply(message: str = "upstream failed") -> Reply:
    """A 200 whose body is an error object and no completion (some proxies answer so)."""
    return Reply(200, {"error": {"message": message, "type": "server_error", "code": 500}})


def drop() -> Reply:
    """Close the connection without sending a response."""
    return Reply(action="drop")


def hang(seconds: float) -> Reply:
    """Send nothing for ``seconds``, then close the connection (the client should time out)."""
    return Reply(action="hang", hang_s=seconds)


def echo_reply(request: dict[str, Any]) -> Reply:
    """Deterministic default: echo the last user message; tokens ~ characters / 4."""
    messages = request.get("messages") or []
    last = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    text = last.get("content") if isinstance(last.get("content"), str) else json.dumps(last)
    prompt_chars = len(json.dumps(messages))
    content = f"echo: {text}"
    return chat_reply(content, model=str(request.get("model", "test-model")),
                      prompt_tokens=max(1, prompt_chars // 4),
                      completion_tokens=max(1, len(content) // 4))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: avoid 40 ms stalls
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _send(self, reply: Reply) -> None:
        data = b"" if reply.body is None else json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in reply.headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _abort(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        owner = self.server.owner
        owner._record("GET", self.path, dict(self.headers), None, b"")
        if self.path.rstrip("/") == "/stats":
            self._send(Reply(200, owner.stats()))
        elif self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(Reply(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "local"}
                for m in owner.models]}))
        else:
            self._send(Reply(404, {"error": {"message": f"no route {self.path}"}}))

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        owner = self.server.owner
        if self.path.rstrip("/") == "/reset":
            owner.reset()
            self._send(Reply(200, {"ok": True}))
            return
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        owner._record("POST", self.path, dict(self.headers), body, raw)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(Reply(404, {"error": {"message": f"no route {self.path}"}}))
            return
        reply = owner._next_reply(body if isinstance(body, dict) else {})
        wait = owner.latency + reply.delay_s
        if wait > 0:
            owner._stop.wait(wait)
        if reply.action == "drop":
            self._abort()
        elif reply.action == "hang":
            owner._stop.wait(reply.hang_s)
            self._abort()
        else:
            self._send(reply)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    owner: OpenAIServer


class OpenAIServer:
    """A threaded OpenAI-compatible server on 127.0.0.1 (see the module docstring).

    Args:
        replies: initial reply queue, consumed first-in first-out.
        reply_fn: ``(request_json) -> Reply | dict`` used when the queue is empty (a dict is
            sent as a 200 body); default :func:`echo_reply`.
        latency: seconds to wait before every completion answer.
        error_rate: share in [0, 1] of completion requests (after the queue) that answer an
            injected error instead, drawn from ``random.Random(seed)``.
        error_statuses: statuses the injected errors cycle through at random.
        retry_after: ``Retry-After`` seconds sent with injected 429s (None: no header).
        seed: seed of the error draw.
        port: port to bind (0 = a free one).
        models: ids listed by ``GET /v1/models``.
    """

    def __init__(self, replies: list[Reply] | None = None, *,
                 reply_fn: Callable[[dict[str, Any]], Reply | dict[str, Any]] | None = None,
                 latency: float = 0.0, error_rate: float = 0.0,
                 error_statuses: tuple[int, ...] = (429, 500), retry_after: float | None = None,
                 seed: int = 0, port: int = 0, models: tuple[str, ...] = ("test-model",)) -> None:
        self._queue: deque[Reply] = deque(replies or [])
        self.reply_fn = reply_fn
        self.latency = latency
        self.error_rate = error_rate
        self.error_statuses = error_statuses
        self.retry_after = retry_after
        self.models = models
        self.requests: list[RecordedRequest] = []
        self.injected_errors = 0
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = _Server(("127.0.0.1", port), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    # -- lifecycle
    @property
    def port(self) -> int:
        """The bound TCP port."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The API base to give a client: ``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> OpenAIServer:
        """Serve in a background daemon thread; returns self."""
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port (hanging handlers are woken)."""
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- scripting
    def enqueue(self, *replies: Reply) -> None:
        """Append replies to the queue (answered before ``reply_fn`` / injected errors)."""
        with self._lock:
            self._queue.extend(replies)

    def reset(self) -> None:
        """Forget the request log and the queue."""
        with self._lock:
            self.requests.clear()
            self._queue.clear()
            self.injected_errors = 0

    # -- inspection
    @property
    def completions(self) -> list[RecordedRequest]:
        """The chat-completion requests received, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    @property
    def count(self) -> int:
        """How many chat-completion requests arrived."""
        return len(self.completions)

    def stats(self) -> dict[str, Any]:
        """``{"completions": n, "injected_errors": k, "first_t": t0, "last_t": t1,
        "latency_s": latency}`` (also served at ``GET /stats``; ``POST /reset`` calls
        :meth:`reset`): ``first_t``/``last_t`` are the ``time.monotonic()`` arrival
        times of the first and last completion request (None before any), comparable with
        other processes' ``time.monotonic()`` on the same machine."""
        done = self.completions
        return {"completions": len(done), "injected_errors": self.injected_errors,
                "first_t": done[0].t if done else None, "last_t": done[-1].t if done else None,
                "latency_s": self.latency}

    def all_text(self) -> str:
        """Every request's headers and raw body, concatenated (to search for a leaked key)."""
        with self._lock:
            return "\n".join(json.dumps(r.headers) + "\n" + r.raw.decode("utf-8", "replace")
                             for r in self.requests)

    # -- internals
    def _record(self, method: str, path: str, headers: dict[str, str], body: Any,
                raw: bytes) -> None:
        with self._lock:
            self.requests.append(RecordedRequest(method, path, headers, body, raw, time.monotonic()))

    def _next_reply(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            inject = self.error_rate > 0 and self._rng.random() < self.error_rate
            status = self._rng.choice(self.error_statuses) if inject else 0
            if inject:
                self.injected_errors += 1
        if inject:
            return error_reply(status, retry_after=self.retry_after if status == 429 else None)
        out = (self.reply_fn or echo_reply)(request)
        return out if isinstance(out, Reply) else Reply(200, out)


def main(argv: list[str] | None = None) -> None:
    """Run the server in the foreground until interrupted (prints its URL first)."""
    ap = argparse.ArgumentParser(description="Local OpenAI-compatible test server")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    ap.add_argument("--error-rate", type=float, default=0.0, help="share of 429/500 answers")
    ap.add_argument("--retry-after", type=float, default=None, help="Retry-After on 429s")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    server = OpenAIServer(latency=args.latency, error_rate=args.error_rate,
                          retry_after=args.retry_after, seed=args.seed, port=args.port)
    server.start()
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
