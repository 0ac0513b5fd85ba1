"""The Benchforce environment server over a real socket: protocol round trip, schema-invalid
arguments, state hashing, session endings, and server faults as errors."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time

import pytest

from pytest_egi.agents.tools import ToolError
from pytest_egi.models.base import ModelResponse, ProviderError, Usage, assistant_message, tool_call
from pytest_egi.models.offline import NULL_ANSWER, Noise, NullClient, PolicyClient
from pytest_egi.suite import SuiteProfile
from suites.benchforce import SUITE, BenchforceOptions
from suites.benchforce.agent import ServerToolkit, run_trial
from suites.benchforce.env.base import apply_call, copy_world, state_hash
from suites.benchforce.env.client import EnvironmentFault, EnvSession, ServerProcess, shared_server
from suites.benchforce.env.hospital import ENV
from suites.benchforce.env.protocol import ProtocolError, decode, encode
from tests.helpers.mcp_processes import process_gone

SEED = 42


@pytest.fixture(scope="module")
def server():
    proc = ServerProcess()
    proc.start()
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def tasks():
    return SUITE.load_tasks(SuiteProfile(seed=SEED, categories=["hospital"], max_turns=15), None)


def _entry(task):
    return {k: v for k, v in task.data.items() if k not in ("env", "seed", "max_turns")}


def test_envelope_round_trip_and_errors():
    text = encode("s.001.01", "agent", {"event": "tool.call", "name": "x"})
    frame = json.loads(text)
    assert set(frame) == {"session_id", "role", "message"} and isinstance(frame["message"], str)
    assert decode(text) == ("s.001.01", "agent", {"event": "tool.call", "name": "x"})
    with pytest.raises(ProtocolError, match="unknown role 'judge'"):
        decode(json.dumps({"session_id": "s", "role": "judge", "message": "{}"}))


def test_session_round_trip_and_transcript(server, tasks):
    task = tasks[0]  # schedule_appointment
    with EnvSession(server, "t.round.01") as session:
        ready = session.start("hospital", SEED, _entry(task))
        assert ready["event"] == "session.ready" and len(ready["tools"]) == 12
        assert [t["function"]["name"] for t in ready["tools"]][:2] == [
            "get_patient_info",
            "get_patient_medications",
        ]
        session.say("client", "Hi")
        action = task.data["actions"][0]
        result = session.tool_call(action["name"], json.dumps(action["arguments"]), call_id="c1")
        assert result["event"] == "tool.result" and result["ok"] is True and result["call_id"] == "c1"
        assert result["output"]["message"] == "Appointment scheduled successfully"
        assert result["hash"] != ready["hash"]
        ended = session.end("user_exit")
    transcript = ended["transcript"]
    assert [line["seq"] for line in transcript] == list(range(1, len(transcript) + 1))
    assert [(line["direction"], line["message"]["event"]) for line in transcript] == [
        ("recv", "session.start"),
        ("sent", "session.ready"),
        ("recv", "user.message"),
        ("sent", "ack"),
        ("recv", "tool.call"),
        ("sent", "tool.result"),
        ("recv", "session.end"),
        ("sent", "session.ended"),
    ]
    on_disk = (server.transcript_dir / "t.round.01" / "transcript.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in on_disk] == transcript
    # the session is gone from the server after its end
    with EnvSession(server, "t.round.01") as session, pytest.raises(EnvironmentFault, match="not started"):
        session.say("client", "again")


def test_call_ids_are_numbered_per_session_not_per_process(server, tasks):
    # a process-wide counter made a transcript depend on which worker ran it before (serial
    # and -n 2 runs differed)
    seen = []
    for sid in ("t.ids.01", "t.ids.02"):
        with EnvSession(server, sid) as session:
            session.start("hospital", SEED, _entry(tasks[0]))
            seen += [session.tool_call("get_doctor_info", {"doctor_identifier": "nobody"})["call_id"]]
            seen += [session.tool_call("get_doctor_info", {"doctor_identifier": "nobody"})["call_id"]]
            session.end("user_exit")
    assert seen == ["call_1", "call_2", "call_1", "call_2"]


def test_schema_invalid_arguments_are_an_error_frame_the_agent_sees(server, tasks):
    with EnvSession(server, "t.invalid.01") as session:
        ready = session.start("hospital", SEED, _entry(tasks[0]))
        toolkit = ServerToolkit(session, ready["tools"])
        args = tasks[0].data["actions"][0]["arguments"]
        no_department = {k: v for k, v in args.items() if k != "department"}
        outcome = toolkit.call("schedule_appointment", json.dumps(no_department))
        assert outcome.error is True
        assert outcome.content == (
            "Error: invalid arguments for 'schedule_appointment': 'department' is a required property"
        )
        as_number = toolkit.call("get_patient_info", json.dumps({"patient_identifier": 2001}))
        assert as_number.content == (
            "Error: invalid arguments for 'get_patient_info': 2001 is not of type 'string' "
            "(at 'patient_identifier')"
        )
        assert toolkit.call("no_such_tool", "{}").content.startswith("Error: unknown tool 'no_such_tool'.")
        assert toolkit.call("get_patient_info", "{not json").content.startswith(
            "Error: arguments for 'get_patient_info' are not valid JSON"
        )
        assert [c["code"] for c in toolkit.calls] == [
            "invalid_arguments",
            "invalid_arguments",
            "unknown_tool",
            "invalid_arguments",
        ]
        ended = session.end("user_exit")
    assert ended["hash"] == ready["hash"]  # nothing was applied
    errors = [line["message"] for line in ended["transcript"] if line["message"]["event"] == "tool.error"]
    assert len(errors) == 4 and errors[0]["error"]["code"] == "invalid_arguments"


def test_state_hash_ignores_key_order_and_every_write_changes_it(tasks):
    world = ENV.build_world(SEED)
    reordered = {k: dict(reversed(list(v.items()))) for k, v in reversed(list(world.items()))}
    assert state_hash(ENV, reordered) == state_hash(ENV, world)
    assert all(ENV.projection(world)[table] for table in ("appointments", "referrals", "patients"))
    writes = {n for n, t in ENV.tools.items() if t.kind == "write"}
    assert writes == {
        "schedule_appointment",
        "cancel_appointment",
        "create_referral",
        "update_referral_status",
        "update_emergency_contact",
    }
    seen = set()
    for task in tasks:
        for action in task.data["actions"]:
            if action["name"] in writes:
                state = copy_world(world)
                before = state_hash(ENV, state)
                apply_call(ENV, state, action["name"], action["arguments"])
                assert state_hash(ENV, state) != before, action
                seen.add(action["name"])
    assert seen == writes


def _oracle(task):
    noise = Noise(0.0, f"{SEED}|benchforce|{task.id}|1")
    return PolicyClient("egi/oracle", SUITE.reference_policy(task, None, noise), noise)


def test_oracle_passes_and_null_fails_every_template(tasks):
    for task in tasks[:10]:  # one entry of each template
        traj = run_trial(task, _oracle(task)).to_dict()
        score = SUITE.score(task, traj, None)
        assert score.success, (task.id, score.got)
        assert traj["info"]["benchforce"]["ending"] == "user_exit" and score.values["finished"] == 1.0
        null = SUITE.score(task, run_trial(task, NullClient()).to_dict(), None)
        # the caller gave up and hung up: finished under upstream's rule, not passed
        assert not null.success and null.values["finished"] == null.values["gave_up"] == 1.0
        assert null.values["goal_met"] == 0.0 and score.values["goal_met"] == 1.0


class _AlwaysAsks:
    """An agent that asks for the caller's name forever."""

    def generate(self, messages, tools=None, **params):
        return ModelResponse(assistant_message("Could you tell me your full name?"), Usage(calls=1), "stop")


