"""DESIGN §9.2 for every suite under ``suites/``: a new suite folder is tested with no edit here.

Each suite runs once per offline policy (``egi/oracle``, ``egi/null``, ``egi/noisy-0.2``,
``egi/noisy-0.5``) and once more with ``-n 2`` (``egi/noisy-0.2``), each in a fresh pytest
process, on the conformance profile: the suite's ``deep`` profile cut to every category at
``PER_CATEGORY`` tasks each (see ``checks.conformance_routing``), routed by the repository's
``routing.yaml``. Runs are shared by the tests below, across xdist workers too (a file lock
per run in the session's shared temporary folder). The criteria are in ``checks.py``.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
from filelock import FileLock

from pytest_egi.records import load_records
from pytest_egi.scoring.config import apply_floors, apply_weights, load_routing
from pytest_egi.scoring.egi import bootstrap_egi
from pytest_egi.suite import load_suite
from tests.conformance.checks import (
    DIST_POLICY,
    POLICIES,
    ROOT,
    Run,
    check_ceiling,
    check_complete,
    check_declarations,
    check_floor,
    check_identical,
    check_json_safe,
    check_noisy,
    check_rescore,
    check_summarize_keys,
    check_summary_columns,
    conformance_routing,
    discover_suites,
    rescore,
    routes_of,
    run_suite,
)

SUITES = discover_suites()
ROUTING, _ = load_routing(ROOT / "routing.yaml")


class ConformanceRuns:
    """The runs of each suite, made once per test session (xdist workers share them)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.base.mkdir(parents=True, exist_ok=True)
        self._memo: dict[str, Run] = {}

    def routing(self, suite: str) -> Path:
        """The conformance routing file of ``suite``."""
        path = self.base / f"routing-{suite}.yaml"
        with FileLock(str(path) + ".lock"):
            if not path.exists():
                text = conformance_routing((ROOT / "routing.yaml").read_text(encoding="utf-8"), suite)
                path.write_text(text, encoding="utf-8")
        return path

    def get(self, suite: str, policy: str, dist: bool = False) -> Run:
        """The run of ``suite`` under ``policy`` (serial, or ``-n 2`` when ``dist``).

        Raises:
            RuntimeError: the run failed (the same error for every test that needs it).
        """
        tag = f"{suite}-{policy.replace('/', '_')}" + ("-n2" if dist else "")
        if tag not in self._memo:
            out = self.base / tag
            with FileLock(str(out) + ".lock"):
                done, failed = self.base / f"{tag}.done.json", self.base / f"{tag}.failed.txt"
                if failed.exists():
                    raise RuntimeError(failed.read_text(encoding="utf-8"))
                if not done.exists():
                    shutil.rmtree(out, ignore_errors=True)
                    try:
                        run = run_suite(ROOT / "suites" / suite, ROOT, self.routing(suite), policy, out,
                                        *(("-n", "2") if dist else ()))  # fmt: skip
                    except RuntimeError as exc:
                        failed.write_text(str(exc), encoding="utf-8")
                        raise
                    done.write_text(json.dumps({"run_dir": str(run.run_dir), "exit_code": run.exit_code,
                                                "output": run.output}), encoding="utf-8")  # fmt: skip
            meta = json.loads(done.read_text(encoding="utf-8"))
            captured = pickle.loads((out / "captured.pickle").read_bytes())
            self._memo[tag] = Run(policy, Path(meta["run_dir"]), meta["exit_code"], meta["output"], captured)
        return self._memo[tag]


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> ConformanceRuns:
    """Shared by every xdist worker of the session (their common temporary parent folder)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    return ConformanceRuns(base / "egi-conformance")


@pytest.fixture(params=SUITES)
def suite(request: pytest.FixtureRequest):
    """One discovered suite's ``SUITE``."""
    return load_suite(f"suites.{request.param}")


def assert_holds(problems: list[str]) -> None:
    """Fail with every problem, one per line."""
    assert not problems, "\n".join(problems)


def test_suites_discovered():
    assert {"crmarena", "herb"} <= set(SUITES)


def test_declarations(suite):
    assert_holds(check_declarations(suite, routes_of(ROUTING, suite.name)))


def test_summarize_keys(suite, runs):
    oracle = runs.get(suite.name, "egi/oracle")
    scored = [r for r in load_records(oracle.run_dir) if r["status"] in ("passed", "failed")]
    summary = suite.summarize(scored)
    assert_holds(check_summarize_keys(suite, routes_of(ROUTING, suite.name), summary))


