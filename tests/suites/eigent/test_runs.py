"""Eigent through the real plugin (fresh pytest processes): the shipped examples, upstream's
dataset files, bad folders, crashing and hanging checkers, the MCP example, opting in."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_egi.records import load_records
from pytest_egi.trajectories import read_trajectory
from suites.eigent import EXAMPLES
from suites.eigent.data import DatasetError, load_folder, parse_dataset
from tests.conformance.checks import ROOT, run_suite

UPSTREAM = ROOT.parent.parent / "shared" / "upstream" / "eigent" / "backend" / "benchmark"
if not UPSTREAM.is_dir():
    UPSTREAM = Path("/work/shared/upstream/eigent/backend/benchmark")
TEST_FILE = ROOT / "suites" / "eigent" / "test_eigent.py"
TOKEN = "example-inventory-token-7f3a"


def _run(tmp_path: Path, model: str, *extra: str, name: str = "run"):
    """The eigent test module (so no conformance option is added) under ``model``."""
    return run_suite(TEST_FILE, ROOT, ROOT / "routing.yaml", model, tmp_path / name, *extra)


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", str(TEST_FILE), "--rootdir", str(ROOT),
                           "-p", "no:cacheprovider", "--egi-report-dir", str(tmp_path / "reports"),
                           "--egi-bootstrap", "0", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip


# -- upstream's own dataset files ---------------------------------------------------------------


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="../shared/upstream/eigent is not here")
def test_the_three_upstream_dataset_files_parse_with_our_schema():
    parsed = {p.name: parse_dataset(p) for p in sorted((UPSTREAM / "dataset").glob("*.json"))}
    assert sorted(parsed) == ["0.json", "1.json", "2.json"]
    assert [c.metadata.difficulty for c in parsed.values()] == ["easy", "easy", "medium"]
    assert [c.data.name for c in parsed.values()] == ["0", "1", "2"]
    assert parsed["2.json"].metadata.tags == ["browser", "research", "data-extraction", "csv", "multi-step"]
    assert [c.tests.checker for c in parsed.values()] == [[f"benchmark/checker/{n}.py"] for n in range(3)]
    assert all(c.data.env.installed_mcp.mcpServers == {} and c.model_kwargs is None for c in parsed.values())


def _upstream_copy(tmp_path: Path) -> Path:
    """upstream's dataset and answer files beside stand-in checkers and graders of our own
    (upstream's scripts are not in ../shared/upstream): checker 1 and grader 1 follow the
    factual description of upstream's (README, "How the checkers and graders work")."""
    bench = tmp_path / "backend" / "benchmark"
    shutil.copytree(UPSTREAM / "dataset", bench / "dataset")
    shutil.copytree(UPSTREAM / "answer", bench / "answer")
    (bench / "checker").mkdir()
    (bench / "grader").mkdir()
    for n, name in enumerate(["hello_world.py", "python313_features.md", "yc_w25_b2b_ai.csv"]):
        (bench / "checker" / f"{n}.py").write_text(
            "from pathlib import Path\n\n\ndef check(working_directory):\n"
            f"    ok = (Path(working_directory) / {name!r}).is_file()\n"
            f"    print('PASS' if ok else 'FAIL: {name} not found')\n    return ok\n"
        )
        (bench / "grader" / f"{n}.py").write_text(
            "from pathlib import Path\n\n\ndef grade(working_directory):\n"
            f"    done = int((Path(working_directory) / {name!r}).is_file())\n"
            "    print(f'{done}/7')\n    return done, 7\n"
        )
    return bench


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="../shared/upstream/eigent is not here")
def test_upstreams_folder_runs_its_tasks_and_the_oracle_skips_them_without_a_solution(tmp_path):
    bench = _upstream_copy(tmp_path)
    run = _run(tmp_path, "egi/null", "--egi-opt", f"eigent.dirs={bench}")
    records = load_records(run.run_dir)
    assert sorted((r["task_id"], r["category"], r["status"]) for r in records) == [
        ("benchmark.0", "easy", "failed"),
        ("benchmark.1", "easy", "failed"),
        ("benchmark.2", "medium", "failed"),
    ]
    text = (run.run_dir / "eigent" / "results.csv").read_text(encoding="utf-8")
    assert text.splitlines()[1:3] == [
        "0,egi/null,checker,benchmark/checker/0.py,FAIL",
        "0,egi/null,grader,benchmark/grader/0.py,0/7",
    ]
    oracle = _run(tmp_path, "egi/oracle", "--egi-opt", f"eigent.dirs={bench}", name="oracle")
    records = load_records(oracle.run_dir)
    assert {r["status"] for r in records} == {"skipped"}
    assert "no reference solution for this task" in records[0]["error"] or "no reference" in json.dumps(
        records[0]
    )