def test_max_turns_ending_is_unfinished(tasks):
    task = tasks[0]
    traj = run_trial(task, _AlwaysAsks(), BenchforceOptions(max_turns=4)).to_dict()
    info = traj["info"]["benchforce"]
    assert info["ending"] == "max_turns" and info["agent_replies"] == 4
    assert [m["message"]["event"] for m in info["transcript"]].count("agent.message") == 4
    score = SUITE.score(task, traj, None)
    assert score.values["finished"] == 0.0 and score.values["max_turns"] == 1.0 and not score.success


def test_timeout_ending_is_unfinished_and_scored(tasks):
    task = tasks[0]
    traj = run_trial(task, _oracle(task), BenchforceOptions(timeout_s=1e-9)).to_dict()
    assert traj["info"]["benchforce"]["ending"] == "timeout"
    score = SUITE.score(task, traj, None)
    assert score.values["timeout"] == 1.0 and score.values["finished"] == 0.0 and not score.success


class _KillsServer:
    """Asks a question, then kills the shared server and calls a tool."""

    def __init__(self, pid_of):
        self.pid_of, self.calls = pid_of, 0

    def generate(self, messages, tools=None, **params):
        self.calls += 1
        if self.calls == 1:
            return ModelResponse(
                assistant_message("Could you tell me your full name?"), Usage(calls=1), "stop"
            )
        os.kill(self.pid_of(), signal.SIGKILL)
        call = tool_call("c1", "get_patient_info", json.dumps({"patient_identifier": "Anyone"}))
        return ModelResponse(assistant_message(None, [call]), Usage(calls=1), "tool_calls")


