"""The local org: SOSL, agent-facing execute, generation, manifest, integrity, loading exports."""

from __future__ import annotations

import sqlite3
import time

import pytest

from suites.crmarena.env.errors import SalesforceError
from suites.crmarena.env.org import OBJECTS, Org, strip_code_fences
from suites.crmarena.env.schema import KEY_PREFIXES, RELATIONSHIPS, make_id, relationship_name, to_18_char_id
from suites.crmarena.env.sosl import search_stem, to_fts_query

from .conftest import A1, A2, FAQ_P1, P1, P2, P3, R_ARCHIVED, R_ONLINE, K, build_tiny_org

# -- SOSL -----------------------------------------------------------------------------------------


def test_sosl_token_match_returns_typed_records(tiny_org):
    rows = tiny_org.run_query("FIND {running shoes} IN ALL FIELDS RETURNING Product2(Id, Name)")
    assert {r["Id"] for r in rows} == {P1, P2}
    assert all(r["type"] == "Product2" for r in rows)


def test_sosl_ranks_by_bm25(tiny_org):
    rows = tiny_org.run_query("FIND {running OR trail} RETURNING Product2(Name)")
    assert [r["Name"] for r in rows] == ["Trail Running Shoes", "Road Running Shoes"]


def test_sosl_wildcard_and_name_fields(tiny_org):
    assert [r["Id"] for r in tiny_org.run_query("FIND {yog*} RETURNING Product2(Id)")] == [P3]
    assert tiny_org.run_query("FIND {grippy} IN NAME FIELDS RETURNING Product2(Id)") == []
    assert [r["Id"] for r in tiny_org.run_query("FIND {grippy} IN ALL FIELDS RETURNING Product2(Id)")] == [P1]


def test_sosl_plural_and_inflection_match(tiny_org):
    assert [r["Id"] for r in tiny_org.run_query("FIND {shoe grips} RETURNING Product2(Id)")] == [P1]


def test_sosl_where_and_several_objects_keep_their_type(tiny_org):
    rows = tiny_org.run_query(
        "FIND {refund OR trail} RETURNING Knowledge__kav(Id, PublishStatus WHERE PublishStatus = 'Online'), "
        "Product2(Id, Description LIMIT 1)"
    )
    assert [r["type"] for r in rows] == ["Knowledge__kav", "Knowledge__kav", "Product2"]  # RETURNING order
    assert {r["Id"] for r in rows[:2]} == {R_ONLINE, FAQ_P1} and rows[2]["Id"] == P1
    assert R_ARCHIVED not in {r["Id"] for r in rows}


def test_sosl_drops_null_columns_per_object_without_key_errors(tiny_org):
    rows = tiny_org.run_query("FIND {dan OR eve} RETURNING Account(Id, Phone), Contact(Email)")
    # Account.Phone is null on every account -> dropped for Account rows only
    assert sorted(rows, key=lambda r: (r["type"], str(r.get("Id")), str(r.get("Email")))) == [
        {"type": "Account", "Id": A1},
        {"type": "Account", "Id": A2},
        {"type": "Contact", "Email": "dan@mail.example"},
        {"type": "Contact", "Email": "eve@mail.example"},
    ]


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("FIND {a} RETURNING Product2", "MALFORMED_SEARCH"),
        ("FIND {running RETURNING Product2", "MALFORMED_SEARCH"),
        ("FIND {running} RETURNING Products(Id)", "INVALID_TYPE"),
        ("FIND {running} RETURNING Order(Id)", "INVALID_TYPE"),
        ("FIND {running} RETURNING Product2(Foo)", "INVALID_FIELD"),
    ],
)
def test_sosl_errors(tiny_org, query, code):
    with pytest.raises(SalesforceError) as info:
        tiny_org.run_query(query)
    assert info.value.code == code


def test_sosl_term_translation():
    assert (
        to_fts_query('running shoes OR "yoga mat" AND NOT trail* high-support')
        == '"run"* "shoe"* OR "yoga mat" NOT "trail"* "high support"'
    )
    assert [search_stem(w) for w in ("batteries", "hiking", "boots", "glass")] == [
        "batter",
        "hik",
        "boot",
        "glass",
    ]


