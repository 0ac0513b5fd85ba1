"""Acceptance of the Benchforce suite through the real plugin: every tool call executed by the
environment server, a real subprocess speaking WebSocket on 127.0.0.1; the LLM user simulator
over a local OpenAI-compatible server."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
import uuid
from pathlib import Path

import pytest

from pytest_egi.trajectories import read_trajectory
from tests.helpers.mcp_processes import process_gone, server_pids
from tests.helpers.openai_server import OpenAIServer, chat_reply, error_reply, tool_reply
from tests.helpers.suite_run import run_suite

ROOT = Path(__file__).resolve().parents[2]
SERVER_MODULE = "suites.benchforce.env.server"
ENTRIES = 40  # the quick profile: hospital's first 40 entries


@pytest.fixture
def server_mark(monkeypatch: pytest.MonkeyPatch) -> str:
    """Mark this test's server processes (their environment); returns the mark for
    :func:`_servers`. A server this process started earlier is stopped first, so the run
    starts its own."""
    from suites.benchforce.env.client import stop_servers

    mark = uuid.uuid4().hex
    monkeypatch.setenv("EGI_TEST_RUN", mark)
    stop_servers()
    return f"EGI_TEST_RUN={mark}"


def _servers(mark: str) -> list[int]:
    return server_pids(ROOT, None, [SERVER_MODULE], env_mark=mark)




def _records(pytester: pytest.Pytester, reports: str = "reports-*") -> dict[str, dict]:
    lines = next(pytester.path.glob(f"{reports}/*/records.jsonl")).read_text().splitlines()
    return {r["task_id"]: r for r in map(json.loads, lines)}


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "n2"])
def test_quick_oracle_passes_every_entry_and_leaves_no_server(pytester, server_mark, workers):
    assert _servers(server_mark) == []
    result, egi = run_suite(pytester, "benchforce", "egi/oracle", *workers)
    result.assert_outcomes(passed=ENTRIES)
    subs = egi["suites"]["benchforce"]["sub_metrics"]
    assert subs["hospital.accuracy_all"] == 1.0
    assert subs["hospital.finished_rate"] == 1.0
    assert subs["hospital.accuracy_finished"] == 1.0
    records = _records(pytester)
    assert len(records) == ENTRIES and {r["status"] for r in records.values()} == {"passed"}
    # the record's turns count every model call; values.replies the agent's replies to the
    # caller (upstream's turns): entry_0 asks, confirms, calls schedule_appointment, reports
    first = records["hospital.entry_0"]
    assert (first["turns"], first["values"]["replies"], first["values"]["tool_calls"]) == (4, 3.0, 1.0)
    assert all("turns" not in r["values"] for r in records.values())
    # the oracle makes one call per model call: the calls that asked for a tool are the difference
    assert [r["task_id"] for r in records.values()
            if r["turns"] != r["values"]["replies"] + r["values"]["tool_calls"]] == []
    assert subs["hospital.replies_mean"] == sum(r["values"]["replies"] for r in records.values()) / ENTRIES
    assert _servers(server_mark) == []


def test_quick_null_scores_zero(pytester, server_mark):
    result, egi = run_suite(pytester, "benchforce", "egi/null")
    result.assert_outcomes(failed=ENTRIES)
    subs = egi["suites"]["benchforce"]["sub_metrics"]
    assert subs["hospital.accuracy_all"] == subs["hospital.accuracy_finished"] == 0.0
    # every caller gave up after 3 failed turns and hung up: finished under upstream's rule
    assert subs["hospital.finished_rate"] == subs["hospital.gave_up_rate"] == 1.0
    assert subs["hospital.goal_met_rate"] == 0.0
    # so M2 (finished rate) and M5 (100 - (accuracy_finished - accuracy_all)) read 100, and a
    # run of Benchforce alone passes the M2 and M5 floors: the session exits 0 (M1 is 0)
    assert (egi["buckets"]["M1"]["value"], egi["buckets"]["M2"]["value"], egi["buckets"]["M5"]["value"]) == (
        0.0, 100.0, 100.0)  # fmt: skip
    assert egi["gate"]["release_ready"] is True and result.ret == 0
    assert _servers(server_mark) == []


_KILLER = """
import os, signal
import pytest

TASK_ID = "hospital.entry_1"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if not item.nodeid.endswith(f"[{TASK_ID}]"):
        return (yield)
    from suites.benchforce.env import client

    original = client.EnvSession.tool_call

    def kill_then_call(self, *args, **kwargs):
        server = client.shared_server()
        os.kill(server.pid, signal.SIGKILL)
        server.dead_after(10)
        return original(self, *args, **kwargs)

    client.EnvSession.tool_call = kill_then_call
    try:
        return (yield)
    finally:
        client.EnvSession.tool_call = original
