"""Loading MCP-Universe task files: every mistake is named (file, field, fix) at collection; a
file the suite cannot run is skipped alone and a bad file errors alone; the profile's limits
keep a seeded sample."""

from __future__ import annotations

import json

import pytest

from pytest_egi.suite import SuiteProfile
from suites.mcp_universe import (
    McpUniverseOptions,
    McpUniverseSuite,
    summarize_domain,
)
from suites.mcp_universe.data.tasks import NotOffered, load_task_dir, load_task_file, seeded_sample
from tests.suites.mcp_universe import upstream

GOOD = {
    "category": "general",
    "question": "Create {{GITHUB_PERSONAL_ACCOUNT_NAME}}/demo please.",
    "output_format": {"count": "[NUMBER]"},
    "evaluators": [{"func": "json -> get(count)", "op": "=", "value": 3}],
}


def write(tmp_path, data, name="task_0001.json", folder="financial_analysis"):
    d = tmp_path / folder
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


def test_a_good_file_loads_with_its_id_domain_and_rendered_templates(tmp_path):
    p = write(tmp_path, GOOD)
    domain, task = load_task_file(p, domain="financial_analysis")
    assert domain == "financial_analysis"
    assert task["id"] == "task_0001"
    assert task["question"] == "Create egi-agent/demo please."


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda t: t.pop("question"), "question: missing or empty; fix: give the user's request as text"),
        (
            lambda t: t.update(evaluators=[]),
            "evaluators: missing or empty (a task with no evaluator always passes)",
        ),
        (lambda t: t.update(evaluators=[{"op": "="}]), "evaluators[0].func: missing or not a string"),
        (
            lambda t: t.update(evaluators=[{"func": "json -> explode"}]),
            "evaluators[0].func: unknown pipeline function 'explode'",
        ),
        (
            lambda t: t.update(evaluators=[{"func": "json", "op": "=", "vaule": 3}]),
            "evaluators[0]: unknown field(s) ['vaule']; fix: use only",
        ),
        (
            lambda t: t.update(evaluators=[{"func": "json", "op": "google_maps.teleport"}]),
            "evaluators[0].op: unknown op 'google_maps.teleport'; fix: use an op the suite implements "
            "(known google_maps ops: google_maps.are_stops_different,",
        ),
        (
            lambda t: t.update(mcp_servers=[{"name": "githib"}]),
            "mcp_servers: no local server plays 'githib'; fix: use servers the suite provides",
        ),
        (
            lambda t: t.update(cleanups=[{"server": "github"}]),
            "cleanups[0]: needs exactly server, tool, cleanup_func",
        ),
        (lambda t: t.update(qestion="typo"), "top level: unknown field(s) ['qestion']"),
    ],
)
def test_bad_files_name_the_file_field_and_fix(tmp_path, mutate, message):
    data = json.loads(json.dumps(GOOD))
    mutate(data)
    p = write(tmp_path, data)
    with pytest.raises(ValueError) as info:
        load_task_file(p, domain="financial_analysis")
    assert str(info.value).startswith(f"{p}: ")
    assert message in str(info.value)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda t: t.update(evaluators=[{"func": "json", "op": "weather.check_place_type_with_weather"}]),
            "evaluators[0].op: 'weather.check_place_type_with_weather' is an op of upstream's weather "
            "server, which the suite does not offer (it needs the live weather.gov service); fix: leave "
            "this task file out",
        ),
        (
            lambda t: t.update(mcp_servers=[{"name": "notion"}]),
            "mcp_servers: no local server plays 'notion' (upstream's notion server needs a Notion "
            "workspace); fix: use servers the suite provides: yfinance, calculator, google-maps, github, "
            "google-search, fetch",
        ),
    ],
)
def test_a_server_the_suite_does_not_offer_is_not_offered(tmp_path, mutate, message):
    data = json.loads(json.dumps(GOOD))
    mutate(data)
    p = write(tmp_path, data)
    with pytest.raises(NotOffered) as info:
        load_task_file(p, domain="financial_analysis")
    assert str(info.value) == f"{p}: {message}"


def test_not_json_names_the_line(tmp_path):
    p = write(tmp_path, '{"question": "x",\n  oops}')
    with pytest.raises(ValueError, match=r"task_0001.json: line 2 column 3: not JSON"):
        load_task_file(p)


def test_a_file_outside_a_domain_folder_without_domain_ops_is_refused(tmp_path):
    p = write(tmp_path, GOOD, folder="mine")
    with pytest.raises(ValueError, match="domain: cannot tell the domain"):
        load_task_file(p)


