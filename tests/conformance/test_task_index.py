"""The ``task_index`` contract (``pytest_egi.suite.Suite.task_index``) for every suite under
``suites/`` that defines it: on the suite's generated data the index is exactly the
``(id, category)`` of what ``load_tasks`` returns, in order, for the ``quick`` and ``deep``
profiles of ``routing.yaml`` and variants of them (another seed, a subset of the categories
in another order, ``per_category``, ``limit``), told in CPU milliseconds; and it is None when
the options name the user's own data (the core then loads as before).

Loads are made once per (suite, profile) in this module (a deep load takes seconds).
"""

from __future__ import annotations

import functools
import gc
import time
from typing import Any

import pytest

from pytest_egi.scoring.config import load_routing
from pytest_egi.suite import SuiteProfile, load_suite
from tests.conformance.checks import ROOT, discover_suites

ROUTING, _ = load_routing(ROOT / "routing.yaml")
INDEXED = [n for n in discover_suites() if callable(getattr(load_suite(f"suites.{n}"), "task_index", None))]
"""The suites that define ``task_index``."""

EXPECTED_INDEXED = {
    "benchforce", "crmarena", "herb", "locobench", "mcp_universe", "mcpeval", "personabench", "userbench",
}
"""Suites whose cold load is not cheap and whose ids can be told without generating."""

USER_DATA = {
    "benchforce": {"data_dir": "upstream"},
    "crmarena": {"tasks": "tasks.json"},
    "herb": {"corpus": "corpus"},
    "locobench": {"scenarios": "scenarios"},
    "mcp_universe": {"task_dir": "tasks"},
    "mcpeval": {"tasks": "tasks.jsonl"},
    "personabench": {"data_dir": "release"},
    "userbench": {"data_dir": "upstream"},
}
"""An option naming the user's data, per suite (the path need not exist: the index must not
read it)."""

VARIANTS = ("quick", "deep", "seed", "categories", "per_category", "limit")
INDEX_CPU_S = 0.1
"""The most CPU an index may take: milliseconds are the point (PersonaBench's, the dearest,
draws its people's questions: about 10 ms; a world build takes far more)."""


def _profile(name: str, variant: str) -> SuiteProfile:
    """The profile of ``variant`` for suite ``name``: quick, deep, or one of them changed."""
    quick, deep = ROUTING.profile("quick", name), ROUTING.profile("deep", name)
    suite = load_suite(f"suites.{name}")

    def changed(base: SuiteProfile, **update: Any) -> SuiteProfile:
        return SuiteProfile(**{**base.model_dump(), **update})

    if variant == "quick":
        return quick
    if variant == "deep":
        return deep
    if variant == "seed":
        return changed(quick, seed=quick.seed + 7)
    if variant == "categories":  # a subset, named out of the suite's order, all of each
        return changed(quick, categories=list(suite.categories)[1:3][::-1], limit=None)
    if variant == "per_category":
        return changed(deep, per_category=3)
    if variant == "limit":
        return changed(quick, limit=11, seed=quick.seed + 1)
    raise AssertionError(variant)


@functools.cache
def _loaded(name: str, variant: str) -> list[tuple[str, str]]:
    suite = load_suite(f"suites.{name}")
    tasks = suite.load_tasks(_profile(name, variant), suite.options_model())
    return [(t.id, t.category) for t in tasks]


def test_the_suites_with_costly_loads_define_task_index():
    assert EXPECTED_INDEXED <= set(INDEXED)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", INDEXED)
def test_index_is_the_loaded_ids_and_categories_in_order(name: str, variant: str):
    suite = load_suite(f"suites.{name}")
    profile = _profile(name, variant)
    gc.collect()  # the loads before this one hold worlds a collection pass would walk: not its cost
    gc.disable()
    try:
        start = time.process_time()
        index = suite.task_index(profile, suite.options_model())
        spent = time.process_time() - start
    finally:
        gc.enable()
    loaded = _loaded(name, variant)
    assert loaded, f"{name} {variant}: the profile loads no task, so it checks nothing"
    assert index is not None, f"{name} {variant}: no index for the suite's own generated data"
    pairs = enumerate(zip(index, loaded, strict=False))
    first = next((i for i, (a, b) in pairs if a != b), min(len(index), len(loaded)))
    assert index == loaded, (
        f"{name} {variant}: index ({len(index)}) and load_tasks ({len(loaded)}) differ first at "
        f"{first}: {index[first:first + 2]} vs {loaded[first:first + 2]}"
    )
    assert spent < INDEX_CPU_S, f"{name} {variant}: task_index took {spent:.3f} s CPU"


def test_the_variants_differ_from_the_profiles_they_change():
    """Each variant changes what is loaded (so it tests the key it changes)."""
    for name in sorted(EXPECTED_INDEXED & set(INDEXED)):
        suite = load_suite(f"suites.{name}")
        quick = suite.task_index(_profile(name, "quick"), suite.options_model())
        deep = suite.task_index(_profile(name, "deep"), suite.options_model())
        for variant, base in (("categories", quick), ("per_category", deep), ("limit", quick)):
            assert suite.task_index(_profile(name, variant), suite.options_model()) != base, (name, variant)


@pytest.mark.parametrize("name", sorted(USER_DATA))
def test_user_data_has_no_index(name: str, tmp_path):
    suite = load_suite(f"suites.{name}")
    options = suite.options_model.model_validate({k: str(tmp_path / v) for k, v in USER_DATA[name].items()})
    assert suite.task_index(ROUTING.profile("quick", name), options) is None
    # the same profile without the user's data is told
    assert suite.task_index(ROUTING.profile("quick", name), suite.options_model())


@pytest.mark.parametrize("products", [1, 7])
def test_herb_index_follows_the_products_option(products: int):
    suite = load_suite("suites.herb")
    options = suite.options_model(products=products)
    for mode in ("quick", "deep"):
        profile = ROUTING.profile(mode, "herb")
        index = suite.task_index(profile, options)
        assert index == [(t.id, t.category) for t in suite.load_tasks(profile, options)], (products, mode)
    assert len(suite.task_index(ROUTING.profile("deep", "herb"), options)) < 1514  # the 30-product world's


def test_crmarena_user_org_and_draws_it_is_not_sized_for_have_no_index(tmp_path):
    suite = load_suite("suites.crmarena")
    quick = ROUTING.profile("quick", "crmarena")
    org = suite.options_model.model_validate({"org": str(tmp_path / "org.sqlite")})
    assert suite.task_index(quick, org) is None
    big = SuiteProfile(**{**quick.model_dump(), "per_category": 131})  # above the deep org's 130
    assert suite.task_index(big, suite.options_model()) is None
    small_org = SuiteProfile(**{**quick.model_dump(), "per_category": 20, "org_scale": "quick"})
    assert suite.task_index(small_org, suite.options_model()) is None


def test_a_profile_load_tasks_refuses_has_no_index():
    """An unknown category: no index, so the core loads and reports the usage error."""
    for name in sorted(EXPECTED_INDEXED & set(INDEXED)):
        suite = load_suite(f"suites.{name}")
        bad = SuiteProfile(**{**ROUTING.profile("quick", name).model_dump(), "categories": ["no-such"]})
        assert suite.task_index(bad, suite.options_model()) is None, name
        with pytest.raises(ValueError):
            suite.load_tasks(bad, suite.options_model())
