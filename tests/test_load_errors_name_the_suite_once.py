"""A suite's load error reaches the user as ``ERROR: <suite>: <message>``: the core names the
suite once, and no suite repeats its name (``benchforce: benchforce: ...`` was the fault)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_egi.run.settings import data_error as _data_error
from pytest_egi.suite import SuiteProfile

REPO = Path(__file__).resolve().parents[1]
NO_OPTIONS = SimpleNamespace(suite_options={})


@pytest.mark.parametrize(
    ("suite", "message"),
    [
        (
            "benchforce",
            "benchforce: unknown environments ['nope']; known: ['hospital', 'hr_software', "
            "'order_management']",
        ),
        (
            "herb",
            "herb: unknown categories ['nope']; known: ['content', 'person', 'company', 'url', 'pr', "
            "'unanswerable']",
        ),
        (
            "mcpeval",
            "mcpeval: unknown categories ['nope']; known: ['airbnb', 'healthcare', 'sports', "
            "'national_parks', 'yfinance']",
        ),
        (
            "mcp_universe",
            "mcp_universe: unknown categories ['nope'] in the profile; known: ['financial_analysis', "
            "'location_navigation', 'web_search', 'repository_management']",
        ),
        (
            "crmarena",
            "crmarena: routing.yaml categories: unknown ['nope']; valid: ['NCR', 'HTU', 'TCU', 'NED', "
            "'PVI', 'KQA', 'TII', 'MTA', 'BRI']",
        ),
    ],
)
def test_every_suites_load_error_names_the_suite_once(suite, message):
    module = importlib.import_module(f"suites.{suite}")
    with pytest.raises(ValueError) as info:
        module.SUITE.load_tasks(SuiteProfile(seed=42, categories=["nope"]), module.SUITE.options_model())
    assert str(_data_error(suite, NO_OPTIONS, info.value)) == message


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("toy: the file is broken", "toy: the file is broken"),
        ("toy hospital: the file is broken", "toy hospital: the file is broken"),
        ("toyland.json is broken", "toy: toyland.json is broken"),
        ("the file is broken", "toy: the file is broken"),
    ],
)
def test_a_message_already_naming_its_suite_is_not_prefixed_again(text, shown):
    assert str(_data_error("toy", NO_OPTIONS, ValueError(text))) == shown


def test_a_benchforce_data_dir_error_reaches_the_user_with_the_suite_named_once(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "suites/benchforce", "--co",
         "--egi-model", "egi/oracle", "--egi-opt", f"benchforce.data_dir={tmp_path}"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 4, result.stdout[-2000:]
    folder = tmp_path / "src" / "environments" / "hospital"
    assert [line for line in result.stderr.splitlines() if line.startswith("ERROR: ")] == [
        f"ERROR: benchforce: data_dir {str(tmp_path)!r} has no hospital folder at {str(folder)!r}; set "
        "--egi-opt benchforce.data_dir=PATH to a checkout of upstream's repository (the folder holding "
        f"src/environments/) (from --egi-opt benchforce.data_dir={tmp_path})"
    ]