def test_task_dir_reads_domain_folders_and_names_an_empty_folder(tmp_path):
    write(tmp_path, GOOD, "b.json")
    write(tmp_path, GOOD, "a.json")
    loaded = load_task_dir(tmp_path)
    assert [(d, t["id"]) for d, t in loaded] == [("financial_analysis", "a"), ("financial_analysis", "b")]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no \\*.json task file"):
        load_task_dir(empty)
    with pytest.raises(ValueError, match="is not a folder"):
        load_task_dir(tmp_path / "missing")


def test_summarize_domain_formulas_by_hand():
    values = [
        # passed, 2 of 2 evaluators, 4 steps
        {
            "passed": 1.0,
            "evaluator_score": 1.0,
            "steps": 4.0,
            "format_passed": 1.0,
            "format_total": 1.0,
            "static_passed": 1.0,
            "static_total": 1.0,
            "dynamic_passed": 0.0,
            "dynamic_total": 0.0,
        },
        # failed, 1 of 4 evaluators, 10 steps
        {
            "passed": 0.0,
            "evaluator_score": 0.25,
            "steps": 10.0,
            "format_passed": 1.0,
            "format_total": 1.0,
            "static_passed": 0.0,
            "static_total": 1.0,
            "dynamic_passed": 0.0,
            "dynamic_total": 2.0,
        },
        # passed, 3 of 3, 6 steps
        {
            "passed": 1.0,
            "evaluator_score": 1.0,
            "steps": 6.0,
            "format_passed": 0.0,
            "format_total": 0.0,
            "static_passed": 1.0,
            "static_total": 1.0,
            "dynamic_passed": 2.0,
            "dynamic_total": 2.0,
        },
    ]
    out = summarize_domain("d", values)
    assert out["d.pass_rate"] == pytest.approx(2 / 3)
    assert out["d.evaluator_score"] == pytest.approx(2.25 / 3)
    assert out["d.avg_steps_passed"] == pytest.approx(5.0)
    assert out["d.avg_steps"] == pytest.approx(20 / 3)
    assert out["d.format_pass_rate"] == pytest.approx(1.0)
    assert out["d.static_pass_rate"] == pytest.approx(2 / 3)
    assert out["d.dynamic_pass_rate"] == pytest.approx(0.5)
    assert out["d.tasks"] == 3.0
    none_passed = summarize_domain("d", [values[1]])
    assert none_passed["d.avg_steps_passed"] is None and none_passed["d.pass_rate"] == 0.0


def test_a_file_under_the_wrong_domain_folder_is_refused(tmp_path):
    data = dict(GOOD, evaluators=[{"func": "json", "op": "yfinance.check_net_income", "op_args": {}}])
    p = write(tmp_path, data, folder="location_navigation")
    with pytest.raises(ValueError) as info:
        load_task_file(p, domain="location_navigation")
    assert str(info.value) == (
        f"{p}: evaluators: use financial_analysis ops but the task is filed as "
        "'location_navigation'; fix: move the file under a 'financial_analysis' folder"
    )
    p = write(tmp_path, dict(GOOD, domain="weather"), folder="financial_analysis")
    with pytest.raises(
        ValueError,
        match="domain: says 'weather' but the file is under a 'financial_analysis' "
        "folder; fix: remove the field or move the file",
    ):
        load_task_file(p, domain="financial_analysis")


@pytest.mark.parametrize("value", [0, -3, "abc", 2.5, True])
def test_a_bad_profile_max_iterations_is_refused(value):
    from pytest_egi.suite import SuiteProfile
    from suites.mcp_universe import SUITE

    profile = SuiteProfile(categories=["financial_analysis"], limit=1, max_iterations=value)
    with pytest.raises(ValueError) as info:
        SUITE.load_tasks(profile, {})
    assert str(info.value) == (
        f"max_iterations in the profile is {value!r}; fix: give a whole "
        "number of model calls of at least 1 (upstream's configs use 20)"
    )


WEB_SEARCH_REAL_WORLD = {
    "category": "general",
    "question": "Who won the 1998 FIFA World Cup?",
    "output_format": {"answer": "[Your answer]"},
    "mcp_servers": [{"name": "google-search"}, {"name": "fetch"}],
    "evaluators": [{"func": "raw", "op": "google_search.llm_as_a_judge",
                    "op_args": {"question": "Who won the 1998 FIFA World Cup?", "correct_answer": "France"}}],
}  # fmt: skip
"""A web_search task file about the real world: the local data cannot answer it."""


WORLD_CUP_REASON = (
    "this web_search question asks about the real world (reference answer 'France'); the local "
    "search and fetch servers serve only an invented corpus, which holds no real-world facts, so "
    "no local search can support the answer"
)


