"""The constant-answer check: the core helper, both suites' implementations, the shipped quick
profiles, and the warnings' way to the terminal, egi.json and report.html (serial and -n 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_egi.collect.checks import constant_answer_warnings, merge_data_warnings
from pytest_egi.suite import SuiteProfile, Task

ROOT = Path(__file__).resolve().parents[1]


def _task(category: str, n: int, gold: str) -> Task:
    return Task(id=f"{category}-{n}", category=category, data={"gold": gold})


def _exact(task: Task, answer: str) -> float:
    return float(answer == task.data["gold"])


# -- the core helper -------------------------------------------------------------------------------


def test_flags_only_a_category_one_answer_clears():
    tasks = [
        _task("A", 1, "x"), _task("A", 2, "x"), _task("A", 3, "x"),  # degenerate
        _task("B", 1, "x"), _task("B", 2, "y"),  # two golds: no single answer clears B
        _task("C", 1, "z"),  # one task: not judged
    ]  # fmt: skip
    flags = constant_answer_warnings(tasks, lambda t: [t.data["gold"]], _exact)
    assert flags == {"A": "A: the answer 'x' scores 1.00 on all 3 tasks"}


def test_a_lenient_scorer_is_what_gets_flagged():
    # golds differ, but the scorer credits any answer containing "none" on every task
    tasks = [_task("P", 1, "None"), _task("P", 2, "none at all")]
    lenient = lambda t, a: float("none" in a.lower())  # noqa: E731
    flags = constant_answer_warnings(tasks, lambda t: [t.data["gold"]], lenient)
    assert flags == {"P": "P: the answer 'None' scores 1.00 on all 2 tasks"}


def test_full_marks_scale_exemptions_and_min_tasks():
    tasks = [_task("A", 1, "x"), _task("A", 2, "x"), _task("U", 1, "abstain"), _task("U", 2, "abstain")]
    score = lambda t, a: 100.0 * _exact(t, a)  # noqa: E731
    assert constant_answer_warnings(tasks, lambda t: [t.data["gold"]], score, full=100.0, exempt={"U"}) == {
        "A": "A: the answer 'x' scores 100.00 on all 2 tasks"
    }
    assert constant_answer_warnings(tasks, lambda t: [t.data["gold"]], _exact, min_tasks=3) == {}


def test_candidates_stop_at_their_first_miss():
    calls: list[tuple[str, str]] = []

    def score(task: Task, answer: str) -> float:
        calls.append((task.id, answer))
        return _exact(task, answer)

    tasks = [_task("A", n, g) for n, g in enumerate("abcd")]
    assert constant_answer_warnings(tasks, lambda t: [t.data["gold"]], score) == {}
    # 'a' passes A-0 and misses A-1; 'b', 'c', 'd' each miss A-0
    assert calls == [("A-0", "a"), ("A-1", "a"), ("A-0", "b"), ("A-0", "c"), ("A-0", "d")]


def test_merge_keeps_one_entry_per_suite_and_category_sorted():
    into = [{"suite": "s", "category": "B", "warning": "B: w"}]
    merge_data_warnings(into, [{"suite": "s", "category": "A", "warning": "A: w"},
                               {"suite": "s", "category": "B", "warning": "B: w"}])  # fmt: skip
    assert [e["category"] for e in into] == ["A", "B"]


# -- the suites -------------------------------------------------------------------------------------


def test_shipped_quick_profiles_have_no_degenerate_category():
    """Both suites' quick profiles, as shipped: no category is cleared by one constant answer
    (HERB's unanswerable category is exempt by design, see HerbSuite.constant_by_design)."""
    from suites.crmarena import SUITE as CRM
    from suites.crmarena import CrmArenaOptions
    from suites.herb import SUITE as HERB
    from suites.herb import HerbOptions

    crm_tasks = CRM.load_tasks(SuiteProfile(seed=42, per_category=6), CrmArenaOptions())
    assert CRM.constant_answer_check(crm_tasks, CrmArenaOptions()) == {}
    herb_tasks = HERB.load_tasks(SuiteProfile(seed=42, answerable=40, unanswerable=40), HerbOptions())
    assert HERB.constant_answer_check(herb_tasks, HerbOptions()) == {}
    # without the exemption the abstention would be flagged on every run
    from pytest_egi.collect.checks import constant_answer_warnings as check

    unans = [t for t in herb_tasks if t.category == "unanswerable"]
    abstain = {"answer": "I don't know.", "answerable": False}

    def abstained(task: Task, answer: dict) -> float:
        return HERB.score(task, {"final_answer": answer}, HerbOptions()).values["abstained"]

    flags = check(unans, lambda t: [abstain], abstained)
    assert flags == {"unanswerable": "unanswerable: the answer {\"answer\": \"I don't know.\", "
                     "\"answerable\": false} scores 1.00 on all 40 tasks"}  # fmt: skip


def test_herb_rigged_person_category_is_flagged(tmp_path):
    from suites.herb import SUITE as HERB
    from suites.herb import HerbOptions
    from tests.suites.herb.test_herb_data import _product, _write

    product = _product()
    second = dict(product["answerable_questions"][0], question="Who owns the TestForce PRD?")
    product["answerable_questions"].append(second)  # same gold ["eid_0000aaaa"] twice
    root = _write(tmp_path / "data", product)
    options = HerbOptions(corpus=root)
    tasks = HERB.load_tasks(SuiteProfile(seed=1), options)
    assert HERB.constant_answer_check(tasks, options) == {
        "person": "person: the answer 'eid_0000aaaa' scores 1.00 on all 2 tasks"
    }


# -- through the plugin ------------------------------------------------------------------------------


def _pvi_none_task_file(tmp_path: Path) -> Path:
    """Three PVI tasks whose gold really is None on the org (no rigged gold: the oracle passes)."""
    from suites.crmarena.data.tasks import generate_tasks
    from suites.crmarena.env.org import Org

    org = Org.generate(seed=7, scale="quick")
    records = generate_tasks(org, seed=7, per_category=20)
    pvi = [r for r in records if r["task"] == "policy_violation_identification"]
    none = [r for r in pvi if r["answer"] == [None]]
    path = tmp_path / "pvi_none.json"
    path.write_text(json.dumps(none[:3]))
    return path


@pytest.mark.parametrize("dist", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_degenerate_category_is_flagged_in_terminal_egi_json_and_html(pytester, tmp_path, dist, capsys):
    task_file = _pvi_none_task_file(tmp_path)
    out = pytester.path / "reports"
    result = pytester.runpytest(
        str(ROOT / "suites" / "crmarena"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "egi/oracle", "--egi-report-dir", str(out), "--egi-bootstrap", "0",
        "--egi-seed", "7", "--egi-opt", f"crmarena.tasks={task_file}", *dist,
    )  # fmt: skip
    result.assert_outcomes(passed=3)
    warning = "PVI: the answer 'None' scores 1.00 on all 3 tasks"
    result.stdout.fnmatch_lines([f"data warning (crmarena): {warning}"])
    run_dir = next(out.iterdir())
    egi = json.loads((run_dir / "egi.json").read_text())
    absent = [
        {"suite": "crmarena", "category": c, "warning": f"{c}: no task of this category was loaded, "
         "so its sub-metrics are missing (the task data holds none)"}
        for c in sorted(("NCR", "HTU", "TCU", "NED", "KQA", "TII", "MTA", "BRI"))
    ]
    expected = sorted([*absent, {"suite": "crmarena", "category": "PVI", "warning": warning}],
                      key=lambda e: e["category"])
    assert egi["data_warnings"] == expected
    result.stdout.fnmatch_lines(["data warning (crmarena): NCR: no task of this category was loaded*"])
    html = (run_dir / "report.html").read_text()
    assert "data warning</span> crmarena: PVI: the answer &#39;None&#39; scores 1.00 on all 3 tasks" in html
    if dist:
        return
    # egi-bench report and report --rescore keep the warning
    from pytest_egi.cli import main

    assert main(["report", str(run_dir)]) == 0
    assert f"data warning (crmarena): {warning}" in capsys.readouterr().out
    assert main(["report", "--rescore", str(run_dir)]) == 0
    rescored = next(p for p in run_dir.iterdir() if p.name.startswith("rescore-"))
    assert json.loads((rescored / "egi.json").read_text())["data_warnings"] == egi["data_warnings"]


@pytest.mark.parametrize("dist", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_task_file_with_no_task_is_a_usage_error(pytester, tmp_path, dist):
    """An empty task file used to run nothing of the suite, exit 0, and report the suite as
    'not installed here'."""
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    result = pytester.runpytest(
        str(ROOT / "suites" / "crmarena"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "egi/oracle", "--egi-report-dir", str(pytester.path / "r"),
        "--egi-opt", f"crmarena.tasks={empty}", *dist,
    )  # fmt: skip
    assert result.ret == 4
    result.stderr.fnmatch_lines([
        f"ERROR: crmarena: no task to run: the suite loaded none for the quick profile "
        f"(from --egi-opt crmarena.tasks={empty})"])


def test_no_warning_no_line(pytester):
    result = pytester.runpytest(
        str(ROOT / "suites" / "crmarena"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "egi/oracle", "--egi-report-dir", str(pytester.path / "r"), "--egi-bootstrap", "0",
        "-k", "NCR",
    )  # fmt: skip
    assert "data warning" not in result.stdout.str()
    egi = json.loads((next((pytester.path / "r").iterdir()) / "egi.json").read_text())
    assert egi["data_warnings"] == []
