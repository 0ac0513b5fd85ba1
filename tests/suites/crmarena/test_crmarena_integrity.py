"""Data that cannot be right is refused: a user's org export is integrity-checked on load, the
original column layout maps onto ours or is refused naming what is missing, a category is never
silently left without tasks, and a task file's gold ids must exist in the org."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pytest_egi.run.recorder import shorten
from pytest_egi.suite import SuiteProfile, TaskLoadError
from suites.crmarena import CrmArenaOptions, CrmArenaSuite
from suites.crmarena.data.tasks import generate_tasks
from suites.crmarena.env.org import Org

from .conftest import K, build_tiny_org

ROOT = Path(__file__).resolve().parents[3]
CATEGORIES = ("NCR", "HTU", "TCU", "NED", "PVI", "KQA", "TII", "MTA", "BRI")


def tiny_export(path: Path) -> Path:
    """The hand-written tiny org, written to ``path`` as a user's export would be."""
    connection = sqlite3.connect(path)
    build_tiny_org(connection)
    connection.close()
    return path


def corrupt(path: Path, *statements: str) -> None:
    connection = sqlite3.connect(path)
    for statement in statements:
        connection.executescript(statement)
    connection.commit()
    connection.close()


def refused(path: Path, categories=None) -> str:
    with pytest.raises(ValueError) as info:
        Org.from_sqlite(path, categories)
    return str(info.value)


# -- integrity: one kind of fault per test, exact messages -------------------------------------


def test_dangling_reference_names_table_column_record_and_fix(tmp_path):
    path = tiny_export(tmp_path / "org.sqlite")
    corrupt(path, f"""UPDATE "Case" SET "AccountId" = '001000000000099AAA' WHERE "Id" = '{K[3]}'""")
    assert refused(path) == (
        f"{path}: the org export fails its integrity check:\n"
        f"  table 'Case', column 'AccountId', record {K[3]}: '001000000000099AAA' is not the Id of "
        "any Account record (lookup Account). Fix: add Account '001000000000099AAA' to the export, "
        "or set Case.AccountId to NULL."
    )


def test_duplicate_id(tmp_path):
    path = tiny_export(tmp_path / "org.sqlite")
    # a real export declares no primary key, so nothing stops a record appearing twice
    corrupt(
        path,
        'CREATE TABLE x AS SELECT * FROM "Issue__c"; DROP TABLE "Issue__c"; '
        'ALTER TABLE x RENAME TO "Issue__c"; '
        'INSERT INTO "Issue__c" SELECT * FROM "Issue__c" WHERE rowid = 2;',
    )
    assert refused(path) == (
        f"{path}: the org export fails its integrity check:\n"
        "  table 'Issue__c', column 'Id', record a1M000000000002AAA: the Id appears 2 times. "
        "Fix: export each record once (record Ids are unique)."
    )


def test_text_in_a_number_column_and_numeric_text_accepted(tmp_path):
    path = tiny_export(tmp_path / "org.sqlite")
    corrupt(
        path,
        """CREATE TABLE x AS SELECT * FROM "OrderItem"; DROP TABLE "OrderItem";
           ALTER TABLE x RENAME TO "OrderItem";
           UPDATE "OrderItem" SET "Quantity" = 'two' WHERE rowid = 2;
           UPDATE "OrderItem" SET "UnitPrice" = '35.50' WHERE rowid = 4;""",
    )
    assert refused(path) == (
        f"{path}: the org export fails its integrity check:\n"
        "  table 'OrderItem', column 'Quantity', record 802000000000002AAA: 'two' is not a number "
        "(double field). Fix: store numbers as numbers, without currency signs or thousands separators."
    )


def test_date_and_datetime_that_do_not_parse(tmp_path):
    path = tiny_export(tmp_path / "org.sqlite")
    corrupt(
        path,
        """UPDATE "Order" SET "EffectiveDate" = '2023-02-30' WHERE rowid = 1;
           UPDATE "Case" SET "ClosedDate" = 'yesterday' WHERE rowid = 2;""",
    )
    assert refused(path) == (
        f"{path}: the org export fails its integrity check:\n"
        f"  table 'Case', column 'ClosedDate', record {K[2]}: 'yesterday' is not a datetime. Fix: "
        "store datetimes as 'YYYY-MM-DDTHH:MM:SS.000+0000' (UTC; 'Z' and '+00:00' forms are converted "
        "on load).\n"
        "  table 'Order', column 'EffectiveDate', record 801000000000001AAA: '2023-02-30' is not a "
        "date. Fix: store dates as 'YYYY-MM-DD'."
    )


