"""What the controller holds per item while a session runs: records stream to the journal and
are read back at session end, so nothing of ours grows with the number of items finished."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from pytest_egi.records import load_records
from pytest_egi.run.runlog import JOURNAL_FILE, Journal, read_journal
from pytest_egi.trajectories import read_trajectory

# Loaded with ``-p memprobe`` in the session under test. After every item (once the
# controller journaled it), it notes what the controller holds: records pending (reported,
# not ended), whether it still keeps records for the early stop, and, in a serial run, what
# the items keep in their stash. At the start of session end (before the aggregation reads
# the records back), it counts the reports pytest keeps that still carry a record.
PROBE = """
import json
import os

import pytest

from pytest_egi.run.state import ITEM_KEY, SESSION_KEY

_config = None
_seen = {"pending_max": 0, "early_kept": [], "finished": 0, "trajectories_received": 0}


def pytest_configure(config):
    global _config
    _config = config


@pytest.hookimpl(wrapper=True)
def pytest_runtest_logreport(report):
    if getattr(report, "egi_raw", None) is not None:  # a trajectory handed to the controller
        _seen["trajectories_received"] += 1
    return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield  # after the plugin's own wrapper has put the item's record in place
    if call.when == "call":
        ours = [v for v in item.stash._storage.values() if type(v).__module__.startswith("pytest_egi")]
        _seen["stash_max"] = max(_seen.get("stash_max", 0), len(item.stash))
        _seen["stash_ours_max"] = max(_seen.get("stash_ours_max", 0), len(ours))
    return report


@pytest.hookimpl(trylast=True)
def pytest_runtest_logfinish(nodeid, location):
    session = _config.stash.get(SESSION_KEY, None)
    if session is None:
        return
    _seen["finished"] += 1
    _seen["pending_max"] = max(_seen["pending_max"], len(session._pending))
    _seen["early_kept"].append(0 if session._early is None else len(session._early))


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session):
    _look(session)  # before the session's end reads the records back from the journal
    return (yield)


def _look(session):
    egi = _config.stash.get(SESSION_KEY, None)
    if egi is None:
        return
    tr = _config.pluginmanager.getplugin("terminalreporter")
    reports = [r for rs in tr.stats.values() for r in rs if hasattr(r, "user_properties")]
    stashed = [item.nodeid for item in session.items if ITEM_KEY in item.stash]
    import gc

    gc.collect()
    records_alive = sum(
        1 for obj in gc.get_objects()
        if type(obj) is dict and "task_id" in obj and "raw_path" in obj and "status" in obj
    )
    _seen.update(
        records_alive=records_alive,
        reports=len(reports),
        reports_with_record=sum(any(p[0] == "egi" for p in r.user_properties) for r in reports),
        recorded=egi.recorded,
        pending_at_end=len(egi._pending),
        stashed_after_items=len(stashed),
    )
    with open(os.environ["PROBE_OUT"], "w") as fh:
        json.dump(_seen, fh)
