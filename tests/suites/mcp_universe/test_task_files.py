"""Loading MCP-Universe task files: every mistake is named (file, field, fix) at collection."""

from __future__ import annotations

import json

import pytest

from pytest_egi.suite import SuiteProfile
from suites.mcp_universe import McpUniverseOptions, McpUniverseSuite, not_run, summarize_domain
from suites.mcp_universe.tasks import load_task_dir, load_task_file

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
            lambda t: t.update(evaluators=[{"func": "json", "op": "weather.check_place_type_with_weather"}]),
            "evaluators[0].op: unknown op 'weather.check_place_type_with_weather'; "
            "fix: use an op the suite implements",
        ),
        (
            lambda t: t.update(mcp_servers=[{"name": "notion"}]),
            "mcp_servers: no local server plays 'notion'; fix: use servers the suite provides",
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


def test_the_not_run_warning_needs_only_the_loaded_tasks_and_the_options(tmp_path):
    """Another suite object than the one that loaded the tasks (as after a task cache read)
    names the left-out file; a loaded file is never counted as left out."""
    write(tmp_path, GOOD)
    write(tmp_path, WEB_SEARCH_REAL_WORLD, "world_cup.json", "web_search")
    options = McpUniverseOptions(task_dir=tmp_path)
    tasks = McpUniverseSuite().load_tasks(SuiteProfile(seed=7), options)
    assert [t.id for t in tasks] == ["task_0001"]
    reason = (
        "this web_search question asks about the real world (reference answer 'France'); the local "
        "search and fetch servers serve only an invented corpus, which holds no real-world facts, so "
        "no local search can support the answer"
    )
    assert not_run(tasks, options) == {"web_search": [("world_cup", reason)]}
    assert not_run([], options) == {"web_search": [("world_cup", reason)]}
    assert not_run(tasks, McpUniverseOptions()) == {}  # generated tasks leave none out
    warnings = McpUniverseSuite().data_warnings(tasks, options)
    assert warnings["web_search"] == (
        f"web_search: 1 task file(s) not run: the local data cannot answer them (first: world_cup: {reason})"
    )
