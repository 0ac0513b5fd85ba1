"""Through the real plugin: an environment fault inside a suite's tool execution makes the
item a pytest **error** (never a scored failure), keeps the trajectory so far, and never shows
the fault to the model. The fault is planted in-process (pytester runs the session in this
process), after the tasks are built: an unreadable org database for CRMArena, a broken
retrieval index for HERB."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path

import pytest

from pytest_egi.trajectories import read_trajectory

ROOT = Path(__file__).resolve().parents[2]


def _run(pytester: pytest.Pytester, suite: str, *extra: str) -> tuple[pytest.RunResult, Path]:
    out = pytester.path / f"reports-{suite}"
    result = pytester.runpytest(
        str(ROOT / "suites" / suite), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "egi/oracle", "--egi-mode", "quick", "--egi-report-dir", str(out),
        "--egi-bootstrap", "0", *extra,
    )  # fmt: skip
    return result, next(out.iterdir())


def _check_errored(run_dir: Path, suite: str, error: str, fault_text: str, n: int) -> None:
    egi = json.loads((run_dir / "egi.json").read_text())
    assert egi["counts"] == {"error": n}
    records = [json.loads(x) for x in (run_dir / "records.jsonl").read_text().splitlines()]
    assert [r["status"] for r in records] == ["error"] * n
    assert {r["error"] for r in records} == {error}
    for record in records:
        assert record["raw_path"] == f"raw/{suite}/{record['task_id']}.json"
        raw = read_trajectory(run_dir, record)
        messages = raw["trajectory"]["messages"]
        assert raw["trajectory"]["turns"] >= 1 and messages[-1]["role"] == "assistant"
        assert fault_text not in json.dumps(messages)  # the model never saw the fault


def test_crmarena_unreadable_database_is_an_error(pytester, monkeypatch):
    """The tasks are built from the org; then each trial gets an org whose database can no
    longer be read."""
    from suites.crmarena import SUITE

    built = SUITE.org_for

    def unreadable_org(task, options):
        org = copy.copy(built(task, options))
        org.connection = sqlite3.connect(":memory:")
        org.connection.close()
        return org

    monkeypatch.setattr(SUITE, "org_for", unreadable_org)
    result, run_dir = _run(pytester, "crmarena", "--egi-max-error-rate", "1", "-k", "NCR or KQA")
    result.assert_outcomes(errors=12)
    assert result.ret == 0  # errors tolerated by --egi-max-error-rate 1, and nothing scored
    _check_errored(run_dir, "crmarena", "ProgrammingError: Cannot operate on a closed database.",
                   "closed database", 12)  # fmt: skip


@pytest.mark.parametrize("strategy", ["react", "tool_call"])
def test_crmarena_engine_bug_stops_the_session_as_errors(pytester, monkeypatch, strategy):
    """A bug in the engine's result shaping, armed once the tasks are built."""
    import suites.crmarena.env.soql as soql
    from suites.crmarena import SUITE

    armed = {"on": False}
    shape, built = soql.shape_rows, SUITE.org_for

    def buggy(rows, outputs):
        if armed["on"]:
            raise KeyError("expr0")
        return shape(rows, outputs)

    def arm(task, options):
        armed["on"] = True
        return built(task, options)

    monkeypatch.setattr(soql, "shape_rows", buggy)
    monkeypatch.setattr(SUITE, "org_for", arm)
    result, run_dir = _run(pytester, "crmarena", "--egi-opt", f"crmarena.strategy={strategy}",
                           "-k", "NCR")  # fmt: skip
    result.assert_outcomes(errors=5)
    assert result.ret == 1  # the first five items all errored: the session stops and fails
    _check_errored(run_dir, "crmarena", "KeyError: 'expr0'", "expr0", 5)


def test_herb_broken_index_is_an_error(pytester, monkeypatch):
    from suites.herb.env import HerbEnv

    def unreadable(self, query, top_k):
        raise OSError(5, "Input/output error reading the bm25 index")

    monkeypatch.setattr(HerbEnv, "search", unreadable)
    result, run_dir = _run(pytester, "herb", "--egi-max-error-rate", "1", "-k", "company")
    result.assert_outcomes(errors=8)  # the quick profile's company questions (40 answerable: 8 per type)
    assert result.ret == 0
    _check_errored(run_dir, "herb", "OSError: [Errno 5] Input/output error reading the bm25 index",
                   "bm25 index", 8)  # fmt: skip
