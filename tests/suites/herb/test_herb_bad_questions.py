"""One bad question of a HERB corpus errors alone (issue 22, DESIGN §9.3).

Before, one question with a gold of the wrong type (or any other bad field) refused the whole
corpus (exit 4). Now its task errors alone, naming the product file, the task, the question,
the field and the fix; the other questions run and egi/oracle passes them, serially and under
``-n 2``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_egi.run.recorder import shorten
from pytest_egi.suite import TaskLoadError
from suites.herb.data import dump_world
from suites.herb.data.generator import generate_world

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    """A one-product generated world written as a corpus (with recipes, so the oracle answers),
    its second person question given a bare string as gold: (root, its question, questions)."""
    world = generate_world(seed=3, products=1)
    root = dump_world(world, tmp_path_factory.mktemp("herb-bad") / "data")
    (file,) = (root / "products").glob("*.json")
    product = json.loads(file.read_text())
    people = [i for i, q in enumerate(product["answerable_questions"]) if q["type"] == "person"]
    question = product["answerable_questions"][people[1]]
    question["ground_truth"] = question["ground_truth"][0]
    file.write_text(json.dumps(product))
    return root, question, people[1]


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "n2"])
def test_one_bad_question_among_good_ones_errors_alone(pytester, corpus, workers):
    root, question, index = corpus
    result = pytester.runpytest(
        str(ROOT / "suites" / "herb"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "egi/oracle", "--egi-report-dir", str(pytester.path / "reports"),
        "--egi-bootstrap", "0", "--egi-opt", f"herb.corpus={root}", *workers,
    )  # fmt: skip
    run = next((pytester.path / "reports").iterdir())
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    statuses = [r["status"] for r in records]
    assert statuses.count("error") == 1 and statuses.count("passed") == len(records) - 1 > 20
    result.assert_outcomes(passed=len(records) - 1, errors=1)
    (file,) = (root / "products").glob("*.json")
    gold = question["ground_truth"]
    message = (
        f"TaskLoadError: {file}: task 'herb-person-002' could not be loaded: QuestionError: "
        f"answerable_questions[{index}] ({question['question'][:50]!r}): field 'ground_truth' must be a "
        f"non-empty list of strings (the entities) for a 'person' question, got a string {gold!r}. Fix: "
        f"write the entities as a JSON list, e.g. [{json.dumps(gold)}], and pass the corrected corpus with "
        "--egi-opt herb.corpus=PATH. (this task errors alone; fix the entry or leave it out)"
    )
    assert [(r["task_id"], r["error"]) for r in records if r["status"] == "error"] == [
        ("herb-person-002", shorten(message, hint=TaskLoadError(message).hint))
    ]
