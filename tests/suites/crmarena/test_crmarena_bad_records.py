"""One bad record of a user's CRMArena task file errors alone (issue 22, DESIGN §9.3).

Before, one record with no ``task`` key, an unknown task type, a repeated ``idx``, a line that
is not JSON or a gold id absent from the org refused the whole file (exit 4). Now each is a
task whose item errors alone with a message naming the file, the task, the record, the field
and the fix; the other records run and egi/oracle passes them. Problems of the whole file
(missing, not JSON, not a list) stay usage errors.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_egi.run.recorder import shorten
from pytest_egi.suite import SuiteProfile, TaskLoadError
from suites.crmarena import SUITE, CrmArenaOptions
from suites.crmarena.data.tasks import generate_tasks
from suites.crmarena.env.org import Org

ROOT = Path(__file__).resolve().parents[3]
ALONE = "(this task errors alone; fix the entry or leave it out)"


@pytest.fixture(scope="module")
def records() -> list[dict]:
    """One record per task type (idx 0-8) on the quick org of seed 42 (the quick profile's)."""
    return generate_tasks(Org.generate(42, "quick"), seed=42, per_category=1)


def _load(path: Path, **profile) -> dict:
    profile = {"per_category": 6, **profile}
    tasks = SUITE.load_tasks(SuiteProfile(seed=42, **profile), CrmArenaOptions(tasks=path))
    return {t.id: (t.category, t.runnable, t.load_error) for t in tasks}


def test_each_kind_of_bad_record_errors_alone_naming_file_task_field_and_fix(tmp_path, records):
    bad = [dict(r) for r in records]
    del bad[1]["task"]  # HTU: no task type
    bad[2]["task"] = "lead_routing"  # TCU: unknown task type
    bad[4]["idx"] = 3  # PVI: repeats NED's idx
    bad[6]["answer"] = "a1M000000000001AAA"  # TII: not a list
    bad[8]["answer"] = ["Atlantis"]  # BRI: no Account has that ShippingState
    bad.insert(5, "a stray string")
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(bad))
    got = _load(path)
    fields = "idx, task, query, answer, reward_metric, metadata"
    assert got == {
        "NCR-0000": ("NCR", True, None),
        "crmarena-record-2": ("unknown", False, (
            f"{path}: task 'crmarena-record-2' could not be loaded: RecordError: record 2: field 'task' is "
            f"missing. Fix: add 'task' (see the CRMArena record schema). {ALONE}")),
        "crmarena-record-3": ("unknown", False, (
            f"{path}: task 'crmarena-record-3' could not be loaded: RecordError: record 3: field 'task' has "
            "unknown value 'lead_routing'. Fix: use one of case_routing, handle_time, transfer_count, "
            "named_entity_disambiguation, policy_violation_identification, knowledge_qa, "
            f"top_issue_identification, monthly_trend_analysis, best_region_identification. {ALONE}")),
        "NED-0003": ("NED", True, None),
        "PVI-0003": ("PVI", False, (
            f"{path}: task 'PVI-0003' could not be loaded: RecordError: record 5: field 'idx' value 3 "
            f"is already used by record 4. Fix: give every task a unique idx. {ALONE}")),
        "crmarena-record-6": ("unknown", False, (
            f"{path}: task 'crmarena-record-6' could not be loaded: RecordError: record 6: expected a JSON "
            f"object, got str. Fix: each task must be an object with {fields}. {ALONE}")),
        "KQA-0005": ("KQA", True, None),
        "TII-0006": ("TII", False, (
            f"{path}: task 'TII-0006' could not be loaded: RecordError: record 8: field 'answer' must be a "
            "non-empty list of strings or null, got 'a1M000000000001AAA'. Fix: use e.g. [\"005…\"] or "
            f"[null] for \"None\". {ALONE}")),
        "MTA-0007": ("MTA", True, None),
        "BRI-0008": ("BRI", False, (
            f"{path}: task 'BRI-0008' could not be loaded: RecordError: record 10: field 'answer': "
            "'Atlantis' "
            "is not the ShippingState of any Account in the org (generated(seed=42, scale=quick)). Fix: "
            "correct the gold answer, or run the tasks on the org they were written for (--egi-opt "
            f"crmarena.org=PATH). {ALONE}")),
    }  # fmt: skip


