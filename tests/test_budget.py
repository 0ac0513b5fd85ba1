"""Budgeted runs (pytest_egi.collect.budget): parsing, the subsetting rules by hand, learned costs, and
the plan on the toy suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_egi.collect.budget import learn_costs, parse_budget, plan_subset


@pytest.mark.parametrize(
    ("text", "kind", "amount"),
    [("30m", "seconds", 1800.0), ("90s", "seconds", 90.0), ("1.5h", "seconds", 5400.0),
     ("5usd", "usd", 5.0), ("$2.50", "usd", 2.5), ("10 min", "seconds", 600.0)],
)
def test_parse_budget(text, kind, amount):
    got = parse_budget(text)
    assert (got.kind, got.amount, got.text) == (kind, amount, text)


@pytest.mark.parametrize("text", ["30", "5eur", "fast", "0m"])
def test_parse_budget_refuses(text):
    with pytest.raises(pytest.UsageError, match="--egi-budget: "):
        parse_budget(text)


STRATA = {("a", "x"): ["x0", "x1", "x2", "x3", "x4"], ("a", "y"): ["y0", "y1", "y2"],
          ("b", "z"): ["z0", "z1", "z2", "z3"]}
COST = {"a": 1.0, "b": 2.0}
FEEDS = {("a", "x"): {"M1"}, ("a", "y"): {"M1"}, ("b", "z"): {"M2"}}


def test_everything_fits():
    plan = plan_subset(STRATA, COST, 16.0, FEEDS, seed=1)  # 8 * 1 + 4 * 2 = 16
    assert plan.cap is None and plan.dropped == [] and plan.cost == 16.0 and plan.fits
    assert plan.kept == STRATA


def test_tasks_per_category_shrink_first():
    # cap 4: 4 + 3 + 2*4 = 15; cap 3: 3 + 3 + 6 = 12; cap 2: 2 + 2 + 4 = 8 <= 10
    plan = plan_subset(STRATA, COST, 10.0, FEEDS, seed=1)
    assert plan.cap == 2 and plan.dropped == [] and plan.cost == 8.0 and plan.fits
    assert {k: len(v) for k, v in plan.kept.items()} == {("a", "x"): 2, ("a", "y"): 2, ("b", "z"): 2}
    for key, ids in plan.kept.items():  # a seeded draw, kept in collection order
        assert ids == [i for i in STRATA[key] if i in ids]
    assert plan_subset(STRATA, COST, 10.0, FEEDS, seed=1).kept == plan.kept
    draws = {tuple(plan_subset(STRATA, COST, 10.0, FEEDS, seed=s).kept[("a", "x")]) for s in range(20)}
    assert len(draws) > 1  # the seed picks the tasks


def test_a_category_is_dropped_only_below_one_task_each_and_the_most_covered_goes():
    # one task each costs 1 + 1 + 2 = 4 > 3: drop one. x and y each feed M1, which the other
    # also feeds (covered once elsewhere); z is M2's only source (0): y goes (x/y tie on cover
    # and cost; the later key), leaving 1 + 2 = 3
    plan = plan_subset(STRATA, COST, 3.0, FEEDS, seed=1)
    assert plan.cap == 1 and plan.dropped == [("a", "y")] and plan.cost == 3.0 and plan.fits
    assert sorted(plan.kept) == [("a", "x"), ("b", "z")]
    # below one category: x and z both uncovered elsewhere; the dearer z goes; x alone (1) is
    # still over 0.5, but one category is always kept
    plan = plan_subset(STRATA, COST, 0.5, FEEDS, seed=1)
    assert plan.dropped == [("a", "y"), ("b", "z")] and list(plan.kept) == [("a", "x")]
    assert plan.cost == 1.0 and not plan.fits


def _history(root: Path, name: str, model: str, rows: list[dict]) -> None:
    run = root / name
    run.mkdir(parents=True)
    (run / "egi.json").write_text(json.dumps({"model": model}))
    (run / "timings.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_learn_costs_from_earlier_runs_of_the_same_model(tmp_path):
    _history(tmp_path, "r1", "m", [
        {"suite": "a", "call_s": 2.0, "usage": {"cost_usd": 0.01}},
        {"suite": "a", "call_s": 4.0, "setup_s": 1.0, "usage": {"cost_usd": 0.03}},
        {"suite": "b", "call_s": 10.0, "usage": {"cost_usd": 0.5}}])
    _history(tmp_path, "r2", "other", [{"suite": "a", "call_s": 100.0, "usage": {"cost_usd": 9.0}}])
    costs = learn_costs(tmp_path, "m", ["a", "c"])
    # a: (2 + 5) / 2 = 3.5 s, (0.01 + 0.03) / 2 = 0.02 USD; the other model's run is not read
    assert (costs["a"].seconds, costs["a"].usd) == (3.5, 0.02)
    assert costs["a"].source == "2 items of earlier runs of m"
    assert (costs["c"].seconds, costs["c"].usd, costs["c"].source) == (
        60.0, 0.02, "no earlier run of this model: default")
    assert (learn_costs(tmp_path, "egi/oracle", ["a"])["a"].usd) == 0.0


def test_a_budgeted_run_is_planned_before_it_runs_and_labelled_a_subset(toy_project):
    routing = toy_project.path / "routing.yaml"
    routing.write_text(routing.read_text().replace("per_category: 3", "per_category: 20"))
    # an earlier run of the model: 2 s per toy item -> 30 s hold 2 categories x 7 tasks (28 s)
    _history(toy_project.path / "reports", "0-earlier", "egi/noisy-0.3",
             [{"suite": "toy", "call_s": 2.0, "usage": {"cost_usd": 0.0}}])
    plan_line = "egi budget 30s: 14 of 40 tasks (at most 7 per category), expected 28.0 s wall time, $0.00"
    collect = toy_project.runpytest("toysuites", "--egi-model", "egi/noisy-0.3", "--egi-budget", "30s",
                                    "--collect-only", "-q")
    assert plan_line in collect.stdout.lines
    assert "  toy: 14 of 40 tasks, ~2.00 s and $0.00 per task (1 items of earlier runs of egi/noisy-0.3)" in (
        collect.stdout.lines)
    collect.stdout.fnmatch_lines(["14/40 tests collected (26 deselected)*"])
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/noisy-0.3", "--egi-budget", "30s",
                                   "--egi-bootstrap", "0", "--egi-gate", "point")
    lines = result.stdout.lines
    assert lines.index(plan_line) < next(i for i, line in enumerate(lines) if line.startswith("toysuites/"))
    run = max((toy_project.path / "reports").iterdir(), key=lambda p: p.name)
    egi = json.loads((run / "egi.json").read_text())
    assert egi["egi"]["subset"] == ['--egi-budget "30s"']
    budget = egi["config"]["budget"]
    assert (budget["kind"], budget["amount"], budget["cap"], budget["expected"], budget["seed"]) == (
        "seconds", 30.0, 7, 28.0, 7)
    assert budget["kept"] == {"toy/alpha": 7, "toy/beta": 7}
    assert sum(egi["counts"].values()) == 14


def test_a_budgeted_run_under_xdist_plans_on_the_workers_and_prints_the_plan_once(toy_project):
    routing = toy_project.path / "routing.yaml"
    routing.write_text(routing.read_text().replace("per_category: 3", "per_category: 20"))
    # 2 s per toy item over 2 workers: 1 s of wall time each -> 15 s hold 2 categories x 7 tasks
    _history(toy_project.path / "reports", "0-earlier", "egi/noisy-0.3",
             [{"suite": "toy", "call_s": 2.0, "usage": {"cost_usd": 0.0}}])
    plan_line = ("egi budget 15s: 14 of 40 tasks (at most 7 per category), expected 14.0 s wall time on 2 "
                 "workers, $0.00")
    result = toy_project.runpytest_subprocess("toysuites", "--egi-model", "egi/noisy-0.3", "--egi-budget",
                                              "15s", "--egi-bootstrap", "0", "--egi-gate", "point", "-n", "2")
    assert result.stdout.lines.count(plan_line) == 1, result.stdout.str()
    run = max((toy_project.path / "reports").iterdir(), key=lambda p: p.name)
    egi = json.loads((run / "egi.json").read_text())
    assert egi["egi"]["subset"] == ['--egi-budget "15s"']
    assert egi["config"]["budget"]["kept"] == {"toy/alpha": 7, "toy/beta": 7}
    assert egi["config"]["budget"]["lines"][0] == plan_line
    assert sum(egi["counts"].values()) == 14


def test_expected_width_scales_the_last_runs_interval(tmp_path):
    from pytest_egi.collect.budget import expected_width

    runs = (("r1", [60.0, 80.0], {"passed": 10}), ("r2", [70.0, 80.0], {"passed": 30, "failed": 10}))
    for name, ci, counts in runs:
        (tmp_path / name).mkdir()
        (tmp_path / name / "egi.json").write_text(json.dumps(
            {"model": "m", "egi": {"ci95": None, "partial_ci95": ci}, "counts": counts}))
    # the latest (r2): 10 points over 40 items; over 10 items: 10 * sqrt(40/10) = 20
    assert expected_width(tmp_path, "m", 10) == pytest.approx(20.0)
    assert expected_width(tmp_path, "other", 10) is None


def test_a_budget_every_task_fits_is_not_a_subset(toy_project):
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-budget", "1h",
                                   "--egi-bootstrap", "0", "--egi-gate", "point")
    assert result.ret == 0
    run = max((toy_project.path / "reports").iterdir(), key=lambda p: p.name)
    egi = json.loads((run / "egi.json").read_text())
    assert egi["egi"]["subset"] == []
    assert egi["config"]["budget"]["dropped"] == [] and egi["config"]["budget"]["fits"] is True