# -- bad folders: usage errors naming file and field ---------------------------------------------


def _folder(
    tmp_path: Path, dataset: str, checker: str = "def check(working_directory):\n    return True\n"
) -> Path:
    bench = tmp_path / "mybench"
    for sub in ("dataset", "checker"):
        (bench / sub).mkdir(parents=True, exist_ok=True)
    (bench / "dataset" / "0.json").write_text(dataset, encoding="utf-8")
    (bench / "checker" / "0.py").write_text(checker, encoding="utf-8")
    return bench


GOOD = json.dumps(
    {
        "metadata": {"difficulty": "easy", "tags": []},
        "data": {"name": "0", "question": "Write a.txt", "env": {}},
        "tests": {"checker": ["mybench/checker/0.py"], "grader": []},
    }
)


def test_a_malformed_dataset_file_is_a_usage_error_naming_file_and_field(tmp_path):
    bench = _folder(tmp_path, GOOD.replace('"easy"', '"trivial"'))
    with pytest.raises(DatasetError) as info:
        load_folder(bench, 0)
    assert str(info.value) == (
        f"{bench / 'dataset' / '0.json'}: field metadata.difficulty: Input should be 'easy', 'medium' "
        "or 'hard' (got 'trivial'); fix: use one of easy, medium, hard"
    )
    bad_json = _folder(tmp_path / "other", GOOD[:-5])
    with pytest.raises(DatasetError, match=r"0\.json: not valid JSON \(line 1, column"):
        load_folder(bad_json, 0)
    proc = _pytest(tmp_path, "--egi-model", "egi/null", "--egi-opt", f"eigent.dirs={bench}")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "field metadata.difficulty" in proc.stdout + proc.stderr


def test_a_checker_without_check_is_a_usage_error_naming_file_and_field(tmp_path):
    bench = _folder(tmp_path, GOOD, checker="def verify(working_directory):\n    return True\n")
    with pytest.raises(DatasetError) as info:
        load_folder(bench, 0)
    assert str(info.value) == (
        f"{bench / 'checker' / '0.py'}: field check: the checker (named in {bench / 'dataset' / '0.json'} "
        "tests.checker[0]) defines no function check(working_directory); fix: define "
        "check(working_directory) returning True/False"
    )
    proc = _pytest(tmp_path, "--egi-model", "egi/null", "--egi-opt", f"eigent.dirs={bench}")
    assert proc.returncode == 4 and "field check" in proc.stdout + proc.stderr


# -- checkers that crash or hang -----------------------------------------------------------------


