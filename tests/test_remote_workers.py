"""Workers on other machines, through pytest-xdist's own remote gateways (``--tx socket=...``).

Each test starts execnet socket servers on 127.0.0.1 (``tests/helpers/execnet_servers.py``)
and runs the plugin with ``-d --tx socket=127.0.0.1:PORT//chdir=CHECKOUT``: each worker
runs in its server's process, in a second checkout of the project (as on another machine),
collects there and builds the suites' worlds there. The controller stays the only writer of
the run directory. "Another host" is also simulated outright: the controller hands the
workers a shared build directory and a model-gateway socket that do not exist on their side
(``OTHER_HOST_CONFTEST``), as any path of the controller's machine would not.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_egi.report.session import CRASH_TEXT
from tests.helpers.execnet_servers import group_alive, socket_servers
from tests.helpers.openai_server import OpenAIServer
from tests.models.test_e2e_provider import MODEL, toy_agent

REPO = Path(__file__).resolve().parents[1]
FLAGS = ("--egi-model", "egi/oracle", "--egi-bootstrap", "0", "-p", "no:cacheprovider")

OTHER_HOST_CONFTEST = """
import os
import pytest


@pytest.hookimpl(trylast=True)
def pytest_configure_node(node):
    # the controller's paths, as a worker on another machine sees them: absent
    if os.environ.get("EGI_TEST_OTHER_HOST") and not node.gateway.spec.popen:
        for key in ("egi_shared_dir", "egi_gateway"):
            if node.workerinput.get(key):
                node.workerinput[key] = "/nonexistent-on-this-host" + node.workerinput[key]
"""

KILL_CONFTEST = """
import os
import signal


def pytest_runtest_call(item):
    if os.environ.get("EGI_TEST_KILL") and item.nodeid.endswith("[alpha-1]"):
        os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of the controller and of the socket servers (so of the workers):
    this checkout's pytest_egi first on the path."""
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", path)
    return dict(os.environ)


@pytest.fixture
def remote_checkout(toy_project: pytest.Pytester, tmp_path_factory) -> Path:
    """A second copy of the toy project, where the socket workers run ("the other machine");
    the controller's project gets the conftest that can play the other host."""
    toy_project.makeconftest(OTHER_HOST_CONFTEST)
    root = tmp_path_factory.mktemp("other-machine")
    for name in ("routing.yaml", "toysuites"):
        source = toy_project.path / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / name)
    (root / "conftest.py").write_text(KILL_CONFTEST)
    return root


def _tx(servers, checkout: Path) -> list[str]:
    return [arg for s in servers for arg in ("--tx", f"{s.spec}//chdir={checkout}")]


def _run_files(run_dir: Path) -> dict[str, bytes]:
    """The run folder's files (relative path -> bytes), without the volatile ones (and the
    trajectory stores, named after the process that wrote them: :func:`_trajectories`)."""
    volatile = {"egi.json", "report.html", "run.json", "timings.jsonl", "journal.jsonl"}
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in sorted(run_dir.rglob("*"))
            if p.is_file() and p.name not in volatile and p.parent.name != "raw"}


def _trajectories(run_dir: Path) -> dict[str, str]:
    """Each record's stored trajectory (its JSON text), by the record's ``raw_path``."""
    from pytest_egi.records import load_records
    from pytest_egi.trajectories import TrajectoryReader

    with TrajectoryReader(run_dir) as reader:
        return {r["raw_path"]: reader.read_text(r) for r in load_records(run_dir) if r.get("raw_path")}


