"""Fixtures every Benchforce test module shares."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", autouse=True)
def _stop_shared_server():
    """The process's shared environment server (started by ``run_trial``) stops after each
    module, so no module leaves a server behind."""
    yield
    from suites.benchforce.env.client import stop_servers

    stop_servers()
