"""The model gateway: one LiteLLM process serving every xdist worker.

Everything a client does over the gateway is also covered by ``test_client.py``, whose tests
run over both transports (the ``transport`` fixture); these tests cover the gateway process
itself and the plugin's use of it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_egi.models import make_client
from pytest_egi.models.base import ProviderError
from pytest_egi.models.gateway import start_gateway
from pytest_egi.models.transport import GatewayTransport
from tests.helpers.openai_server import OpenAIServer, chat_reply
from tests.models.conftest import MODEL, PLANTED_KEY
from tests.models.test_e2e_provider import latest_run, toy_agent

HI = [{"role": "user", "content": "hi"}]


def _wait_gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_gateway_process_serves_then_stops_and_cleans_up(server, make_settings, planted_key):
    gateway = start_gateway()
    try:
        assert oct(os.stat(gateway.directory).st_mode & 0o777) == "0o700"
        ping = GatewayTransport(gateway.socket_path, 30).request({"op": "ping", "wait_s": 30})
        assert ping["ok"] is True and ping["litellm_ready"] is True
        assert ping["pid"] == gateway.process.pid != os.getpid()
        client = make_client(MODEL, provider=make_settings(server, gateway=gateway.socket_path,
                                                           cache_dir=None))
        server.enqueue(chat_reply("via the gateway", prompt_tokens=7, completion_tokens=2))
        response = client.generate(HI)
        assert response.message == {"role": "assistant", "content": "via the gateway"}
        assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (7, 2)
        # the gateway inherited the key from this process's environment at start
        assert server.completions[0].headers["authorization"] == f"Bearer {PLANTED_KEY}"
        unknown = GatewayTransport(gateway.socket_path, 30).request({"op": "reboot"})
        assert unknown == {"ok": False, "error": "unknown op 'reboot'"}
    finally:
        gateway.stop()
    assert gateway.process.returncode is not None
    assert not Path(gateway.directory).exists()


def test_a_dead_gateway_is_a_provider_error_naming_it(server, make_settings):
    gateway = start_gateway()
    client = make_client(MODEL, provider=make_settings(server, gateway=gateway.socket_path,
                                                       cache_dir=None))
    server.enqueue(chat_reply("first"))
    assert client.generate(HI).message["content"] == "first"
    gateway.process.send_signal(signal.SIGKILL)
    gateway.process.wait()
    try:
        with pytest.raises(ProviderError, match=r"model gateway at .*gateway\.sock failed: "
                                                r".*--egi-gateway off"):
            client.generate([{"role": "user", "content": "again"}])
        assert server.count == 1  # nothing reached the provider, and nothing was scored
    finally:
        gateway.stop()


def test_malformed_request_line_gets_an_error_answer_and_the_connection_lives(server, make_settings):
    gateway = start_gateway()
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(30)
            sock.connect(gateway.socket_path)
            reader = sock.makefile("rb")
            sock.sendall(b"this is not json\n")
            answer = json.loads(reader.readline())
            assert answer["failure"]["kind"] == "gateway" and not answer["failure"]["retryable"]
            assert answer["error_text"].startswith("gateway: JSONDecodeError")
            sock.sendall(b'{"op": "ping"}\n')
            assert json.loads(reader.readline())["ok"] is True
    finally:
        gateway.stop()


def test_gateway_exits_when_its_parent_dies(tmp_path):
    """A controller killed with -9 never calls stop(): the gateway must not outlive it."""
    script = ("import sys, os\nfrom pytest_egi.models.gateway import start_gateway\n"
              "g = start_gateway()\nprint(g.process.pid, g.directory, flush=True)\nos._exit(0)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, cwd=Path(__file__).resolve().parents[2])
    pid_text, directory = out.stdout.split()
    assert _wait_gone(int(pid_text), 5.0), "the orphaned gateway is still running"
    Path(directory, "gateway.sock").unlink(missing_ok=True)
    os.rmdir(directory)


WORKER_PROBE = """
import sys
from pathlib import Path


def pytest_sessionfinish(session):
    # before the worker reports "finished": the controller may exit right after that
    workerinput = getattr(session.config, "workerinput", None)
    if workerinput is not None:
        Path(f"probe-{workerinput['workerid']}.txt").write_text(
            f"{'litellm' in sys.modules} {workerinput.get('egi_gateway')}")
"""


def test_xdist_workers_share_one_gateway_and_score_like_a_serial_run(toy_project, planted_key):
    toy_project.makeconftest(WORKER_PROBE)
    with OpenAIServer(reply_fn=toy_agent) as server:
        args = ["toysuites", "--egi-model", MODEL, "--egi-api-base", server.url,
                "--egi-bootstrap", "0", "--egi-no-cache", "--egi-seed", "7"]
        serial = toy_project.runpytest_subprocess(*args)
        serial.assert_outcomes(passed=6)
        serial_records = (latest_run(toy_project) / "records.jsonl").read_text()
        parallel = toy_project.runpytest_subprocess(*args, "-n", "2")
        parallel.assert_outcomes(passed=6)
        assert server.count == 24
    probes = sorted(toy_project.path.glob("probe-gw*.txt"))
    assert len(probes) == 2
    sockets = set()
    for probe in probes:
        imported, socket_path = probe.read_text().split()
        assert imported == "False"  # no worker imported LiteLLM: the gateway made every call
        sockets.add(socket_path)
    assert len(sockets) == 1 and not Path(sockets.pop()).parent.exists()  # one, and cleaned up

    # records.jsonl holds no volatile field (latencies live in timings.jsonl): byte-identical
    assert (latest_run(toy_project) / "records.jsonl").read_text() == serial_records


def test_gateway_off_makes_each_worker_call_litellm_itself(toy_project, planted_key):
    toy_project.makeconftest(WORKER_PROBE)
    with OpenAIServer(reply_fn=toy_agent) as server:
        result = toy_project.runpytest_subprocess(
            "toysuites", "--egi-model", MODEL, "--egi-api-base", server.url, "--egi-bootstrap",
            "0", "--egi-no-cache", "-n", "2", "--egi-gateway", "off")
        result.assert_outcomes(passed=6)
    probes = [p.read_text().split() for p in toy_project.path.glob("probe-gw*.txt")]
    assert probes == [["True", "None"], ["True", "None"]]


def test_offline_policies_start_no_gateway(toy_project):
    toy_project.makeconftest(WORKER_PROBE)
    result = toy_project.runpytest_subprocess("toysuites", "--egi-model", "egi/oracle",
                                              "--egi-bootstrap", "0", "-n", "2")
    result.assert_outcomes(passed=6)
    probes = [p.read_text().split() for p in toy_project.path.glob("probe-gw*.txt")]
    assert probes == [["False", "None"], ["False", "None"]]
