"""HERB gold that the scorer cannot compare is refused when the corpus is loaded, naming the
file, the question (position and task id), the field, the expected type and the fix.

Since issue 22 the question errors alone (its task's ``load_error``; the other questions run);
before, the whole corpus was refused (exit 4). The messages are the same, the file and the
task now named first by the core's :func:`~pytest_egi.suite.load_each`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_egi.suite import SuiteProfile
from suites.herb import SUITE, HerbOptions
from tests.suites.herb.test_herb_data import _product, _write

ROOT = Path(__file__).resolve().parents[3]
FIX = "and pass the corrected corpus with --egi-opt herb.corpus=PATH."
ALONE = " (this task errors alone; fix the entry or leave it out)"


def _refused(tmp_path: Path, mutate: Any) -> tuple[Path, str]:
    """The product file and the ``load_error`` of its one question that cannot run."""
    product = _product()
    mutate(product)
    root = _write(tmp_path / "data", product)
    tasks = SUITE.load_tasks(SuiteProfile(seed=1), HerbOptions(corpus=root))
    broken = [t.load_error for t in tasks if t.load_error]
    assert len(broken) == 1 and len(tasks) == 3
    return root / "products" / "TestForce.json", broken[0]


def test_a_string_where_a_list_of_entities_is_expected(tmp_path: Path) -> None:
    file, message = _refused(
        tmp_path, lambda p: p["answerable_questions"][0].update(ground_truth="eid_0000aaaa")
    )
    assert message == (
        f"{file}: task 'herb-person-001' could not be loaded: QuestionError: answerable_questions[0] "
        "('Who wrote the TestForce PRD?'): field 'ground_truth' must be a non-empty list of strings (the "
        "entities) for a 'person' question, got a string 'eid_0000aaaa'. Fix: write the entities as a "
        f'JSON list, e.g. ["eid_0000aaaa"], {FIX}{ALONE}'
    )


def test_an_empty_entity_list_can_never_score(tmp_path: Path) -> None:
    _, message = _refused(tmp_path, lambda p: p["answerable_questions"][0].update(ground_truth=[]))
    assert "field 'ground_truth' must be a non-empty list of strings" in message
    assert "got an empty list. Fix:" in message


def test_a_list_where_the_content_reference_text_is_expected(tmp_path: Path) -> None:
    file, message = _refused(tmp_path, lambda p: p["answerable_questions"][1].update(ground_truth=["99.9%"]))
    assert message == (
        f"{file}: task 'herb-content-001' could not be loaded: QuestionError: answerable_questions[1] "
        "('What uptime target does the TestForce PRD set?'): field 'ground_truth' must be a non-empty "
        "string (the reference answer) for a 'content' question, got a list holding str. Fix: write the "
        f"reference answer as one JSON string, {FIX}{ALONE}"
    )


def test_a_non_bool_answerable(tmp_path: Path) -> None:
    file, message = _refused(tmp_path, lambda p: p["answerable_questions"][0].update(answerable="yes"))
    assert message == (
        f"{file}: task 'herb-person-001' could not be loaded: QuestionError: answerable_questions[0] "
        "('Who wrote the TestForce PRD?'): field 'answerable' must be true (a boolean) in "
        "answerable_questions, got a string 'yes'. Fix: drop the key or set it to true; unanswerable "
        f"questions go in unanswerable_questions as plain strings, {FIX}{ALONE}"
    )


def test_key_facts_of_the_wrong_type(tmp_path: Path) -> None:
    _, message = _refused(tmp_path, lambda p: p["answerable_questions"][1].update(facts="99.9%"))
    expected = "field 'facts' must be a list of strings (key facts of the answer), got a string '99.9%'"
    assert expected in message


def test_a_missing_field_names_the_question_field_and_fix(tmp_path: Path) -> None:
    file, message = _refused(tmp_path, lambda p: p["answerable_questions"][0].pop("ground_truth"))
    assert message.startswith(f"{file}: task 'herb-person-001' could not be loaded: QuestionError: field "
                              "answerable_questions[0].ground_truth: Field required. Fix: ")  # fmt: skip


def test_task_ids_count_across_product_files(tmp_path: Path) -> None:
    root = _write(tmp_path / "data", _product())
    second = _product()
    second["answerable_questions"][0]["ground_truth"] = "eid_0000bbbb"
    (root / "products" / "ZetaForce.json").write_text(json.dumps(second))
    tasks = SUITE.load_tasks(SuiteProfile(seed=1), HerbOptions(corpus=root))
    assert [t.id for t in tasks if t.load_error] == ["herb-person-002"]
    assert next(t.load_error for t in tasks if t.load_error).startswith(
        f"{root / 'products' / 'ZetaForce.json'}: task 'herb-person-002' could not be loaded: "
        "QuestionError: answerable_questions[0] ("
    )


def test_wrong_gold_type_through_the_plugin_errors_alone(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """Behaviour changed on purpose (issue 22): exit 4 for the whole corpus before; now the
    question's item errors and the other questions run."""
    product = _product()
    product["answerable_questions"][0]["ground_truth"] = "eid_0000aaaa"
    root = _write(tmp_path / "data", product)
    result = pytester.runpytest(
        str(ROOT / "suites" / "herb"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "egi/oracle", "--egi-report-dir", str(pytester.path / "reports"),
        "--egi-opt", f"herb.corpus={root}",
    )  # fmt: skip
    result.assert_outcomes(passed=1, failed=1, errors=1)  # without recipes the oracle abstains
    result.stdout.fnmatch_lines([
        # the one-line reason keeps its start and the suite's fix whole (a long path costs the middle)
        "*herb-person-001*: TaskLoadError: /*... Fix: write the entities as a JSON "
        "list, e.g. [[]\"eid_0000aaaa\"[]], and pass the corrected corpus with --egi-opt herb.corpus=PATH. "
        "(this task errors alone; fix the entry or leave it out)"
    ])  # fmt: skip