"""


def _probed_run(toy_project: pytest.Pytester, tmp_path: Path, probe: str, code: str, *args: str) -> dict:
    """Run the toy suite's 10 deep items with the plugin ``probe`` (its source ``code``,
    which writes what it saw as JSON to ``$PROBE_OUT``); what it saw."""
    toy_project.makepyfile(**{probe: code})
    out = tmp_path / f"{probe}.json"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROBE_OUT", str(out))
        # this checkout's pytest_egi first (an installed copy may be another checkout's)
        mp.setenv("PYTHONPATH", f"{toy_project.path}:{Path(__file__).resolve().parents[1]}", prepend=":")
        result = toy_project.runpytest_subprocess(
            "toysuites", "--egi-model", "egi/oracle", "--egi-mode", "deep", "-p", probe, *args
        )
    result.assert_outcomes(passed=10)
    return json.loads(out.read_text())


def _run(toy_project: pytest.Pytester, tmp_path: Path, *args: str) -> dict:
    """:func:`_probed_run` with :data:`PROBE`, the bootstrap off."""
    return _probed_run(toy_project, tmp_path, "memprobe", PROBE, "--egi-bootstrap", "0", *args)


def test_serial_controller_holds_no_record_of_a_finished_item(toy_project, tmp_path):
    seen = _run(toy_project, tmp_path)
    assert seen["finished"] == 10
    assert seen["recorded"] == 10
    assert seen["pending_max"] == 0  # each record leaves memory when its item ends
    assert seen["pending_at_end"] == 0
    assert seen["records_alive"] == 0  # no record object at all in the process before session end
    # the first item worked: nothing is kept for the early stop from then on
    assert seen["early_kept"] == [0] * 10
    assert seen["reports"] == 30 and seen["reports_with_record"] == 0  # pytest keeps 3 per item
    assert seen["stashed_after_items"] == 0  # no case, client or record left on the items
    # while an item runs, the plugin keeps one stash entry on it (its ItemState), so the
    # item's stash stays within a dict's smallest table (5 entries): one entry per field
    # (case, client, recorder, record) grew every item's stash dict for the whole session
    assert seen["stash_ours_max"] == 1
    assert seen["stash_max"] <= 5
    assert seen["trajectories_received"] == 10  # serially this process writes every file
    [run_dir] = [p for p in (toy_project.path / "reports").iterdir() if p.is_dir()]
    records = (run_dir / "records.jsonl").read_text().splitlines()
    assert len(records) == 10  # read back from the journal at session end
    assert len(read_journal(run_dir / JOURNAL_FILE)) == 10


def test_xdist_controller_holds_no_record_of_a_finished_item(toy_project, tmp_path):
    seen = _run(toy_project, tmp_path, "-n", "2")
    assert seen["finished"] == 10 and seen["recorded"] == 10
    # at most the items in flight (one per worker) have a record in memory
    assert seen["pending_max"] <= 2 and seen["pending_at_end"] == 0
    assert seen["records_alive"] == 0
    assert seen["reports"] == 30 and seen["reports_with_record"] == 0
    # the workers share this host's disk: each appends its items' trajectories to its own
    # store, and the controller, which takes every report in turn, writes none of them
    assert seen["trajectories_received"] == 0
    [run_dir] = [p for p in (toy_project.path / "reports").iterdir() if p.is_dir()]
    stores = sorted(p.name for p in (run_dir / "raw").iterdir())
    assert stores and all(re.fullmatch(r"gw[01]-\d+\.jsonl", n) for n in stores), stores
    records = load_records(run_dir)
    assert len(records) == 10 and all(r["raw_at"].startswith("raw/gw") for r in records)
    assert all(read_trajectory(run_dir, r)["trajectory"] for r in records)


# Loaded on the controller of a ``-n 2`` session: what each worker's report carries in its
# ``user_properties`` as it arrives, before pytest rebuilds it (a wrapper runs before the
# plugin's own decoding).
WIRE_PROBE = """
import json
import os

import pytest

_seen = []


@pytest.hookimpl(wrapper=True)
def pytest_report_from_serializable(config, data):
    if not hasattr(config, "workerinput") and data.get("$report_type") == "TestReport":
        _seen.append([[name, type(value).__name__] for name, value in data.get("user_properties") or []])
    return (yield)


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        with open(os.environ["PROBE_OUT"], "w") as fh:
            json.dump(_seen, fh)
