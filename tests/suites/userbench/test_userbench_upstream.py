"""UserBench: upstream's parquet rows load into task records (``userbench.data_dir``), with
clear errors for malformed data and a skip with the reason for what cannot run; boolean
options parse ``false`` / ``0`` / ``no`` as false through ``--egi-opt``.

Upstream's own files are read from ``$EGI_USERBENCH_UPSTREAM``, else
``<repo>/../shared/upstream/userbench/data``; those tests skip when the folder is absent (CI's
checkout may have no copy); the others write small parquet files of upstream's schema."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pytest_egi.models.offline import Noise
from pytest_egi.options import parse_suite_option
from pytest_egi.scoring.config import validate_suite_options
from pytest_egi.suite import SuiteProfile
from suites.userbench import SUITE, UserbenchOptions
from suites.userbench.data import ENVIRONMENTS
from suites.userbench.upstream import NOT_RUNNABLE, load_upstream_tasks

ROOT = Path(__file__).resolve().parents[3]
UPSTREAM = Path(
    os.environ.get("EGI_USERBENCH_UPSTREAM", ROOT.parent / "shared" / "upstream" / "userbench" / "data")
)
SYSTEM = "You are an agent that actively interact with an specific environment."
FIX = "fix: point userbench.data_dir at upstream's data folder (<env>_multiturn[_onechoice]/<split>.parquet)"

ROW_TYPE = pa.struct(
    [
        ("env_name", pa.string()),
        ("ground_truth", pa.string()),
        ("id", pa.string()),
        ("style", pa.string()),
    ]
)
PROMPT_TYPE = pa.list_(pa.struct([("content", pa.string()), ("role", pa.string())]))
ALONE = "(this task errors alone; fix the entry or leave it out)"


def _row(upstream_id, gold, user="I fly from A to B on May 3rd and stay in a hotel."):
    return {
        "data_source": "interact_travelgym",
        "prompt": [{"content": SYSTEM, "role": "system"}, {"content": user, "role": "user"}],
        "ability": "interaction",
        "reward_model": {"env_name": "TravelGym", "ground_truth": gold, "id": upstream_id, "style": "rule"},
    }


def _write(data_dir, env, rows, one_choice=False, split="test", schema=None):
    folder = data_dir / f"{env}_multiturn{'_onechoice' if one_choice else ''}"
    folder.mkdir(parents=True, exist_ok=True)
    schema = schema or pa.schema(
        [("data_source", pa.string()), ("prompt", PROMPT_TYPE), ("ability", pa.string()),
         ("reward_model", ROW_TYPE)]  # fmt: skip
    )
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / f"{split}.parquet")
    return folder / f"{split}.parquet"


ROWS = [
    _row("flight:2-37|hotel:2-9", "['H11', 'F3']"),
    _row("restaurant:2-5|rental_car:2-40", "['C7', 'R2']", user="Dinner and a car in Paris."),
    _row("apartment:2-1|flight:2-2", "['F1', 'A9']"),
]


def _load(data_dir, env="travel22", **opts):
    profile = SuiteProfile(seed=42, categories=[env], max_turns=20, pass_k=1)
    return SUITE.load_tasks(profile, UserbenchOptions(data_dir=data_dir, **opts))


# -- loading -----------------------------------------------------------------------------------
def test_rows_load_into_task_records(tmp_path):
    path = _write(tmp_path, "travel22", ROWS)
    tasks = _load(tmp_path)
    assert [t.id for t in tasks] == [
        "flight:2-37.hotel:2-9",
        "restaurant:2-5.rental_car:2-40",
        "apartment:2-1.flight:2-2",
    ]
    first = tasks[0]
    assert first.category == "travel22"
    keys = ("upstream_id", "env", "dimensions", "preference_counts", "best_id")
    assert {k: first.data[k] for k in keys} == {
        "upstream_id": "flight:2-37|hotel:2-9",
        "env": "travel22",
        "dimensions": ["flight", "hotel"],
        "preference_counts": {"flight": 2, "hotel": 2},
        "best_id": {"flight": "F3", "hotel": "H11"},
    }
    assert first.data["initial_description"] == "I fly from A to B on May 3rd and stay in a hotel."
    assert first.data["system_prompt"] == SYSTEM
    assert first.data["source"] == {"file": str(path), "row": 0, "env_name": "TravelGym", "style": "rule"}
    assert first.cannot_run == f"{path}, row 0: {NOT_RUNNABLE}"  # Task.cannot_run since issue 22
    assert (first.data["preferences"], first.data["options"], first.data["max_turns"]) == ([], {}, 20)
    assert tasks[1].data["best_id"] == {"restaurant": "R2", "rental_car": "C7"}


def test_profile_cuts_split_and_one_choice_pick_the_file(tmp_path):
    _write(tmp_path, "travel22", ROWS)
    _write(tmp_path, "travel22", ROWS[:1], one_choice=True)
    _write(tmp_path, "travel22", ROWS[1:], split="train")
    profile = SuiteProfile(seed=42, categories=["travel22"], per_category=2)
    assert len(SUITE.load_tasks(profile, UserbenchOptions(data_dir=tmp_path))) == 2
    assert [t.id for t in _load(tmp_path, one_choice="yes")] == ["flight:2-37.hotel:2-9"]
    assert [t.data["upstream_id"] for t in _load(tmp_path, data_split="train")] == [
        "restaurant:2-5|rental_car:2-40",
        "apartment:2-1|flight:2-2",
    ]
    limit = SuiteProfile(categories=["travel22"], limit=1)
    assert len(SUITE.load_tasks(limit, UserbenchOptions(data_dir=tmp_path))) == 1


def test_tasks_that_cannot_run_skip_with_the_reason_and_warn(tmp_path):
    """Since issue 22 the core skips them (``Task.cannot_run``) and its data warning counts them
    per environment; the suite's own warning and ``skip_if_not_runnable`` are gone."""
    path = _write(tmp_path, "travel22", ROWS)
    tasks = _load(tmp_path)
    assert [t.cannot_run for t in tasks] == [f"{path}, row {i}: {NOT_RUNNABLE}" for i in range(3)]
    assert not hasattr(SUITE, "data_warnings")
    generated = SUITE.load_tasks(SuiteProfile(categories=["travel22"], per_category=1), None)
    assert generated[0].runnable  # a generated task runs
    SUITE.reference_policy(generated[0], None, Noise(0.0, "s"))