def test_server_killed_mid_session_is_an_environment_fault(tasks):
    from suites.benchforce.env.client import shared_server

    server = shared_server()
    server.start()
    starts = server.starts
    with pytest.raises(EnvironmentFault, match="closed the connection during 'tool.call'") as info:
        run_trial(tasks[0], _KillsServer(lambda: server.pid))
    assert not isinstance(info.value, ToolError)
    partial = info.value.partial_trajectory
    assert partial["termination"] == "error" and partial["info"]["error"].startswith("EnvironmentFault")
    # what is known of the failed session is kept: the transcript comes from the server's file
    known = partial["info"]["benchforce"]
    transcript = known.pop("transcript")
    assert known == {
        "env": "hospital",
        "session_id": "egi.hospital.001.01",
        "max_turns": 15,
        "simulator": "egi/rules",
        "server_restarted": False,
        "server_starts": starts,
        "initial_hash": known["initial_hash"],
        "ending": "error",
    }
    assert len(known["initial_hash"]) == 64
    assert [(f["seq"], f["direction"], f["message"]["event"]) for f in transcript] == [
        (1, "recv", "session.start"),
        (2, "sent", "session.ready"),
        (3, "recv", "user.message"),
        (4, "sent", "ack"),
        (5, "recv", "agent.message"),
        (6, "sent", "ack"),
        (7, "recv", "user.message"),
        (8, "sent", "ack"),
    ]  # the tool call never reached the server
    assert transcript[4]["message"]["text"] == "Could you tell me your full name?"
    # the next session starts the server again, and says so
    traj = run_trial(tasks[0], _oracle(tasks[0])).to_dict()
    assert SUITE.score(tasks[0], traj, None).success
    assert server.starts == starts + 1
    assert traj["info"]["benchforce"]["server_restarted"] is True
    assert traj["info"]["benchforce"]["server_starts"] == starts + 1
    # and the one after it found the server running
    again = run_trial(tasks[0], _oracle(tasks[0])).to_dict()["info"]["benchforce"]
    assert (again["server_restarted"], again["server_starts"]) == (False, starts + 1)


def test_hung_server_times_out_as_an_environment_fault(tasks):
    proc = ServerProcess()
    proc.start()
    try:
        with EnvSession(proc, "t.hang.01", timeout_s=0.5) as session:
            session.start("hospital", SEED, _entry(tasks[0]))
            os.kill(proc.pid, signal.SIGSTOP)
            try:
                with pytest.raises(EnvironmentFault, match="did not answer 'user.message' within 0.5 s"):
                    session.say("client", "Hi")
            finally:
                os.kill(proc.pid, signal.SIGCONT)
    finally:
        proc.stop()


def test_stop_leaves_no_process_and_no_temporary_folder_behind(tmp_path):
    proc = ServerProcess()
    proc.start()
    pid, folder = proc.pid, proc.transcript_dir
    assert folder is not None and folder.is_dir()
    proc.stop()
    assert proc.pid is None and not proc.alive()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not folder.exists()  # every transcript is also in its trajectory
    given = ServerProcess(tmp_path / "kept")
    (tmp_path / "kept").mkdir()
    given.start()
    given.stop()
    assert (tmp_path / "kept").is_dir()  # a folder the caller gave is the caller's


def test_null_answer_is_what_null_says():
    assert NULL_ANSWER == "I don't know."


# ------------------------------------------- a server in an unknown state is never reused




def _cleanup(*pids: int | None) -> None:
    """SIGKILL what a failing test left behind (SIGCONT first, so a stopped one can die)."""
    for pid in pids:
        if pid is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)
                os.kill(pid, signal.SIGKILL)


class _HangsServer:
    """Asks a question, then freezes the shared server (SIGSTOP: it stops reading, answers
    nothing, and cannot act on SIGTERM, as a server stuck in a handler) and calls a tool."""

    def __init__(self, pid_of, then: Exception | None = None):
        self.pid_of, self.then, self.calls, self.hung = pid_of, then, 0, None

    def generate(self, messages, tools=None, **params):
        self.calls += 1
        if self.calls == 1:
            return ModelResponse(
                assistant_message("Could you tell me your full name?"), Usage(calls=1), "stop"
            )
        self.hung = self.pid_of()
        os.kill(self.hung, signal.SIGSTOP)
        if self.then is not None:
            raise self.then
        call = tool_call("c1", "get_patient_info", json.dumps({"patient_identifier": "Anyone"}))
        return ModelResponse(assistant_message(None, [call]), Usage(calls=1), "tool_calls")


