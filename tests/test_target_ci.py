"""Runs that stop once the EGI interval is narrow enough (pytest_egi.collect.target): the order
by hand, the options refused, and the toy suite stopping at its target or running out."""

from __future__ import annotations

import json

import pytest

from pytest_egi.collect.target import parse_target, stratified_order


def test_stratified_order_takes_one_task_of_each_category_in_turn():
    strata = {("b", "z"): ["z0", "z1"], ("a", "x"): ["x0", "x1", "x2"], ("a", "y"): ["y0"]}
    order = stratified_order(strata, seed=3)
    assert sorted(order) == sorted((k[0], t) for k, ids in strata.items() for t in ids)
    # rounds: one of x, y, z (sorted categories), then x and z, then x
    assert [t[1][0] for t in order] == ["x", "y", "z", "x", "z", "x"]
    assert order == stratified_order(strata, seed=3)
    assert len({tuple(stratified_order(strata, seed=s)) for s in range(20)}) > 1  # the seed shuffles


@pytest.mark.parametrize("text", ["0", "-1", "wide", "100", "nan"])
def test_parse_target_refuses(text):
    with pytest.raises(pytest.UsageError, match="--egi-target-ci: "):
        parse_target(text)


def _run(toy_project, target: str, *extra: str):
    routing = toy_project.path / "routing.yaml"
    routing.write_text(routing.read_text().replace("per_category: 3", "per_category: 40"))
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/noisy-0.5", "--egi-target-ci", target,
                                   "--egi-bootstrap", "200", "--egi-gate", "point", *extra)
    run = max((toy_project.path / "reports").iterdir(), key=lambda p: p.name)
    return result, json.loads((run / "egi.json").read_text()), json.loads((run / "run.json").read_text())


def test_a_noisy_run_stops_at_its_target_a_complete_subset(toy_project):
    result, egi, manifest = _run(toy_project, "60")
    target = egi["config"]["target_ci"]
    # the first check comes at 20 tasks (MIN_TASKS; 10 per category): a 60-point target is met
    assert target["ended"] == "reached" and target["tasks"] == 20 and target["selected_tasks"] == 80
    assert target["not_run"] == 60
    low, high = egi["egi"]["partial_ci95"]
    assert target["width"] == pytest.approx(high - low, abs=1e-5) and target["width"] < 60
    assert (f"egi target: the EGI interval is {target['width']:.2f} points wide (< 60) after 20 of 80 "
            "tasks; the other 60 were not run") in result.stdout.lines
    assert egi["egi"]["subset"] == ['--egi-target-ci "60"'] and egi["egi"]["flags"] == []
    assert sum(egi["counts"].values()) == 20
    assert (egi["session"]["items_collected"], egi["session"]["items_ran"],
            egi["session"]["items_deselected"]) == (20, 20, 60)
    assert manifest["status"] == "complete" and len(manifest["plan"]) == 20
    assert result.stdout.lines[-1].startswith("=") and "60 deselected" in result.stdout.lines[-1]
    # stratified: 10 tasks of each category ran
    ran = [json.loads(line) for line in
           (max((toy_project.path / "reports").iterdir(), key=lambda p: p.name) / "records.jsonl").open()]
    assert sorted(r["category"] for r in ran) == ["alpha"] * 10 + ["beta"] * 10


def test_a_target_never_reached_says_every_task_ran(toy_project):
    result, egi, _ = _run(toy_project, "0.5")
    target = egi["config"]["target_ci"]
    assert target["ended"] == "ran out" and target["tasks"] == 80 and target["not_run"] == 0
    assert sum(egi["counts"].values()) == 80 and target["width"] > 0.5
    assert egi["egi"]["subset"] == []  # every selected task ran: not a subset
    lines = result.stdout.lines
    assert lines[next(i for i, line in enumerate(lines) if line.startswith("egi report: ")) - 1].startswith(
        "egi target: not reached")
    assert any(line.startswith("egi target: not reached, every selected task ran (80 of 80 tasks)")
               for line in result.stdout.lines)


def test_target_refuses_xdist_and_no_bootstrap(toy_project):
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-target-ci", "3",
                                   "-n", "2")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--egi-target-ci cannot be combined with -n yet*"])
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-target-ci", "3",
                                   "--egi-bootstrap", "0")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--egi-target-ci needs the bootstrap interval: drop --egi-bootstrap 0*"])
