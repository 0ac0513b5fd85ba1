"""The run folder's trajectory store (``pytest_egi.trajectories``): one append-only file per
writing process, a record naming its trajectory by file + offset + length (``raw_at``), one
reader for every consumer, old run folders (one file per item) still read."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from pytest_egi.cli import _gather_trajectories, main
from pytest_egi.records import load_records
from pytest_egi.run.runlog import complete_records
from pytest_egi.trajectories import (
    TrajectoryError,
    TrajectoryReader,
    TrajectoryStore,
    parse_pointer,
    read_trajectory,
)


def _rec(task: str, **fields) -> dict:
    return {"suite": "toy", "task_id": task, "trial": 1, "status": "passed",
            "raw_path": f"raw/toy/{task}.json", **fields}


def test_a_store_appends_one_line_per_trajectory_and_reads_each_by_its_place(tmp_path):
    store = TrajectoryStore(tmp_path, "gw1")
    one = '{"task": {"q": "1+1"}, "trajectory": {"final_answer": "2"}}'
    two = '{"task": {"q": "caf\u00e9"}, "trajectory": {"final_answer": "café"}}'
    first, second = store.append(one), store.append(two)
    store.close()
    name = f"raw/gw1-{os.getpid()}.jsonl"
    # offsets and lengths in bytes (the second line holds a two-byte character)
    assert (len(one), len(two), len(two.encode())) == (59, 63, 65)
    assert (first, second) == (f"{name}#0+59", f"{name}#60+65")
    assert (tmp_path / name).read_bytes().count(b"\n") == 2
    with TrajectoryReader(tmp_path) as reader:
        assert reader.read(_rec("b", raw_at=second))["trajectory"]["final_answer"] == "caf\u00e9"
        assert reader.read(_rec("a", raw_at=first))["task"] == {"q": "1+1"}
    assert parse_pointer(second) == (name, 60, 65)


def test_a_line_cut_short_is_named_with_its_file_trial_and_offset(tmp_path):
    store = TrajectoryStore(tmp_path, "gw1")
    store.append('{"trajectory": {"final_answer": "2"}}')
    pointer = store.append('{"trajectory": {"final_answer": "a long answer the kill cut"}}')
    store.close()
    with open(store.path, "r+b") as fh:  # killed while writing the second line
        fh.truncate(store.path.stat().st_size - 20)
    with pytest.raises(TrajectoryError) as exc:
        read_trajectory(tmp_path, _rec("beta-2", trial=3, raw_at=pointer))
    assert str(exc.value) == (f"{store.path}: the trajectory of toy/beta-2 (trial 3) at offset 38 is cut "
                              "short (was the run killed while writing it?); run the run's pytest command "
                              f"again with --egi-resume {tmp_path}: it runs that item again and keeps every "
                              "other record")
    # resume keeps only records whose trajectory is whole: this item runs again
    whole = _rec("alpha-0", raw_at=f"raw/gw1-{os.getpid()}.jsonl#0+37")
    assert complete_records(tmp_path, [whole, _rec("beta-2", raw_at=pointer)]) == [whole]


def test_a_store_opened_after_a_kill_starts_its_next_line_on_its_own(tmp_path):
    store = TrajectoryStore(tmp_path, "main")
    kept = store.append('{"n": 1}')
    store.close()
    with open(store.path, "ab") as fh:  # the line being written when the process was killed
        fh.write(b'{"n": 2, "cut')
    again = TrajectoryStore(tmp_path, "main").append('{"n": 3}')  # a process of the same id
    # '{"n": 1}' + newline, '{"n": 2, "cut' + the newline the reopened store added
    assert again == f"raw/main-{os.getpid()}.jsonl#{9 + 14}+8"
    with TrajectoryReader(tmp_path) as reader:
        assert [reader.read(_rec("x", raw_at=p))["n"] for p in (kept, again)] == [1, 3]


def test_the_reader_reads_an_old_run_folder_and_a_record_of_records_jsonl(tmp_path):
    # the old layout: one file per item, named by raw_path, no raw_at
    (tmp_path / "raw" / "toy").mkdir(parents=True)
    (tmp_path / "raw" / "toy" / "alpha-0.json").write_text('{"trajectory": {"turns": 1}}')
    assert read_trajectory(tmp_path, _rec("alpha-0"))["trajectory"] == {"turns": 1}
    # a line of records.jsonl has no raw_at: timings.jsonl's line for the trial gives it
    pointer = TrajectoryStore(tmp_path, "gw0").append('{"trajectory": {"turns": 2}}')
    (tmp_path / "timings.jsonl").write_text(
        json.dumps({"suite": "toy", "task_id": "beta-1", "trial": 1, "raw_at": pointer}) + "\n")
    assert read_trajectory(tmp_path, _rec("beta-1"))["trajectory"] == {"turns": 2}
    with pytest.raises(TrajectoryError) as exc:
        read_trajectory(tmp_path, _rec("gamma-9"))
    missing = tmp_path / "raw/toy/gamma-9.json"
    assert str(exc.value).startswith(f"{missing}: cannot read the stored trajectory of toy/gamma-9 (No such "
                                     "file or directory)")


def test_merged_shards_keep_each_trajectory_when_two_stores_share_a_name(tmp_path):
    """Two machines, one process id: both shards hold raw/main-41.jsonl."""
    sourced = []
    for k, answer in ((1, "from shard one"), (2, "from shard two")):
        shard = tmp_path / f"shard-{k}-of-2"
        (shard / "raw").mkdir(parents=True)
        line = json.dumps({"trajectory": {"final_answer": answer}})
        (shard / "raw" / "main-41.jsonl").write_text(line + "\n")
        sourced.append((shard, _rec(f"t{k}", raw_at=f"raw/main-41.jsonl#0+{len(line)}")))
    _gather_trajectories(sourced, tmp_path)
    assert [r["raw_at"].partition("#")[0] for _, r in sourced] == ["raw/main-41.jsonl", "raw/main-41-1.jsonl"]
    assert [read_trajectory(tmp_path, r)["trajectory"]["final_answer"] for _, r in sourced] == [
        "from shard one", "from shard two"]


@pytest.fixture
def toy_run(toy_project, monkeypatch):
    toy_project.runpytest("toysuites", "--egi-model", "egi/noisy-0.3", "--egi-mode", "deep",
                          "--egi-bootstrap", "0")
    monkeypatch.syspath_prepend(str(toy_project.path))
    for name in [m for m in sys.modules if m.startswith("toysuites")]:
        monkeypatch.delitem(sys.modules, name)
    return next((toy_project.path / "reports").iterdir())


def test_a_run_writes_one_store_not_a_file_per_item(toy_run):
    assert [p.name for p in (toy_run / "raw").iterdir()] == [f"main-{os.getpid()}.jsonl"]
    records = load_records(toy_run)
    assert len(records) == 10
    # records.jsonl keeps the stable name; the place is in timings.jsonl
    lines = [json.loads(x) for x in (toy_run / "records.jsonl").read_text().splitlines()]
    assert [r["raw_path"] for r in lines] == [r["raw_path"] for r in records]
    assert all("raw_at" not in r for r in lines)
    timings = [json.loads(x) for x in (toy_run / "timings.jsonl").read_text().splitlines()]
    assert [t["raw_at"] for t in timings] == [r["raw_at"] for r in records]
    with TrajectoryReader(toy_run) as reader:
        assert [(reader.read(r)["task_id"], reader.read(r)["trial"]) for r in records] == [
            (r["task_id"], r["trial"]) for r in records]


def test_rescore_names_a_trajectory_cut_short(toy_run, capsys):
    record = load_records(toy_run)[-1]
    file, offset, _ = parse_pointer(record["raw_at"])
    with open(toy_run / file, "r+b") as fh:
        fh.truncate(offset + 10)
    assert main(["report", "--rescore", str(toy_run)]) == 2
    err = capsys.readouterr().err
    assert (f"{toy_run / file}: the trajectory of toy/{record['task_id']} at offset {offset} is cut short "
            f"(was the run killed while writing it?); run the run's pytest command again with --egi-resume "
            f"{toy_run}: it runs that item again and keeps every other record") in err


def test_a_resumed_item_appends_again_and_its_record_names_the_new_copy(toy_project):
    toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-run-id", "K",
                          "--egi-bootstrap", "0")
    run = toy_project.path / "reports" / "K"
    last = load_records(run)[-1]
    file, offset, _ = parse_pointer(last["raw_at"])
    with open(run / file, "r+b") as fh:  # its line damaged (a copy of the folder cut short)
        fh.truncate(offset + 10)
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-resume", "reports/K",
                                   "--egi-bootstrap", "0")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=1)  # only the item whose trajectory was lost ran again
    # and the session says why it runs again
    trial = f"{last['suite']}/{last['task_id']} (trial {last['trial']})"
    result.stdout.fnmatch_lines([
        f"egi: 1 result runs again: the stored trajectory is missing or not whole ({trial}: {file}: "
        f"the line at offset {offset} is cut short (was the run killed while writing it?))"])
    again = [r for r in load_records(run) if r["task_id"] == last["task_id"]][0]
    assert again["raw_at"] != last["raw_at"]
    assert read_trajectory(run, again)["task_id"] == last["task_id"]
    assert Path(run / file).stat().st_size > offset + 10  # appended to this process's store again
