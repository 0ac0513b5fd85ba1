"""The sandbox runner contains what an untrusted command does (pytest_egi.sandbox.runner).

Each containment case runs a real subprocess at the machine's best isolation level (the one
CI gets too) with small limits, and checks both the description in the result and that the
harness's side was not touched. The weaker levels are checked on the cases they still cover.
"""

from __future__ import annotations

import os
import socket
import sys
import time

import pytest

from pytest_egi.sandbox import (
    ISOLATION_LEVELS,
    Limits,
    Sandbox,
    detect_isolation,
    python_argv,
    python_env,
    scrubbed_env,
)

LEVEL = detect_isolation()
SMALL = Limits(wall_s=10, cpu_s=2, memory_mb=256, processes=24, file_size_mb=4)
needs_namespaces = pytest.mark.skipif(
    LEVEL != "namespaces", reason="needs the namespaces level (root + unshare)"
)


def run_py(code: str, limits: Limits = SMALL, **kw):
    with Sandbox({"main.py": code}, limits=limits, **kw) as box:
        return box.run(python_argv("main.py"), env=python_env())


def test_a_plain_command_runs_and_says_which_isolation_ran():
    result = run_py("print('hello')")
    assert (result.exit_code, result.stopped, result.reason) == (0, None, None)
    assert result.stdout_tail == "hello\n"
    assert result.isolation == LEVEL and LEVEL in ISOLATION_LEVELS


def test_exit_status_and_stderr_tail_are_reported():
    result = run_py("import sys\nsys.stderr.write('x' * 9000 + 'END')\nsys.exit(3)",
                    Limits(wall_s=10, tail_chars=100))  # fmt: skip
    assert (result.exit_code, result.stopped, result.reason) == (3, None, "exited with status 3")
    assert len(result.stderr_tail) == 100 and result.stderr_tail.endswith("END")


def test_an_endless_loop_is_stopped_by_the_cpu_limit():
    begin = time.monotonic()
    result = run_py("while True:\n    pass\n")
    assert result.stopped == "cpu_limit" and result.exit_code is None
    assert result.reason == "stopped by the CPU limit of 2 s (SIGXCPU)"
    assert time.monotonic() - begin < 9


def test_a_sleeping_command_is_stopped_by_the_wall_clock():
    result = run_py("import time\ntime.sleep(60)\n", Limits(wall_s=1.5))
    assert (result.stopped, result.reason) == ("timeout", "stopped after the wall-clock limit of 1.5 s")
    assert result.elapsed_s < 8


def test_children_that_outlive_the_wall_clock_are_killed_too(tmp_path):
    code = ("import subprocess, sys\n"
            "p = subprocess.Popen([sys.executable, '-S', '-c', 'import time; time.sleep(60)'],\n"
            "                     start_new_session=True)\n"
            "open('child.pid', 'w').write(str(p.pid))\n"
            "import time\ntime.sleep(60)\n")  # fmt: skip
    with Sandbox({"main.py": code}, limits=Limits(wall_s=2)) as box:
        result = box.run(python_argv("main.py"), env=python_env())
        assert result.stopped == "timeout"
        if LEVEL != "namespaces":  # under namespaces the pid is the namespace's own
            pid = int((box.root / "child.pid").read_text())
            time.sleep(0.2)
            assert not os.path.exists(f"/proc/{pid}") or "Z" in open(f"/proc/{pid}/stat").read().split()[2]


def test_eating_memory_fails_with_memory_error():
    result = run_py("x = bytearray(2 * 1024 ** 3)\n")
    assert result.exit_code == 1 and "MemoryError" in result.stderr_tail
    assert "memory" in result.hints


@needs_namespaces
def test_a_fork_bomb_is_contained_by_the_process_limit():
    code = ("import os\nrefused = 0\n"
            "for _ in range(200):\n"
            "    try:\n        pid = os.fork()\n    except OSError:\n        refused += 1\n        continue\n"
            "    if pid == 0:\n        import time\n        time.sleep(30)\n        os._exit(0)\n"
            "print('refused', refused)\n")  # fmt: skip
    begin = time.monotonic()
    result = run_py(code, Limits(wall_s=6, cpu_s=5, processes=16))
    assert result.exit_code == 0
    refused = int(result.stdout_tail.split()[-1])
    assert refused >= 200 - 16
    assert time.monotonic() - begin < 5  # the sleeping children died with the namespace's init


def test_a_huge_file_is_stopped_by_the_file_size_limit():
    result = run_py("open('big.bin', 'wb').write(b'x' * (64 * 1024 * 1024))\n")
    assert result.exit_code == 1 and "File too large" in result.stderr_tail
    assert "file_size" in result.hints


def test_writing_outside_the_workspace_is_refused(tmp_path):
    outside = "/tmp/egi-sandbox-escape-marker.txt"
    if os.path.exists(outside):
        os.unlink(outside)
    result = run_py(f"open({outside!r}, 'w').write('escaped')\n")
    if LEVEL == "namespaces":
        assert result.exit_code == 1 and "Read-only file system" in result.stderr_tail
        assert "read_only" in result.hints
        assert not os.path.exists(outside)
    elif os.path.exists(outside):  # weaker levels: only the user's own permissions protect
        os.unlink(outside)


