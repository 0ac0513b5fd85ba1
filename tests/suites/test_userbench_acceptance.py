"""Acceptance of the UserBench suite through the real plugin: the quick profile under the
oracle (each task at the most it allows) and null, ``-n 2`` identical to serial, upstream's own
parquet rows run with a scenario file (``userbench.scenarios``), and the LLM user simulator
over a local OpenAI-compatible server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import suites.userbench as userbench
from pytest_egi.suite import SuiteProfile
from pytest_egi.trajectories import read_trajectory
from suites.userbench.scorer import reference_micro_avg
from suites.userbench.simulator import SEARCH_JUDGE_SYSTEM
from tests.helpers.openai_server import OpenAIServer, chat_reply, error_reply
from tests.helpers.suite_run import run_suite
from tests.suites.userbench.fake_simulator import rule_reply

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = Path(
    os.environ.get("EGI_USERBENCH_UPSTREAM", ROOT.parent / "shared" / "upstream" / "userbench" / "data")
)
ROUTED = ("travel22", "travel33", "travel44")
PER_ENV = 60  # the quick profile: 60 tasks of each routed environment
TASK = "travel22-001"


def _quick_tasks(env: str) -> list:
    profile = SuiteProfile(seed=42, categories=[env], per_category=PER_ENV)
    return userbench.SUITE.load_tasks(profile, None)


def _records(pytester: pytest.Pytester, reports: str) -> dict[str, dict]:
    lines = next(pytester.path.glob(f"{reports}/*/records.jsonl")).read_text().splitlines()
    return {r["task_id"]: r for r in map(json.loads, lines)}


def _comparable(record: dict) -> dict:
    """A record without what a run may change (wall times, the run's own paths)."""
    return {k: v for k, v in record.items() if k not in ("timing", "raw_path")}


def test_quick_oracle_reaches_each_tasks_maximum_and_n2_gives_the_same_records(pytester):
    expected = {env: sum(reference_micro_avg(t.data) for t in _quick_tasks(env)) / PER_ENV for env in ROUTED}
    # the protocol's maximum (1.2A + 0.2P) / (2A + P): no search of a quick task hits the 5th-search failure
    assert expected == pytest.approx({"travel22": 0.4, "travel33": 0.36, "travel44": 4 / 12}, rel=1e-12)
    result, egi = run_suite(pytester, "userbench", "egi/oracle")
    result.assert_outcomes(passed=3 * PER_ENV)
    subs = egi["suites"]["userbench"]["sub_metrics"]
    for env in ROUTED:
        assert subs[f"{env}.micro_avg"] == pytest.approx(expected[env], rel=1e-12), env
        assert subs[f"{env}.best_rate"] == 1.0 and subs[f"{env}.avg_number_of_1"] == 2.0
        assert subs[f"{env}.normalized_score"] == 1.0 and subs[f"{env}.active_elicitation_rate"] == 1.0
        assert subs[f"{env}.tasks"] == float(PER_ENV)
    assert egi["simulator"] == "egi/rules"
    m3 = {c["route"]: c["raw"] for c in egi["buckets"]["M3"]["contributors"]}
    assert m3 == {f"userbench/{env}.micro_avg": subs[f"{env}.micro_avg"] for env in ROUTED}
    serial = _records(pytester, "reports-egi_oracle-0")
    assert len(serial) == 3 * PER_ENV and {r["status"] for r in serial.values()} == {"passed"}

    result, egi_n2 = run_suite(pytester, "userbench", "egi/oracle", "-n", "2")
    result.assert_outcomes(passed=3 * PER_ENV)
    parallel = _records(pytester, "reports-egi_oracle-2")
    assert {k: _comparable(r) for k, r in parallel.items()} == {k: _comparable(r) for k, r in serial.items()}
    assert egi_n2["suites"]["userbench"]["sub_metrics"] == subs


def test_quick_null_scores_zero(pytester):
    result, egi = run_suite(pytester, "userbench", "egi/null")
    result.assert_outcomes(failed=3 * PER_ENV)
    assert result.ret == 0  # failed items alone do not fail the session; M3 has no release floor
    subs = egi["suites"]["userbench"]["sub_metrics"]
    for env in ROUTED:
        assert subs[f"{env}.micro_avg"] == 0.0 and subs[f"{env}.best_rate"] == 0.0, env
    assert egi["buckets"]["M3"]["value"] == 0.0


# ---------------------------------------------------------------- upstream's rows with scenarios


@pytest.mark.skipif(not (UPSTREAM / "travel22_multiturn" / "train.parquet").is_file(),
                    reason=f"upstream UserBench data not found at {UPSTREAM}")  # fmt: skip
def test_upstream_rows_with_a_scenario_file_run_through_the_plugin(pytester, tmp_path):
    """Upstream's first three travel22 train rows (copied unchanged) and our scenario file for two
    of them; travel33 / travel44 read upstream's folders as they are and have no scenario file."""
    import pyarrow.parquet as pq

    from tests.suites.userbench.test_userbench_scenarios import ROW0, ROW1, ROW2, _scenarios

    data = tmp_path / "data"
    (data / "travel22_multiturn").mkdir(parents=True)
    rows = pq.read_table(UPSTREAM / "travel22_multiturn" / "train.parquet").slice(0, 3)
    pq.write_table(rows, data / "travel22_multiturn" / "train.parquet")
    for env in ("travel33", "travel44"):
        (data / f"{env}_multiturn").symlink_to(UPSTREAM / f"{env}_multiturn")
    scenarios = _scenarios(tmp_path)
    result, egi = run_suite(
        pytester, "userbench", "egi/oracle", "--egi-opt", f"userbench.data_dir={data}",
        "--egi-opt", "userbench.data_split=train", "--egi-opt", f"userbench.scenarios={scenarios}", "-rs",
    )  # fmt: skip
    # travel22: two rows run; the third (no scenario) and the quick profile's 60 rows of each other
    # environment (no scenario file) are skipped, each with its reason
    result.assert_outcomes(passed=2, skipped=1 + 2 * PER_ENV)
    assert result.ret == 0
    # the core's skip line since issue 22: "cannot run: <file>, row <i>: <reason>"
    result.stdout.fnmatch_lines([f"*cannot run: *train.parquet, row 2: *travelgym_data_22.json has no "
                                 f"scenario '{ROW2}'*"])  # fmt: skip
    subs = egi["suites"]["userbench"]["sub_metrics"]
    assert subs["travel22.tasks"] == 2.0 and subs["travel22.best_rate"] == 1.0
    assert subs["travel22.micro_avg"] == subs["travel22.micro_avg_ceiling"] == pytest.approx(0.4)
    records = _records(pytester, "reports-egi_oracle-7")
    assert {k: r["status"] for k, r in records.items() if r["category"] == "travel22"} == {
        ROW0.replace("|", "."): "passed", ROW1.replace("|", "."): "passed", ROW2.replace("|", "."): "skipped"}
    warnings = " ".join(map(str, egi.get("data_warnings") or []))
    assert "travel33: 60 of 60 task(s)" in warnings and "no scenario file" in warnings


# ---------------------------------------------------------------- the LLM user simulator


def _run_with_simulator(pytester: pytest.Pytester, server: OpenAIServer, *extra: str) -> pytest.RunResult:
    # in a subprocess: litellm's lazy imports do not survive pytester's in-process
    # sys.modules snapshot/restore
    return pytester.runpytest_subprocess(
        str(ROOT / "suites" / "userbench"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "egi/oracle", "--egi-mode", "quick", "-k", TASK,
        "--egi-simulator-model", "openai/sim-model", "--egi-simulator-api-base", server.url,
        "--egi-report-dir", str(pytester.path / "reports"), "--egi-bootstrap", "0", "--egi-no-cache",
        *extra,
    )  # fmt: skip


def _raw(pytester: pytest.Pytester, record: dict) -> dict:
    run = next((pytester.path / "reports").iterdir())
    return read_trajectory(run, record)


def test_llm_simulator_over_http_plays_the_user_and_its_tokens_are_its_own(pytester, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    task = _quick_tasks("travel22")[0]
    assert task.id == TASK

    def play(request: dict):
        return chat_reply(rule_reply(task.data, request["messages"]), prompt_tokens=300, completion_tokens=7)

    with OpenAIServer(reply_fn=play) as server:
        result = _run_with_simulator(pytester, server)
        result.assert_outcomes(passed=1)
        bodies = [r.body for r in server.requests if r.method == "POST"]
    # 2 searches judged, 4 questions classified and answered; the answers need no simulator
    assert len(bodies) == 10 and all(b["model"] == "sim-model" for b in bodies)
    assert bodies[0]["temperature"] == 0 and bodies[0]["max_tokens"] == 2048 and "tools" not in bodies[0]
    assert bodies[0]["messages"][0] == {"role": "system", "content": SEARCH_JUDGE_SYSTEM}
    record = _records(pytester, "reports")[TASK]
    assert record["status"] == "passed"
    assert record["values"]["micro_avg"] == pytest.approx(reference_micro_avg(task.data))
    assert record["simulator_usage"]["calls"] == 10
    assert record["simulator_usage"]["prompt_tokens"] == 3000
    assert record["simulator_usage"]["completion_tokens"] == 70
    # the agent (the oracle: zero tokens) is charged none of the simulator's
    assert record["usage"]["prompt_tokens"] == 0 and record["usage"]["completion_tokens"] == 0
    info = _raw(pytester, record)["trajectory"]["info"]["userbench"]
    assert info["simulator"] == "openai/sim-model"
    assert info["simulator_usage"]["calls"] == 10 and info["simulator_usage"]["prompt_tokens"] == 3000
    egi = json.loads(next((pytester.path / "reports").glob("*/egi.json")).read_text())
    assert egi["simulator"] == "openai/sim-model"


@pytest.mark.parametrize(
    "second,kind,error",
    [
        (error_reply(500, "the simulator's provider broke"), "server_error",
         "SimulatorError: the user simulator openai/sim-model failed:"),
        (chat_reply("I think that request is fine."), "bad_verdict",
         "SimulatorError: the user simulator openai/sim-model gave no usable search verdict after one "
         "re-ask: the reply is not a JSON object (Expecting value at character 0)"),
    ],
    ids=["provider_error", "unparsable_twice"],
)  # fmt: skip
def test_llm_simulator_failure_is_an_item_error(pytester, monkeypatch, second, kind, error):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with OpenAIServer() as server:
        server.enqueue(chat_reply("Looks right to me!"), second)  # the first search's verdict: unusable, then
        result = _run_with_simulator(pytester, server, "--egi-max-retries", "0")
        result.assert_outcomes(errors=1)
    record = _records(pytester, "reports")[TASK]
    assert record["status"] == "error" and record["success"] is None and record["values"] == {}
    assert record["error"].startswith(error) and record["error_kind"] == kind
    # the agent heard the user's opening only; no error text reached it, and no turn was scored
    trajectory = _raw(pytester, record)["trajectory"]
    assert [m["role"] for m in trajectory["messages"]] == ["system", "user", "assistant"]
    assert trajectory["info"]["userbench"]["rewards"] == []
    assert trajectory["info"]["userbench"]["simulator_usage"]["calls"] == (2 if kind == "bad_verdict" else 1)


@pytest.mark.skipif(not (UPSTREAM / "travel22_multiturn" / "train.parquet").is_file(),
                    reason=f"upstream UserBench data not found at {UPSTREAM}")  # fmt: skip
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "n2"])
def test_one_malformed_row_among_good_ones_errors_alone(pytester, tmp_path, workers):
    """Issue 22: upstream's first two travel22 train rows (with their scenarios) around a row whose
    id names an aspect TravelGym lacks: that row's item errors alone (it was skipped), naming the
    file, the task, the row, the field and the fix; the good rows pass under the oracle."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pytest_egi.run.recorder import shorten
    from pytest_egi.suite import TaskLoadError
    from suites.userbench.upstream import FIX
    from tests.suites.userbench.test_userbench_scenarios import ROW0, ROW1, _scenarios

    data = tmp_path / "data"
    (data / "travel22_multiturn").mkdir(parents=True)
    table = pq.read_table(UPSTREAM / "travel22_multiturn" / "train.parquet").slice(0, 2)
    rows = table.to_pylist()
    bad = json.loads(json.dumps(rows[0]))
    bad["reward_model"]["id"] = "boat:2-37|hotel:2-9"
    path = data / "travel22_multiturn" / "train.parquet"
    pq.write_table(pa.Table.from_pylist([rows[0], bad, rows[1]], schema=table.schema), path)
    for env in ("travel33", "travel44"):
        (data / f"{env}_multiturn").symlink_to(UPSTREAM / f"{env}_multiturn")
    result, _ = run_suite(
        pytester, "userbench", "egi/oracle", "--egi-opt", f"userbench.data_dir={data}",
        "--egi-opt", "userbench.data_split=train", "--egi-opt", f"userbench.scenarios={_scenarios(tmp_path)}",
        "-k", "travel22", *workers,
    )  # fmt: skip
    result.assert_outcomes(passed=2, errors=1)
    records = _records(pytester, f"reports-egi_oracle-{8 + len(workers)}")
    message = (
        f"TaskLoadError: {path}: task 'travel22.row1' could not be loaded: RowError: row 1: field "
        "reward_model.id: 'boat:2-37|hotel:2-9': expected distinct '<aspect>:<count>-<index>' parts joined "
        f"by '|', aspects among ['flight', 'hotel', 'apartment', 'restaurant', 'rental_car']; {FIX} (this "
        "task errors alone; fix the entry or leave it out)"
    )
    assert {k: (r["status"], r["error"]) for k, r in records.items()} == {
        ROW0.replace("|", "."): ("passed", None),
        "travel22.row1": ("error", shorten(message, hint=TaskLoadError(message).hint)),
        ROW1.replace("|", "."): ("passed", None),
    }
