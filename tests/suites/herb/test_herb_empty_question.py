"""A HERB question whose text is empty or whitespace is refused as bad data (issue 23), naming
the file (or the generated world), the task, the field and the fix. Before, it loaded: the agent
was asked nothing, and an empty unanswerable question credited any abstention.

Since issue 22 that question's task errors alone (``Task.load_error``) and the other questions
run; before, the whole corpus was refused (exit 4)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

import suites.herb as herb
from pytest_egi.run.recorder import shorten
from pytest_egi.suite import SuiteProfile, TaskLoadError
from suites.herb import SUITE, HerbOptions
from suites.herb.data import World
from tests.suites.herb.test_herb_data import _product, _write

ROOT = Path(__file__).resolve().parents[3]
FIX = "and pass the corrected corpus with --egi-opt herb.corpus=PATH."
ALONE = " (this task errors alone; fix the entry or leave it out)"


def _refused(tmp_path: Path, mutate) -> tuple[Path, str]:
    """The product file and the ``load_error`` of its one question that cannot run."""
    product = _product()
    mutate(product)
    root = _write(tmp_path / "data", product)
    broken = [t.load_error for t in SUITE.load_tasks(SuiteProfile(seed=1), HerbOptions(corpus=root))
              if t.load_error]  # fmt: skip
    assert len(broken) == 1
    return root / "products" / "TestForce.json", broken[0]


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_an_empty_answerable_question_is_refused(tmp_path: Path, text: str) -> None:
    file, message = _refused(tmp_path, lambda p: p["answerable_questions"][1].update(question=text))
    assert message == (
        f"{file}: task 'herb-content-001' could not be loaded: QuestionError: answerable_questions[1] "
        f"({text!r}): field 'question' must be a non-empty string (the question's text), got a string "
        f"{text!r}. Fix: write the question's text (or drop the question), {FIX}{ALONE}"
    )


def test_an_empty_unanswerable_question_is_refused(tmp_path: Path) -> None:
    file, message = _refused(tmp_path, lambda p: p["unanswerable_questions"].extend(["Fine?", " "]))
    assert message == (
        f"{file}: task 'herb-unans-003' could not be loaded: QuestionError: unanswerable_questions[2]: the "
        f"question is empty (' '). Fix: write the question's text (or drop the entry), {FIX}{ALONE}"
    )


def test_an_empty_question_through_the_plugin_errors_alone(pytester: pytest.Pytester, tmp_path: Path) -> None:
    product = _product()
    product["unanswerable_questions"] = ["", "Fine?"]
    root = _write(tmp_path / "data", product)
    result = pytester.runpytest(
        str(ROOT / "suites" / "herb"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "egi/oracle", "--egi-report-dir", str(pytester.path / "reports"),
        "--egi-opt", f"herb.corpus={root}",
    )  # fmt: skip
    result.assert_outcomes(passed=1, failed=2, errors=1)  # without recipes the oracle abstains
    file = root / "products" / "TestForce.json"
    message = (
        f"TaskLoadError: {file}: task 'herb-unans-001' could not be loaded: QuestionError: "
        "unanswerable_questions[0]: the question is empty (''). Fix: write the question's text (or drop "
        f"the entry), {FIX}{ALONE}"
    )  # the item's one-line report: the core's rendering of its TaskLoadError
    reason = shorten(message, hint=TaskLoadError(message).hint)
    assert f"suites/herb/test_herb.py::test_task[herb-unans-001]: {reason}" in result.stdout.lines


def test_an_empty_question_in_a_generated_world_errors_alone(monkeypatch, small_world: World) -> None:
    world = copy.copy(small_world)
    world.questions = [dict(q) for q in small_world.questions]
    target = next(i for i, q in enumerate(world.questions) if not q["answerable"])
    world.questions[target]["question"] = "  "
    number = sum(1 for q in world.questions[: target + 1] if not q["answerable"])
    monkeypatch.setattr(herb, "get_world", lambda spec: world)
    tasks = SUITE.load_tasks(SuiteProfile(seed=5), HerbOptions(products=2))
    assert len(tasks) == len(world.questions)
    assert [(t.id, t.load_error) for t in tasks if t.load_error] == [(
        f"herb-unans-{number:03d}",
        f"the generated HERB world (seed 5, 2 products; suites/herb/data/generator.py): task "
        f"'herb-unans-{number:03d}' could not be loaded: QuestionError: product "
        f"{world.questions[target]['product']!r}: field 'question' must be a non-empty string, got '  '. "
        f"Fix: a generator bug: report it with the seed, and run with another --egi-seed meanwhile.{ALONE}",
    )]  # fmt: skip
