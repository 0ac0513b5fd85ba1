"""A suite's wrong ``summary_columns`` costs the run its fast bootstrap, never its report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

WRONG_HOOK = '''

def _wrong_columns(self, records):
    from pytest_egi.suite import SummaryColumns

    rows = [[float(r["values"]["correct"]), 1.0] for r in records]
    wrong = {"acc": 0.25, "acc_alpha": 0.25, "acc_beta": 0.25}  # covers every routed key
    return SummaryColumns.from_rows(("correct", "n"), rows, lambda sums: wrong)


ToySuite.summary_columns = _wrong_columns
'''


def test_a_wrong_finish_is_a_data_warning_and_the_run_is_reported(toy_project: pytest.Pytester):
    init = toy_project.path / "toysuites" / "toy" / "__init__.py"
    init.write_text(init.read_text() + WRONG_HOOK)
    result = toy_project.runpytest_subprocess(
        "toysuites", "--egi-model", "egi/noisy-0.5", "--egi-mode", "deep", "--egi-run-id", "R")
    assert result.ret in (0, 1)  # judged by the gate, not an internal error
    egi = json.loads((Path(toy_project.path) / "reports" / "R" / "egi.json").read_text())
    assert [w["suite"] for w in egi["data_warnings"]] == ["toy"]
    warning = egi["data_warnings"][0]["warning"]
    assert warning.startswith("toy: summary_columns' finish gives acc = 0.25 on all the records but "
                              "summarize gives ")
    assert warning.endswith("; the confidence intervals used summarize on every resample instead "
                            "(fix the suite's summary_columns)")
    assert egi["buckets"]["M1"]["ci95"] is not None  # the intervals came from summarize
    result.stdout.fnmatch_lines(["data warning (toy): toy: summary_columns' finish gives acc = 0.25*"])