def test_picklist_value_out_of_range_and_many_offenders_counted(tmp_path):
    path = tiny_export(tmp_path / "org.sqlite")
    corrupt(path, """UPDATE "Case" SET "Status" = 'closed' WHERE "Status" = 'Closed'""")
    lines = refused(path).splitlines()
    assert lines[1] == (
        f"  table 'Case', column 'Status', record {K[1]}: 'closed' is not one of the picklist values "
        "Closed, Escalated, New, Working. Fix: use the picklist's API values (the task rules filter on them)."
    )
    assert lines[4:] == ["  ... and 5 more records with this problem in table 'Case', column 'Status'"]


def test_export_forms_are_normalised_not_refused(tmp_path):
    path = tiny_export(tmp_path / "org.sqlite")
    corrupt(
        path,
        """UPDATE "Order" SET "EffectiveDate" = '2023-03-01T00:00:00Z' WHERE rowid = 1;
           UPDATE "Product2" SET "IsActive" = 'true' WHERE rowid = 1;
           UPDATE "Product2" SET "IsActive" = 'FALSE' WHERE rowid = 2;
           UPDATE "Case" SET "ContactId" = '' WHERE rowid = 1;""",
    )
    org = Org.from_sqlite(path)
    sql = org.connection.execute
    assert sql('SELECT "EffectiveDate" FROM "Order" WHERE rowid = 1').fetchone() == ("2023-03-01",)
    assert sql('SELECT "IsActive" FROM "Product2" ORDER BY rowid').fetchall() == [(1,), (0,), (0,)]
    assert sql('SELECT "ContactId" FROM "Case" WHERE rowid = 1').fetchone() == (None,)


@pytest.mark.parametrize("scale", ["quick", "deep"])
def test_shipped_generated_orgs_pass_the_check(scale, tmp_path):
    org = Org.generate(42, scale)
    assert org.check_integrity() == []
    org.save(tmp_path / "org.sqlite")
    assert Org.from_sqlite(tmp_path / "org.sqlite").content_hash() == org.content_hash()


# -- the original column layout ------------------------------------------------------------------


def original_layout(path: Path) -> Path:
    """A generated org rewritten in the original schema export's layout (reference §1.3): no
    compound Name on User/Account/Contact, no PublishStatus/Language on Knowledge__kav (only the
    published versions exported), OrderItem.PriceBookEntryId spelled as upstream."""
    Org.generate(7, "quick").save(path)
    corrupt(
        path,
        """DELETE FROM "Knowledge__kav" WHERE "PublishStatus" != 'Online';
           ALTER TABLE "Knowledge__kav" DROP COLUMN "PublishStatus";
           ALTER TABLE "Knowledge__kav" DROP COLUMN "Language";
           ALTER TABLE "User" DROP COLUMN "Name";
           ALTER TABLE "Account" DROP COLUMN "Name";
           ALTER TABLE "Contact" DROP COLUMN "Name";
           ALTER TABLE "OrderItem" RENAME COLUMN "PricebookEntryId" TO "PriceBookEntryId";""",
    )
    return path


def test_original_layout_maps_onto_ours_and_keeps_every_category(tmp_path):
    path = original_layout(tmp_path / "original.sqlite")
    org = Org.from_sqlite(path)
    mapped = "SELECT Id FROM Knowledge__kav WHERE PublishStatus != 'Online' OR Language != 'en_US'"
    assert org.run_query(mapped) == []
    assert org.run_query("SELECT Name FROM User LIMIT 1")[0]["Name"]
    records = generate_tasks(org, seed=7, per_category=2)
    counts = {r["task"]: 0 for r in records}
    for r in records:
        counts[r["task"]] += 1
    # before the mapping the NULL PublishStatus left no KQA task and a None gold on every PVI task
    assert list(counts.values()) == [2] * 9
    assert any(r["answer"] != [None] for r in records if r["task"] == "policy_violation_identification")


