"""LoCoBench's sandbox checks run once per trial: kept in the trajectory, content-addressed,
read by the scorer and by ``egi-bench report --rescore``, run again when they do not match."""

from __future__ import annotations

import copy
import json

import pytest

import suites.locobench.env as env
import suites.locobench.scorer as scorer
from pytest_egi.cli import rescore_records
from pytest_egi.models.offline import Noise, PolicyClient
from pytest_egi.records import dump_json_line, load_records
from pytest_egi.sandbox import SandboxError
from suites.locobench import SUITE, LocoOptions
from suites.locobench.agent import replay, run_trial
from suites.locobench.data import Scenario, build_scenario
from suites.locobench.env import CHECKS_VERSION, Checked, checks_key, read_checks, stored_checks
from suites.locobench.options import limits
from tests.conformance.checks import ROOT, run_suite
from tests.suites.locobench.test_locobench_scoring import FAST, Scripted, files_reply, task


def stored_form(trajectory: dict) -> dict:
    """The trajectory as the run's trajectory store gives it back (canonical JSON, sorted keys)."""
    return json.loads(dump_json_line(trajectory))


def without_checks(trajectory: dict) -> dict:
    """The trajectory as a run folder from before this change holds it."""
    out = copy.deepcopy(trajectory)
    del out["info"]["locobench"]["checks"]
    return out


def sandbox_fault(*args, **kwargs):
    raise SandboxError("the sandbox (namespaces) could not start 'python': unshare failed")


@pytest.fixture(scope="module")
def trial():
    """An oracle trial of a bug_investigation scenario (every hidden test passes)."""
    t = task("bug_investigation")
    noise = Noise(0.0, f"42|locobench|{t.id}|1")
    client = PolicyClient("egi/oracle", SUITE.reference_policy(t, FAST, noise), noise)
    return t, run_trial(t, client, FAST).to_dict()


@pytest.fixture
def sandbox_runs(monkeypatch):
    """The limits of each sandbox run of the checks from now on (the real runs still happen)."""
    calls = []
    real = scorer.run_checks

    def spy(files, hidden, lim):
        calls.append(lim)
        return real(files, hidden, lim)

    monkeypatch.setattr(scorer, "run_checks", spy)
    return calls


def test_a_trial_keeps_its_checks_and_the_scorer_reads_them(trial, sandbox_runs):
    t, traj = trial
    sc = build_scenario(t.data)
    replies = [m["content"] for m in traj["messages"] if m["role"] == "assistant"]
    final, _ = replay(sc, replies)
    stored = traj["info"]["locobench"]["checks"]
    assert stored["version"] == CHECKS_VERSION
    assert stored["key"] == checks_key(final, sc.hidden_files(), limits(FAST))
    assert len(stored["key"]) == 64
    live, rescored = SUITE.score(t, traj, FAST), SUITE.score(t, stored_form(traj), FAST)
    assert sandbox_runs == []  # read, never run
    assert live.success and live.values["fc"] == 1.0 and live.got == "3/3 hidden tests pass"
    assert rescored.model_dump(mode="json") == live.model_dump(mode="json")
    # trials the scorer gives 0 without checks keep none and start no sandbox
    for reply in ("I don't know.", files_reply({})):
        assert "checks" not in run_trial(t, Scripted(reply), FAST).info["locobench"]
    assert sandbox_runs == []


def test_an_old_trajectory_without_stored_checks_runs_them_and_scores_the_same(
    trial, sandbox_runs, monkeypatch
):
    t, traj = trial
    old = SUITE.score(t, stored_form(without_checks(traj)), FAST)
    assert sandbox_runs == [limits(FAST)]
    assert old.model_dump(mode="json") == SUITE.score(t, traj, FAST).model_dump(mode="json")
    assert len(sandbox_runs) == 1
    # a sandbox fault while rescoring an old trajectory is still an error, never a wrong answer
    monkeypatch.setattr(env.Sandbox, "run", sandbox_fault)
    with pytest.raises(SandboxError, match="could not start"):
        SUITE.score(t, stored_form(without_checks(traj)), FAST)
    assert SUITE.score(t, traj, FAST).success  # the stored result needs no sandbox


def _broken_reply(traj: dict, t) -> dict:
    """``traj`` with its reply replaced by one that breaks the service module's syntax."""
    sc = build_scenario(t.data)
    path = next(p for p in sc.order if p.endswith(".py") and "/services/" in p)
    out = copy.deepcopy(traj)
    reply = files_reply({path: "def broken(:\n"})
    last = next(m for m in reversed(out["messages"]) if m["role"] == "assistant")
    last["content"] = out["final_answer"] = reply
    return out


def _edited_result(traj: dict) -> dict:
    """The stored result says a hidden test failed; its seal was not recomputed."""
    out = copy.deepcopy(traj)
    hidden = out["info"]["locobench"]["checks"]["result"]["groups"]["hidden"]
    hidden[0][1] = False
    return out


def _sealed_but_malformed(traj: dict) -> dict:
    """A result of another shape, sealed as :func:`stored_checks` would seal it."""
    out = copy.deepcopy(traj)
    stored = out["info"]["locobench"]["checks"]
    stored["result"]["groups"] = {"hidden": {"test_x": True}}  # an object, not [test, passed] pairs
    stored["sha256"] = env._digest({"key": stored["key"], "result": stored["result"]})
    return out


def _not_an_object(traj: dict) -> dict:
    out = copy.deepcopy(traj)
    out["info"]["locobench"]["checks"] = "all passed"
    return out