"""


def test_server_killed_mid_session_is_an_item_error_and_the_next_items_run(pytester, server_mark):
    pytester.makepyfile(benchforce_killer=_KILLER)
    pytester.syspathinsert()
    selection = "entry_0 or entry_1 or entry_2"  # entries 0, 1, 2, 10-29: 23 items
    result, egi = run_suite(pytester, "benchforce", "egi/oracle", "-p", "benchforce_killer", "-k", selection)
    result.assert_outcomes(passed=22, errors=1)
    result.stdout.fnmatch_lines(
        ["*test_task?hospital.entry_1?*EnvironmentFault: the benchforce server closed the connection "
         "during 'tool.call'*"]
    )  # fmt: skip
    records = _records(pytester)
    killed = records["hospital.entry_1"]
    assert killed["status"] == "error" and killed["success"] is None and killed["values"] == {}
    assert killed["error"].startswith(
        "EnvironmentFault: the benchforce server closed the connection during 'tool.call'"
    )
    assert killed["termination"] == "error"
    run = next(pytester.path.glob("reports-*/*"))
    raw = read_trajectory(run, killed)
    known = raw["trajectory"]["info"]["benchforce"]
    assert (known["session_id"], known["ending"], known["server_restarted"]) == (
        "egi.hospital.002.01",
        "error",
        False,
    )
    # the transcript read from the server's file: up to the frame before the killed tool call
    assert known["transcript"][0]["message"]["event"] == "session.start"
    assert known["transcript"][-1]["message"]["event"] == "ack"
    assert [f["seq"] for f in known["transcript"]] == list(range(1, len(known["transcript"]) + 1))
    # the next item's session found the server dead, started a new one, and says so in raw/
    assert records["hospital.entry_2"]["status"] == "passed"

    def started(task: str) -> tuple[bool, int]:
        info = read_trajectory(run, records[task])["trajectory"]["info"]["benchforce"]
        return info["server_restarted"], info["server_starts"]

    restarted = known["server_starts"] + 1  # this process may have started servers before
    assert started("hospital.entry_2") == (True, restarted)
    assert started("hospital.entry_10") == (False, restarted)
    assert records["hospital.entry_10"]["status"] == "passed"
    assert egi["suites"]["benchforce"]["sub_metrics"]["hospital.accuracy_all"] == 1.0  # errors unscored
    assert _servers(server_mark) == []


_HANGER = """
import os, signal
import pytest

TASK_ID = "hospital.entry_1"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if not item.nodeid.endswith(f"[{TASK_ID}]"):
        return (yield)
    from suites.benchforce.env import client

    original = client.EnvSession.tool_call

    def hang_then_call(self, *args, **kwargs):
        # the server freezes (it stops reading and answering, and cannot act on SIGTERM)
        hung = client.shared_server().pid
        with open(os.environ["EGI_TEST_HUNG_PIDS"], "a") as fh:
            fh.write(f"{hung}\\n")
        os.kill(hung, signal.SIGSTOP)
        return original(self, *args, **kwargs)

    client.EnvSession.tool_call = hang_then_call
    try:
        return (yield)
    finally:
        client.EnvSession.tool_call = original
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "n2"])
def test_server_hung_mid_session_is_an_item_error_and_the_next_items_get_a_fresh_one(
    pytester, server_mark, monkeypatch, workers
):
    # in the field: a hung server errored 9 of 11 items (every later session found it hung)
    # and kept the session from ending (its stop waited for it without a timeout)
    pytester.makepyfile(benchforce_hanger=_HANGER)
    hung_file = pytester.path / "hung.pids"
    monkeypatch.setenv("EGI_TEST_HUNG_PIDS", str(hung_file))
    path = [str(pytester.path), os.environ.get("PYTHONPATH")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, path)))
    selection = "entry_0 or entry_1 or entry_2"  # entries 0, 1, 2, 10-29: 23 items
    reports = pytester.path / "reports"
    began = time.monotonic()
    try:
        # in a subprocess: -n 2's workers import the plugin from PYTHONPATH (an in-process run
        # gives them the outer session's sys.path), and a run that hangs fails at the timeout
        result = pytester.runpytest_subprocess(
            str(ROOT / "suites" / "benchforce"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
            "--egi-model", "egi/oracle", "--egi-mode", "quick", "--egi-report-dir", str(reports),
            "--egi-bootstrap", "0", "-p", "benchforce_hanger", "-k", selection,
            "--egi-opt", "benchforce.server_timeout_s=2", *workers, timeout=300,
        )  # fmt: skip
    finally:
        hung = [int(p) for p in hung_file.read_text().split()] if hung_file.exists() else []
        for pid in hung:  # a failing run may leave it frozen
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)
                os.kill(pid, signal.SIGKILL)
    egi = json.loads(next(reports.glob("*/egi.json")).read_text())
    assert time.monotonic() - began < 240
    result.assert_outcomes(passed=22, errors=1)
    result.stdout.fnmatch_lines(
        ["*test_task?hospital.entry_1?*EnvironmentFault: the benchforce server did not answer "
         "'tool.call' within 2 s*"]
    )  # fmt: skip
    records = _records(pytester, "reports")
    assert [t for t, r in records.items() if r["status"] != "passed"] == ["hospital.entry_1"]
    assert records["hospital.entry_1"]["status"] == "error" and records["hospital.entry_1"]["values"] == {}
    assert egi["suites"]["benchforce"]["sub_metrics"]["hospital.accuracy_all"] == 1.0  # errors unscored
    assert len(hung) == 1 and process_gone(hung[0])  # stopped by the run, not by this test
    assert _servers(server_mark) == []