def test_each_file_of_a_folder_is_loaded_skipped_or_errors_alone(tmp_path):
    """A good file, a real-world web_search file (skipped), a notion file (skipped), a bad file
    in a domain folder and a broken one outside any (both error): one task each, in file order,
    with the reason; the warnings count them per domain. The old loader refused the whole folder
    at the first bad file."""
    good = write(tmp_path, GOOD)
    world = write(tmp_path, WEB_SEARCH_REAL_WORLD, "world_cup.json", "web_search")
    notion = write(tmp_path, dict(GOOD, mcp_servers=[{"name": "notion"}]), "notes.json")
    bad = write(tmp_path, dict(GOOD, qestion="typo"), "typo.json")
    broken = write(tmp_path, "{oops", "broken.json", "mine")
    options = McpUniverseOptions(task_dir=tmp_path)
    tasks = McpUniverseSuite().load_tasks(SuiteProfile(seed=7), options)
    assert [(t.category, t.id) for t in tasks] == [
        ("financial_analysis", "notes"),
        ("financial_analysis", "task_0001"),
        ("financial_analysis", "typo"),
        ("web_search", "world_cup"),
        ("unknown", "broken"),
    ]
    by_id = {t.id: t for t in tasks}
    # Task.cannot_run / Task.load_error since issue 22: the core skips or errors the item, and
    # its data warning counts them per category (the suite's own lines and check_runnable are gone)
    assert by_id["task_0001"].runnable
    assert by_id["task_0001"].data["source"] == str(good)
    assert by_id["world_cup"].cannot_run == f"{world}: {WORLD_CUP_REASON}"
    assert by_id["world_cup"].data["source"] == str(world)
    assert by_id["notes"].cannot_run.startswith(f"{notion}: mcp_servers: no local server plays 'notion'")
    assert by_id["typo"].load_error == (
        f"{bad}: task 'typo' could not be loaded: top level: unknown field(s) ['qestion']; fix: use only "
        "['category', 'cleanups', 'domain', 'evaluators', 'id', 'mcp_servers', 'output_format', 'question', "
        "'reference', 'use_specified_server']"
    )
    assert by_id["broken"].load_error.startswith(f"{broken}: task 'broken' could not be loaded: line 1 "
                                                 "column 2: not JSON")  # fmt: skip
    assert McpUniverseSuite().data_warnings([by_id["task_0001"]], options) == {
        "financial_analysis": "financial_analysis: 1 of 1 task file(s) have no reference solution on the "
        "local data, so egi/oracle errors on them (first: task_0001: no solver step for op '=')"
    }


def test_an_evaluator_the_local_data_cannot_check_errors_its_task_alone(tmp_path):
    op_args = {"tickers": ["MSFT"], "start_date": "2010-01-04", "end_date": "2011-01-04",
               "initial_investment": 1000.0, "split": [1.0]}  # fmt: skip
    data = {
        "question": "Value of $1000 in MSFT?",
        "output_format": {"total value": "[NUMBER]"},
        "evaluators": [{"func": "json", "op": "yfinance.check_portfolio_task_output", "op_args": op_args}],
    }
    old = write(tmp_path, data, "old.json")
    write(tmp_path, GOOD)
    tasks = McpUniverseSuite().load_tasks(SuiteProfile(), McpUniverseOptions(task_dir=tmp_path))
    assert [t.id for t in tasks] == ["old", "task_0001"]
    assert tasks[0].load_error == (
        f"{old}: task 'old' could not be loaded: its evaluators cannot be checked on the local data: no "
        "MSFT price on or before 2010-01-04 / 2011-01-04 (the local history starts 2014-01-02); fix: change "
        "the evaluator's value or op_args, or leave the task out"
    )


def test_a_reference_solver_failure_leaves_its_task_without_a_reference(tmp_path, monkeypatch):
    """Any exception of the solver on one file (a defect, like the old IndexError of the
    repository mistakes) is named with the file and the task; the task still runs (a model
    can be scored on it) and egi/oracle errors on it; the other files are solved."""
    from suites.mcp_universe.data.domains import financial_analysis

    def flaky(task, seed):
        if task["id"] == "a":
            raise IndexError("list index out of range")
        return {"calls": [], "answer": '{"count": 3}', "mistake": {"calls": [], "answer": "{}", "fails": [0]}}

    monkeypatch.setattr(financial_analysis, "solve", flaky)
    a = write(tmp_path, GOOD, "a.json")
    write(tmp_path, GOOD, "b.json")
    suite = McpUniverseSuite()
    tasks = suite.load_tasks(SuiteProfile(), McpUniverseOptions(task_dir=tmp_path))
    assert tasks[0].data["unsolvable"] == (
        f"the reference solver failed on {a} (task a): IndexError: list index out of range"
    )
    assert "reference" not in tasks[0].data and tasks[1].data["reference"]
    with pytest.raises(
        RuntimeError, match=r"no reference solution for task 'a' on the local data: the reference"
    ):
        suite.reference_policy(tasks[0], McpUniverseOptions(task_dir=tmp_path), None)