"""


def test_xdist_record_travels_to_the_controller_as_one_json_text(toy_project, tmp_path):
    # execnet serializes a nested dict in Python, one call per key and value; a record
    # travels twice per item (its call and teardown reports): one JSON text instead
    seen = _probed_run(toy_project, tmp_path, "wireprobe", WIRE_PROBE, "--egi-bootstrap", "0", "-n", "2")
    carried = [props for props in seen if props]
    assert len(seen) == 30 and len(carried) == 20  # 10 items: call and teardown reports
    assert all(props == [["egi-json", "str"]] for props in carried), carried
    [run_dir] = [p for p in (toy_project.path / "reports").iterdir() if p.is_dir()]
    records = load_records(run_dir)
    assert len(records) == 10 and all(r["status"] == "passed" and r["raw_at"].startswith("raw/gw")
                                      for r in records)


def test_record_wire_encoding_round_trips_and_leaves_other_properties_alone():
    from pytest_egi.collect.xdist import decode_records, encode_records

    record = {"suite": "toy", "values": {"acc": 1.0, "nan": float("nan")}, "turns": (1, 2), "x": None}
    wire = encode_records([("other", {"a": 1}), ("egi", record)])
    assert wire[0] == ("other", {"a": 1})
    assert wire[1][0] == "egi-json" and isinstance(wire[1][1], str)
    [other, (name, back)] = decode_records(wire)
    assert other == ("other", {"a": 1}) and name == "egi"
    # as the journal has it: a tuple becomes a list, NaN stays NaN
    assert back["turns"] == [1, 2] and back["values"]["nan"] != back["values"]["nan"]
    assert {k: v for k, v in back.items() if k not in ("turns", "values")} == {"suite": "toy", "x": None}
    odd = {"suite": "toy", "tags": {"a"}}  # not plain JSON: travels as it is
    assert encode_records([("egi", odd)]) == [("egi", odd)]
    assert encode_records([("other", 1)]) is None and decode_records([("egi", odd)]) is None


def test_read_journal_reads_a_byte_range_and_shares_repeated_strings(tmp_path):
    base = {"suite": "toy", "suite_module": "toysuites.toy", "model": "egi/oracle", "status": "passed",
            "category": "alpha", "trial": 1, "values": {"acc": 1.0}, "nodeid": "t"}  # fmt: skip
    journal = Journal(tmp_path)
    journal.append(dict(base, task_id="old"))
    journal.close()
    size = (tmp_path / JOURNAL_FILE).stat().st_size
    again = Journal(tmp_path)  # a resumed session appends after what was there
    for i in range(3):
        again.append(dict(base, task_id=f"t{i}"))
    again.close()
    assert again.start == size
    assert [r["task_id"] for r in read_journal(again.path, start=again.start)] == ["t0", "t1", "t2"]
    assert [r["task_id"] for r in read_journal(again.path, end=again.start)] == ["old"]
    records = read_journal(again.path)
    assert [r["task_id"] for r in records] == ["old", "t0", "t1", "t2"]
    a, b = records[1], records[2]
    # one string object per key and per repeated value, not one per record
    assert all(ka is kb for ka, kb in zip(sorted(a), sorted(b), strict=True))
    assert a["suite"] is b["suite"] and a["model"] is b["model"] and a["status"] is b["status"]


def test_read_journal_names_a_broken_line_after_the_start_offset(tmp_path):
    path = tmp_path / JOURNAL_FILE
    good = json.dumps({"suite": "s", "task_id": "a", "trial": 1})
    path.write_text(f"{good}\n{good}\nnot json\n{good}\n")
    start = len(good) + 1
    with pytest.raises(ValueError, match=rf"{JOURNAL_FILE}:3: not valid JSON; remove the line and resume"):
        read_journal(path, start=start)


def test_bm25s_is_imported_without_scipy():
    code = (
        "import sys\n"
        "from suites._common.bm25 import import_bm25s\n"
        "bm25s = import_bm25s()\n"
        "print(bm25s.BM25().csc_backend, 'scipy.sparse' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    assert out.stdout.split() == ["numpy", "False"]


def test_the_controller_reads_only_the_collected_node_ids(tmp_path):
    from pytest_egi.records import COLLECTED_FILE, COLLECTED_IDS_FILE, read_collected, write_collected

    items = {f"s/test_x.py::test_task[t{i}]": {"record": {"task_id": f"t{i}", "details": {}},
                                                "raw": f"raw/s/t{i}.json"} for i in range(3)}  # fmt: skip
    write_collected(tmp_path, items, 2)
    assert read_collected(tmp_path, records=False) == {"items": list(items), "deselected": 2}
    assert read_collected(tmp_path) == {"items": items, "deselected": 2}  # a crash: the base records
    ids = (tmp_path / COLLECTED_IDS_FILE).stat().st_size
    assert ids < (tmp_path / COLLECTED_FILE).stat().st_size


def test_read_journal_compacts_nested_dicts_and_shares_their_short_values(tmp_path):
    journal = Journal(tmp_path)
    for i in range(300):
        journal.append({"suite": "toy", "task_id": f"t{i:03d}", "trial": 1, "status": "passed",
                        "category": "alpha", "nodeid": f"t{i:03d}",
                        "values": {"acc": 1.0, "zero": 0.0, "neg": -0.0, "f1": 0.5 + i},
                        "timing": {"call_s": 0.25 * i}, "details": {"label": "yes"}})  # fmt: skip
    journal.close()
    lines = journal.path.read_text().splitlines()
    tracemalloc.start()
    try:
        plain_records = [json.loads(line) for line in lines]
        plain_bytes = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        records = read_journal(journal.path)
        compact_bytes = tracemalloc.get_traced_memory()[0] - plain_bytes
    finally:
        tracemalloc.stop()
    # the same records in well under half the memory (here about a third)
    assert records == plain_records and compact_bytes < 0.5 * plain_bytes, (compact_bytes, plain_bytes)
    a, b, c = records[:3]
    assert [r["values"]["f1"] for r in (a, b, c)] == [0.5, 1.5, 2.5]
    # equal, JSON-identical dicts
    assert json.dumps(b, sort_keys=True) == json.dumps(plain_records[1], sort_keys=True)
    assert type(b) is dict and type(b["values"]) is dict
    # the scores 1.0 and 0.0 and the short strings one level down are one object each;
    # -0.0 stays itself (JSON writes it "-0.0"), and any other float stays the record's own
    assert a["values"]["acc"] is b["values"]["acc"] and a["values"]["zero"] is c["values"]["zero"]
    assert a["details"]["label"] is b["details"]["label"]
    assert json.dumps(b["values"]["neg"]) == "-0.0"
    # still an ordinary dict to whoever changes it
    b["values"]["extra"] = 1
    assert b["values"]["extra"] == 1 and "extra" not in a["values"]


END_PROBE = """
import gc
import json
import os
import sys