# ---------------------------------------------------------------- the LLM user simulator


def _run_with_simulator(pytester: pytest.Pytester, server: OpenAIServer, *extra: str) -> pytest.RunResult:
    # in a subprocess: litellm's lazy imports do not survive pytester's in-process
    # sys.modules snapshot/restore
    return pytester.runpytest_subprocess(
        str(ROOT / "suites" / "benchforce"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "egi/oracle", "--egi-mode", "quick", "-k", "entry_0",
        "--egi-simulator-model", "openai/sim-model", "--egi-simulator-api-base", server.url,
        "--egi-report-dir", str(pytester.path / "reports"), "--egi-bootstrap", "0", "--egi-no-cache",
        *extra,
    )  # fmt: skip


def _raw(pytester: pytest.Pytester, record: dict) -> dict:
    run = next((pytester.path / "reports").iterdir())
    return read_trajectory(run, record)


def test_llm_simulator_over_http_plays_the_caller_and_its_tokens_are_its_own(
    pytester, server_mark, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with OpenAIServer() as server:
        server.enqueue(
            chat_reply("Hello, I need to book a doctor's appointment.", prompt_tokens=300),
            chat_reply("Wesley Sandoval, Dr. Elena Kowalczyk, 2024-06-24 at 1:30 PM.", prompt_tokens=400),
            chat_reply("Yes, go ahead.", prompt_tokens=500),
            tool_reply("exit_conversation", '{"goal_met": true}', prompt_tokens=600),
        )
        result = _run_with_simulator(pytester, server)
        result.assert_outcomes(passed=1)
        bodies = [r.body for r in server.completions]
    assert len(bodies) == 4 and all(b["model"] == "sim-model" for b in bodies)
    assert bodies[0]["temperature"] == 0 and bodies[0]["max_tokens"] == 512 and "tools" not in bodies[0]
    assert [t["function"]["name"] for t in bodies[1]["tools"]] == ["exit_conversation"]
    assert bodies[0]["messages"][0]["content"].startswith("You are role-playing a customer")
    record = _records(pytester, "reports")["hospital.entry_0"]
    assert record["simulator_usage"]["calls"] == 4
    assert record["simulator_usage"]["prompt_tokens"] == 1800
    assert record["simulator_usage"]["completion_tokens"] == 20
    # the agent (the oracle: zero tokens) is charged none of the simulator's
    assert record["usage"]["prompt_tokens"] == 0 and record["usage"]["completion_tokens"] == 0
    assert record["values"]["tokens"] == 0.0 and record["values"]["finished"] == 1.0
    info = _raw(pytester, record)["trajectory"]["info"]["benchforce"]
    assert info["simulator"] == "openai/sim-model" and info["exit_reason"] == "goal_met"


def test_llm_simulator_provider_failure_is_an_item_error(pytester, server_mark, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with OpenAIServer() as server:
        server.enqueue(
            chat_reply("Hello, I need to book a doctor's appointment."),
            error_reply(500, "the simulator's provider broke"),
        )
        result = _run_with_simulator(pytester, server, "--egi-max-retries", "0")
        result.assert_outcomes(errors=1)
    record = _records(pytester, "reports")["hospital.entry_0"]
    assert record["status"] == "error" and record["success"] is None and record["values"] == {}
    assert record["error"].startswith("SimulatorError: the user simulator openai/sim-model failed:")
    assert record["error_kind"] == "server_error"
    # the agent heard the opening only; no error text reached it
    messages = _raw(pytester, record)["trajectory"]["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == [
        "Hello, I need to book a doctor's appointment."
    ]
    assert _servers(server_mark) == []