def test_a_jsonl_line_that_is_not_json_errors_alone(tmp_path, records):
    path = tmp_path / "tasks.jsonl"
    lines = [json.dumps(r) for r in records[:3]]
    lines.insert(1, "{not json}")
    path.write_text("\n".join(lines) + "\n")
    assert _load(path) == {
        "NCR-0000": ("NCR", True, None),
        "crmarena-line-2": ("unknown", False, (
            f"{path}: task 'crmarena-line-2' could not be loaded: RecordError: line 2 is not valid JSON "
            "(Expecting property name enclosed in double quotes). Fix: write one JSON object per line. "
            f"{ALONE}")),
        "HTU-0001": ("HTU", True, None),
        "TCU-0002": ("TCU", True, None),
    }  # fmt: skip


def test_a_bad_record_is_sampled_like_a_good_one_and_the_category_filter_holds(tmp_path):
    """Per type, the seeded sample is drawn over every record of the type, bad or not, so fixing a
    record never changes which others run; a record of no known type is always kept."""
    many = generate_tasks(Org.generate(42, "quick"), seed=42, per_category=8)  # NCR: idx 0-7
    good = tmp_path / "good.json"
    good.write_text(json.dumps(many))
    bad = [dict(r) for r in many]
    bad[5]["query"] = ""  # an NCR record the seed-42 sample of 3 draws
    bad.append({"idx": 999})
    broken = tmp_path / "bad.json"
    broken.write_text(json.dumps(bad))
    assert _load(good, per_category=3, categories=["NCR"]) == {
        "NCR-0004": ("NCR", True, None), "NCR-0005": ("NCR", True, None), "NCR-0006": ("NCR", True, None),
    }  # fmt: skip
    assert _load(broken, per_category=3, categories=["NCR"]) == {
        "NCR-0004": ("NCR", True, None),
        "NCR-0005": ("NCR", False, (
            f"{broken}: task 'NCR-0005' could not be loaded: RecordError: record 6: field 'query' must be "
            f"a non-empty string. Fix: put the user's request in 'query'. {ALONE}")),
        "NCR-0006": ("NCR", True, None),
        "crmarena-record-73": ("unknown", False, (
            f"{broken}: task 'crmarena-record-73' could not be loaded: RecordError: record 73: field 'task' "
            f"is missing. Fix: add 'task' (see the CRMArena record schema). {ALONE}")),
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "{path}: no such task file"),
        ("[{not json", "{path}: not valid JSON (Expecting property name enclosed in double quotes at "
                       "line 1). Fix: the file must hold a JSON list of task records."),
        ('{"idx": 1}', "{path}: expected a JSON list of task records, got dict. Fix: wrap the records in "
                       "[...] or write one record per line (JSONL)."),
        ("{x\n{y\n", "{path}: not JSON: no line is a JSON object. Fix: write one JSON task record per line "
                     "(JSONL), or a JSON list of records."),
    ],
    ids=["missing", "not-json", "not-a-list", "no-json-line"],
)  # fmt: skip
def test_a_problem_of_the_whole_file_is_still_a_usage_error(tmp_path, text, message):
    path = tmp_path / "tasks.txt"
    if text is not None:
        path.write_text(text)
    with pytest.raises((ValueError, FileNotFoundError)) as info:
        _load(path)
    assert str(info.value) == message.format(path=path)


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "n2"])
def test_one_bad_record_among_good_ones_errors_alone_through_the_plugin(pytester, tmp_path, records, workers):
    bad = [dict(r) for r in records]
    del bad[4]["task"]  # the PVI record
    path = tmp_path / "my_tasks.json"
    path.write_text(json.dumps(bad))
    result = pytester.runpytest(
        str(ROOT / "suites" / "crmarena"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "egi/oracle", "--egi-report-dir", str(pytester.path / "reports"),
        "--egi-bootstrap", "0", "--egi-opt", f"crmarena.tasks={path}", *workers,
    )  # fmt: skip
    result.assert_outcomes(passed=8, errors=1)
    run = next((pytester.path / "reports").iterdir())
    lines = (run / "records.jsonl").read_text().splitlines()
    got = {r["task_id"]: (r["status"], r["error"]) for r in map(json.loads, lines)}
    message = (
        f"TaskLoadError: {path}: task 'crmarena-record-5' could not be loaded: RecordError: record 5: "
        f"field 'task' is missing. Fix: add 'task' (see the CRMArena record schema). {ALONE}"
    )
    assert got == {
        **{f"{c}-{i:04d}": ("passed", None) for i, c in enumerate(SUITE.categories) if c != "PVI"},
        "crmarena-record-5": ("error", shorten(message, hint=TaskLoadError(message).hint)),
    }
