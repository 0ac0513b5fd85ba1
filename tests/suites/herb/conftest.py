"""Shared fixtures for the HERB suite tests: the default world, quick tasks, reference runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_egi.scoring.config import load_routing
from pytest_egi.suite import SuiteProfile, Task, TaskScore
from suites.herb import SUITE, HerbOptions
from suites.herb.data import World
from suites.herb.data.generator import generate_world
from suites.herb.env import HerbEnv, get_env
from tests.suites.herb.helpers import MODELS, run


@pytest.fixture(scope="session")
def opts() -> HerbOptions:
    return HerbOptions()


@pytest.fixture(scope="session")
def world(opts: HerbOptions) -> World:
    return SUITE.world(42, opts)


ROUTING = Path(__file__).resolve().parents[3] / "routing.yaml"


@pytest.fixture(scope="session")
def quick_profile() -> SuiteProfile:
    """routing.yaml's quick profile of HERB (the one ``--egi-mode quick`` runs)."""
    return load_routing(ROUTING)[0].profile("quick", "herb")


@pytest.fixture(scope="session")
def quick_tasks(opts: HerbOptions, quick_profile: SuiteProfile) -> list[Task]:
    return SUITE.load_tasks(quick_profile, opts)


@pytest.fixture(scope="session")
def env(opts: HerbOptions, quick_tasks: list[Task]) -> HerbEnv:
    return get_env(quick_tasks[0].data["world"], opts)


@pytest.fixture(scope="session")
def small_world() -> World:
    return generate_world(seed=5, products=2)


@pytest.fixture(scope="session")
def quick_runs(quick_tasks: list[Task], opts: HerbOptions) -> dict[str, list[tuple[Task, TaskScore]]]:
    """Every quick task under each reference policy (computed once per session)."""
    return {m: [(t, run(m, t, opts)[1]) for t in quick_tasks] for m in MODELS}
