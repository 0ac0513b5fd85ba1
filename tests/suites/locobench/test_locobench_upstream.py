"""Upstream-format scenario files (reference B3) through ``--egi-opt locobench.scenarios=DIR``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_egi.models.offline import Noise
from pytest_egi.suite import CannotRun, SuiteProfile
from suites.locobench import SUITE, LocoOptions
from tests.suites.locobench.test_locobench_scoring import Scripted, files_reply

SCENARIO = "python_shop_web_easy_001_feature_implementation_easy_01"
BAD = "python_shop_web_easy_001_code_comprehension_easy_02"
CART = '''"""A shopping cart."""


def total(prices: list[int]) -> int:
    """The sum of ``prices`` (cents)."""
    return sum(prices)
'''


def scenario_dir(tmp_path: Path) -> Path:
    root = tmp_path / "output"
    (root / "scenarios").mkdir(parents=True)
    project = root / "python_shop_web_easy_001"
    (project / "shop").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "shop" / "__init__.py").write_text('"""Shop."""\n')
    (project / "shop" / "cart.py").write_text(CART)
    (project / "tests" / "test_cart.py").write_text(
        "from shop.cart import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n"
    )
    record = {
        "id": SCENARIO,
        "task_category": "feature_implementation",
        "difficulty": "easy",
        "title": "Discounted totals",
        "description": "The cart cannot apply a discount.",
        "context_files": ["shop/__init__.py", "shop/cart.py", "tests/test_cart.py"],
        "context_length": 300,
        "task_prompt": "Add `discounted(prices, percent)` to shop/cart.py: the total minus percent %, "
        "rounded down.",
        "expected_approach": "...",
        "ground_truth": "...",
        "evaluation_criteria": ["works"],
        "metadata": {"context_length": 300, "files_count": 3, "information_coverage": 1.0},
    }
    (root / "scenarios" / f"{SCENARIO}.json").write_text(json.dumps(record))
    hidden = root / "scenarios" / SCENARIO
    hidden.mkdir()
    (hidden / "test_hidden.py").write_text(
        "from shop.cart import discounted\n\n\ndef test_ten_percent():\n"
        "    assert discounted([1000, 999], 10) == 1799\n\n\n"
        "def test_zero():\n    assert discounted([5], 0) == 5\n"
    )
    java = dict(
        record, id="java_shop_web_easy_002_bug_investigation_easy_01", task_category="bug_investigation"
    )
    (root / "scenarios" / "java.json").write_text(json.dumps(java))
    bad = {k: v for k, v in record.items() if k != "title"}
    (root / "scenarios" / "bad.json").write_text(
        json.dumps(
            dict(
                bad,
                id="python_shop_web_easy_001_code_comprehension_easy_02",
                task_category="code_comprehension",
            )
        )
    )
    return root


def test_upstream_scenarios_load_run_and_score(tmp_path):
    opts = LocoOptions(scenarios=scenario_dir(tmp_path), tests_timeout_s=30)
    tasks = {t.id: t for t in SUITE.load_tasks(SuiteProfile(seed=1), opts)}
    assert set(tasks) == {SCENARIO, "java_shop_web_easy_002_bug_investigation_easy_01", BAD}
    assert "language 'java'" in tasks["java_shop_web_easy_002_bug_investigation_easy_01"].cannot_run
    assert "field 'title' must be a str" in tasks[BAD].load_error and "bad.json" in tasks[BAD].load_error
    task = tasks[SCENARIO]
    with pytest.raises(CannotRun, match="no reference solution"):
        SUITE.reference_policy(task, opts, Noise(0.0, "k"))
    from suites.locobench.agent import run_trial

    good = (
        CART + "\n\ndef discounted(prices: list[int], percent: int) -> int:\n"
        '    """The total of ``prices`` less ``percent`` %, rounded down."""\n'
        "    return total(prices) * (100 - percent) // 100\n"
    )
    client = Scripted(files_reply({"shop/cart.py": good}))
    traj = run_trial(task, client, opts)
    assert "def total(prices: list[int]) -> int:" in client.prompts[0][1]["content"]  # contents, not names
    score = SUITE.score(task, traj.to_dict(), opts)
    assert score.values["fc"] == 1.0 and score.values["lcu"] is None and score.values["se"] == 1.0
    half = good.replace("(100 - percent) // 100", "(100 - percent) // 100 if percent else 0")
    score = SUITE.score(
        task, run_trial(task, Scripted(files_reply({"shop/cart.py": half})), opts).to_dict(), opts
    )
    assert score.values["fc"] == 0.5


def test_a_scenario_folder_without_scenarios_is_a_usage_error(tmp_path):
    with pytest.raises(ValueError, match="no scenario file"):
        SUITE.load_tasks(SuiteProfile(seed=1), LocoOptions(scenarios=tmp_path))