@pytest.mark.parametrize("other_host", [False, True], ids=["same-host", "other-host"])
def test_socket_workers_give_the_records_of_a_serial_run(toy_project, remote_checkout, env,
                                                         tmp_path, monkeypatch, other_host):
    if other_host:
        monkeypatch.setenv("EGI_TEST_OTHER_HOST", "1")
    serial = toy_project.runpytest_subprocess("toysuites", *FLAGS, "--egi-run-id", "serial")
    assert serial.ret == 0
    with socket_servers(2, tmp_path, env=dict(os.environ)) as servers:
        result = toy_project.runpytest_subprocess(
            *FLAGS, "--egi-run-id", "remote", "-d", *_tx(servers, remote_checkout))
        logs = "".join(s.log.read_text() for s in servers)
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=6)
    assert "2 workers [6 items]" in result.stdout.str()
    reports = toy_project.path / "reports"
    remote = _run_files(reports / "remote")
    assert remote == _run_files(reports / "serial")  # records.jsonl, results.csv
    assert _trajectories(reports / "remote") == _trajectories(reports / "serial")
    assert len(_trajectories(reports / "remote")) == 6
    # each worker collected and ran in the other checkout, and wrote nothing there
    assert logs.count(f"rootdir: {remote_checkout}") == 2
    assert not (remote_checkout / "reports").exists()
    egi = json.loads((reports / "remote" / "egi.json").read_text())
    assert egi["session"]["crashes"] == [] and egi["counts"] == {"passed": 6}
    # what the workers collected reached the controller (shared folder, or first setup report)
    assert (egi["session"]["items_collected"], egi["session"]["items_ran"]) == (6, 6)
    plan = json.loads((reports / "remote" / "run.json").read_text())["plan"]
    assert plan == json.loads((reports / "serial" / "run.json").read_text())["plan"]
    assert len(plan) == 6
    assert not any(group_alive(s) for s in servers)


def test_a_killed_remote_worker_makes_its_item_an_error_and_the_rest_go_on(
        toy_project, remote_checkout, env, tmp_path, monkeypatch):
    # the worker's host has no shared directory: the error record comes from the item's
    # setup report (egi_base); respawning servers let xdist replace the dead worker
    monkeypatch.setenv("EGI_TEST_OTHER_HOST", "1")
    monkeypatch.setenv("EGI_TEST_KILL", "1")
    with socket_servers(2, tmp_path, env=dict(os.environ), respawn=True) as servers:
        result = toy_project.runpytest_subprocess(
            *FLAGS, "--egi-run-id", "killed", "--egi-mode", "deep", "-d", *_tx(servers, remote_checkout))
    out = result.stdout.str()
    assert result.ret == 1, out  # 1 errored item of 10 is above --egi-max-error-rate 0.05
    assert "replacing crashed worker gw" in out
    records = {json.loads(line)["task_id"]: json.loads(line) for line in
               (toy_project.path / "reports" / "killed" / "records.jsonl").read_text().splitlines()}
    assert len(records) == 10
    crashed = records.pop("alpha-1")
    assert (crashed["status"], crashed["error"], crashed["raw_path"]) == ("error", CRASH_TEXT, None)
    assert crashed["nodeid"] == "toysuites/toy/test_toy.py::test_task[alpha-1]"
    assert {r["status"] for r in records.values()} == {"passed"}
    egi = json.loads((toy_project.path / "reports" / "killed" / "egi.json").read_text())
    assert egi["counts"] == {"error": 1, "passed": 9}
    (crash,) = egi["session"]["crashes"]
    assert crash.startswith("worker gw") and crash.endswith("crashed running "
                                                            "toysuites/toy/test_toy.py::test_task[alpha-1]")
    assert not any(group_alive(s) for s in servers)


def test_a_killed_worker_of_execnets_own_server_cannot_be_replaced(
        toy_project, remote_checkout, env, tmp_path, monkeypatch):
    """execnet's socket server runs its worker in its own process: the kill takes the server
    too, and xdist's replacement worker could not connect (an INTERNALERROR). With
    --max-worker-restart 0 the item is still an error record, the other worker's items run,
    and the run says it is incomplete when items were left to the dead worker."""
    monkeypatch.setenv("EGI_TEST_OTHER_HOST", "1")
    monkeypatch.setenv("EGI_TEST_KILL", "1")
    with socket_servers(2, tmp_path, env=dict(os.environ)) as servers:
        result = toy_project.runpytest_subprocess(
            *FLAGS, "--egi-run-id", "killed", "-d", "--max-worker-restart", "0",
            *_tx(servers, remote_checkout))
    out = result.stdout.str()
    assert result.ret == 1, out
    assert "crashed and worker restarting disabled" in out
    lines = (toy_project.path / "reports" / "killed" / "records.jsonl").read_text().splitlines()
    records = {json.loads(line)["task_id"]: json.loads(line) for line in lines}
    assert (records["alpha-1"]["status"], records["alpha-1"]["error"]) == ("error", CRASH_TEXT)
    egi = json.loads((toy_project.path / "reports" / "killed" / "egi.json").read_text())
    assert egi["counts"]["error"] == 1
    session = egi["session"]
    assert session["items_collected"] == 6  # the plan came with a remote worker's first report
    ran = session["items_ran"]  # the dead worker's queue may or may not have moved in time
    assert ran == len(records) and (ran == 6 or egi["egi"]["headline"].startswith(
        f"EGI INCOMPLETE, INVALID: {ran} of 6 items ran; the others reported no result"))
    assert not any(group_alive(s) for s in servers)