def scored_records(runs: ConformanceRuns, suite: str, policy: str) -> list[dict]:
    """The scored records of a run; ``"two trials"``: the oracle's and noisy-0.2's records of
    the same tasks as trials 1 and 2 of each task."""
    if policy == "two trials":
        return [*scored_records(runs, suite, "egi/oracle"),
                *(dict(r, trial=2) for r in scored_records(runs, suite, "egi/noisy-0.2"))]  # fmt: skip
    return [r for r in load_records(runs.get(suite, policy).run_dir) if r["status"] in ("passed", "failed")]


@pytest.mark.parametrize("policy", ["egi/oracle", "egi/noisy-0.2", "two trials"])
def test_summary_columns_agree_with_summarize(suite, runs, policy):
    if not callable(getattr(suite, "summary_columns", None)):
        pytest.skip(f"{suite.name} has no summary_columns (optional)")
    scored = scored_records(runs, suite.name, policy)
    assert_holds(check_summary_columns(suite, routes_of(ROUTING, suite.name), scored, policy))


def test_bootstrap_with_summary_columns_gives_the_summarize_intervals(suite, runs):
    if not callable(getattr(suite, "summary_columns", None)):
        pytest.skip(f"{suite.name} has no summary_columns (optional)")
    scored = {suite.name: scored_records(runs, suite.name, "two trials")}
    kwargs = dict(weights=apply_weights(ROUTING, {}), floors=apply_floors(ROUTING, {}), resamples=100, seed=3)
    calls = []

    def summarize(records):
        calls.append(len(records))
        return suite.summarize(records)

    slow = bootstrap_egi(scored, {suite.name: suite.summarize}, ROUTING, **kwargs)
    hooks = {suite.name: suite.summary_columns}
    fast = bootstrap_egi(scored, {suite.name: summarize}, ROUTING, summary_columns=hooks, **kwargs)
    assert calls == [len(scored[suite.name])]  # the fast path was taken
    assert fast.keys() == slow.keys()
    for key, interval in slow.items():
        assert fast[key] == (None if interval is None else pytest.approx(interval, abs=1e-6)), key


def test_offline_policies_are_always_scored(suite, runs):
    problems = []
    for policy in POLICIES:
        problems += check_complete(suite.name, policy, load_records(runs.get(suite.name, policy).run_dir))
    assert_holds(problems)


def test_oracle_at_ceiling(suite, runs):
    values = runs.get(suite.name, "egi/oracle").sub_metrics(suite.name)
    assert_holds(check_ceiling(suite, routes_of(ROUTING, suite.name), values))


def test_null_at_floor(suite, runs):
    values = runs.get(suite.name, "egi/null").sub_metrics(suite.name)
    assert_holds(check_floor(suite, routes_of(ROUTING, suite.name), values))


def test_noisy_between_null_and_oracle(suite, runs):
    by_policy = {p: runs.get(suite.name, p).sub_metrics(suite.name) for p in POLICIES}
    undefined = frozenset(k for k, v in (getattr(suite, "null_floor", None) or {}).items() if v is None)
    assert_holds(check_noisy(suite.name, routes_of(ROUTING, suite.name), by_policy, undefined))


def test_serial_equals_n2(suite, runs):
    serial = runs.get(suite.name, DIST_POLICY)
    dist = runs.get(suite.name, DIST_POLICY, dist=True)
    assert_holds(check_identical(suite.name, serial.run_dir, dist.run_dir))


def test_records_json_safe(suite, runs):
    problems = []
    for policy in POLICIES:
        run = runs.get(suite.name, policy)
        problems += check_json_safe(suite.name, run.captured, run.records_text)
    dist = runs.get(suite.name, DIST_POLICY, dist=True)
    assert_holds(problems + check_json_safe(suite.name, dist.captured, dist.records_text))


RESCORED = ("egi/null", "egi/noisy-0.2")
"""The runs whose rescore must reproduce them: non-answers, and a mix of right and wrong answers
(the oracle's and noisy-0.5's runs take the same path; rescoring them too re-ran every LoCoBench
sandbox twice more, two minutes of a CI run)."""


def test_rescore_reproduces(suite, runs):
    done = [runs.get(suite.name, p) for p in RESCORED]
    rescored = rescore([r.run_dir for r in done], ROOT)
    problems = []
    for run, new in zip(done, rescored, strict=True):
        problems += check_rescore(suite.name, run.egi, new)
    assert_holds(problems)
