"""Fixtures for the provider-layer tests: a local OpenAI-compatible server and a planted key."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_egi.models.settings import ProviderSettings
from tests.helpers.openai_server import OpenAIServer

PLANTED_KEY = "sk-egi-PLANTED-0123456789abcdefXYZ"
"""A fake OpenAI key: it must never show up in an error, a cache file or a report."""
PLANTED_SECRET = "plainsecretvalue4242"
"""A secret with no recognisable key shape: only its variable name marks it."""

MODEL = "openai/test-model"


@pytest.fixture(scope="session", autouse=True)
def _litellm_imported() -> None:
    """Import LiteLLM once, before any test times a call (its ~3 s import is no latency).

    Also keeps pytester's in-process runs safe: they drop every module first imported during
    the run, which would leave LiteLLM half-unloaded for the next run."""
    from pytest_egi.models.transport import import_litellm

    import_litellm()


REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _subprocesses_import_this_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """``runpytest_subprocess`` (and the gateway it starts) import ``pytest_egi`` from this
    checkout, not from wherever the package happens to be installed."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p))


@pytest.fixture
def planted_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """Set ``OPENAI_API_KEY`` (and a shapeless ``EGI_TEST_SECRET``) for the test."""
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED_KEY)
    monkeypatch.setenv("EGI_TEST_SECRET", PLANTED_SECRET)
    return PLANTED_KEY


@pytest.fixture
def server(planted_key: str) -> Iterator[OpenAIServer]:
    """A started local server (no latency, no injected errors)."""
    with OpenAIServer() as srv:
        yield srv


@pytest.fixture(params=["in_process", "gateway"])
def transport(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """Each client test runs twice: LiteLLM in this process, and through a model gateway
    (served by a thread of this process, so it sees the test's environment); yields the
    gateway socket path or None."""
    if request.param == "in_process":
        yield None
        return
    import tempfile

    from pytest_egi.models.gateway import make_server

    directory = tempfile.mkdtemp(prefix="egi-gw-test-")  # short: Unix socket paths are limited
    path = str(Path(directory) / "gw.sock")
    gateway = make_server(path)
    thread = threading.Thread(target=gateway.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield path
    finally:
        gateway.shutdown()
        gateway.server_close()
        thread.join(5)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def make_settings(tmp_path: Path, transport: str | None) -> Callable[..., ProviderSettings]:
    """``make_settings(server, **overrides)``: settings with fast backoff and a tmp cache,
    over the transport of the ``transport`` parameter."""

    def make(srv: OpenAIServer | None = None, **overrides: Any) -> ProviderSettings:
        values: dict[str, Any] = {
            "api_base": srv.url if srv else None,
            "timeout_s": 5.0,
            "max_retries": 3,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.05,
            "cache_dir": tmp_path / "cache",
            "state_dir": tmp_path / "state",
            "gateway": transport,
        }
        values.update(overrides)
        return ProviderSettings(**values)

    return make
