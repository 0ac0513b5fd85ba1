"""The terminal's EGI summary (issue 28): the verdict last, failed benchmark items counted per
suite, ceilings and shares, a legend, integer counts, one cause per missing sub-metric,
transforms, and a floor above a ceiling refused."""

from __future__ import annotations

import re

import pytest

from pytest_egi.scoring.config import Route, load_routing
from pytest_egi.scoring.egi import Missing, compute_egi

from .toy_project import ROUTING

FLAGS = ("--egi-mode", "quick", "--egi-bootstrap", "0")


def _closing(lines: list[str]) -> int:
    return next(i for i in range(len(lines) - 1, -1, -1) if " in " in lines[i] and ("passed" in lines[i]
                                                                                   or "failed" in lines[i]))


def test_the_verdict_is_last_and_benchmark_failures_are_counted(toy_project):
    toy_project.makepyfile(test_plain="def test_plain_failure():\n    assert 1 == 2\n")
    result = toy_project.runpytest("toysuites", "test_plain.py", "--egi-model", "egi/noisy-0.5", *FLAGS)
    lines = result.stdout.lines
    end = _closing(lines)
    # the run folder, then pytest's own closing line, untouched
    assert lines[end - 1].startswith("egi report: ")
    summary = next(i for i, line in enumerate(lines) if " EGI summary " in line)
    assert lines[summary + 1].startswith("EGI (partial: M1 M4, 42% of weight) ")
    assert summary > next(i for i, line in enumerate(lines) if "short test summary info" in line)
    # a non-benchmark test keeps pytest's report; benchmark items are counted in ours instead
    assert "FAILED test_plain.py::test_plain_failure - assert 1 == 2" in lines
    assert not [line for line in lines if line.startswith("FAILED toysuites")]
    failed = [line for line in lines if line.startswith("FAILED")]
    assert len(failed) == 1
    counted = next(line for line in lines if line.startswith("failed benchmark items: "))
    n = int(counted.split(": ")[1].split(" ")[0])
    assert n >= 1 and f"  toy: {n} failed ({n} wrong_answer)" in lines
    example = next(line for line in lines if line.startswith("    alpha-") or line.startswith("    beta-"))
    assert ": expected C" in example and "got WRONG" in example
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # (the plain test failed)
    # with -rA pytest lists every failure itself
    listed = toy_project.runpytest("toysuites", "--egi-model", "egi/noisy-0.5", *FLAGS, "-rA")
    assert len([line for line in listed.stdout.lines if line.startswith("FAILED toysuites")]) >= 1
    assert listed.stdout.lines[_closing(listed.stdout.lines) - 1].startswith("egi report: ")


def test_missing_sub_metrics_name_one_cause(toy_project):
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", *FLAGS, "-k", "alpha", "-v")
    lines = result.stdout.lines
    assert "  toy/acc_beta: deselected: no beta item left after -k 'alpha'" in lines
    assert "  not collected, no test under the paths given: absent (1)" in lines
    # with -v: each contributor with its transform, and the sub-metric table
    assert "  M1 toy/acc_alpha: fraction(1.000) = 100.0" in lines
    assert "  M4 toy/acc: fraction(1.000) = 100.0" in lines
    assert any(line.split()[:4] == ["toy", "acc_alpha", "1.000", "M1"] for line in lines)
    import json

    egi = json.loads(next((toy_project.path / "reports").iterdir()).joinpath("egi.json").read_text())
    assert egi["buckets"]["M1"]["ceiling"] is None  # nothing caps the toy's routes
    assert egi["buckets"]["M1"]["contributors"][0]["transform"] == "fraction(1.000) = 100.0"


def _suite(categories=("alpha", "beta"), ceiling=None):
    return type("S", (), {"categories": categories, "oracle_ceiling": ceiling or {}})()


def test_missing_cause_outside_the_profile_no_task_errored_and_stopped():
    from pytest_egi.scoring.missing import missing_cause

    miss = Missing("toy/acc_beta", "M1", "toy reported no value for acc_beta (...)")
    common = {"suite": _suite(), "mode": "quick", "selection": {}, "stopped": None, "not_loaded": set()}
    from collections import Counter

    ran = {"alpha": Counter(passed=3)}
    assert missing_cause(miss, records_by_category=ran, profile_categories=["alpha"], **common) == (
        "outside the profile (quick runs toy's alpha only)")
    assert missing_cause(miss, records_by_category=ran, profile_categories=None,
                         **{**common, "not_loaded": {"beta"}}) == (
        "no task of that kind in the task data (toy loaded no beta task)")
    assert missing_cause(miss, records_by_category={**ran, "beta": Counter(error=2)}, profile_categories=None,
                         **common) == "all 2 beta items errored"
    assert missing_cause(miss, records_by_category=ran, profile_categories=None,
                         **{**common, "stopped": "stopping after 1 failures"}) == (
        "stopped before it: the run stopped (stopping after 1 failures) before any beta item ran")