def test_a_crashing_or_hanging_checker_errors_its_task_alone_and_keeps_its_output(tmp_path):
    bench = tmp_path / "faults"
    (bench / "dataset").mkdir(parents=True)
    (bench / "checker").mkdir()
    scripts = {
        "crash": "def check(working_directory):\n    print('looking at', 'a.txt')\n"
        "    raise RuntimeError('boom in the checker')\n",
        "hang": "import time\n\n\ndef check(working_directory):\n    print('waiting')\n    time.sleep(60)\n",
        "ok": "def check(working_directory):\n    print('FAIL: a.txt not found')\n    return False\n",
    }
    for name, source in scripts.items():
        (bench / "checker" / f"{name}.py").write_text(source)
        (bench / "dataset" / f"{name}.json").write_text(
            json.dumps(
                {
                    "metadata": {"difficulty": "easy", "tags": ["t"]},
                    "data": {"name": name, "question": "Write a.txt", "env": {}},
                    "tests": {"checker": [f"faults/checker/{name}.py"]},
                }
            )
        )
    run = _run(
        tmp_path,
        "egi/null",
        "--egi-opt",
        f"eigent.dirs={bench}",
        "--egi-opt",
        "eigent.checker_timeout_s=3",
        "--egi-max-error-rate",
        "1",
    )
    by_id = {r["task_id"]: r for r in load_records(run.run_dir)}
    assert by_id["faults.ok"]["status"] == "failed"
    crash, hang = by_id["faults.crash"], by_id["faults.hang"]
    assert crash["status"] == "error" and hang["status"] == "error"
    assert "checker faults/checker/crash.py crashed: RuntimeError: boom in the checker" in crash["error"]
    raw = read_trajectory(run.run_dir, crash)
    assert "looking at a.txt" in json.dumps(raw)
    assert (
        "checker faults/checker/hang.py was stopped: stopped after the wall-clock limit of 3 s"
        in hang["error"]
    )
    assert "waiting" in hang["error"]


# -- the shipped examples: CSV, MCP, no process left behind --------------------------------------


