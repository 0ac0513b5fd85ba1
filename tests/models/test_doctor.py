"""``egi-bench doctor`` on a good and a bad setup."""

from __future__ import annotations

import io
import socket

import pytest

from pytest_egi.doctor import check_litellm_version, check_python, run_doctor
from tests.helpers.openai_server import OpenAIServer
from tests.toy_project import toy_suite_package

PKG = "doctorsuites"  # unique package name: no clash with other tests' suite packages


@pytest.fixture
def project(tmp_path, monkeypatch):
    """``<tmp>/routing.yaml`` and ``<tmp>/doctorsuites/toy`` (the toy suite); cleans imports."""
    yield from toy_suite_package(tmp_path, PKG)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_known_bad_litellm_versions():
    for bad in ("1.82.7", "1.82.8", "1.107.0", "1.107.12"):
        assert "known-bad" in check_litellm_version(bad)
    for ok in ("1.110.2", "1.82.6", "1.108.0", "1.17.0"):
        assert check_litellm_version(ok) is None
    assert check_python((3, 10, 9)) == "Python 3.10.9 is too old; pytest-egi needs >= 3.11"
    assert check_python((3, 11, 0)) is None


def test_doctor_good_setup(project, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # comes from the .env file
    (project.parent / ".env").write_text("OPENAI_API_KEY=sk-egi-doctor-0123456789abcdef\n")
    out = io.StringIO()
    with OpenAIServer() as server:
        status = run_doctor(server.url, project, model="openai/test-model",
                            cache_dir=project.parent / "cache", out=out)
        # GET /models, then one tiny real call (no suite here declares parameters)
        assert [r.path for r in server.requests] == ["/v1/models", "/v1/chat/completions"]
    text = out.getvalue()
    assert status == 0, text
    assert ("  ok    model openai/test-model: a call with no parameters for (no suite "
            "defaults) answered (finish_reason stop, ") in text
    assert "  ok    suite toy: world built, 6 quick tasks" in text
    assert f"  ok    api base {server.url}: reachable, GET /models -> 200 (models: test-model)" in text
    assert "  ok    env file " in text and "1 new variable (OPENAI_API_KEY)" in text
    assert "provider keys present: OPENAI_API_KEY" in text and "sk-egi-doctor" not in text
    assert "  ok    model openai/test-model: the keys LiteLLM needs are present\n" in text
    assert "  ok    litellm 1.110.2 is not on the known-bad list" in text
    assert text.rstrip().endswith("all checks passed")


def test_doctor_bad_setup_lists_every_problem(project, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (project / "broken").mkdir()
    (project / "broken" / "__init__.py").write_text(
        "class S:\n    name = 'broken'\n    options_model = dict\n"
        "    def load_tasks(self, profile, options):\n"
        "        raise ValueError('world.json: field seed missing')\nSUITE = S()\n")
    (project / "halfdone").mkdir()  # a folder without __init__.py
    versions = {"litellm": "1.107.3", "rich": None}
    out = io.StringIO()
    port = _free_port()  # nothing listens there
    bad_env = project.parent / "bad.env"
    bad_env.write_text("this line is not an assignment\n")
    status = run_doctor(f"http://127.0.0.1:{port}/v1", project, model="gpt-4o-mini", out=out,
                        env_file=bad_env,
                        package_version=lambda n: versions.get(n, "0.0.0"), timeout_s=2)
    text = out.getvalue()
    assert status == 1
    problems = text.split("problems:\n")[1]
    assert "litellm 1.107.3 is on the known-bad list (1.82.7, 1.82.8, 1.107.x)" in problems
    assert "package rich is not installed: pip install 'rich==15.0.0'" in problems
    assert "model gpt-4o-mini needs OPENAI_API_KEY" in problems
    assert "suite broken: ValueError: world.json: field seed missing" in problems
    assert "suite halfdone: " in problems and "has no __init__.py" in problems
    assert f"api base http://127.0.0.1:{port}/v1: unreachable" in problems
    assert "  ok    suite toy: world built" in text  # the good suite still passes
    assert "bad.env:1: expected KEY=VALUE" in problems
    assert text.count("\n  FAIL  ") == 7
    assert "  warn  package pytest 0.0.0 (pinned 9.2.0)" in text


def test_doctor_makes_one_tiny_call_with_the_parameters_the_suites_will_send(project, monkeypatch):
    """A provider that refuses a suite's default parameter fails in doctor, naming it and the
    way out, instead of on every item of the run."""
    from tests.helpers.openai_server import Reply, chat_reply, error_reply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-egi-doctor-0123456789abcdef")
    (project / "toy" / "agent.py").write_text(
        "GENERATION_PARAMS = {'temperature': 0.0, 'max_tokens': 50}\n")

    def no_temperature(request: dict) -> Reply:
        if "temperature" in request:
            return error_reply(400, "Unsupported parameter: 'temperature' is not supported "
                                    "with this model.", err_type="invalid_request_error")
        return chat_reply("OK")

    with OpenAIServer(reply_fn=no_temperature) as server:
        out = io.StringIO()
        status = run_doctor(server.url, project, model="openai/test-model", out=out)
        assert status == 1
        assert server.completions[0].body["max_tokens"] == 50
        text = out.getvalue()
        assert ("model openai/test-model: a call with max_tokens=50,temperature=0.0 for toy "
                "failed: ") in text.split("1 problem:\n")[1]
        assert "pass --egi-model-params temperature=null" in text
        # the way out works
        out = io.StringIO()
        status = run_doctor(server.url, project, model="openai/test-model", out=out,
                            model_params={"temperature": None})
        assert status == 0, out.getvalue()
        assert "a call with max_tokens=50 for toy answered (finish_reason stop" in out.getvalue()


def test_doctor_checks_an_offline_policy_name_as_pytest_does(project):
    out = io.StringIO()
    assert run_doctor(None, project, model="egi/noisy-2", out=out) == 1
    assert out.getvalue().split("1 problem:\n")[1] == (
        "  1. unknown offline policy 'egi/noisy-2': use egi/oracle, egi/null or egi/noisy-<p> "
        "with p between 0 and 1 (e.g. egi/noisy-0.3)\n")
    out = io.StringIO()
    assert run_doctor(None, project, model="egi/noisy-0.3", out=out) == 0, out.getvalue()
    assert ("  ok    model egi/noisy-0.3: an offline reference policy (the suites' own "
            "policies); it needs no provider or key\n") in out.getvalue()


def _no_provider_keys(monkeypatch):
    from pytest_egi.models.secrets import present_provider_keys

    for name in present_provider_keys():
        monkeypatch.delenv(name)


def test_doctor_says_a_keyless_local_model_needs_no_key(project, monkeypatch):
    _no_provider_keys(monkeypatch)
    out = io.StringIO()
    with OpenAIServer() as server:
        status = run_doctor(server.url, project, model="hosted_vllm/test-model", out=out)
    text = out.getvalue()
    assert status == 0, text
    assert (f"  ok    model hosted_vllm/test-model: no key needed (LiteLLM asks for none with "
            f"--egi-api-base {server.url})\n") in text
    assert "the keys LiteLLM needs are present" not in text


def test_doctor_says_how_to_reach_a_keyless_openai_compatible_server(project, monkeypatch):
    _no_provider_keys(monkeypatch)
    out = io.StringIO()
    with OpenAIServer() as server:
        status = run_doctor(server.url, project, model="openai/test-model", out=out)
    assert status == 1
    assert out.getvalue().split("1 problem:\n")[1] == (
        "  1. model openai/test-model needs OPENAI_API_KEY (set it in the environment or a .env "
        f"file; for a keyless OpenAI-compatible server at {server.url}, set OPENAI_API_KEY to "
        "any value (e.g. OPENAI_API_KEY=none), or name the model hosted_vllm/test-model "
        "instead)\n")


class _BusyServer:
    """Accepts every connection at once and answers ``GET /models`` only after ``delay_s``:
    a server that is there, but busy (a local model server loading or serving a long
    generation)."""

    def __init__(self, delay_s: float) -> None:
        import threading

        self.delay_s = delay_s
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        import threading

        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            if self.stop.wait(self.delay_s):
                return
            body = b'{"object": "list", "data": [{"id": "late-model"}]}'
            try:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            except OSError:
                pass

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def test_doctor_calls_a_busy_server_slow_not_unreachable(project):
    busy = _BusyServer(delay_s=3.0)
    try:
        out = io.StringIO()
        status = run_doctor(f"http://127.0.0.1:{busy.port}/v1", project, out=out, timeout_s=1)
    finally:
        busy.close()
    text = out.getvalue()
    assert (f"  warn  api base http://127.0.0.1:{busy.port}/v1: reachable but slow: it accepted the "
            "connection and gave no answer to GET /models within 1 s (busy, or still loading a "
            "model?); runs wait --egi-timeout per call (default 120 s)\n") in text
    assert "unreachable" not in text
    assert status == 0, text  # a warning: the server is there


def test_doctor_says_a_test_call_that_timed_out_met_a_busy_server(project, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-egi-doctor-0123456789abcdef")
    out = io.StringIO()
    with OpenAIServer(latency=3.0) as server:  # GET /models answers at once, completions late
        status = run_doctor(server.url, project, model="openai/test-model", out=out,
                            call_timeout_s=1)
    problem = out.getvalue().split("1 problem:\n")[1]
    assert status == 1
    assert problem.startswith("  1. model openai/test-model: a call with no parameters for "
                              "(no suite defaults) failed: model openai/test-model at ")
    assert problem.endswith(": timeout (HTTP 408) after 1 attempt: Timeout: litellm.Timeout: "
                            "APITimeoutError - Request timed out. Error_str: Request timed out. "
                            "(the server took the request but gave no answer within 1 s: it is "
                            "busy or slow, not unreachable)\n")