# -- execute (agent-facing) -----------------------------------------------------------------------


def test_execute_success_and_error_strings(tiny_org):
    out = tiny_org.execute(f"SELECT Subject FROM Case WHERE Id = '{K[2]}'")
    assert out == "Salesforce instance output: [{'Subject': 'Case 2'}]"
    assert tiny_org.execute("SELECT Id FORM Case") == "MALFORMED_QUERY: unexpected token: 'FORM'"
    assert tiny_org.execute("SELECT Id FROM Case WHERE Subject = 'none'") == "Salesforce instance output: []"


def test_execute_strips_fences_before_choosing_sosl(tiny_org):
    fenced = "```sql\nFIND {yoga} RETURNING Product2(Id)\n```"
    assert tiny_org.execute(fenced) == f"Salesforce instance output: [{{'type': 'Product2', 'Id': '{P3}'}}]"
    assert (
        tiny_org.execute("```\nSELECT COUNT() FROM Case\n```")
        == "Salesforce instance output: [{'totalSize': 10}]"
    )
    assert strip_code_fences("  ```soql\nSELECT Id FROM Case\n```  ") == "SELECT Id FROM Case"


@pytest.mark.parametrize(
    "garbage", ["", "   ", "'", "SELECT (", "FIND", "{}{}", "SELECT Id FROM Case WHERE Id IN ()"]
)
def test_execute_never_raises(tiny_org, garbage):
    assert isinstance(tiny_org.execute(garbage), str)


# -- ids and schema -----------------------------------------------------------------------------------


def test_ids_have_prefix_checksum_and_18_chars():
    assert to_18_char_id("001A0000006Vm9r") == "001A0000006Vm9rIAC"  # documented Salesforce example
    made = make_id("005", 123456)
    assert len(made) == 18 and made.startswith("005Ws") and made.isalnum()
    assert to_18_char_id(made[:15]) == made


def test_schema_has_sixteen_objects_with_ids_and_relationship_names():
    assert len(OBJECTS) == 16 and set(OBJECTS) == set(KEY_PREFIXES)
    assert all("Id" in fields for fields in OBJECTS.values())
    for child, lookups in RELATIONSHIPS.items():
        for field in lookups:
            assert field in OBJECTS[child]
    assert relationship_name("OwnerId") == "Owner"
    assert relationship_name("IssueId__c") == "IssueId__r"


# -- generation ----------------------------------------------------------------------------------------


def test_generation_is_deterministic_and_fast():
    started = time.perf_counter()
    first = Org.generate(7, "quick")
    elapsed = time.perf_counter() - started
    second = Org.generate(7, "quick")
    assert elapsed < 2.0
    assert first.manifest() == second.manifest()
    assert first.content_hash() == second.content_hash()
    assert Org.generate(8, "quick").content_hash() != first.content_hash()


def test_quick_manifest_sizes_and_integrity(quick_org):
    manifest = quick_org.manifest()
    assert list(manifest) == list(OBJECTS)
    assert manifest["User"] == 30 and 300 <= manifest["Case"] <= 600
    assert all(count > 0 for count in manifest.values())
    assert quick_org.check_integrity() == []


def test_generated_ids_use_key_prefixes(quick_org):
    for name, prefix in KEY_PREFIXES.items():
        rows = quick_org.connection.execute(f'SELECT "Id" FROM "{name}" LIMIT 3').fetchall()
        assert all(row[0].startswith(prefix) and len(row[0]) == 18 for row in rows), name


def test_integrity_catches_dangling_foreign_keys():
    org = Org(build_tiny_org())
    org.connection.execute(f"""UPDATE "Case" SET "AccountId" = '001000000000099AAA' WHERE "Id" = '{K[3]}'""")
    org.connection.execute(
        """UPDATE "CaseHistory__c" SET "NewValue__c" = '005000000000099AAA' WHERE rowid = 2"""
    )
    problems = org.check_integrity()
    assert len(problems) == 2
    assert problems == [
        f"table 'Case', column 'AccountId', record {K[3]}: '001000000000099AAA' is not the Id of any "
        "Account record (lookup Account). Fix: add Account '001000000000099AAA' to the export, or set "
        "Case.AccountId to NULL.",
        "table 'CaseHistory__c', column 'NewValue__c', record a1N000000000002AAA: owner assignment to "
        "'005000000000099AAA', not the Id of any User record. Fix: add User '005000000000099AAA' to the "
        "export.",
    ]


