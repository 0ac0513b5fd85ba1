"""Shared fixtures for the plugin's own tests."""

from __future__ import annotations

import pytest

from tests.toy_project import make_toy_project


@pytest.fixture
def toy_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester project with the toy suite and a small routing.yaml."""
    make_toy_project(pytester)
    return pytester
