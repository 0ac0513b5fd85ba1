"""Issue acceptance on the real suites: the quick profile with ``egi/noisy-0.3`` run once, in
three shards merged, and killed with SIGKILL then resumed, gives the same records and EGI.

Every run is a subprocess of ``python -m pytest suites`` from the checkout, as a user or a CI
machine starts it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_egi.cli import main as egi_bench
from tests.helpers.suite_run import ROOT

MODEL = "egi/noisy-0.3"
SAME_FIELDS = ("buckets", "suites", "counts", "missing", "error_rate", "gate")
"""egi.json fields that depend only on the records (not on timing, paths or the run id)."""


SKIPPED = ("--ignore=suites/locobench", "--ignore=suites/personabench")
"""Left out of these four whole-profile runs to keep CI time: LoCoBench's sandboxed test runs
take most of a quick run's item time, and both suites' resume and serial = -n 2 are proven by
the conformance kit; the six suites here cover stdio MCP servers, a WebSocket server, a user
simulator and a judge."""


def _pytest_args(reports: Path, *extra: str, model: str = MODEL) -> list[str]:
    return [sys.executable, "-m", "pytest", "suites", "-p", "no:cacheprovider", "-q",
            "--egi-model", model, "--egi-mode", "quick", "--egi-report-dir", str(reports),
            "--egi-bootstrap", "200", *SKIPPED, *extra]  # fmt: skip


def _run(reports: Path, *extra: str, model: str = MODEL) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_pytest_args(reports, *extra, model=model), cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def _egi(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "egi.json").read_text(encoding="utf-8"))


def _assert_same_run(run_dir: Path, baseline: Path) -> None:
    assert (run_dir / "records.jsonl").read_bytes() == (baseline / "records.jsonl").read_bytes()
    got, want = _egi(run_dir), _egi(baseline)
    for key in ("value", "partial_value", "covered_weight", "ci95", "partial_ci95"):
        assert got["egi"][key] == want["egi"][key], key
    for field in SAME_FIELDS:
        assert got[field] == want[field], field


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uninterrupted run of the quick profile (at ``-n 2``, which gives serial's records)."""
    reports = tmp_path_factory.mktemp("baseline")
    done = _run(reports, "--egi-run-id", "single", "-n", "2")
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    run_dir = reports / "single"
    assert len((run_dir / "records.jsonl").read_text().splitlines()) == 424
    return run_dir


def _readme_run_folder() -> list[str]:
    """The run folder's files as the README lists them (its "holds, after a session" list):
    each backticked path there that starts with a name, ``<x>`` standing for any name."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("holds, after a session:", 1)[1].split("While a session holds", 1)[0]
    name = re.compile(r"[a-z][\w<>/.-]*\.(json|jsonl|csv|html)")
    return [t for t in re.findall(r"`([^`\s]+)`", block) if name.fullmatch(t)]


def test_the_readme_lists_exactly_the_files_of_a_run_folder(baseline: Path) -> None:
    """The main job's run folder (the suites' own folders included) is what the README says."""
    listed = _readme_run_folder()
    assert "mcpeval/<domain>_task_metrics.json" in listed and "run.json" in listed
    patterns = {t: re.compile("[^/]+".join(map(re.escape, re.split(r"<[^>]+>", t)))) for t in listed}
    files = sorted(str(p.relative_to(baseline)) for p in baseline.rglob("*") if p.is_file())
    unlisted = [f for f in files if sum(bool(rx.fullmatch(f)) for rx in patterns.values()) != 1]
    assert unlisted == []
    # every listed file is made by the main job, but the opt-in Eigent suite's CSV
    unmade = [t for t, rx in patterns.items() if not any(rx.fullmatch(f) for f in files)]
    assert unmade == ["eigent/results.csv"]
    assert sorted({f.split("/")[0] for f in files if "/" in f}) == ["mcp_universe", "mcpeval", "raw"]


def test_three_shards_merged_equal_one_run(baseline: Path, tmp_path: Path, capsys) -> None:
    reports = tmp_path / "reports"
    sizes = []
    for k in (1, 2, 3):
        done = _run(reports, "--egi-run-id", "nightly", "--egi-shard", f"{k}/3")
        assert done.returncode in (0, 1), done.stdout[-3000:]
        shard = reports / "nightly" / f"shard-{k}-of-3"
        sizes.append(len((shard / "journal.jsonl").read_text().splitlines()))
        assert _egi(shard)["egi"]["subset"] == [f'--egi-shard "{k}/3"']
    assert sorted(sizes) == [141, 141, 142]  # 424 items dealt in turn
    # a missing shard is named, with the command that makes it
    (reports / "nightly" / "shard-2-of-3").rename(tmp_path / "away")
    assert egi_bench(["report", "--merge", str(reports / "nightly")]) == 2
    assert capsys.readouterr().err == (
        "egi-bench: error: --merge: shard 2/3 of run nightly missing (expected folder "
        "shard-2-of-3); run it with --egi-run-id nightly --egi-shard 2/3, or pass its folder\n"
    )
    (tmp_path / "away").rename(reports / "nightly" / "shard-2-of-3")
    status = egi_bench(["report", "--merge", str(reports / "nightly")])
    assert status == _egi(baseline)["session"]["exit_status"]
    assert "merged from 3 shards" in capsys.readouterr().out
    _assert_same_run(reports / "nightly", baseline)
    merged = json.loads((reports / "nightly" / "run.json").read_text())
    assert (merged["status"], len(merged["merged_from"]), len(merged["plan"])) == ("complete", 3, 424)
    # a shard run with another model is refused, naming the option
    other = tmp_path / "other"
    done = _run(other, "--egi-run-id", "nightly", "--egi-shard", "2/3", model="egi/null")
    assert done.returncode in (0, 1), done.stdout[-3000:]
    shards = [reports / "nightly" / "shard-1-of-3", other / "nightly" / "shard-2-of-3",
              reports / "nightly" / "shard-3-of-3"]
    assert egi_bench(["report", "--merge", *map(str, shards), "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "were not run alike: --egi-model: egi/noisy-0.3 in shard-1-of-3, egi/null in shard-2-of-3" in err


def test_a_run_killed_with_sigkill_and_resumed_equals_one_run(baseline: Path, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    run_dir = reports / "killed"
    journal = run_dir / "journal.jsonl"
    proc = subprocess.Popen(_pytest_args(reports, "--egi-run-id", "killed"), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if journal.is_file() and len(journal.read_bytes().splitlines()) >= 100:
                break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    finished = len(journal.read_bytes().splitlines())
    assert 100 <= finished < 424
    assert json.loads((run_dir / "run.json").read_text())["status"] == "running"
    done = _run(reports, "--egi-resume", str(run_dir), "-n", "2")
    assert done.returncode == _egi(baseline)["session"]["exit_status"], done.stdout[-3000:]
    _assert_same_run(run_dir, baseline)
    session = _egi(run_dir)["session"]
    counts = (session["resumed_items"], session["items_ran"], session["items_collected"])
    assert counts == (finished, 424, 424)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