def test_a_server_that_hangs_mid_session_errors_the_item_and_the_next_gets_a_fresh_one(tasks):
    server = shared_server()
    server.start()
    starts, agent = server.starts, _HangsServer(lambda: server.pid)
    options = BenchforceOptions(server_timeout_s=1.0)
    try:
        with pytest.raises(EnvironmentFault, match="did not answer 'tool.call' within 1 s"):
            run_trial(tasks[0], agent, options)
        assert process_gone(agent.hung)  # stopped at once: not left hanging until the session ends
        assert not server.alive()
        traj = run_trial(tasks[0], _oracle(tasks[0]), options).to_dict()
        assert SUITE.score(tasks[0], traj, None).success
        info = traj["info"]["benchforce"]
        assert (info["server_restarted"], info["server_starts"]) == (True, starts + 1)
    finally:
        _cleanup(agent.hung)


def test_a_server_that_stopped_answering_between_items_is_replaced(tasks):
    server = shared_server()
    server.start()
    starts, hung = server.starts, server.pid
    os.kill(hung, signal.SIGSTOP)  # it hung after the last session: the handshake never completes
    try:
        traj = run_trial(tasks[0], _oracle(tasks[0]), BenchforceOptions(server_timeout_s=1.0)).to_dict()
        assert SUITE.score(tasks[0], traj, None).success
        assert (traj["info"]["benchforce"]["server_starts"], server.starts) == (starts + 1, starts + 1)
        assert process_gone(hung)
    finally:
        _cleanup(hung)


def test_a_server_that_cannot_end_a_failed_session_is_not_reused(tasks):
    # the model's provider fails and the server hangs at the same time: the session cannot be
    # ended, so the server's state is unknown; the item errors with the provider's error
    server = shared_server()
    server.start()
    agent = _HangsServer(lambda: server.pid, then=ProviderError("upstream 503", kind="server_error"))
    try:
        with pytest.raises(ProviderError, match="upstream 503"):
            run_trial(tasks[0], agent, BenchforceOptions(server_timeout_s=1.0))
        assert process_gone(agent.hung) and not server.alive()
        assert SUITE.score(tasks[0], run_trial(tasks[0], _oracle(tasks[0])).to_dict(), None).success
    finally:
        _cleanup(agent.hung)


_STUBBORN = """
# A server that ignores its stop requests: SIGTERM is ignored, its stdin never reaches EOF (fd 0
# is a pipe whose write end it holds), and it leaves a child in its process group that ignores
# SIGTERM too. The variable is removed first, so the child (and anything else) is left alone.
import os, signal, subprocess, sys
if os.environ.pop("EGI_TEST_STUBBORN_SERVER", None) is not None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _read, _write = os.pipe()
    os.dup2(_read, 0)
    _child = subprocess.Popen([sys.executable, "-c", "import signal, time; "
                               "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
    with open(os.environ["EGI_TEST_CHILD_PID"], "w") as fh:
        fh.write(str(_child.pid))
"""


def test_stop_is_bounded_for_a_server_that_ignores_sigterm_and_kills_its_group(tmp_path, monkeypatch):
    (tmp_path / "sitecustomize.py").write_text(_STUBBORN)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("EGI_TEST_STUBBORN_SERVER", "1")
    monkeypatch.setenv("EGI_TEST_CHILD_PID", str(tmp_path / "child.pid"))
    proc = ServerProcess()
    proc.start()
    pid, child = proc.pid, int((tmp_path / "child.pid").read_text())
    assert pid is not None and os.getpgid(child) == pid  # the child is in the server's group
    try:
        stopper = threading.Thread(target=proc.stop, daemon=True)
        began = time.monotonic()
        stopper.start()
        stopper.join(30)
        assert not stopper.is_alive(), "ServerProcess.stop still waiting after 30 s"
        assert time.monotonic() - began < 12  # 2 s after stdin closes, 2 s after SIGTERM, then SIGKILL
        assert process_gone(pid) and process_gone(child)
        assert proc.pid is None and not proc.alive()
    finally:
        _cleanup(pid, child)


def test_stop_is_bounded_for_a_hung_server(tasks):
    proc = ServerProcess()
    proc.start()
    pid = proc.pid
    os.kill(pid, signal.SIGSTOP)  # hung: it reads no stdin and cannot act on SIGTERM
    try:
        stopper = threading.Thread(target=proc.stop, daemon=True)
        stopper.start()
        stopper.join(30)
        assert not stopper.is_alive(), "ServerProcess.stop still waiting after 30 s"
        assert process_gone(pid)
    finally:
        _cleanup(pid)
