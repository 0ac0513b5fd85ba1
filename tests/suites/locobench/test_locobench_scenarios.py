"""LoCoBench scenarios: seeded generation, sizes, hidden tests, planted findings, mutants."""

from __future__ import annotations

import pytest

from pytest_egi.sandbox import Limits
from suites.locobench.data import (
    CATEGORIES,
    DIFFICULTIES,
    TARGET_TOKENS,
    build_scenario,
    context_view,
    proxy_tokens,
    tree_hash,
)
from suites.locobench.env import run_checks
from suites.locobench.quality import bandit_findings
from suites.locobench.scorer import hidden_test_names, static_checks
from suites.locobench.tasks import feature, security

LIMITS = Limits(wall_s=120, cpu_s=120, memory_mb=2048)


def scenario(category: str, difficulty: str = "easy", index: int = 0, seed: int = 42):
    spec = {"seed": seed, "category": category, "difficulty": difficulty, "index": index}
    return build_scenario({"spec": spec})


def test_same_seed_same_tree_hash_other_seed_other_tree():
    key = {"seed": 7, "category": "feature_implementation", "difficulty": "easy", "index": 1}
    first = build_scenario({"spec": key})
    from suites.locobench import data

    data._build.cache_clear()
    again = build_scenario({"spec": key})
    assert first is not again
    assert tree_hash(first.files | first.hidden_files()) == tree_hash(again.files | again.hidden_files())
    assert first.order == again.order
    other = build_scenario({"spec": {**key, "seed": 8}})
    assert tree_hash(other.files) != tree_hash(first.files)


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_difficulty_sets_the_context_size(difficulty):
    sc = scenario("bug_investigation", difficulty)
    tokens = proxy_tokens(sc.context_chars)
    assert TARGET_TOKENS[difficulty] <= tokens <= TARGET_TOKENS[difficulty] * 1.05
    assert set(sc.order) == set(sc.files)  # the prompt shows every project file
    assert not any(p.startswith("_egi") for p in sc.files)  # hidden tests are never in it


def test_needle_and_decoy_are_in_the_prompt_and_the_ablation_removes_the_needle_facts():
    sc = scenario("feature_implementation")
    (needle,), (decoy,) = sc.planted.needle_files, sc.planted.decoy_files
    shown = dict(context_view(sc))
    assert "EXPRESS_SURCHARGE_CENTS" in shown[needle] and "EXPRESS_SURCHARGE_CENTS" in shown[decoy]
    ablated = dict(context_view(sc, ablate=True))
    assert "EXPRESS_SURCHARGE_CENTS" not in ablated[needle]
    assert abs(len(ablated[needle]) - len(shown[needle])) <= 80
    assert ablated[decoy] == shown[decoy] and sc.files[needle] == shown[needle]


@pytest.mark.parametrize("category", CATEGORIES)
def test_the_untouched_project_fails_the_hidden_tests(category):
    sc = scenario(category)
    checked = run_checks(sc.files, sc.hidden_files(), LIMITS)
    assert checked.reason is None
    assert all(checked.groups["smoke"].values()) and all(checked.groups["regression"].values())
    names = hidden_test_names(sc.hidden_tests)
    found = checked.groups.get("hidden", {}) | checked.groups.get("needle", {})
    passed = {k.split("::")[-1] for k, ok in found.items() if ok}
    assert names["needle"], category
    failing_needles = [n for n in names["needle"] if n not in passed]
    assert failing_needles, f"{category}: every needle test passes on the untouched project"
    if static_checks(sc, sc.files):
        assert not all(static_checks(sc, sc.files).values())


def test_the_planted_bandit_finding_is_detected_and_the_reference_removes_it():
    sc = scenario("security_analysis")
    target = "/".join([sc.package, "services", "input_parsing.py"])
    found = bandit_findings({target: sc.files[target]})
    assert [(f[2], f[3]) for f in found] == [(security.BANDIT_TEST_ID, "MEDIUM")]
    assert static_checks(sc, sc.files) == {"test_bandit_finding_is_gone": False}
    fixed = {**sc.files, **security.reference(sc.plan, sc.planted, sc.files, 1)}
    assert static_checks(sc, fixed) == {"test_bandit_finding_is_gone": True}


def test_a_mutant_of_the_reference_is_caught_by_the_hidden_tests():
    sc = scenario("feature_implementation")
    ref = feature.reference(sc.plan, sc.planted, sc.files, 1)
    service = next(p for p in ref if "/services/" in p)
    good = run_checks({**sc.files, **ref}, sc.hidden_files(), LIMITS)
    assert all(good.groups["needle"].values()) and all(good.groups["hidden"].values())
    mutant = dict(ref)
    rule = "item.quantity < EXPRESS_FREE_FROM_UNITS"
    mutant[service] = ref[service].replace(rule, rule.replace("<", "<="))
    assert mutant[service] != ref[service]
    caught = run_checks({**sc.files, **mutant}, sc.hidden_files(), LIMITS)
    failed = sorted(k.split("::")[-1] for k, ok in caught.groups["needle"].items() if not ok)
    assert failed == ["test_needle_express_is_free_from_the_policy_threshold"]


def test_filler_code_is_the_text_the_dedent_per_module_made():
    """The filler templates are dedented once and filled with str.format (a deep profile makes
    tens of thousands of filler modules): the files are byte-identical to those made by
    textwrap.dedent of each filled module (digests taken with that code, seed 7 and 3), so a
    generated project, its context length and its tree hash do not change."""
    import hashlib
    import json
    import random

    from suites.locobench.generator.filler import filler_files, filler_text

    files = filler_files("svc", 30000, random.Random(7))
    assert len(files) == 40
    digest = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    assert digest == "94273c5869dded7c3dfe1872014e04dc3b1ecc7ec3aa031e0fc7b319e88bd4ec"
    text = filler_text("svc", 5000, random.Random(3))
    assert hashlib.sha256(text.encode()).hexdigest() == (
        "4ec07f148dfb5b8098d61ef2d23b171ea19e2cf2f87c5928f30754ce763cdcd3"
    )
