"""pytest_egi.run.runlog on its own: shard parsing and selection, the journal, the manifest check."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter

import pytest

from pytest_egi.options import parse_shard
from pytest_egi.run.runlog import (
    JOURNAL_FILE,
    Journal,
    RunLogError,
    complete_records,
    manifest_differences,
    read_journal,
    read_manifest,
    run_records,
    shard_indices,
    write_manifest,
)

# -- parse_shard -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [("2/3", (2, 3)), ("1/1", (1, 1)), (" 3/3 ", (3, 3))])
def test_parse_shard_accepts_k_of_n(text, expected):
    assert parse_shard(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("0/3", "expected K/N with 1 <= K <= N (e.g. 2/3), got '0/3'"),
    ("4/3", "expected K/N with 1 <= K <= N (e.g. 2/3), got '4/3'"),
    ("1/0", "expected K/N with 1 <= K <= N (e.g. 2/3), got '1/0'"),
    ("-1/3", "expected K/N with 1 <= K <= N (e.g. 2/3), got '-1/3'"),
    ("a/b", "expected K/N (e.g. 2/3), got 'a/b'"),
    ("3", "expected K/N (e.g. 2/3), got '3'"),
    ("1/2/3", "expected K/N (e.g. 2/3), got '1/2/3'"),
])
def test_parse_shard_refuses_anything_else(text, message):
    with pytest.raises(ValueError) as exc:
        parse_shard(text)
    assert str(exc.value) == message


# -- shard_indices ---------------------------------------------------------------------------


def _keys() -> list[tuple]:
    """Items of two suites, groups (suite, category) of 1 to 7 items, two trials for one
    group, and two non-EGI tests (sorting after every EGI item)."""
    keys = []
    for suite, sizes in (("crm", {"a": 7, "b": 1, "c": 4}), ("herb", {"a": 5, "x": 2})):
        for category, size in sizes.items():
            for t in range(size):
                keys.append((0, suite, category, f"{category}-{t}", 1))
    keys += [(0, "herb", "t", "t-0", trial) for trial in (1, 2)]
    keys += [(1, "", "", "tests/test_x.py::test_one", 0), (1, "", "", "tests/test_x.py::test_two", 0)]
    return keys


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 30])
def test_every_item_is_in_exactly_one_shard_and_the_shards_are_balanced(n):
    keys = _keys()
    shards = [shard_indices(keys, k, n) for k in range(1, n + 1)]
    counted = Counter(i for shard in shards for i in shard)
    assert sorted(counted) == list(range(len(keys))) and set(counted.values()) == {1}
    for shard in shards:
        assert shard == sorted(shard)  # in the items' own order
    totals = [len(shard) for shard in shards]
    assert max(totals) - min(totals) <= 1
    groups = {key[:3] for key in keys}
    for group in groups:
        per_shard = [sum(1 for i in shard if keys[i][:3] == group) for shard in shards]
        assert max(per_shard) - min(per_shard) <= 1, (group, per_shard)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_choice_does_not_depend_on_the_items_order(seed):
    keys = _keys()
    shuffled = keys[:]
    random.Random(seed).shuffle(shuffled)
    for k in (1, 2, 3):
        chosen = {keys[i] for i in shard_indices(keys, k, 3)}
        assert chosen == {shuffled[i] for i in shard_indices(shuffled, k, 3)}


def test_a_small_example_is_dealt_in_turn_across_groups():
    # sorted: A/x-0 A/x-1 A/x-2 A/y-0 A/y-1 B/x-0 B/x-1, dealt to shards 1 2 3 1 2 3 1
    keys = [
        (0, "B", "x", "x-1", 1),  # 0
        (0, "A", "y", "y-0", 1),  # 1
        (0, "A", "x", "x-2", 1),  # 2
        (0, "B", "x", "x-0", 1),  # 3
        (0, "A", "x", "x-0", 1),  # 4
        (0, "A", "y", "y-1", 1),  # 5
        (0, "A", "x", "x-1", 1),  # 6
    ]
    assert shard_indices(keys, 1, 3) == [0, 1, 4]  # B/x-1, A/y-0, A/x-0
    assert shard_indices(keys, 2, 3) == [5, 6]  # A/y-1, A/x-1
    assert shard_indices(keys, 3, 3) == [2, 3]  # A/x-2, B/x-0
    assert shard_indices([], 1, 3) == []


# -- Journal ---------------------------------------------------------------------------------


def _rec(task: str, status: str = "passed", trial: int = 1, **extra) -> dict:
    return {"suite": "toy", "task_id": task, "trial": trial, "status": status, "category": task[0],
            "nodeid": f"toysuites/toy/test_toy.py::test_task[{task}]", "values": {}, **extra}


def _line(record: dict) -> bytes:
    return (json.dumps(record, sort_keys=True) + "\n").encode()


def test_the_journal_appends_one_sorted_json_line_per_record(tmp_path):
    journal = Journal(tmp_path / "run")
    journal.append({"suite": "toy", "task_id": "b-0", "trial": 1, "status": "passed", "é": "ü"})
    journal.append({"suite": "toy", "task_id": "a-0", "trial": 1, "status": "failed"})
    journal.close()
    journal.close()  # idempotent
    lines = (tmp_path / "run" / JOURNAL_FILE).read_bytes().split(b"\n")
    assert lines == [
        '{"status": "passed", "suite": "toy", "task_id": "b-0", "trial": 1, "é": "ü"}'.encode(),
        b'{"status": "failed", "suite": "toy", "task_id": "a-0", "trial": 1}',
        b"",
    ]
    again = Journal(tmp_path / "run")  # a resumed session appends after them
    again.append(_rec("c-0"))
    again.close()
    lines = (tmp_path / "run" / JOURNAL_FILE).read_text().splitlines()
    assert [json.loads(line)["task_id"] for line in lines] == ["b-0", "a-0", "c-0"]


def test_a_journal_with_nothing_appended_writes_no_file(tmp_path):
    Journal(tmp_path).close()
    assert not (tmp_path / JOURNAL_FILE).exists()


@pytest.mark.parametrize("before", [2, 0])
def test_opening_cuts_a_partial_last_line_so_the_next_record_starts_clean(tmp_path, before):
    path = tmp_path / JOURNAL_FILE
    whole = b"".join(_line(_rec(f"a-{i}")) for i in range(before))
    path.write_bytes(whole + b'{"suite": "toy", "task_id": "a-9", "st')  # a kill mid-write
    journal = Journal(tmp_path)
    journal.append(_rec("b-0"))
    journal.close()
    assert path.read_bytes() == whole + _line(_rec("b-0"))
    assert [r["task_id"] for r in read_journal(path)] == [f"a-{i}" for i in range(before)] + ["b-0"]


def test_a_whole_last_record_without_its_newline_is_kept_when_appending(tmp_path):
    """A kill between a record's last byte and its newline: read_journal counts the record,
    so the next append must keep it too (the item is not run again, and must stay recorded)."""
    path = tmp_path / JOURNAL_FILE
    path.write_bytes(_line(_rec("a-0")) + _line(_rec("a-1"))[:-1])
    before = read_journal(path)
    assert [r["task_id"] for r in before] == ["a-0", "a-1"]
    journal = Journal(tmp_path)
    journal.append(_rec("a-2"))
    journal.close()
    assert path.read_bytes() == _line(_rec("a-0")) + _line(_rec("a-1")) + _line(_rec("a-2"))


# -- read_journal ----------------------------------------------------------------------------


def test_read_journal_keeps_the_last_line_per_item_sorted_and_ignores_a_cut_last_line(tmp_path):
    path = tmp_path / JOURNAL_FILE
    path.write_bytes(
        _line(_rec("b-0", "error", error="outage"))
        + _line(_rec("a-0", trial=2))
        + b"\n"  # a blank line is no record
        + _line(_rec("a-0", trial=1, status="failed"))
        + _line(_rec("b-0", "passed"))  # the rerun of the errored item wins
        + b'{"suite": "toy", "task_id": "c-0", "tri'
    )
    records = read_journal(path)
    assert [(r["task_id"], r["trial"], r["status"]) for r in records] == [
        ("a-0", 1, "failed"), ("a-0", 2, "passed"), ("b-0", 1, "passed")]
    assert "error" not in records[2]


def test_read_journal_names_a_bad_middle_line(tmp_path):
    path = tmp_path / JOURNAL_FILE
    path.write_bytes(_line(_rec("a-0")) + b'{"suite": "toy", "task\n' + _line(_rec("a-1")))
    with pytest.raises(RunLogError) as exc:
        read_journal(path)
    assert str(exc.value) == (f"{path}:2: not valid JSON; remove the line and resume with --egi-resume "
                              f"{tmp_path} (its item runs again)")


def test_read_journal_names_a_bad_last_line_that_has_its_newline(tmp_path):
    path = tmp_path / JOURNAL_FILE
    path.write_bytes(_line(_rec("a-0")) + b"not json\n")
    with pytest.raises(RunLogError, match=r"journal\.jsonl:2: not valid JSON; remove the line and resume"):
        read_journal(path)


@pytest.mark.parametrize(("fields", "problem"), [
    ({"values": "abc"},
     'field \'values\': expected a mapping of sub-metric name to a number or null, got a str ("abc")'),
    ({"values": {"correct": "high"}},
     'field \'values\': sub-metric \'correct\' is a str ("high"), expected a number or null'),
    ({"values": {"correct": True}}, "field 'values': sub-metric 'correct' is a boolean (true), expected a "
                                    "number or null"),
    ({"values": None}, "field 'values': expected a mapping of sub-metric name to a number or null, got null"),
    ({"status": "timeout"},
     "field 'status': 'timeout' is not a record status (passed, failed, error, skipped)"),
    ({"trial": 0}, "field 'trial': expected a whole number >= 1, got a number (0)"),
    ({"category": 3}, "field 'category': expected text, got a number (3)"),
    ({"success": "yes"}, 'field \'success\': expected true, false or null, got a str ("yes")'),
    ({"raw_path": ["raw/toy/a-1.json"]},
     'field \'raw_path\': expected text or null, got a list (["raw/toy/a-1.json"])'),
    ({"usage": 5}, "field 'usage': expected a mapping or null, got a number (5)"),
])
def test_read_journal_names_the_field_of_a_record_that_does_not_fit_the_schema(tmp_path, fields, problem):
    """Before, only suite, task_id, trial and status were checked: a malformed ``values``
    crashed aggregation at session end, and an unknown status was silently run again."""
    path = tmp_path / JOURNAL_FILE
    path.write_bytes(_line(_rec("a-0")) + _line({**_rec("a-1"), **fields}) + _line(_rec("a-2")))
    with pytest.raises(RunLogError) as exc:
        read_journal(path)
    assert str(exc.value) == (f"{path}:2: {problem}; remove the line and resume with --egi-resume {tmp_path} "
                              "(its item runs again)")
    assert read_journal(path, end=len(_line(_rec("a-0")))) == [_rec("a-0")]  # the lines before it read


def test_load_records_checks_every_record_of_records_jsonl(tmp_path):
    from pytest_egi.records import load_records

    (tmp_path / "records.jsonl").write_bytes(_line(_rec("a-0")) + _line(_rec("a-1", values={"x": "1"})))
    with pytest.raises(ValueError) as exc:
        load_records(tmp_path)
    assert str(exc.value) == (f"{tmp_path}/records.jsonl:2: field 'values': sub-metric 'x' is a str (\"1\"), "
                              f"expected a number or null; remove the line and resume with --egi-resume "
                              f"{tmp_path} (its item runs again)")


@pytest.mark.parametrize(("line", "problem"), [
    (b"{}", "not a record (no str 'suite')"),
    (b"[1, 2]", "not a record (a JSON object)"),
    (b'{"suite": "toy", "trial": 1, "status": "passed"}', "not a record (no str 'task_id')"),
    (b'{"suite": "toy", "task_id": "a-1", "trial": "1", "status": "passed"}',
     "not a record (no int 'trial')"),
])
def test_read_journal_names_a_line_that_is_json_but_not_a_record(tmp_path, line, problem):
    path = tmp_path / JOURNAL_FILE
    path.write_bytes(_line(_rec("a-0")) + line + b"\n" + _line(_rec("a-2")))
    with pytest.raises(RunLogError) as exc:
        read_journal(path)
    assert str(exc.value) == (f"{path}:2: {problem}; remove the line and resume with --egi-resume {tmp_path} "
                              "(its item runs again)")


def test_read_journal_reads_a_range_of_many_batches_and_names_a_bad_line_far_in(tmp_path):
    path = tmp_path / JOURNAL_FILE
    lines = [_line(_rec(f"t-{i:04d}")) for i in range(1300)]  # more than two batches of lines
    path.write_bytes(b"".join(lines))
    start = sum(len(x) for x in lines[:100])
    end = start + sum(len(x) for x in lines[100:1200])
    records = read_journal(path, start=start, end=end)
    assert [r["task_id"] for r in records] == [f"t-{i:04d}" for i in range(100, 1200)]
    lines[1100] = b"not json\n"
    path.write_bytes(b"".join(lines))
    with pytest.raises(RunLogError) as exc:
        read_journal(path, start=start)
    assert str(exc.value) == (f"{path}:1101: not valid JSON; remove the line and resume with --egi-resume "
                              f"{tmp_path} (its item runs again)")


def test_records_read_back_are_plain_dicts_equal_to_the_lines_in_less_memory(tmp_path):
    path = tmp_path / JOURNAL_FILE
    wide = {f"field_{i:02d}": i for i in range(20)}
    path.write_bytes(_line(_rec("a-0", **wide)) + _line(_rec("a-1", **wide)))
    first, second = read_journal(path)
    assert type(first) is dict
    assert json.dumps(first, sort_keys=True) == json.dumps(_rec("a-0", **wide), sort_keys=True)
    parsed = json.loads(_line(_rec("a-0", **wide)))
    assert sys.getsizeof(first) < sys.getsizeof(parsed) / 2  # the keys are stored once per layout
    first["field_00"] = "changed"
    first["added"] = True
    assert second["field_00"] == 0 and "added" not in second
    assert first == {**parsed, "field_00": "changed", "added": True}


def test_complete_records_are_results_with_their_trajectory_on_disk(tmp_path):
    (tmp_path / "raw" / "toy").mkdir(parents=True)
    (tmp_path / "raw" / "toy" / "a-0.json").write_text("{}")
    records = [
        _rec("a-0", raw_path="raw/toy/a-0.json"),
        _rec("a-1", "failed", raw_path="raw/toy/a-1.json"),  # its file was never written
        _rec("a-2", "failed", raw_path=None),
        _rec("a-3", "error"),
        _rec("a-4", "skipped"),
    ]
    assert [r["task_id"] for r in complete_records(tmp_path, records)] == ["a-0", "a-2"]


# -- the manifest ----------------------------------------------------------------------------


def test_manifest_differences_name_every_option_that_differs():
    old = {"model": "egi/oracle", "mode": "deep", "seed_override": None, "trials": 1,
           "suite_options": {}, "selection": {"-k": "alpha"}, "run_id": "a", "api_base": None}
    new = {"model": "egi/null", "mode": "deep", "seed_override": 5, "trials": 1,
           "suite_options": {"toy": {"max_turns": "4", "fail_env": "true"}}, "selection": None,
           "run_id": "b", "api_base": "http://x"}  # run id and API base are not compared
    assert manifest_differences(old, new) == [
        "--egi-model: egi/oracle in the run, egi/null here",
        "--egi-seed: none in the run, 5 here",
        '--egi-opt: none in the run, {"toy": {"fail_env": "true", "max_turns": "4"}} here',
        'the selection (-k, -m, --lf, --deselect, node ids): {"-k": "alpha"} in the run, none here',
    ]


def test_manifests_alike_have_no_differences():
    a = {"model": "egi/oracle", "suite_options": {"toy": {"a": 1, "b": 2}}, "selection": {},
         "routing_sha256": "ab"}
    b = {"model": "egi/oracle", "suite_options": {"toy": {"b": 2, "a": 1}}, "selection": None,
         "routing_sha256": "ab", "judge": None, "started": "later"}
    assert manifest_differences(a, b) == []
    assert manifest_differences(a, {**b, "routing_sha256": "cd"}) == [
        "the routing file (sha256): ab in the run, cd here"]


def test_a_manifest_round_trips_and_a_missing_or_foreign_one_is_named(tmp_path):
    write_manifest(tmp_path / "run", {"model": "egi/oracle", "status": "running"})
    assert read_manifest(tmp_path / "run") == {"schema": 1, "model": "egi/oracle", "status": "running"}
    with pytest.raises(RunLogError) as exc:
        read_manifest(tmp_path / "nope")
    assert str(exc.value) == (
        f"--egi-resume {tmp_path / 'nope'}: no such folder; pass a run folder (reports/<run_id>)")
    with pytest.raises(RunLogError) as exc:
        read_manifest(tmp_path, "--merge")
    assert str(exc.value) == (
        f"--merge {tmp_path}: run.json not found; is it a run folder made by pytest-egi "
        "(reports/<run_id>, or reports/<run_id>/shard-K-of-N)?")
    (tmp_path / "run.json").write_text('{"status": "complete"}')
    with pytest.raises(RunLogError) as exc:
        read_manifest(tmp_path)
    assert str(exc.value) == (
        f"--egi-resume {tmp_path}: {tmp_path / 'run.json'} is not a pytest-egi run manifest (no 'model')")


def test_run_records_before_a_resumed_session_appended(tmp_path):
    """``journal_end``: the run as it was before a resumed session's first append (its
    Journal.start); 0 (the journal began with that session) reads records.jsonl instead."""
    old = [_rec("a-0"), _rec("a-1", "failed")]
    (tmp_path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))
    journal = Journal(tmp_path)  # a run written before journals: this session starts one
    journal.append(_rec("a-2"))
    journal.close()
    assert journal.start == 0
    assert run_records(tmp_path, journal_end=0) == old
    assert run_records(tmp_path) == [_rec("a-2")]  # the whole journal

    later = Journal(tmp_path)  # a run with a journal, resumed again
    later.append(_rec("a-3"))
    later.close()
    assert later.start == len(_line(_rec("a-2")))
    assert run_records(tmp_path, journal_end=later.start) == [_rec("a-2")]
    assert [r["task_id"] for r in run_records(tmp_path)] == ["a-2", "a-3"]