import pytest

import pytest_egi.scoring.aggregate as aggregate_module
import pytest_egi.report.session as session_module

_seen = {}
_read = session_module.EgiSession._records


def _records(self):
    cases = [it.callspec.params["egi_case"] for it in self.session.items if hasattr(it, "callspec")]
    _seen["tasks_loaded_when_records_read"] = sum(case.tasks.loaded for case in cases)
    return _read(self)


_finish = aggregate_module.Aggregate.finish_bootstrap


def _finish_bootstrap(self):
    gc.collect()
    _seen["records_alive_at_bootstrap"] = sum(
        1 for obj in gc.get_objects()
        if type(obj) is dict and "task_id" in obj and "raw_path" in obj and "status" in obj
    )
    _seen["numpy_before_bootstrap"] = "numpy" in sys.modules
    _finish(self)
    _seen["numpy_after_bootstrap"] = "numpy" in sys.modules
    _seen["ci"] = bool(self.ci.get("EGI"))


session_module.EgiSession._records = _records
aggregate_module.Aggregate.finish_bootstrap = _finish_bootstrap


def pytest_unconfigure(config):
    with open(os.environ["PROBE_OUT"], "w") as fh:
        json.dump(_seen, fh)
"""

# the toy suite's summarize as column sums (so the bootstrap needs none of its records)
COLUMNS_HOOK = '''

def _columns(self, records):
    from pytest_egi.suite import SummaryColumns

    def finish(sums):
        out = {"acc": sums["correct"] / sums["n"] if sums["n"] else None}
        for cat in self.categories:
            n = sums[f"n_{cat}"]
            out[f"acc_{cat}"] = sums[f"correct_{cat}"] / n if n else None
        return out

    names = ("correct", "n", *(f"{k}_{c}" for c in self.categories for k in ("correct", "n")))
    rows = []
    for r in records:
        row = [float(r["values"]["correct"]), 1.0]
        for cat in self.categories:
            here = r["category"] == cat
            row += [float(r["values"]["correct"]) if here else 0.0, 1.0 if here else 0.0]
        rows.append(row)
    return SummaryColumns.from_rows(names, rows, finish)


ToySuite.summary_columns = _columns
'''


def test_tasks_are_released_at_session_end_and_numpy_waits_for_the_records_to_go(toy_project, tmp_path):
    """At session end the items' tasks are let go of before the records are read back, and
    the bootstrap draws its resamples (importing numpy) only once the records are gone."""
    init = toy_project.path / "toysuites" / "toy" / "__init__.py"
    init.write_text(init.read_text() + COLUMNS_HOOK)
    seen = _probed_run(toy_project, tmp_path, "endprobe", END_PROBE)
    assert seen == {
        "tasks_loaded_when_records_read": 0,
        "records_alive_at_bootstrap": 0,
        "numpy_before_bootstrap": False,
        "numpy_after_bootstrap": True,
        "ci": True,
    }
    [run_dir] = [p for p in (toy_project.path / "reports").iterdir() if p.is_dir()]
    egi = json.loads((run_dir / "egi.json").read_text())
    assert egi["egi"]["partial_ci95"] is not None  # the toy routing covers M1 and M4 only
    html = (run_dir / "report.html").read_text()
    # the task table's rows are the page's JSON blob's records (its script draws them)
    blob = html.split('<script type="application/json" id="egi-data">', 1)[1].split("</script>", 1)[0]
    assert "<h2>Tasks (10)</h2>" in html and [r["suite"] for r in json.loads(blob)["records"]] == ["toy"] * 10
    # the page's task table, read back from records.jsonl a line at a time, is the page the
    # records in memory give
    from pytest_egi.records import load_records
    from pytest_egi.report.html import render_html

    assert html == render_html(egi, load_records(run_dir), run_dir=run_dir)
