"""HERB gold that the scorer cannot compare is refused when the corpus is loaded, naming the
file, the question (position and task id), the field, the expected type and the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from suites.herb.data import load_corpus
from tests.suites.herb.test_herb_data import _product, _write

ROOT = Path(__file__).resolve().parents[3]
FIX = "and pass the corrected corpus with --egi-opt herb.corpus=PATH."


def _refused(tmp_path: Path, mutate: Any) -> tuple[Path, str]:
    product = _product()
    mutate(product)
    root = _write(tmp_path / "data", product)
    with pytest.raises(ValueError) as info:
        load_corpus(root)
    return root / "products" / "TestForce.json", str(info.value)


def test_a_string_where_a_list_of_entities_is_expected(tmp_path: Path) -> None:
    file, message = _refused(
        tmp_path, lambda p: p["answerable_questions"][0].update(ground_truth="eid_0000aaaa")
    )
    assert message == (
        f"{file}: answerable_questions[0] (task herb-person-001, 'Who wrote the TestForce PRD?'): "
        "field 'ground_truth' must be a non-empty list of strings (the entities) for a 'person' "
        "question, got a string 'eid_0000aaaa'. Fix: write the entities as a JSON list, e.g. "
        f'["eid_0000aaaa"], {FIX}'
    )


def test_an_empty_entity_list_can_never_score(tmp_path: Path) -> None:
    _, message = _refused(tmp_path, lambda p: p["answerable_questions"][0].update(ground_truth=[]))
    assert "field 'ground_truth' must be a non-empty list of strings" in message
    assert "got an empty list." in message


def test_a_list_where_the_content_reference_text_is_expected(tmp_path: Path) -> None:
    file, message = _refused(tmp_path, lambda p: p["answerable_questions"][1].update(ground_truth=["99.9%"]))
    assert message == (
        f"{file}: answerable_questions[1] (task herb-content-001, 'What uptime target does the "
        "TestForce PRD set?'): field 'ground_truth' must be a non-empty string (the reference answer) "
        "for a 'content' question, got a list holding str. Fix: write the reference answer as one "
        f"JSON string, {FIX}"
    )


def test_a_non_bool_answerable(tmp_path: Path) -> None:
    file, message = _refused(tmp_path, lambda p: p["answerable_questions"][0].update(answerable="yes"))
    assert message == (
        f"{file}: answerable_questions[0] (task herb-person-001, 'Who wrote the TestForce PRD?'): "
        "field 'answerable' must be true (a boolean) in answerable_questions, got a string 'yes'. "
        "Fix: drop the key or set it to true; unanswerable questions go in unanswerable_questions as "
        f"plain strings, {FIX}"
    )


def test_key_facts_of_the_wrong_type(tmp_path: Path) -> None:
    _, message = _refused(tmp_path, lambda p: p["answerable_questions"][1].update(facts="99.9%"))
    expected = "field 'facts' must be a list of strings (key facts of the answer), got a string '99.9%'"
    assert expected in message


def test_a_missing_field_names_the_question_field_and_fix(tmp_path: Path) -> None:
    file, message = _refused(tmp_path, lambda p: p["answerable_questions"][0].pop("ground_truth"))
    assert message.startswith(f"{file}: field answerable_questions[0].ground_truth: Field required. Fix: ")


def test_task_ids_count_across_product_files(tmp_path: Path) -> None:
    root = _write(tmp_path / "data", _product())
    second = _product()
    second["answerable_questions"][0]["ground_truth"] = "eid_0000bbbb"
    (root / "products" / "ZetaForce.json").write_text(json.dumps(second))
    expected = r"ZetaForce\.json: answerable_questions\[0\] \(task herb-person-002,"
    with pytest.raises(ValueError, match=expected):
        load_corpus(root)


def test_wrong_gold_type_through_the_plugin_is_exit_4(pytester: pytest.Pytester, tmp_path: Path) -> None:
    product = _product()
    product["answerable_questions"][0]["ground_truth"] = "eid_0000aaaa"
    root = _write(tmp_path / "data", product)
    result = pytester.runpytest(
        str(ROOT / "suites" / "herb"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "egi/oracle", "--egi-report-dir", str(pytester.path / "reports"),
        "--egi-opt", f"herb.corpus={root}",
    )  # fmt: skip
    assert result.ret == 4
    file = root / "products" / "TestForce.json"
    assert (
        f"ERROR: herb: {file}: answerable_questions[0] (task herb-person-001, 'Who wrote the TestForce "
        "PRD?'): field 'ground_truth' must be a non-empty list of strings (the entities) for a 'person' "
        "question, got a string 'eid_0000aaaa'. Fix: write the entities as a JSON list, e.g. "
        f'["eid_0000aaaa"], {FIX} (from --egi-opt herb.corpus={root})'
    ) in result.stderr.lines