def test_results_csv_of_the_examples_has_upstreams_columns_and_value_formats(tmp_path):
    run = _run(tmp_path, "egi/noisy-0.5", "--egi-opt", f"eigent.dirs={EXAMPLES}")
    raw = (run.run_dir / "eigent" / "results.csv").read_bytes()
    assert raw.startswith(b"benchmark,model,type,script,result\r\n") and raw.endswith(b"\r\n")
    rows = list(csv.reader(io.StringIO(raw.decode(), newline="")))
    assert rows[0] == ["benchmark", "model", "type", "script", "result"]
    body = rows[1:]
    assert [r[0] for r in body] == [str(n) for n in range(9) for _ in range(2)]
    assert {r[1] for r in body} == {"egi/noisy-0.5"}
    assert [r[2] for r in body] == ["checker", "grader"] * 9
    assert [r[3] for r in body] == [f"examples/{t}/{n}.py" for n in range(9) for t in ("checker", "grader")]
    for r in body:
        assert re.fullmatch(r"PASS|FAIL" if r[2] == "checker" else r"\d+/\d+", r[4]), r
    records = {r["task_id"]: r for r in load_records(run.run_dir)}
    for r in body:  # the CSV says what the records say
        rec = records[f"examples.{r[0]}"]
        if r[2] == "checker":
            assert (r[4] == "PASS") == bool(rec["values"]["checkers_passed"])
        else:
            assert (
                r[4]
                == f"{int(rec['values']['milestones_completed'])}/{int(rec['values']['milestones_total'])}"
            )
    shown = subprocess.run(
        [sys.executable, "-m", "pytest_egi.cli", "report", str(run.run_dir), "--show", "eigent/results.csv"],
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert shown.returncode == 0 and shown.stdout == raw


def _processes_with(marker: str) -> list[int]:
    """The live processes whose environment holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{entry}/environ").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


def test_the_example_with_a_local_stdio_mcp_server_runs_and_keeps_its_credentials_out(tmp_path):
    # a copy of the examples whose env_file also carries a marker of this test alone, so a run of
    # the same example on another xdist worker at the same time is not taken for a leftover server
    examples = tmp_path / "examples"
    shutil.copytree(EXAMPLES, examples)
    marker = f"EGI_TEST_RUN=eigent-mcp-{os.getpid()}-{tmp_path.name}"
    env_file = examples / "mcp" / "inventory.env"
    env_file.write_text(env_file.read_text() + marker + "\n")
    run = _run(tmp_path, "egi/oracle", "--egi-opt", f"eigent.dirs={examples}", "-k", "examples.5")
    (rec,) = load_records(run.run_dir)
    assert (rec["task_id"], rec["status"], rec["values"]["milestones_completed"]) == (
        "examples.5",
        "passed",
        3.0,
    )
    raw = read_trajectory(run.run_dir, rec)
    call = next(m for m in raw["trajectory"]["messages"] if m["role"] == "tool")
    assert '"sku": "ANC-500"' in call["content"]  # the server answered: the token reached it
    assert raw["trajectory"]["info"]["eigent"]["mcp_servers"] == ["inventory"]
    for path in run.run_dir.rglob("*"):
        if path.is_file():
            assert TOKEN not in path.read_text(encoding="utf-8", errors="replace"), path
            assert marker not in path.read_text(encoding="utf-8", errors="replace"), path
    assert _processes_with(marker) == []  # stopped at session end


def test_a_dataset_asking_for_a_server_we_cannot_start_is_skipped_with_the_reason(tmp_path):
    bench = _folder(
        tmp_path,
        json.dumps(
            {
                "metadata": {"difficulty": "easy", "tags": []},
                "data": {
                    "name": "0",
                    "question": "q",
                    "env": {
                        "installed_mcp": {
                            "mcpServers": {"maps": {"command": "egi-no-such-mcp-server", "args": []}}
                        }
                    },
                },
                "tests": {"checker": ["mybench/checker/0.py"]},
            }
        ),
    )
    run = _run(tmp_path, "egi/null", "--egi-opt", f"eigent.dirs={bench}")
    (rec,) = load_records(run.run_dir)
    assert rec["status"] == "skipped"
    assert (
        "MCP server 'maps' needs the command 'egi-no-such-mcp-server', which is not installed here"
        in rec["error"]
    )


# -- opting in -----------------------------------------------------------------------------------


def test_without_a_folder_the_suite_collects_nothing_and_is_not_missing(tmp_path):
    proc = _pytest(tmp_path, "--egi-model", "egi/oracle", "--collect-only", "-q")
    assert proc.returncode == 5, proc.stdout + proc.stderr  # pytest's "no tests collected"
    assert "error" not in proc.stdout.lower()
    from pytest_egi.scoring.aggregate import aggregate
    from pytest_egi.scoring.config import apply_floors, apply_weights, load_routing

    routing, _ = load_routing(ROOT / "routing.yaml")
    records = [
        {
            "suite": "x",
            "suite_module": "tests.suites.eigent.test_runs",
            "task_id": "t",
            "category": "c",
            "trial": 1,
            "status": "skipped",
        }
    ]
    agg = aggregate(
        records,
        routing,
        weights=apply_weights(routing, {}),
        floors=apply_floors(routing, {}),
        bootstrap_resamples=0,
    )
    assert not [m for m in agg.result.missing if m.route.startswith("eigent/")]
    assert [m for m in agg.result.missing if m.route.startswith("locobench/")]  # the others still are
    # the terminal's "routed" column counts neither (every route but eigent's two)
    from pytest_egi.report.terminal import routes_counted

    counted = routes_counted(agg.result)
    optional = {b: sum(1 for r in routing.routes if r.bucket == b and r.optional) for b in counted}
    assert optional["M1"] == 1 and optional["M3"] == 1
    assert counted == {b: sum(1 for r in routing.routes if r.bucket == b) - optional[b] for b in counted}


def test_doctor_says_how_to_opt_in_instead_of_failing(tmp_path):
    import io as _io

    from pytest_egi.doctor import _check_suites, _Report

    package = tmp_path / "optdoctorsuites"
    (package / "eigent").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "eigent" / "__init__.py").write_text("from suites.eigent import SUITE  # noqa: F401\n")
    out = _io.StringIO()
    rep = _Report(out)
    _check_suites(rep, package, ROOT / "routing.yaml")
    assert rep.problems == []
    assert (
        "  info  suite eigent: opt-in, no task unless asked for (--egi-opt eigent.dirs=PATH[,PATH...] "
        "(an Eigent benchmark folder holding dataset/))"
    ) in out.getvalue()
