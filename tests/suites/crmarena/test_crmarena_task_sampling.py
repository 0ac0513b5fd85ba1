"""A user's CRMArena task file with more tasks of a type than the profile's ``per_category``:
a sample drawn per type with the profile seed, not the first ones in the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_egi.suite import SuiteProfile
from suites.crmarena import SUITE, CrmArenaOptions
from suites.crmarena.data.task_file import sample_per_type
from suites.crmarena.data.tasks import generate_tasks
from suites.crmarena.env.org import Org


def _records(task: str, idxs: range) -> list[dict]:
    return [{"task": task, "idx": i} for i in idxs]


def test_sample_per_type_exact_positions():
    records = _records("case_routing", range(10)) + _records("handle_time", range(10, 12))
    kept = sample_per_type(records, 3, seed=42)
    # case_routing: random.Random("crmarena-task-file/42/case_routing").sample(range(10), 3)
    # draws positions {0, 3, 5}; handle_time has only 2 records: both kept; file order kept
    assert [r["idx"] for r in kept] == [0, 3, 5, 10, 11]
    assert [r["idx"] for r in sample_per_type(records, 3, seed=42)] == [0, 3, 5, 10, 11]  # stable
    assert [r["idx"] for r in sample_per_type(records, 3, seed=7)] != [0, 3, 5, 10, 11]
    assert sample_per_type(records, None, seed=42) == records
    assert sample_per_type(records, 12, seed=42) == records


def test_a_types_draw_does_not_depend_on_the_other_types():
    alone = sample_per_type(_records("case_routing", range(10)), 3, seed=42)
    mixed = sample_per_type(
        _records("handle_time", range(100, 110)) + _records("case_routing", range(10)), 3, 42
    )
    assert [r["idx"] for r in mixed if r["task"] == "case_routing"] == [r["idx"] for r in alone]


@pytest.fixture(scope="module")
def task_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """An org export and a task file with 8 tasks of each of the nine types (idx 0-71)."""
    folder = tmp_path_factory.mktemp("crmarena-sampling")
    org = Org.generate(seed=42, scale="quick")
    org.save(folder / "org.sqlite")
    records = generate_tasks(org, seed=42, per_category=8)
    assert [r["idx"] for r in records] == list(range(72))
    (folder / "tasks.json").write_text(json.dumps(records))
    return folder / "org.sqlite", folder / "tasks.json"


SEED_42 = [
    "NCR-0004", "NCR-0005", "NCR-0006", "HTU-0011", "HTU-0013", "HTU-0014", "TCU-0016", "TCU-0018",
    "TCU-0023", "NED-0024", "NED-0029", "NED-0030", "PVI-0037", "PVI-0038", "PVI-0039", "KQA-0041",
    "KQA-0043", "KQA-0046", "TII-0048", "TII-0050", "TII-0055", "MTA-0057", "MTA-0059", "MTA-0061",
    "BRI-0065", "BRI-0067", "BRI-0070",
]  # fmt: skip


def test_task_file_is_sampled_per_type_with_the_profile_seed(task_file):
    org, tasks = task_file
    options = CrmArenaOptions(org=org, tasks=tasks)
    chosen = [t.id for t in SUITE.load_tasks(SuiteProfile(seed=42, per_category=3), options)]
    assert chosen == SEED_42
    # not the head of the file (idx 0-2 of NCR, 8-10 of HTU, ...)
    head = [f"{c}-{8 * k + i:04d}" for k, c in enumerate(SUITE.categories) for i in range(3)]
    assert chosen != head and set(chosen) != set(head)
    # the same seed again gives the same tasks; another seed another sample
    assert [t.id for t in SUITE.load_tasks(SuiteProfile(seed=42, per_category=3), options)] == SEED_42
    other = [t.id for t in SUITE.load_tasks(SuiteProfile(seed=7, per_category=3), options)]
    assert len(other) == 27 and other != SEED_42
    # every task of a type when the profile asks for at least as many
    assert len(SUITE.load_tasks(SuiteProfile(seed=42, per_category=8), options)) == 72


def test_the_sample_is_drawn_among_the_selected_categories(task_file):
    org, tasks = task_file
    options = CrmArenaOptions(org=org, tasks=tasks)
    only = SUITE.load_tasks(SuiteProfile(seed=42, per_category=3, categories=["PVI", "BRI"]), options)
    assert [t.id for t in only] == [i for i in SEED_42 if i[:3] in ("PVI", "BRI")]