def test_missing_columns_of_the_original_layout_name_the_categories(tmp_path):
    path = original_layout(tmp_path / "original.sqlite")
    corrupt(path, 'ALTER TABLE "Case" DROP COLUMN "IssueId__c"; DROP TABLE "LiveChatTranscript";')
    assert refused(path) == (
        f"{path}: the export lacks what the selected CRMArena categories read:\n"
        "  table 'LiveChatTranscript' is missing (needed by PVI)\n"
        "  table 'Case' is missing column 'IssueId__c' (needed by NCR, TII)\n"
        "Fix: export these objects and fields under their Salesforce API names, or run without the "
        "categories named (routing.yaml modes.<mode>.suites.crmarena.categories)."
    )
    # a run of only the categories the export supports loads it (the absent table is empty)
    org = Org.from_sqlite(path, ["BRI", "MTA"])
    assert org.manifest()["LiveChatTranscript"] == 0


def test_a_category_the_org_cannot_feed_is_refused_not_dropped(tmp_path):
    path = tiny_export(tmp_path / "org.sqlite")
    corrupt(path, 'DELETE FROM "Knowledge__kav"')
    suite = CrmArenaSuite()
    options = CrmArenaOptions(org=path)
    profile = SuiteProfile(seed=3, categories=["KQA"], per_category=2)
    with pytest.raises(ValueError) as info:
        suite.load_tasks(profile, options)
    assert str(info.value) == (
        f"{path}: CRMArena category KQA would have no task: the org holds no record a KQA task can "
        "be drawn from. It reads Knowledge__kav (Id, Title, FAQ_Answer__c, PublishStatus, Language; "
        "0 rows). Fix: add such records to the export, or run without KQA "
        "(routing.yaml modes.<mode>.suites.crmarena.categories)."
    )


def test_empty_pools_do_not_crash_generation(tmp_path):
    path = tiny_export(tmp_path / "org.sqlite")
    corrupt(path, 'UPDATE "Case" SET "IssueId__c" = NULL; DELETE FROM "Issue__c"')
    org = Org.from_sqlite(path)
    assert [r for r in generate_tasks(org, seed=1, per_category=2) if r["task"] == "case_routing"] == []


# -- task files: gold ids must exist in the org -----------------------------------------------------


ALONE = "(this task errors alone; fix the entry or leave it out)"


def test_task_file_gold_id_missing_from_the_org(tmp_path):
    """Behaviour changed on purpose (issue 22): a gold id absent from the org was a usage error
    for the whole file; that task now errors alone, and the others load."""
    org = Org.generate(42, "quick")
    records = generate_tasks(org, seed=42, per_category=1)
    records[3]["answer"] = ["01tWs0000000000XYZ"]  # NED: a product the org does not have
    task_path = tmp_path / "tasks.json"
    task_path.write_text(json.dumps(records))
    suite = CrmArenaSuite()
    tasks = suite.load_tasks(SuiteProfile(seed=42, per_category=6), CrmArenaOptions(tasks=task_path))
    assert [t.id for t in tasks if not t.runnable] == ["NED-0003"]
    assert len(tasks) == 9 and tasks[3].category == "NED" and tasks[3].data == {}
    assert tasks[3].load_error == (
        f"{task_path}: task 'NED-0003' could not be loaded: RecordError: record 4: field 'answer': "
        "'01tWs0000000000XYZ' is not the Id of any Product2 record in the org (generated(seed=42, "
        "scale=quick)). Fix: correct the gold answer, or run the tasks on the org they were written for "
        f"(--egi-opt crmarena.org=PATH). {ALONE}"
    )


def test_task_file_month_and_state_golds_are_checked(tmp_path):
    org = Org.generate(42, "quick")
    records = generate_tasks(org, seed=42, per_category=1)
    for index, (task, gold, problem) in enumerate(
        [
            ("monthly_trend_analysis", "Febuary", "is not a month name (January, February, …)"),
            (
                "best_region_identification",
                "ZZ",
                "is not the ShippingState of any Account in the org (generated(seed=42, scale=quick))",
            ),
        ]
    ):
        bad = [dict(r) for r in records]
        row = next(r for r in bad if r["task"] == task)
        row["answer"] = [gold]
        task_path = tmp_path / f"tasks{index}.json"
        task_path.write_text(json.dumps(bad))
        profile = SuiteProfile(seed=42, per_category=6)
        tasks = CrmArenaSuite().load_tasks(profile, CrmArenaOptions(tasks=task_path))
        broken = [t for t in tasks if not t.runnable]
        assert len(broken) == 1 and len(tasks) == 9
        assert f"field 'answer': '{gold}' {problem}." in broken[0].load_error


