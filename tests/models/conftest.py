"""Fixtures for the provider-layer tests: a local OpenAI-compatible server and a planted key."""

from __future__ import annotations

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


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., ProviderSettings]:
    """``make_settings(server, **overrides)``: settings with fast backoff and a tmp cache."""

    def make(srv: OpenAIServer | None = None, **overrides: Any) -> ProviderSettings:
        values: dict[str, Any] = {
            "api_base": srv.url if srv else None,
            "timeout_s": 5.0,
            "max_retries": 3,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.05,
            "cache_dir": tmp_path / "cache",
            "state_dir": tmp_path / "state",
        }
        values.update(overrides)
        return ProviderSettings(**values)

    return make
