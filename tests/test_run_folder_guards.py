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
    release = tmp_path / "release"  # the first session's items wait for it: it holds the folder
    first = _start(project, "--egi-run-id", "W", "--egi-shard", "1/2", hold=str(release))
    try:
        lock = project / "reports" / "W" / "shard-1-of-2" / "run.lock"
        deadline = time.monotonic() + 60
        while not (lock.exists() and lock.read_text().startswith("pid ")) and time.monotonic() < deadline:
            time.sleep(0.05)
        second = _pytest(project, "--egi-run-id", "W", "--egi-shard", "1/2")
    finally:
        release.touch()
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
    # shard 2/2 holds beta-0 and beta-2, which egi/noisy-0.3 fails: M1 is below 100
    shard = _pytest(project, "--egi-run-id", "G", "--egi-shard", "2/2", "--egi-floor", "M1=100,M5=100")
    assert shard.returncode == 0, shard.stdout[-2000:]
    reason = f"shard 2/2: the gate is judged on the merged run (egi-bench report --merge {project}/reports/G)"
    assert f"release gate: NOT JUDGED — {reason}" in shard.stdout.splitlines()
    assert "judged on the merged run" not in shard.stdout.replace(reason, "")  # said once
    assert "session fails" not in shard.stdout
    egi = _json(project / "reports" / "G" / "shard-2-of-2" / "egi.json")
    assert egi["gate"] == {"release_ready": None, "breached": ["M1"], "unmeasured": ["M2", "M5"],
                           "judged": False, "not_judged_reason": reason}
    assert egi["session"]["reasons"] == []


def test_shards_are_not_judged_and_their_whole_merge_is(tmp_path: Path, merge) -> None:  # noqa: F811
    """egi/oracle with a floor on M1 only (routing.yaml's M2 and M5 floors removed: no toy route
    feeds them): each shard is not judged, the merge of all of them is READY, and a merge of
    some of them is refused (merge writes no run without every shard)."""
    project = _project(tmp_path / "p")
    routing = project / "routing.yaml"
    routing.write_text(routing.read_text().replace(", floor: 70}", "}")
                       .replace("weight: 0.28}", "weight: 0.28, floor: 90}"))
    run = project / "reports" / "O"
    for k in (1, 2):
        shard = _pytest(project, "--egi-run-id", "O", "--egi-shard", f"{k}/2", "--egi-model", "egi/oracle",
                        "--egi-gate", "point")
        assert shard.returncode == 0, shard.stdout[-2000:]
        reason = f"shard {k}/2: the gate is judged on the merged run (egi-bench report --merge {run})"
        assert f"release gate: NOT JUDGED — {reason}" in shard.stdout.splitlines()
        folder = run / f"shard-{k}-of-2"
        egi = _json(folder / "egi.json")
        assert egi["buckets"]["M1"]["value"] == 100.0
        assert egi["gate"] == {"release_ready": None, "breached": [], "unmeasured": [],
                               "judged": False, "not_judged_reason": reason}
        html = (folder / "report.html").read_text()
        assert f'<span class="badge notjudged">release gate not judged</span> {reason}' in html
        assert "release-ready" not in html
        if k == 1:  # a merge of some of the shards is refused: no run, no gate
            status, out, err = merge(folder)
            assert (status, out) == (2, "")
            assert err.startswith("egi-bench: error: --merge: shard 2/2 of run O missing")
            assert not (run / "egi.json").exists()
    status, out, err = merge(run)
    assert (status, err) == (0, "")
    assert "release gate: READY (every floored bucket at or above its floor)" in out.splitlines()
    egi = _json(run / "egi.json")
    assert egi["gate"] == {"release_ready": True, "breached": [], "unmeasured": [],
                           "judged": True, "not_judged_reason": None}
    assert '<span class="badge ready">release-ready</span>' in (run / "report.html").read_text()
    assert not (run / "journal.jsonl").exists()  # no item ran in the merged folder


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
