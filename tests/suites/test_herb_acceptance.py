"""Acceptance of the HERB suite through the real plugin (quick profile, 80 questions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.suite_run import run_suite

ROOT = Path(__file__).resolve().parents[2]
ROUTED = ("person_f1", "url_f1", "pr_f1", "company_f1", "content", "null_rate")
CEILING = {"person_f1": 1.0, "url_f1": 1.0, "pr_f1": 1.0, "company_f1": 1.0, "content": 100.0,
           "null_rate": 1.0}


def run(pytester: pytest.Pytester, model: str, *extra: str) -> tuple[pytest.RunResult, dict | None]:
    return run_suite(pytester, "herb", model, *extra)


def test_oracle_null_noisy_bracket_every_sub_metric(pytester):
    subs = {}
    for model in ("egi/oracle", "egi/noisy-0.2", "egi/noisy-0.5", "egi/null"):
        result, egi = run(pytester, model)
        subs[model] = egi["suites"]["herb"]["sub_metrics"]
        if model == "egi/oracle":
            result.assert_outcomes(passed=80)
            assert egi["suites"]["herb"]["counts"] == {"passed": 80}
    assert {k: subs["egi/oracle"][k] for k in ROUTED} == CEILING
    null = subs["egi/null"]
    assert {k: null[k] for k in ROUTED} == {**{k: 0.0 for k in ROUTED}, "null_rate": 1.0}
    for k in ROUTED:
        if k == "null_rate":
            # abstaining is right on unanswerable questions: null is at the ceiling by design;
            # noisy policies answer some of them (no_abstention) and fall below it
            assert 1.0 > subs["egi/noisy-0.2"][k] >= subs["egi/noisy-0.5"][k], k
            continue
        assert CEILING[k] > subs["egi/noisy-0.2"][k] > null[k], k
        assert subs["egi/noisy-0.5"][k] <= subs["egi/noisy-0.2"][k], k


def test_report_explains_null_rate_floor(pytester):
    result, egi = run(pytester, "egi/null", "-v")  # (the sub-metric tables are printed with -v)
    assert "by design" in egi["suites"]["herb"]["sub_metric_notes"]["null_rate"]
    result.stdout.fnmatch_lines(["*null_rate*1.000*M5*share of unanswerable questions*"])
    assert "egi/null scores 1.0 here by design" in " ".join(result.stdout.str().split())


def test_parallel_equals_serial(pytester):
    _, serial = run(pytester, "egi/noisy-0.3")
    _, dist = run(pytester, "egi/noisy-0.3", "-n", "2")
    for key in ("egi", "buckets", "suites", "gate", "missing", "counts"):
        assert serial[key] == dist[key], key
