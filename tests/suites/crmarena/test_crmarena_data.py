"""Task generation in the original record schema, and loading users' task files."""

from __future__ import annotations

import ast
import json
from collections import Counter

import pytest

from suites.crmarena.data.reference import parse_period, parse_today, reference_solution, solve_directly
from suites.crmarena.data.tasks import CATEGORIES, generate_tasks, load_task_file
from suites.crmarena.env.org import Org

KEYS = ["idx", "task", "query", "answer", "reward_metric", "metadata"]


@pytest.fixture(scope="module")
def quick_tasks(quick_org) -> list[dict]:
    return generate_tasks(quick_org, seed=42, per_category=6)


def kind(answer: list) -> str:
    return "none" if answer == [None] else ("tie" if len(answer) > 1 else "unique")


def test_records_have_exactly_the_original_schema(quick_tasks):
    assert len(quick_tasks) == 9 * 6
    assert [r["idx"] for r in quick_tasks] == list(range(54))
    for record in quick_tasks:
        assert list(record) == KEYS
        assert record["task"] in CATEGORIES
        assert isinstance(record["query"], str) and record["query"]
        assert isinstance(record["answer"], list) and record["answer"]
        assert all(a is None or isinstance(a, str) for a in record["answer"])
        assert record["reward_metric"] == (
            "fuzzy_match" if record["task"] == "knowledge_qa" else "exact_match"
        )
        assert list(record["metadata"]) == ["required", "optional"]
    json.dumps(quick_tasks)  # JSON-safe
    assert Counter(r["task"] for r in quick_tasks) == dict.fromkeys(CATEGORIES, 6)


def test_quick_set_mixes_ties_and_none(quick_tasks):
    kinds = Counter((r["task"], kind(r["answer"])) for r in quick_tasks)
    assert sum(n for (_, k), n in kinds.items() if k == "tie") >= 1
    assert sum(n for (_, k), n in kinds.items() if k == "none") >= 1
    for task in ("case_routing", "knowledge_qa"):
        assert kinds[(task, "unique")] == 6
    for task in ("monthly_trend_analysis", "best_region_identification"):
        assert kinds[(task, "none")] == 0


def test_gold_is_what_the_reference_solution_computes(quick_org, quick_tasks):
    for record in quick_tasks[::5]:
        assert solve_directly(quick_org, record) == record["answer"]


def test_task_parameters_are_parseable_from_text(quick_tasks):
    for record in quick_tasks:
        if record["task"] in (
            "handle_time",
            "transfer_count",
            "best_region_identification",
            "top_issue_identification",
            "monthly_trend_analysis",
        ):
            parse_period(record["query"], parse_today(record))


def test_kqa_gold_is_a_span_of_a_knowledge_article(quick_org, quick_tasks):
    for record in quick_tasks:
        if record["task"] == "knowledge_qa":
            rows = quick_org.connection.execute(
                'SELECT COUNT(*) FROM "Knowledge__kav" WHERE instr("FAQ_Answer__c", ?) > 0',
                (record["answer"][0],),
            ).fetchone()
            assert rows[0] >= 1


def test_generation_is_deterministic(quick_org, quick_tasks):
    assert generate_tasks(quick_org, seed=42, per_category=6) == quick_tasks
    assert generate_tasks(quick_org, seed=43, per_category=6) != quick_tasks


def test_deep_org_supports_130_distinct_tasks_per_type():
    org = Org.generate(42, "deep")
    records = generate_tasks(org, seed=42, per_category=130)
    counts = Counter(r["task"] for r in records)
    assert counts == dict.fromkeys(CATEGORIES, 130)
    assert len({(r["query"], r["metadata"]["required"]) for r in records}) == len(records)
    assert len({r["idx"] for r in records}) == len(records)


# -- load_task_file ----------------------------------------------------------------------------------