def test_a_remote_worker_calls_the_provider_itself_when_the_gateway_is_elsewhere(
        toy_project, remote_checkout, env, tmp_path, monkeypatch):
    """A local worker (``--tx popen``) and a remote one (``--tx socket=...``): the controller
    starts the model gateway for the local one; the remote one, which cannot reach it, calls
    the provider with its own client and says so once."""
    monkeypatch.setenv("EGI_TEST_OTHER_HOST", "1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-server")
    with OpenAIServer(reply_fn=toy_agent) as server, \
            socket_servers(1, tmp_path, env=dict(os.environ)) as servers:
        result = toy_project.runpytest_subprocess(
            "--egi-model", MODEL, f"--egi-api-base={server.url}", "--egi-no-cache",
            "--egi-bootstrap", "0", "-p", "no:cacheprovider", "--egi-run-id", "llm", "-d",
            "--tx", "popen", *_tx(servers, remote_checkout))
        count = server.count
    out = result.stdout.str()
    assert result.ret == 0, out
    result.assert_outcomes(passed=6)
    assert count == 12  # lookup + submit per task: through the gateway or the worker's client
    notes = [line.strip() for line in result.stdout.lines if "egi: the model gateway" in line]
    assert len(notes) == 1, out
    assert re.fullmatch(r"\S+settings\.py:\d+: RuntimeWarning: egi: the model gateway "
                        r"/nonexistent-on-this-host/\S+/gateway\.sock is not on this host \(.+\): "
                        r"this worker calls the provider itself", notes[0]), notes
    located = [line for line in result.stdout.lines
               if re.fullmatch(r"\S+pytest_egi/models/settings\.py:\d+", line)]
    assert len(located) == 1, out  # the socket worker's note only
    records = [json.loads(line) for line in
               (toy_project.path / "reports" / "llm" / "records.jsonl").read_text().splitlines()]
    assert {r["status"] for r in records} == {"passed"} and len(records) == 6
    assert not any(group_alive(s) for s in servers)


@pytest.mark.skipif(not (REPO / "suites" / "herb").is_dir(), reason="needs the repository's suites")
def test_socket_workers_on_real_suites_give_the_records_of_a_serial_run(env, tmp_path):
    """``-k "herb or mcpeval"`` of the quick profile with egi/noisy-0.3, from the repository
    root: serial, then two socket workers in another checkout (links to this one's files)."""
    checkout = tmp_path / "other-machine"
    checkout.mkdir()
    for name in ("suites", "pytest_egi", "routing.yaml", "pyproject.toml", "conftest.py"):
        (checkout / name).symlink_to(REPO / name)
    reports = tmp_path / "reports"
    # no test path among the arguments: xdist maps every existing path to an rsync root;
    # -o testpaths=suites selects the suites on both sides
    common = [sys.executable, "-m", "pytest", "-o", "testpaths=suites", "-k", "herb or mcpeval",
              "-q", "-p", "no:cacheprovider", "--egi-model", "egi/noisy-0.3",
              "--egi-bootstrap", "0", f"--egi-report-dir={reports}"]
    serial = subprocess.run([*common, "--egi-run-id", "serial"], cwd=REPO, capture_output=True,
                            text=True, env=env)
    assert serial.returncode in (0, 1), serial.stdout[-3000:]
    with socket_servers(2, tmp_path, env=env) as servers:
        remote = subprocess.run([*common, "--egi-run-id", "remote", "-d", *_tx(servers, checkout)],
                                cwd=REPO, capture_output=True, text=True, env=env)
    assert remote.returncode == serial.returncode, remote.stdout[-3000:]
    assert "bringing up nodes..." in remote.stdout
    assert (checkout / "_pytest").is_dir()  # xdist copies pytest to a remote worker's folder
    records = (reports / "remote" / "records.jsonl").read_bytes()
    assert records == (reports / "serial" / "records.jsonl").read_bytes()
    assert len(records.splitlines()) > 10
    assert _run_files(reports / "remote") == _run_files(reports / "serial")
    assert not (checkout / "reports").exists()
    assert not any(group_alive(s) for s in servers)