def test_the_harness_files_cannot_be_changed(tmp_path):
    target = tmp_path / "harness.txt"
    target.write_text("mine")
    os.chmod(tmp_path, 0o755)
    result = run_py(f"open({str(target)!r}, 'w').write('theirs')\n")
    if LEVEL == "namespaces":
        assert result.exit_code == 1
        assert target.read_text() == "mine"


@needs_namespaces
def test_no_network_even_to_the_harness_loopback():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        result = run_py(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)\n")
    finally:
        server.close()
    assert result.exit_code == 1 and "network" in result.hints
    assert "Network is unreachable" in result.stderr_tail


def test_the_environment_is_scrubbed(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    with Sandbox({"main.py": "import json, os\nprint(json.dumps(dict(os.environ)))\n"}) as box:
        result = box.run(python_argv("main.py"), env=python_env())
        root = box.root
    import json

    env = json.loads(result.stdout_tail)
    assert "OPENAI_API_KEY" not in env and "sk-secret-value" not in result.stdout_tail
    assert env["HOME"] == str(root / ".home") and env["TMPDIR"] == str(root / ".tmp")
    assert "/somewhere" not in env["PYTHONPATH"]
    assert set(env) - {"PYTHONPATH"} <= set(scrubbed_env(root)) | {"LC_CTYPE"}


@needs_namespaces
def test_the_home_folder_of_the_harness_is_not_readable():
    home = os.path.expanduser("~")
    result = run_py(f"import os\nprint(sorted(os.listdir({home!r})))\n")
    listed = result.stdout_tail
    assert result.exit_code != 0 or ".bashrc" not in listed and ".ssh" not in listed


@pytest.mark.parametrize("level", [lv for lv in ISOLATION_LEVELS[1:]])
def test_weaker_levels_still_apply_the_limits(level):
    if ISOLATION_LEVELS.index(level) < ISOLATION_LEVELS.index(LEVEL):
        pytest.skip(f"{level} is stronger than this machine allows")
    ok = run_py("print('ok')", isolation=level)
    assert (ok.exit_code, ok.isolation, ok.stdout_tail) == (0, level, "ok\n")
    spin = run_py("while True:\n    pass\n", Limits(wall_s=10, cpu_s=1), isolation=level)
    assert spin.stopped == "cpu_limit" and spin.isolation == level
    mem = run_py("x = bytearray(2 * 1024 ** 3)\n", isolation=level)
    assert "memory" in mem.hints


def test_a_stronger_level_than_available_is_refused():
    if LEVEL == "namespaces":
        pytest.skip("the strongest level is available here")
    with pytest.raises(ValueError, match="is not available on this machine"):
        run_py("print(1)", isolation="namespaces")


def test_test_results_come_from_junit_never_from_stdout():
    tests = ("def test_passes():\n    print('FAILED error')\n\n\n"
             "def test_fails():\n    print('PASSED ok')\n    assert 1 == 2\n")  # fmt: skip
    with Sandbox({"test_x.py": tests}) as box:
        argv = python_argv("-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_x.py", "--junitxml=.r")
        result = box.run(argv, env=python_env(), junit=".r")
    assert result.exit_code == 1
    outcomes = {c.name: c.outcome for c in result.junit.cases}
    assert outcomes == {"test_passes": "passed", "test_fails": "failed"}
    assert result.junit.passed == 1 and result.junit.total == 2


def test_a_report_the_command_did_not_write_is_none():
    with Sandbox({"main.py": "print('<testsuite/>')"}) as box:
        (box.root / ".report.xml").write_text("<testsuite><testcase name='stale'/></testsuite>")
        result = box.run(python_argv("main.py"), env=python_env(), junit=".report.xml")
    assert result.junit is None  # the stale file was removed before the run


def test_a_symlinked_report_is_not_followed(tmp_path):
    secret = tmp_path / "secret.xml"
    secret.write_text("<testsuite><testcase classname='a' name='b'/></testsuite>")
    with Sandbox({"main.py": f"import os\nos.symlink({str(secret)!r}, '.report.xml')\n"}) as box:
        result = box.run(python_argv("main.py"), env=python_env(), junit=".report.xml")
    assert result.exit_code == 0 and result.junit is None


def test_the_workspace_is_removed_on_close():
    box = Sandbox({"a.py": "x = 1\n"})
    box.run(python_argv("-c", "open('made.txt', 'w').write('x')"), env=python_env())
    root = box.root
    assert (root / "made.txt").exists()
    box.close()
    assert not root.exists()


def test_from_directory_copies_regular_files_only(tmp_path):
    src = tmp_path / "proj"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "m.py").write_text("VALUE = 3\n")
    (src / "link.py").symlink_to("/etc/passwd")
    with Sandbox.from_directory(src) as box:
        assert list(box.paths()) == ["pkg/m.py"]
        result = box.run(python_argv("-c", "import pkg.m; print(pkg.m.VALUE)"), env=python_env())
    assert result.stdout_tail == "3\n"


def test_python_in_the_sandbox_does_not_see_the_harness_package():
    result = run_py("import importlib.util\nprint(importlib.util.find_spec('pytest_egi') is None)\n")
    assert result.stdout_tail == "True\n"
    assert sys.executable  # the same interpreter runs it