def test_load_json_list_and_jsonl_round_trip(tmp_path, quick_tasks):
    as_list = tmp_path / "tasks.json"
    as_list.write_text(json.dumps(quick_tasks[:5]))
    assert load_task_file(as_list) == quick_tasks[:5]
    as_lines = tmp_path / "tasks.jsonl"
    as_lines.write_text("\n".join(json.dumps(r) for r in quick_tasks[:5]) + "\n")
    assert load_task_file(as_lines) == quick_tasks[:5]


def test_load_defaults_optional_and_keeps_extra_keys(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            [
                {
                    "idx": 3,
                    "task": "handle_time",
                    "query": "q",
                    "answer": [None],
                    "reward_metric": "exact_match",
                    "metadata": {"required": "r"},
                    "persona": "p",
                }
            ]
        )
    )
    assert load_task_file(path) == [
        {
            "idx": 3,
            "task": "handle_time",
            "query": "q",
            "answer": [None],
            "reward_metric": "exact_match",
            "metadata": {"required": "r", "optional": ""},
            "persona": "p",
        }
    ]


def _valid(**changes) -> dict:
    record = {
        "idx": 1,
        "task": "handle_time",
        "query": "q",
        "answer": ["005"],
        "reward_metric": "exact_match",
        "metadata": {"required": "r", "optional": ""},
    }
    record.update(changes)
    return record


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{k: v for k, v in _valid().items() if k != "answer"}], r"record 1: field 'answer' is missing"),
        ([_valid(task="lead_routing")], r"record 1: field 'task' has unknown value 'lead_routing'"),
        ([_valid(), _valid()], r"record 2: field 'idx' value 1 is already used by record 1"),
        ([_valid(answer="005")], r"record 1: field 'answer' must be a non-empty list"),
        ([_valid(idx="7")], r"record 1: field 'idx' must be an integer"),
        (
            [_valid(metadata={"optional": ""})],
            r"record 1: field 'metadata' must be an object with a string 'required'",
        ),
        ([_valid(reward_metric="f1")], r"record 1: field 'reward_metric' has unknown value 'f1'"),
        ({"idx": 1}, r"expected a JSON list of task records"),
    ],
)
def test_load_errors_name_file_record_field_and_fix(tmp_path, records, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(records))
    with pytest.raises(ValueError, match=message) as info:
        load_task_file(path)
    assert str(path) in str(info.value) and "Fix:" in str(info.value)


def test_load_jsonl_reports_the_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_valid()) + "\n{not json}\n")
    with pytest.raises(ValueError, match=r"bad.jsonl: line 2 is not valid JSON"):
        load_task_file(path)
    with pytest.raises(FileNotFoundError):
        load_task_file(tmp_path / "missing.json")


def test_gold_survives_replay_through_observation_strings(quick_org, quick_tasks):
    """The oracle sees only ``execute`` observations; parsing them back must give the same gold."""
    for record in quick_tasks:
        program = reference_solution(record)
        try:
            query = next(program)
            while True:
                observation = quick_org.execute(
                    query, today=parse_today(record) if "Today" in record["metadata"]["required"] else None
                )
                assert observation.startswith("Salesforce instance output: "), observation
                query = program.send(ast.literal_eval(observation[len("Salesforce instance output: ") :]))
        except StopIteration as stop:
            assert stop.value == record["answer"], record["idx"]


def test_prepare_opens_the_org_before_any_item():
    """``SUITE.prepare`` (called before the first item) generates the tasks' org once; every
    item's ``org_for`` then gets that same org from the per-process cache."""
    from pytest_egi.suite import SuiteProfile
    from suites.crmarena import SUITE, CrmArenaOptions, _generated_org

    options = CrmArenaOptions()
    tasks = SUITE.load_tasks(SuiteProfile(seed=7, per_category=1), options)
    _generated_org.cache_clear()
    SUITE.prepare(tasks, options)
    assert _generated_org.cache_info().misses == 1
    assert all(SUITE.org_for(t, options) is SUITE.org_for(tasks[0], options) for t in tasks)
    assert _generated_org.cache_info().misses == 1
