"""Guards found by a new user's trial: one session per run folder, resumes and merges compare
test paths and generation parameters, a shard's exit status ignores the release gate (judged
on the merged run), and a merged folder can be merged again."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.test_resume_shard_interrupt import (
    _journal,
    _json,
    _project,
    _pytest,
    _start,
    _usage_error,
    _wait,
    merge,  # noqa: F401, F811 - a fixture
)


def test_a_second_session_on_a_run_folder_in_use_is_refused(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    first = _start(project, "--egi-run-id", "W", "--egi-shard", "1/2", slow="0.4")
    try:
        lock = project / "reports" / "W" / "shard-1-of-2" / "run.lock"
        deadline = time.monotonic() + 60
        while not (lock.exists() and lock.read_text().startswith("pid ")) and time.monotonic() < deadline:
            time.sleep(0.05)
        second = _pytest(project, "--egi-run-id", "W", "--egi-shard", "1/2")
    finally:
        done = _wait(first)
    assert second.returncode == 4
    message = _usage_error(second)[0]
    assert message.startswith(f"ERROR: {project}/reports/W/shard-1-of-2 is in use by another session (pid "
                              f"{first.pid} on host ")
    assert message.endswith(f"then continue the run with --egi-resume {project}/reports/W/shard-1-of-2")
    assert done.returncode in (0, 1)
    journal = _journal(project / "reports" / "W" / "shard-1-of-2")
    assert len(journal) == len({r["task_id"] for r in journal}) == 5  # written once, by one session


def test_resume_compares_test_paths_and_generation_parameters(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    first = _pytest(project, "--egi-run-id", "R")
    assert first.returncode in (0, 1), first.stdout[-2000:]
    run = project / "reports" / "R"
    other_paths = _pytest(project, "toysuites/toy", "--egi-resume", str(run))
    assert other_paths.returncode == 4
    assert ("the test paths (pytest's arguments or testpaths): [\"toysuites\"] in the run, "
            "[\"toysuites\", \"toysuites/toy\"] here") in _usage_error(other_paths)[0]
    params = _pytest(project, "--egi-resume", str(run), "--egi-model-params", "temperature=0.7")
    assert params.returncode == 4
    assert ("--egi-model-params / --egi-judge-params / --egi-simulator-params: none in the run, "
            "{\"model\": {\"temperature\": 0.7}} here") in _usage_error(params)[0]


def test_a_shard_exits_on_its_errors_not_on_the_release_gate(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    shard = _pytest(project, "--egi-run-id", "G", "--egi-shard", "1/2", "--egi-floor", "M2=100,M5=100")
    assert shard.returncode == 0, shard.stdout[-2000:]
    assert (f"egi: the release gate is judged on the merged run, not on shard 1/2 alone (egi-bench "
            f"report --merge {project}/reports/G)") in shard.stdout
    assert "session fails" not in shard.stdout


def test_a_merged_folder_can_be_merged_again(tmp_path: Path, merge) -> None:  # noqa: F811
    project = _project(tmp_path / "p")
    for k in (1, 2):
        assert _pytest(project, "--egi-run-id", "M", "--egi-shard", f"{k}/2").returncode in (0, 1)
    run = project / "reports" / "M"
    first = merge(run)
    records = (run / "records.jsonl").read_bytes()
    again = merge(run)
    assert first[0] == again[0] and first[0] in (0, 1)
    assert "merged from 2 shards" in again[1]
    assert (run / "records.jsonl").read_bytes() == records
    assert _json(run / "run.json")["merged_from"] == [str(run / "shard-1-of-2"), str(run / "shard-2-of-2")]
    # an unsharded run cannot be put in a folder holding shards
    mixed = _pytest(project, "--egi-run-id", "M")
    assert mixed.returncode == 4
    assert _usage_error(mixed)[0] == (
        f"ERROR: --egi-run-id M: {run} holds shards of a run; add --egi-shard K/N to run one of "
        "them, or pick another --egi-run-id"
    )
    assert json.loads((run / "run.json").read_text())["status"] == "complete"
