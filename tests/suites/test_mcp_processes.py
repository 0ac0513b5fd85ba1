"""The acceptance tests' process finder sees a live server-like process of this checkout (so
their "no server left" checks cannot pass by finding nothing ever)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.mcp_processes import killer_plugin, server_pids

ROOT = Path(__file__).resolve().parents[2]
MODULE = "suites._common.mcp_servers.airbnb"


def test_server_pids_finds_a_live_process_by_checkout_seed_and_module():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = "import time; print('running', flush=True); time.sleep(60)"
    args = [sys.executable, "-c", code, MODULE, "--seed", "90817"]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, text=True)
    try:
        # Popen returns when the child's close-on-exec descriptors close, which the kernel
        # does before it sets the new program's argv and environment: /proc/<pid>/cmdline
        # can still read empty then. A line from the child means they are in place.
        assert proc.stdout.readline() == "running\n"
        assert server_pids(ROOT, 90817, [MODULE]) == [proc.pid]
        assert server_pids(ROOT, 90818, [MODULE]) == []
        assert server_pids(ROOT, 90817, ["suites._common.mcp_servers.maps"]) == []
        assert server_pids(ROOT / "elsewhere", 90817, [MODULE]) == []
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert server_pids(ROOT, 90817, [MODULE]) == []


def test_server_pids_without_a_seed_tells_runs_apart_by_an_environment_mark():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EGI_TEST_RUN": "run-a"}
    code = "import time; print('running', flush=True); time.sleep(60)"
    module = "suites.benchforce.env.server"
    args = [sys.executable, "-c", code, "-m", module, "--transcript-dir", "/nonexistent"]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "running\n"
        assert server_pids(ROOT, None, [module], env_mark="EGI_TEST_RUN=run-a") == [proc.pid]
        assert server_pids(ROOT, None, [module], env_mark="EGI_TEST_RUN=run-b") == []
        assert server_pids(ROOT, None, [module], env_mark="EGI_TEST_RUN=run-") == []
        assert server_pids(ROOT, 90817, [module], env_mark="EGI_TEST_RUN=run-a") == []
        assert server_pids(ROOT / "elsewhere", None, [module], env_mark="EGI_TEST_RUN=run-a") == []
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert server_pids(ROOT, None, [module], env_mark="EGI_TEST_RUN=run-a") == []


def test_killer_plugin_names_the_task_the_server_and_when():
    source = killer_plugin("repository_management-002", server="github")
    assert "TASK_ID = 'repository_management-002'\nSERVER = 'github'\nWHEN = 'mid_item'\n" in source
    assert "SERVER = None\nWHEN = 'between_items'\n" in killer_plugin("airbnb-002", when="between_items")
    compile(source, "mcp_killer.py", "exec")
    with pytest.raises(ValueError, match="when must be 'mid_item' or 'between_items', not 'later'"):
        killer_plugin("airbnb-002", when="later")