# -- malformed data ----------------------------------------------------------------------------
def test_missing_file_names_the_layout_and_the_splits_present(tmp_path):
    with pytest.raises(ValueError) as exc:
        _load(tmp_path)
    assert str(exc.value) == (
        f"userbench: no upstream data file {tmp_path}/travel22_multiturn/test.parquet; {FIX}"
    )
    _write(tmp_path, "travel22", ROWS, split="train")
    with pytest.raises(ValueError) as exc:
        _load(tmp_path)
    assert str(exc.value) == (
        f"userbench: no upstream data file {tmp_path}/travel22_multiturn/test.parquet; this folder "
        "has the split(s) ['train']: pass --egi-opt userbench.data_split=train"
    )


def test_unreadable_file_and_missing_column(tmp_path):
    folder = tmp_path / "travel22_multiturn"
    folder.mkdir()
    (folder / "test.parquet").write_text("not parquet")
    with pytest.raises(ValueError, match=r"userbench: cannot read .*test\.parquet as parquet \(.*\); fix: "):
        _load(tmp_path)
    schema = pa.schema([("prompt", PROMPT_TYPE)])
    path = _write(tmp_path, "travel22", [{"prompt": []}], schema=schema)
    with pytest.raises(ValueError) as exc:
        _load(tmp_path)
    assert str(exc.value) == (
        f"userbench: {path}: missing column(s) ['reward_model'] (upstream's rows have prompt and "
        f"reward_model{{ground_truth, id, env_name, style}}; found ['prompt']); {FIX}"
    )


@pytest.mark.parametrize(
    "row, field, problem",
    [
        (_row("flight:2-37|hotel:2-9", "H11, F3"), "reward_model.ground_truth",
         "'H11, F3' is not a Python list literal (ValueError)"),
        (_row("flight:2-37|hotel:2-9", "['H11', 'X3']"), "reward_model.ground_truth",
         "\"['H11', 'X3']\": expected a list of option ids matching ^[ACFHR]\\d+$"),
        (_row("flight:2-37|hotel:2-9", "['H11', 'R3']"), "reward_model.ground_truth",
         "['H11', 'R3'] must name one best id per aspect of the id 'flight:2-37|hotel:2-9' (F, H)"),
        (_row("flight:2-37|hotel:2-9", "['H11']"), "reward_model.ground_truth",
         "['H11'] must name one best id per aspect of the id 'flight:2-37|hotel:2-9' (F, H)"),
        (_row("flight:3-37|hotel:2-9", "['H11', 'F3']"), "reward_model.id",
         "'flight:3-37|hotel:2-9' has preference counts [3, 2], which do not fit the environment travel22 "
         "of the file's folder"),
        (_row("boat:2-37|hotel:2-9", "['H11', 'F3']"), "reward_model.id",
         "'boat:2-37|hotel:2-9': expected distinct '<aspect>:<count>-<index>' parts joined by '|', aspects "
         "among ['flight', 'hotel', 'apartment', 'restaurant', 'rental_car']"),
        (_row("", "['H11', 'F3']"), "reward_model.id", "missing or not a string ('')"),
        ({**_row("flight:2-37|hotel:2-9", "['H11', 'F3']"),
          "prompt": [{"content": SYSTEM, "role": "system"}]}, "prompt",
         "expected a list of {role, content} messages with the user's first message"),
    ],
    ids=["gold-not-a-list", "gold-bad-id", "gold-wrong-aspect", "gold-missing-aspect", "id-vs-env",
         "id-unknown-aspect", "id-empty", "prompt-no-user"],
)  # fmt: skip
def test_a_malformed_row_errors_alone_naming_file_row_field_and_fix(tmp_path, row, field, problem):
    """Before: one malformed row raised, so the whole suite's collection failed; then it was
    skipped. Since issue 22 it errors alone (malformed data is an error, not a skip)."""
    path = _write(tmp_path, "travel22", [ROWS[0], row, ROWS[1]])
    good, broken, other = _load(tmp_path)
    assert [good.id, other.id] == ["flight:2-37.hotel:2-9", "restaurant:2-5.rental_car:2-40"]
    assert good.cannot_run == f"{path}, row 0: {NOT_RUNNABLE}"
    assert other.cannot_run == f"{path}, row 2: {NOT_RUNNABLE}"
    assert broken.id == "travel22.row1" and broken.category == "travel22"
    assert broken.load_error == (
        f"{path}: task 'travel22.row1' could not be loaded: RowError: row 1: field {field}: {problem}; {FIX} "
        f"{ALONE}"
    )