def test_a_contributor_shows_its_transform():
    from pytest_egi.scoring.egi import describe_transform

    gap = Route(suite="b", sub_metric="acc_finished", bucket="M5", transform="gap", baseline="acc_all")
    assert describe_transform(gap, {"acc_finished": 0.824, "acc_all": 0.700}, 87.6) == (
        "gap(0.824 vs 0.700) = 87.6")
    frac = Route(suite="b", sub_metric="acc", bucket="M1", transform="fraction")
    assert describe_transform(frac, {"acc": 0.5}, 50.0) == "fraction(0.500) = 50.0"


def _capped(tmp_path, values, floors=None):
    from pytest_egi.scoring.missing import apply_ceilings

    (tmp_path / "routing.yaml").write_text(ROUTING)
    routing = load_routing(tmp_path / "routing.yaml")[0]
    weights = {b: bk.weight for b, bk in routing.buckets.items()}
    result = compute_egi({"toy": values}, routing, weights=weights, floors=floors or {})
    apply_ceilings(result, routing, {"toy": values}, {"toy": _suite(ceiling={"acc_alpha": "acc_alpha_max"})})
    return result


def test_a_capped_formula_gives_its_bucket_a_ceiling_and_a_share(tmp_path):
    from types import SimpleNamespace

    from pytest_egi.report.terminal import bucket_lines

    # a perfect agent's acc_alpha is 0.4 on these tasks: M1 = mean(40, 100) at most
    result = _capped(tmp_path, {"acc": 1.0, "acc_alpha": 0.4, "acc_alpha_max": 0.4, "acc_beta": 1.0})
    assert result.buckets["M1"].ceiling == 70.0 and result.buckets["M1"].value == 70.0
    assert result.buckets["M4"].ceiling is None
    assert [c.ceiling for c in result.buckets["M1"].contributors] == [40.0, None]
    assert result.to_dict()["buckets"]["M1"]["ceiling"] == 70.0  # egi.json records it
    lines = bucket_lines(SimpleNamespace(result=result, ci={}), width=110)
    header = ["bucket", "weight", "score", "95%", "CI", "floor", "ceiling", "share", "routes"]
    assert lines[0].split() == header
    assert lines[1].split() == ["M1", "Outcome", "0.28", "70.0", "70.0", "100%", "2/2"]
    assert lines[4].split() == ["M4", "Grounding", "0.14", "100.0", "1/1"]
    assert any("ceiling: the most the bucket's formulas allow" in line for line in lines)


def test_a_floor_above_a_ceiling_is_refused(tmp_path):
    from types import SimpleNamespace

    from pytest_egi.report.session import floors_above_ceilings

    result = _capped(tmp_path, {"acc": 1.0, "acc_alpha": 0.4, "acc_alpha_max": 0.4, "acc_beta": 1.0})
    agg = SimpleNamespace(result=result)
    assert floors_above_ceilings(agg, {"M1": 80.0}) == [
        "usage error: the floor of M1 (80) is above its ceiling (70.0): the most M1's routed "
        "sub-metrics allow on this run's tasks, so no agent can pass it; set a floor at or below "
        "70.0 (--egi-floor M1=..., or routing.yaml)"]
    assert floors_above_ceilings(agg, {"M1": 70.0, "M4": 99.0}) == []


def test_counts_print_as_integers_and_names_wrap_at_words(tmp_path):
    from types import SimpleNamespace

    from pytest_egi.report.terminal import bucket_lines, format_value

    assert format_value("hospital.entries", 40.0) == "40"
    assert format_value("travel22.pass_hat_k_k", 1.0) == "1"
    assert format_value("travel22.best_rate", 1.0) == "1.000"
    assert format_value("travel22.micro_avg", 0.2219) == "0.222"
    assert format_value("hospital.replies_median", 3.0) == "3.000"  # a statistic, not a count
    result = _capped(tmp_path, {"acc": 1.0, "acc_alpha": 0.4, "acc_alpha_max": 0.4, "acc_beta": 1.0})
    result.buckets["M4"].name = "Retrieval & Evidence Grounding"
    lines = bucket_lines(SimpleNamespace(result=result, ci={}), width=60)
    assert all(len(line) <= 60 for line in lines)
    words = re.findall(r"[A-Za-z]+", " ".join(lines))  # a word cut in two would be two
    for word in ("Retrieval", "Evidence", "Grounding"):
        assert word in words
    assert lines[0].split()[0] == "bucket" and lines[4].split()[0] == "M4"
    assert any("M4 Retrieval & Evidence Grounding;" in line for line in lines) or "Evidence" in words