# -- through the plugin ----------------------------------------------------------------------------


def _run(pytester: pytest.Pytester, *opts: str, extra: tuple[str, ...] = ()) -> pytest.RunResult:
    args = [str(ROOT / "suites" / "crmarena"), "--rootdir", str(ROOT), "-p", "no:cacheprovider"]
    args += ["--egi-model", "egi/oracle", "--egi-report-dir", str(pytester.path / "reports"), *extra]
    for opt in opts:
        args += ["--egi-opt", opt]
    return pytester.runpytest(*args)


def test_corrupt_org_export_is_exit_4_naming_file_table_column_record(pytester, tmp_path):
    path = tmp_path / "my_org.sqlite"
    Org.generate(7, "quick").save(path)
    bad_case = sqlite3.connect(path).execute('SELECT "Id" FROM "Case" WHERE rowid = 3').fetchone()[0]
    corrupt(path, """UPDATE "Case" SET "OwnerId" = '005Ws0000000000ZZZ' WHERE rowid = 3""")
    result = _run(pytester, f"crmarena.org={path}")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [
            f"ERROR: crmarena: {path}: the org export fails its integrity check:",
            f"  table 'Case', column 'OwnerId', record {bad_case}: '005Ws0000000000ZZZ' is not the Id of "
            "any User record (lookup Owner). Fix: add User '005Ws0000000000ZZZ' to the export, or set "
            f"Case.OwnerId to NULL. (from --egi-opt crmarena.org={path})",
        ]
    )
    assert not (pytester.path / "reports").exists() or not any((pytester.path / "reports").iterdir())


def test_task_file_with_missing_gold_id_errors_alone(pytester, tmp_path):
    """Behaviour changed on purpose (issue 22): exit 4 for the whole file before; now the one
    task errors, naming the file, the task, the field and the fix, and the others pass."""
    org = Org.generate(7, "quick")
    org_path = tmp_path / "my_org.sqlite"
    org.save(org_path)
    records = generate_tasks(org, seed=7, per_category=1)
    records[0]["answer"] = ["005Ws0000000000ZZZ"]
    task_path = tmp_path / "my_tasks.json"
    task_path.write_text(json.dumps(records))
    result = _run(pytester, f"crmarena.org={org_path}", f"crmarena.tasks={task_path}")
    result.assert_outcomes(passed=8, errors=1)
    run = next((pytester.path / "reports").iterdir())
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    message = (
        f"{task_path}: task 'NCR-0000' could not be loaded: RecordError: record 1: field 'answer': "
        f"'005Ws0000000000ZZZ' is not the Id of any User record in the org ({org_path.resolve()}). Fix: "
        "correct the gold answer, or run the tasks on the org they were written for (--egi-opt "
        f"crmarena.org=PATH). {ALONE}"
    )
    # the record holds the core's one-line rendering of the item's TaskLoadError
    assert [(r["task_id"], r["error"]) for r in records if r["status"] != "passed"] == [
        ("NCR-0000", shorten(f"TaskLoadError: {message}", hint=TaskLoadError(message).hint))
    ]


def test_partial_export_runs_the_categories_it_supports_and_refuses_the_others(pytester, tmp_path):
    path = original_layout(tmp_path / "original.sqlite")
    corrupt(path, 'ALTER TABLE "Case" DROP COLUMN "IssueId__c"; DROP TABLE "LiveChatTranscript";')
    result = _run(pytester, f"crmarena.org={path}")
    assert result.ret == 4
    assert f"ERROR: crmarena: {path}: the export lacks what the selected CRMArena categories read:" in (
        result.stderr.lines
    )
    assert "  table 'Case' is missing column 'IssueId__c' (needed by NCR, TII)" in result.stderr.lines
    routing = (ROOT / "routing.yaml").read_text()
    assert "crmarena: {per_category: 6}" in routing
    restricted = tmp_path / "routing.yaml"
    only = "crmarena: {per_category: 2, categories: [BRI, MTA]}"
    restricted.write_text(routing.replace("crmarena: {per_category: 6}", only))
    result = _run(pytester, f"crmarena.org={path}", extra=("-n", "2", "--egi-routing", str(restricted)))
    result.assert_outcomes(passed=4)