def test_repeated_task_id_errors_alone(tmp_path):
    path = _write(tmp_path, "travel22", [ROWS[0], ROWS[1], ROWS[0]])
    tasks = _load(tmp_path)
    assert [t.id for t in tasks] == ["flight:2-37.hotel:2-9", "restaurant:2-5.rental_car:2-40",
                                     "travel22.row2"]  # fmt: skip
    assert tasks[2].load_error == (
        f"{path}: task 'travel22.row2' could not be loaded: RowError: row 2: field reward_model.id: "
        f"'flight:2-37|hotel:2-9' repeats row 0; task ids must be unique {ALONE}"
    )


def test_any_exception_reading_one_row_is_that_rows_error(tmp_path, monkeypatch):
    import suites.userbench.upstream as upstream

    real = upstream._row_task

    def flaky(path, index, row, env):
        if index == 1:
            raise KeyError("surprise")
        return real(path, index, row, env)

    monkeypatch.setattr(upstream, "_row_task", flaky)
    path = _write(tmp_path, "travel22", ROWS)
    tasks = _load(tmp_path)
    assert [t.id for t in tasks] == ["flight:2-37.hotel:2-9", "travel22.row1", "apartment:2-1.flight:2-2"]
    assert tasks[1].load_error == (
        f"{path}: task 'travel22.row1' could not be loaded: RowError: row 1: KeyError: 'surprise'; {FIX} "
        f"{ALONE}"
    )


# -- upstream's own files ------------------------------------------------------------------------
UPSTREAM_TRAIN_ROWS = {"travel22": 570, "travel33": 489, "travel44": 379, "travel233": 341, "travel333": 300,
                       "travel334": 266, "travel444": 210, "travel2222": 96}  # fmt: skip


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason=f"upstream UserBench data not found at {UPSTREAM}")
@pytest.mark.parametrize("one_choice", [True, False], ids=["onechoice", "multichoice"])
def test_upstream_files_load(one_choice):
    for env in ENVIRONMENTS:
        split = "test" if (UPSTREAM / f"{env}_multiturn" / "test.parquet").is_file() else "train"
        tasks = load_upstream_tasks(UPSTREAM, env, one_choice, split)
        if split == "train":
            assert len(tasks) == UPSTREAM_TRAIN_ROWS[env], env
        assert len({t["id"] for t in tasks}) == len(tasks)
        for t in tasks:
            assert sorted(t["preference_counts"].values()) == sorted(int(d) for d in env[6:])
            assert [b[0] for b in t["best_id"].values()] == [
                {"flight": "F", "hotel": "H", "apartment": "A", "restaurant": "R", "rental_car": "C"}[a]
                for a in t["dimensions"]
            ]
            assert t["not_runnable"] == NOT_RUNNABLE and t["initial_description"]
    if split == "train":
        first = load_upstream_tasks(UPSTREAM, "travel22", one_choice, "train")[0]
        assert first["upstream_id"] == "flight:2-37|hotel:2-9"
        assert first["best_id"] == {"flight": "F3", "hotel": "H11"}


# -- boolean options ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, expected",
    [("false", False), ("False", False), ("0", False), ("no", False), ("NO", False), ("off", False),
     ("true", True), ("1", True), ("yes", True), ("on", True)],
)  # fmt: skip
def test_boolean_options_parse_through_egi_opt(text, expected):
    suite, key, value = parse_suite_option(f"userbench.one_choice={text}")
    assert validate_suite_options(UserbenchOptions, suite, {key: value}).one_choice is expected


def test_a_non_boolean_is_a_usage_error():
    with pytest.raises(pytest.UsageError) as exc:
        validate_suite_options(UserbenchOptions, "userbench", {"one_choice": "False-ish"})
    assert str(exc.value).startswith("--egi-opt userbench.one_choice: Input should be a valid boolean")
