"""A HERB question whose text is empty or whitespace is refused as bad data (issue 23): a usage
error (exit 4) naming the file (or the generated world), the task, the field and the fix. Before,
it loaded: the agent was asked nothing, and an empty unanswerable question credited any
abstention."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

import suites.herb as herb
from pytest_egi.suite import SuiteProfile
from suites.herb import SUITE, HerbOptions
from suites.herb.data import World, load_corpus
from tests.suites.herb.test_herb_data import _product, _write

ROOT = Path(__file__).resolve().parents[3]
FIX = "and pass the corrected corpus with --egi-opt herb.corpus=PATH."


def _refused(tmp_path: Path, mutate) -> tuple[Path, str]:
    product = _product()
    mutate(product)
    root = _write(tmp_path / "data", product)
    with pytest.raises(ValueError) as info:
        load_corpus(root)
    return root / "products" / "TestForce.json", str(info.value)


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_an_empty_answerable_question_is_refused(tmp_path: Path, text: str) -> None:
    file, message = _refused(tmp_path, lambda p: p["answerable_questions"][1].update(question=text))
    assert message == (
        f"{file}: answerable_questions[1] (task herb-content-001, {text!r}): field 'question' must be a "
        f"non-empty string (the question's text), got a string {text!r}. Fix: write the question's text "
        f"(or drop the question), {FIX}"
    )


def test_an_empty_unanswerable_question_is_refused(tmp_path: Path) -> None:
    file, message = _refused(tmp_path, lambda p: p["unanswerable_questions"].extend(["Fine?", " "]))
    assert message == (
        f"{file}: unanswerable_questions[2] (task herb-unans-003): the question is empty (' '). Fix: "
        f"write the question's text (or drop the entry), {FIX}"
    )


def test_an_empty_question_through_the_plugin_is_exit_4(pytester: pytest.Pytester, tmp_path: Path) -> None:
    product = _product()
    product["unanswerable_questions"] = [""]
    root = _write(tmp_path / "data", product)
    result = pytester.runpytest(
        str(ROOT / "suites" / "herb"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "egi/oracle", "--egi-report-dir", str(pytester.path / "reports"),
        "--egi-opt", f"herb.corpus={root}",
    )  # fmt: skip
    assert result.ret == 4
    file = root / "products" / "TestForce.json"
    assert (
        f"ERROR: herb: {file}: unanswerable_questions[0] (task herb-unans-001): the question is empty (''). "
        "Fix: write the question's text (or drop the entry), and pass the corrected corpus with --egi-opt "
        f"herb.corpus=PATH. (from --egi-opt herb.corpus={root})"
    ) in result.stderr.lines


def test_an_empty_question_in_a_generated_world_is_refused(monkeypatch, small_world: World) -> None:
    world = copy.copy(small_world)
    world.questions = [dict(q) for q in small_world.questions]
    target = next(i for i, q in enumerate(world.questions) if not q["answerable"])
    world.questions[target]["question"] = "  "
    number = sum(1 for q in world.questions[: target + 1] if not q["answerable"])
    monkeypatch.setattr(herb, "get_world", lambda spec: world)
    with pytest.raises(ValueError) as info:
        SUITE.load_tasks(SuiteProfile(seed=5), HerbOptions(products=2))
    assert str(info.value) == (
        f"the generated HERB world (seed 5, 2 products; suites/herb/generator.py): product "
        f"{world.questions[target]['product']!r}: task herb-unans-{number:03d}: field 'question' must be a "
        "non-empty string, got '  '. Fix: a generator bug: report it with the seed, and run with another "
        "--egi-seed meanwhile."
    )