@pytest.mark.parametrize(
    "change",
    ["tampered reply", "changed limits", "changed scenario", "newer check runner", "edited result",
     "sealed but malformed", "not an object"],
)  # fmt: skip
def test_a_stored_result_that_does_not_match_is_never_read(trial, sandbox_runs, monkeypatch, change):
    t, traj = trial
    opts = FAST
    if change == "tampered reply":
        traj = _broken_reply(traj, t)
    elif change == "changed limits":
        opts = LocoOptions(tests_timeout_s=21, cpu_s=6)
    elif change == "changed scenario":
        real = Scenario.hidden_files
        extra = {"_egi_hidden/test_extra.py": "def test_extra_check():\n    assert False, 'added'\n"}
        monkeypatch.setattr(Scenario, "hidden_files", lambda self: {**real(self), **extra})
    elif change == "newer check runner":
        monkeypatch.setattr(env, "CHECKS_VERSION", CHECKS_VERSION + 1)
    else:
        traj = {"edited result": _edited_result, "sealed but malformed": _sealed_but_malformed,
                "not an object": _not_an_object}[change](traj)  # fmt: skip
    score = SUITE.score(t, stored_form(traj), opts)
    assert sandbox_runs == [limits(opts)]  # run again
    sandbox_runs.clear()
    if change == "tampered reply":
        assert score.values["fc"] == 0.0 and "no longer compiles or imports" in score.got
    elif change == "changed scenario":
        assert score.details["tests"]["failures"]["test_extra_check"].startswith("AssertionError: added")
    else:
        assert score.success and score.got == "3/3 hidden tests pass"
    # what the checks give: the score of the same trajectory with nothing stored
    plain = traj if change == "not an object" else without_checks(traj)
    assert score.model_dump(mode="json") == SUITE.score(t, stored_form(plain), opts).model_dump(mode="json")


def test_a_stored_result_keeps_the_runs_order_through_the_sorted_store():
    """The store sorts object keys; the scorer's texts list tests in the run's order
    ("2 regression test(s) broke: b, a"), so the result keeps that order."""
    checked = Checked(
        groups={"regression": {"test_r::test_b": False, "test_r::test_a": False}, "smoke": {"s::t": True}},
        failures={"test_r::test_b": "assert 2 == 1", "test_r::test_a": "assert 0 == 1"},
        reason=None,
        isolation="namespaces",
        run={"exit_code": 1, "stopped": None, "reason": "exited with status 1", "hints": []},
    )
    back = read_checks(json.loads(dump_json_line(stored_checks("k" * 64, checked))), "k" * 64)
    assert back == checked
    assert list(back.groups["regression"]) == ["test_r::test_b", "test_r::test_a"]
    assert list(back.failures) == ["test_r::test_b", "test_r::test_a"]
    assert read_checks(stored_checks("k" * 64, checked), "j" * 64) is None


def test_a_sandbox_fault_during_the_trial_errors_the_item_after_the_model_finished(monkeypatch):
    t = task("security_analysis")
    p = build_scenario(t.data).package
    fix = "def parse_quantity(text):\n    return 1\n"
    client = Scripted(files_reply({f"{p}/services/input_parsing.py": fix}))
    monkeypatch.setattr(env.Sandbox, "run", sandbox_fault)
    with pytest.raises(SandboxError, match="could not start") as info:
        run_trial(t, client, FAST)
    partial = info.value.partial_trajectory  # kept with the error: the item errors, never scored
    assert partial["termination"] == "error" and partial["info"]["error"].startswith("SandboxError")
    assert len(client.prompts) == 1 and partial["messages"][-1]["role"] == "assistant"
    assert "checks" not in partial["info"]["locobench"]


# -- egi-bench report --rescore of a real run -----------------------------------------------------

PICKED = ("python_ledger_feature_implementation_easy_03", "python_payroll_bug_investigation_easy_00",
          "python_payroll_bug_investigation_easy_02")  # fmt: skip
"""Quick-profile scenarios under egi/noisy-0.3: two regression tests broken (listed in the
run's order), 1 of 3 hidden tests passing, all passing."""


@pytest.fixture(scope="module")
def noisy_run(tmp_path_factory):
    test_file = ROOT / "suites" / "locobench" / "test_locobench.py"
    run = run_suite(test_file, ROOT, ROOT / "routing.yaml", "egi/noisy-0.3",
                    tmp_path_factory.mktemp("loco-run"), "-k", " or ".join(PICKED))  # fmt: skip
    return run.run_dir


def test_a_rescore_starts_no_sandbox_and_gives_the_same_records(noisy_run, monkeypatch):
    def no_sandbox(*args, **kwargs):
        raise AssertionError("a rescore started a sandbox")

    monkeypatch.setattr(scorer, "run_checks", no_sandbox)
    monkeypatch.setattr(env.Sandbox, "__init__", no_sandbox)
    records = load_records(noisy_run)
    assert sorted(r["task_id"] for r in records) == sorted(PICKED)
    assert sorted(r["status"] for r in records) == ["failed", "failed", "passed"]
    rescored = rescore_records(noisy_run, records, {})
    fields = ("status", "success", "values", "details", "failure_kind", "no_answer")
    for old, new in zip(records, rescored, strict=True):
        assert json.dumps({k: new[k] for k in fields}, sort_keys=True) == json.dumps(
            {k: old[k] for k in fields}, sort_keys=True
        ), old["task_id"]
    ledger = next(r for r in rescored if r["task_id"] == PICKED[0])
    assert ledger["details"]["broken"] == [
        "2 regression test(s) broke: test_regression_invoice_api::test_quote_of_a_small_invoice, "
        "test_regression_invoice_api::test_quote_of_a_large_invoice"
    ]