def test_generate_to_path_and_refuse_overwrite(tmp_path):
    path = tmp_path / "org.sqlite"
    org = Org.generate(3, "quick", path=path)
    assert path.stat().st_size > 0
    loaded = Org.from_sqlite(path)
    assert loaded.manifest() == org.manifest()
    assert loaded.content_hash() == org.content_hash()
    with pytest.raises(FileExistsError):
        Org.generate(3, "quick", path=path)


# -- loading a user's export -------------------------------------------------------------------------


def _write_minimal_export(path, drop: tuple[str, str] | None = None, skip_table: str | None = None) -> None:
    """A small export with only a few columns per table and 'Z' datetimes."""
    from suites.crmarena.env.schema import REQUIRED_FIELDS

    connection = sqlite3.connect(path)
    for table, fields in REQUIRED_FIELDS.items():
        if table == skip_table:
            continue
        columns = [f for f in fields if (table, f) != drop]
        if table in ("User", "Account"):
            columns += ["FirstName", "LastName"]
        if table == "Case":
            columns += ["Subject", "Description"]
        connection.execute(f'CREATE TABLE "{table}" ({", ".join(chr(34) + c + chr(34) for c in columns)})')
    connection.execute(
        """INSERT INTO "User" ("Id", "FirstName", "LastName") VALUES ('005000000000001AAA', 'Ann', 'Lee')"""
    )
    connection.execute("""INSERT INTO "Account" ("Id", "ShippingState", "FirstName", "LastName")
                          VALUES ('001000000000001AAA', 'CA', 'Dan', 'Park')""")
    if drop is None:
        connection.execute(
            """INSERT INTO "Case" ("Id", "AccountId", "OwnerId", "Status", "Subject", "Description",
               "CreatedDate", "ClosedDate", "IssueId__c", "OrderItemId__c")
               VALUES ('500000000000001AAA', '001000000000001AAA', '005000000000001AAA', 'Closed', 'S',
               'D', '2023-03-10T10:00:00Z', '2023-03-10 12:30:00', NULL, NULL)"""
        )
    connection.commit()
    connection.close()


def test_from_sqlite_loads_a_partial_export(tmp_path):
    path = tmp_path / "export.sqlite"
    _write_minimal_export(path)
    before = path.read_bytes()
    org = Org.from_sqlite(path)
    assert path.read_bytes() == before  # the user's file is never modified
    rows = org.run_query("SELECT CreatedDate, ClosedDate, Priority, Owner.Name, Account.Name FROM Case")
    assert rows == [
        {
            "CreatedDate": "2023-03-10T10:00:00.000+0000",
            "ClosedDate": "2023-03-10T12:30:00.000+0000",
            "Owner": {"Name": "Ann Lee"},
            "Account": {"Name": "Dan Park"},
        }
    ]
    assert org.manifest()["Case"] == 1 and org.check_integrity() == []


def test_from_sqlite_names_missing_column(tmp_path):
    path = tmp_path / "export.sqlite"
    _write_minimal_export(path, drop=("Case", "IssueId__c"))
    with pytest.raises(ValueError) as info:
        Org.from_sqlite(path)
    message = str(info.value)
    assert str(path) in message and "'Case'" in message and "'IssueId__c'" in message and "Fix:" in message


def test_from_sqlite_names_missing_table_and_bad_files(tmp_path):
    path = tmp_path / "export.sqlite"
    _write_minimal_export(path, skip_table="CaseHistory__c")
    with pytest.raises(ValueError, match=r"table 'CaseHistory__c' is missing"):
        Org.from_sqlite(path)
    junk = tmp_path / "junk.sqlite"
    junk.write_text("this is not a database")
    with pytest.raises(ValueError, match="not a readable SQLite database"):
        Org.from_sqlite(junk)
    with pytest.raises(FileNotFoundError):
        Org.from_sqlite(tmp_path / "missing.sqlite")