QUICK_42 = [
    f"financial_analysis-{k:03d}"
    for k in (2, 3, 5, 8, 9, 10, 14, 15, 16, 19, 20, 22, 24, 27, 31, 32, 33, 36, 39, 40)
]
"""The quick profile's generated tasks for seed 42 (routing.yaml: financial_analysis, limit 20)."""


@pytest.fixture
def light_generation(monkeypatch):
    """Generated tasks as their ids alone (``<domain>-NNN``, upstream-sized, as the domains
    generate them): the selection depends on nothing else, and solving 40 tasks takes a minute."""
    from suites.mcp_universe.data import tasks

    def generated(domain, seed, count=None):
        return [{"id": f"{domain}-{k:03d}"} for k in range(1, tasks.UPSTREAM_COUNTS[domain] + 1)]

    monkeypatch.setattr(tasks, "generated_tasks", generated)


def test_the_quick_profile_keeps_a_seeded_sample_of_the_generated_tasks(light_generation):
    """limit 20 of the 40 generated financial_analysis tasks: the same 20 for seed 42 on every
    load, in task order, not the first 20 (the old selection); another seed draws others."""
    from pytest_egi.scoring.config import load_routing

    profile = load_routing(upstream.ROOT / "routing.yaml")[0].profile("quick", "mcp_universe")
    assert (profile.seed, profile.categories, profile.limit) == (42, ["financial_analysis"], 20)
    suite = McpUniverseSuite()
    ids = [t.id for t in suite.load_tasks(profile, {})]
    assert ids == QUICK_42
    assert [t.id for t in suite.load_tasks(profile, {})] == ids
    assert ids != [f"financial_analysis-{k:03d}" for k in range(1, 21)]
    other = [t.id for t in suite.load_tasks(profile.model_copy(update={"seed": 7}), {})]
    assert len(other) == 20 and other != ids


def test_per_category_and_limit_draw_seeded_samples_per_domain_then_over_all(light_generation):
    profile = SuiteProfile(seed=42, categories=["financial_analysis", "web_search"], per_category=4, limit=5)
    tasks = McpUniverseSuite().load_tasks(profile, {})
    fa = seeded_sample(
        [f"financial_analysis-{k:03d}" for k in range(1, 41)], 4, 42, "per_category|financial_analysis"
    )
    ws = seeded_sample([f"web_search-{k:03d}" for k in range(1, 56)], 4, 42, "per_category|web_search")
    assert [t.id for t in tasks] == seeded_sample(fa + ws, 5, 42, "limit")
    assert len(tasks) == 5


def test_seeded_sample_keeps_order_and_is_deterministic():
    items = list("abcdefghij")
    assert seeded_sample(items, 4, 42, "x") == seeded_sample(items, 4, 42, "x")
    picked = seeded_sample(items, 4, 42, "x")
    assert len(picked) == 4 and picked == sorted(picked)
    assert seeded_sample(items, None, 42, "x") == items == seeded_sample(items, 10, 42, "x")


@upstream.needs_upstream("financial_analysis")
def test_a_task_folder_honours_the_quick_limit_with_a_seeded_sample():
    """Upstream's 27 financial_analysis files under the quick profile: 20 of them (the old
    loader ran the whole folder), the same 20 for seed 42."""
    from pytest_egi.scoring.config import load_routing

    profile = load_routing(upstream.ROOT / "routing.yaml")[0].profile("quick", "mcp_universe")
    options = McpUniverseOptions(task_dir=upstream.TASK_ROOT / "financial_analysis")
    ids = [t.id for t in McpUniverseSuite().load_tasks(profile, options)]
    assert len(upstream.task_files("financial_analysis")) == 27
    assert ids == [f"yfinance_task_{k:04d}" for k in FOLDER_42]
    assert [t.id for t in McpUniverseSuite().load_tasks(profile, options)] == ids


FOLDER_42 = (1, 2, 4, 5, 7, 10, 11, 14, 16, 22, 23, 25, 26, 28, 29, 31, 32, 35, 38, 40)
"""The numbers of upstream's financial_analysis files the quick profile keeps for seed 42."""
