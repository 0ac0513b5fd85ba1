"""Shared fixtures for the plugin's own tests."""

from __future__ import annotations

# C extensions cannot be imported twice in one process; pytester's in-process runs drop
# modules first imported inside them, so import the ones the suites use up front.
import bm25s  # noqa: F401, E402

# litellm imports the importlib_metadata backport, which deletes the stdlib PathFinder's
# find_distributions and appends its own finder to sys.meta_path. pytester restores
# sys.meta_path after each in-process run, which would then leave no distribution finder at
# all (entry-point plugins, pytest-egi included, silently stop loading). Importing the
# backport here makes its finder part of every snapshot.
import importlib_metadata  # noqa: F401, E402
import numpy  # noqa: F401, E402

# The plugin imports pydantic only for a configured run, so the first in-process run would
# import it and pytester would drop it afterwards, while the plugin's cached suite objects
# keep models of the old pydantic: a later run's isinstance(x, BaseModel) would be False.
import pydantic  # noqa: F401, E402
import pytest

from tests.toy_project import make_toy_project


@pytest.fixture
def toy_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester project with the toy suite and a small routing.yaml."""
    make_toy_project(pytester)
    return pytester
