"""The local Salesforce-like org: 16 sObject tables in SQLite, queried with SOQL and SOSL.

Replaces the live Salesforce org of CRMArena (reference §1.3, §4.2) so the suite runs offline and
needs no credentials. An `Org` is either generated from a seed (`Org.generate`) or loaded from
a user's SQLite export whose table and column names are the Salesforce API names
(`Org.from_sqlite`).

Agent-facing behaviour of `Org.execute` (original `SalesforceConnector.run_query`, reference
§1.4): code fences are stripped **before** deciding between SOQL and SOSL (the original looked
for ``FIND`` first, so fenced SOSL was sent as SOQL and failed; we fix that), success gives
``"Salesforce instance output: " + str(records)`` with no truncation, and failure gives
``"ERRORCODE: message"``.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Literal

from .errors import SalesforceError
from .schema import (
    CATEGORY_NEEDS,
    FIELD_TYPES,
    KEY_PREFIXES,
    NUMBER_TYPES,
    OBJECTS,
    ORIGINAL_LAYOUT_DEFAULTS,
    PICKLIST_VALUES,
    RELATIONSHIPS,
    field_type,
    relationship_name,
)
from .sftime import format_datetime, parse_datetime
from .soql import run_soql
from .soql_schema import OrgSchema
from .sosl import build_search_index, run_sosl

__all__ = [
    "OBJECTS",
    "KEY_PREFIXES",
    "RELATIONSHIPS",
    "SalesforceError",
    "Org",
    "OrgProblem",
    "strip_code_fences",
    "OBSERVATION_PREFIX",
]

OBSERVATION_PREFIX = "Salesforce instance output: "

_FENCE_RE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
_API_DATETIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$")


def strip_code_fences(text: str) -> str:
    """Remove one surrounding Markdown code fence (```sql … ```, ```soql``` or bare ```).

    Args:
        text: The agent's query text.

    Returns:
        The query without fence lines, stripped of surrounding whitespace.
    """
    match = _FENCE_RE.match(text)
    return (match.group(1) if match else text).strip()


def _sql_type(sf_type: str) -> str:
    if sf_type == "boolean":
        return "INTEGER"
    if sf_type in ("double", "currency", "percent", "int"):
        return "REAL"
    return "TEXT"


def create_tables(connection: sqlite3.Connection) -> None:
    """Create the 16 object tables with Salesforce API names as table and column names."""
    for object_name, fields in OBJECTS.items():
        columns = ", ".join(
            f'"{name}" {_sql_type(field_type(object_name, name))}' + (" PRIMARY KEY" if name == "Id" else "")
            for name in fields
        )
        connection.execute(f'CREATE TABLE "{object_name}" ({columns})')


class Org:
    """A local org: a SQLite connection plus SOQL/SOSL execution.

    Connections are opened with ``check_same_thread=False`` so one org can serve reads from
    several threads.

    Attributes:
        connection: The SQLite connection (in memory unless generated to a path).
        source: Where the org came from (``generated(seed=…, scale=…)`` or a file path).
        today: Date that SOQL relative date literals (TODAY, LAST_N_DAYS:n …) refer to. Defaults
            to the day after the latest Case.CreatedDate; set it to the task's "today".
        count_quirk: When True, ``SELECT COUNT()`` returns ``[]`` like the original harness.
    """

    def __init__(
        self,
        connection: sqlite3.Connection,
        *,
        source: str = "<memory>",
        today: date | None = None,
        count_quirk: bool = False,
    ) -> None:
        self.connection = connection
        self.source = source
        self.count_quirk = count_quirk
        self.schema = OrgSchema.from_connection(connection)
        build_search_index(connection, self.schema)
        self.today = today or self._default_today()

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def generate(
        cls,
        seed: int,
        scale: Literal["quick", "deep"] = "quick",
        path: str | Path | None = None,
    ) -> Org:
        """Build a seeded synthetic org (see `data/generator.py` for the latent structure).

        Args:
            seed: Random seed; the same seed and scale give byte-identical table contents.
            scale: ``quick`` (≈30 agents, ≈480 cases, < 1 s) or ``deep`` (≈50 agents, ≈1,100
                cases).
            path: Optional SQLite file to write the org to (must not exist yet). The returned
                org is backed by that file.

        Returns:
            The generated Org.

        Raises:
            ValueError: For an unknown scale.
            FileExistsError: When ``path`` already exists.
        """
        from suites.crmarena.data.generator import populate

        if path is not None and Path(path).exists():
            raise FileExistsError(f"{path}: refusing to overwrite an existing file; pick a new path")
        connection = sqlite3.connect(":memory:" if path is None else str(path), check_same_thread=False)
        create_tables(connection)
        populate(connection, seed, scale)
        connection.commit()
        return cls(connection, source=f"generated(seed={seed}, scale={scale})")

    @classmethod
    def from_sqlite(cls, path: str | Path, categories: Iterable[str] | None = None) -> Org:
        """Load a user's SQLite export of an org into memory (the file is never modified).

        Tables and columns must carry the Salesforce API names. The export must hold what the
        ``categories`` read (`schema.CATEGORY_NEEDS`; all nine when None); every other object
        and field of `OBJECTS` it lacks is added empty (NULL column, empty table). The original
        CRMArena layout maps onto ours: ``Name`` is filled from FirstName/LastName, the
        Knowledge__kav columns the original schema export lacks get the values of
        `schema.ORIGINAL_LAYOUT_DEFAULTS`, and field names match case-insensitively
        (``PriceBookEntryId``). Empty strings in non-text columns become NULL, datetimes are
        normalised to ``YYYY-MM-DDTHH:MM:SS.000+0000``, dates to ``YYYY-MM-DD``, ``true``/``false``
        to 1/0. The result must then pass `check_integrity`.

        Args:
            path: The SQLite file.
            categories: Paper abbreviations (``NCR``, ``KQA`` …) of the categories to be run.

        Returns:
            The loaded Org.

        Raises:
            FileNotFoundError: When the file does not exist.
            ValueError: When the file is not SQLite, lacks a table/column a category needs
                (names the categories, tables and columns), or fails `check_integrity` (names
                the table, column, an offending record Id and the fix); the message starts with
                the file.
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file (expected an SQLite export of the org)")
        wanted = tuple(CATEGORY_NEEDS) if categories is None else tuple(categories)
        unknown = [c for c in wanted if c not in CATEGORY_NEEDS]
        if unknown:
            raise ValueError(f"unknown CRMArena categories {unknown}; valid: {list(CATEGORY_NEEDS)}")
        connection = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            source.backup(connection)
            source.close()
            connection.execute("SELECT name FROM sqlite_master").fetchall()
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"{path}: not a readable SQLite database ({exc})") from exc
        for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '\\_fts\\_%' ESCAPE '\\'"
        ).fetchall():
            connection.execute(f'DROP TABLE IF EXISTS "{row[0]}"')
        _complete_export(connection, path, wanted)
        problems = _integrity_lines(connection, OrgSchema.from_connection(connection))
        if problems:
            raise ValueError(f"{path}: the org export fails its integrity check:\n  " + "\n  ".join(problems))
        return cls(connection, source=str(path))

    # -- queries -----------------------------------------------------------------------------
    def run_query(self, text: str, *, today: date | None = None) -> list[dict]:
        """Run one SOQL or SOSL query and return its records.

        Args:
            text: Query text, optionally inside a Markdown code fence. Text starting with
                ``FIND`` (after the fence is removed) is SOSL, anything else SOQL.
            today: Overrides `Org.today` for relative date literals in this query.

        Returns:
            List of record dicts (shapes in `soql.py` / `sosl.py` docstrings).

        Raises:
            SalesforceError: a mistake in the query, with a Salesforce error code and message.
            sqlite3.Error, OSError, or any other exception: an environment fault (the database
                cannot be read, a bug in the engine); never a mistake of the query's author.
        """
        query = strip_code_fences(text)
        day = today or self.today
        if not query:
            raise SalesforceError("MALFORMED_QUERY", "unexpected token: '<EOF>'")
        if re.match(r"(?i)^FIND\b", query):
            return run_sosl(self.connection, self.schema, query, day)
        return run_soql(self.connection, self.schema, query, day, self.count_quirk)

    def execute(self, text: str, *, today: date | None = None) -> str:
        """Agent-facing execution: the observation string for a query, as upstream's
        `SalesforceConnector.run_query` returned it (reference §1.4).

        A query error is the model's mistake and comes back as text the model reads; any
        other failure is an environment fault and propagates, so the item becomes an error
        instead of a scored answer to an observation that hid the fault.

        Args:
            text: Query text (see `run_query`).
            today: Overrides `Org.today` for relative date literals; pass the task's "today".

        Returns:
            ``"Salesforce instance output: " + str(records)`` on success, ``"ERRORCODE:
            message"`` on a query error (a `SalesforceError`).

        Raises:
            Exception: anything but a `SalesforceError` (``sqlite3.DatabaseError`` for an
                unreadable database, ``OSError``, an engine bug): an environment fault.
        """
        try:
            return OBSERVATION_PREFIX + str(self.run_query(text, today=today))
        except SalesforceError as error:
            return error.observation

    # -- inspection --------------------------------------------------------------------------
    def manifest(self) -> dict[str, int]:
        """Row count per object, in `OBJECTS` order (objects absent from the file count 0)."""
        counts: dict[str, int] = {}
        for name in OBJECTS:
            info = self.schema.objects.get(name.lower())
            counts[name] = (
                self.connection.execute(f'SELECT COUNT(*) FROM "{info.table}"').fetchone()[0] if info else 0
            )
        return counts

    def check_integrity(self, examples: int = 3) -> list[str]:
        """Integrity problems of the org; an empty list means it can be trusted.

        Checks, per object table present: every Id is set and unique; every lookup of
        `RELATIONSHIPS` (and the User ids of CaseHistory__c owner assignments) names an
        existing record of its parent; datetime, date, number and boolean fields hold values
        of their type (in the forms `from_sqlite` normalises to); picklists of
        `PICKLIST_VALUES` hold allowed values. Runs in SQL, a few milliseconds for the deep
        org.

        Args:
            examples: Offending records shown per check; the rest are counted.

        Returns:
            One line per offending record, ``table 'Case', column 'AccountId', record
            500…: <problem>. Fix: <fix>.`` (see `OrgProblem`), followed for a check with more
            offenders by a ``... and N more records …`` line.
        """
        return _integrity_lines(self.connection, self.schema, examples)

    def content_hash(self) -> str:
        """SHA-256 over every object table's rows in rowid order (determinism check)."""
        digest = hashlib.sha256()
        for name in OBJECTS:
            info = self.schema.objects.get(name.lower())
            if info is None:
                continue
            digest.update(name.encode())
            for row in self.connection.execute(f'SELECT * FROM "{info.table}" ORDER BY rowid'):
                digest.update(repr(row).encode())
        return digest.hexdigest()

    def save(self, path: str | Path) -> None:
        """Write a copy of the org (object tables and search indexes) to a new SQLite file.

        Raises:
            FileExistsError: When ``path`` already exists.
        """
        if Path(path).exists():
            raise FileExistsError(f"{path}: refusing to overwrite an existing file; pick a new path")
        # an open write transaction on the source makes backup() retry forever
        if self.connection.in_transaction:
            self.connection.commit()
        target = sqlite3.connect(str(path))
        self.connection.backup(target)
        target.close()

    def close(self) -> None:
        """Close the SQLite connection."""
        self.connection.close()

    def _default_today(self) -> date:
        info = self.schema.objects.get("case")
        latest = None
        if info is not None and "createddate" in info.fields:
            column = info.fields["createddate"].column
            latest = self.connection.execute(f'SELECT MAX("{column}") FROM "{info.table}"').fetchone()[0]
        if not latest:
            return date(2024, 1, 1)
        return parse_datetime(latest).date() + timedelta(days=1)

    def __repr__(self) -> str:
        return f"Org(source={self.source!r}, today={self.today.isoformat()})"


@dataclass(frozen=True)
class OrgProblem:
    """One integrity problem of an org.

    Attributes:
        table: The object table (Salesforce API name).
        column: The field.
        record: The offending record's Id (``rowid N`` when the Id itself is missing).
        problem: What is wrong, with the offending value.
        fix: How to repair the export.
    """

    table: str
    column: str
    record: str
    problem: str
    fix: str

    def __str__(self) -> str:
        return (
            f"table '{self.table}', column '{self.column}', record {self.record}: {self.problem}. "
            f"Fix: {self.fix}."
        )


@dataclass(frozen=True)
class _Check:
    """One integrity check: a query whose rows (record Id first) are the offenders."""

    table: str
    column: str
    sql: str
    describe: object
    fix: object
    keep: object = None
    """Optional Python filter on the rows (for checks SQL cannot express, e.g. numeric text)."""

    def rows(self, connection: sqlite3.Connection) -> list[tuple]:
        rows = connection.execute(self.sql).fetchall()
        return [r for r in rows if self.keep(r)] if self.keep else rows  # type: ignore[operator]

    def problem(self, row: tuple) -> OrgProblem:
        return OrgProblem(self.table, self.column, str(row[0]), self.describe(row), self.fix(row))  # type: ignore[operator]


def _show(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


_DATETIME_GLOB = (
    "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]+0000"
)


def _is_number_text(row: tuple) -> bool:
    """Keep a row whose value is not a finite number written as text."""
    try:
        number = float(str(row[1]).strip())
    except ValueError:
        return True
    return number != number or number in (float("inf"), float("-inf"))


def _type_check(
    table: str, object_name: str, column: str, ftype: str, allowed: frozenset | None
) -> _Check | None:
    """The check that ``column`` holds values of ``ftype`` (None for plain text fields)."""
    q = f'"{column}"'
    select = f'SELECT "Id", {q} FROM "{table}" WHERE {q} IS NOT NULL AND '
    if allowed is not None:
        values = ", ".join("'" + v.replace("'", "''") + "'" for v in sorted(allowed))
        return _Check(
            object_name, column, select + f"{q} NOT IN ({values}) ORDER BY rowid",
            lambda r: f"{_show(r[1])} is not one of the picklist values {', '.join(sorted(allowed))}",
            lambda r: "use the picklist's API values (the task rules filter on them)",
        )  # fmt: skip
    if ftype == "datetime":
        return _Check(
            object_name, column,
            select + f"NOT (typeof({q}) = 'text' AND {q} GLOB '{_DATETIME_GLOB}' AND "
            f"datetime(substr({q}, 1, 19), '+0 days') = replace(substr({q}, 1, 19), 'T', ' ')) "
            "ORDER BY rowid",
            lambda r: f"{_show(r[1])} is not a datetime",
            lambda r: "store datetimes as 'YYYY-MM-DDTHH:MM:SS.000+0000' (UTC; 'Z' and '+00:00' forms are "
            "converted on load)",
        )  # fmt: skip
    if ftype == "date":
        return _Check(
            object_name, column,
            select + f"NOT (typeof({q}) = 'text' AND length({q}) = 10 AND date({q}, '+0 days') = {q}) "
            "ORDER BY rowid",
            lambda r: f"{_show(r[1])} is not a date",
            lambda r: "store dates as 'YYYY-MM-DD'",
        )  # fmt: skip
    if ftype in NUMBER_TYPES:
        return _Check(
            object_name, column, select + f"typeof({q}) NOT IN ('integer', 'real') ORDER BY rowid",
            lambda r: f"{_show(r[1])} is not a number ({ftype} field)",
            lambda r: "store numbers as numbers, without currency signs or thousands separators",
            keep=_is_number_text,
        )  # fmt: skip
    if ftype == "boolean":
        return _Check(
            object_name, column, select + f"NOT (typeof({q}) = 'integer' AND {q} IN (0, 1)) ORDER BY rowid",
            lambda r: f"{_show(r[1])} is not a boolean",
            lambda r: "store booleans as 1/0 (or 'true'/'false', converted on load)",
        )  # fmt: skip
    return None


def _integrity_lines(connection: sqlite3.Connection, schema: OrgSchema, examples: int = 3) -> list[str]:
    """`Org.check_integrity` on a connection and its schema (usable before the Org exists)."""
    lines: list[str] = []
    for check in _integrity_checks(schema.objects):
        found = check.rows(connection)
        if not found:
            continue
        lines += [str(check.problem(row)) for row in found[:examples]]
        if len(found) > examples:
            lines.append(
                f"... and {len(found) - examples} more records with this problem in "
                f"table '{check.table}', column '{check.column}'"
            )
    return lines


def _integrity_checks(objects: dict) -> list[_Check]:
    """Every check of `Org.check_integrity`, for the object tables in ``objects``."""
    checks: list[_Check] = []
    for info in objects.values():
        table = info.table
        checks.append(
            _Check(
                info.name, "Id",
                f'SELECT \'rowid \' || rowid FROM "{table}" '
                'WHERE "Id" IS NULL OR "Id" = \'\' ORDER BY rowid',
                lambda r: "the record has no Id",
                lambda r: "give every row its Salesforce record Id",
            )
        )  # fmt: skip
        checks.append(
            _Check(
                info.name, "Id",
                f'SELECT "Id", COUNT(*) FROM "{table}" WHERE "Id" IS NOT NULL AND "Id" != \'\' '
                'GROUP BY "Id" HAVING COUNT(*) > 1 ORDER BY MIN(rowid)',
                lambda r: f"the Id appears {r[1]} times",
                lambda r: "export each record once (record Ids are unique)",
            )
        )  # fmt: skip
    for child, lookups in RELATIONSHIPS.items():
        child_info = objects.get(child.lower())
        if child_info is None:
            continue
        for field_name, parent in lookups.items():
            parent_info = objects.get(parent.lower())
            column = child_info.fields.get(field_name.lower())
            if parent_info is None or column is None:
                continue
            checks.append(
                _Check(
                    child, column.column,
                    f'SELECT c."Id", c."{column.column}" FROM "{child_info.table}" AS c '
                    f'LEFT JOIN "{parent_info.table}" AS p ON p."Id" = c."{column.column}" '
                    f'WHERE c."{column.column}" IS NOT NULL AND p."Id" IS NULL ORDER BY c.rowid',
                    lambda r, f=field_name, p=parent: (
                        f"{_show(r[1])} is not the Id of any {p} record (lookup {relationship_name(f)})"
                    ),
                    lambda r, c=child, f=field_name, p=parent: (
                        f"add {p} {_show(r[1])} to the export, or set {c}.{f} to NULL"
                    ),
                )
            )  # fmt: skip
    history, user = objects.get("casehistory__c"), objects.get("user")
    if history is not None and user is not None and "field__c" in history.fields:
        for name in ("OldValue__c", "NewValue__c"):
            column = history.fields.get(name.lower())
            if column is None:
                continue
            checks.append(
                _Check(
                    "CaseHistory__c", column.column,
                    f'SELECT h."Id", h."{column.column}" FROM "{history.table}" AS h '
                    f'LEFT JOIN "{user.table}" AS u ON u."Id" = h."{column.column}" '
                    f'WHERE h."{history.fields["field__c"].column}" = \'Owner Assignment\' '
                    f'AND h."{column.column}" IS NOT NULL AND u."Id" IS NULL ORDER BY h.rowid',
                    lambda r: f"owner assignment to {_show(r[1])}, not the Id of any User record",
                    lambda r: f"add User {_show(r[1])} to the export",
                )
            )  # fmt: skip
    for info in objects.values():
        picklists = PICKLIST_VALUES.get(info.name, {})
        for fld in info.fields.values():
            check = _type_check(info.table, info.name, fld.column, fld.type, picklists.get(fld.name))
            if check is not None:
                checks.append(check)
    return checks


_NON_TEXT_TYPES = frozenset({"reference", "datetime", "date", "boolean"}) | NUMBER_TYPES


def _complete_export(connection: sqlite3.Connection, path: Path, categories: tuple[str, ...]) -> None:
    """Check an export holds what ``categories`` need, map it onto our layout, normalise values.

    Raises:
        ValueError: A table or column a category needs is missing (all of them are named).
    """
    tables = {
        row[0].lower(): row[0]
        for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    columns_of = {
        name: {row[1].lower(): row[1] for row in connection.execute(f'PRAGMA table_info("{table}")')}
        for name, table in tables.items()
    }
    needed_by: dict[tuple[str, str], list[str]] = {}
    for category in categories:
        for object_name, fields in CATEGORY_NEEDS[category].items():
            for name in fields:
                needed_by.setdefault((object_name, name), []).append(category)
    missing_tables: dict[str, set[str]] = {}
    missing_columns: dict[tuple[str, str], list[str]] = {}
    for (object_name, name), cats in needed_by.items():
        if object_name.lower() not in tables:
            missing_tables.setdefault(object_name, set()).update(cats)
        elif (object_name, name) not in ORIGINAL_LAYOUT_DEFAULTS and name.lower() not in columns_of[
            object_name.lower()
        ]:
            missing_columns[(object_name, name)] = cats
    if missing_tables or missing_columns:
        order = list(CATEGORY_NEEDS)
        lines = [
            f"table '{t}' is missing (needed by {', '.join(sorted(c, key=order.index))})"
            for t, c in sorted(missing_tables.items())
        ] + [
            f"table '{t}' is missing column '{f}' (needed by {', '.join(c)})"
            for (t, f), c in sorted(missing_columns.items())
        ]
        raise ValueError(
            f"{path}: the export lacks what the selected CRMArena categories read:\n  "
            + "\n  ".join(lines)
            + "\nFix: export these objects and fields under their Salesforce API names, or run without "
            "the categories named (routing.yaml modes.<mode>.suites.crmarena.categories)."
        )
    for object_name, fields in OBJECTS.items():
        table = tables.get(object_name.lower())
        if table is None:
            connection.execute(
                f'CREATE TABLE "{object_name}" ('
                + ", ".join(f'"{f}" {_sql_type(field_type(object_name, f))}' for f in fields)
                + ")"
            )
            continue
        columns = columns_of[object_name.lower()]
        for field in fields:
            if field.lower() not in columns:
                sql_type = _sql_type(field_type(object_name, field))
                connection.execute(f'ALTER TABLE "{table}" ADD COLUMN "{field}" {sql_type}')
                columns[field.lower()] = field
                default = ORIGINAL_LAYOUT_DEFAULTS.get((object_name, field))
                if default is not None:
                    connection.execute(f'UPDATE "{table}" SET "{field}" = ?', (default,))
        if "name" in columns and "firstname" in columns and "lastname" in columns:
            connection.execute(
                f'UPDATE "{table}" SET "{columns["name"]}" = TRIM(COALESCE("{columns["firstname"]}", \'\') '
                f"|| ' ' || COALESCE(\"{columns['lastname']}\", '')) WHERE \"{columns['name']}\" IS NULL"
            )
        typed = [
            (columns[field.lower()], ftype)
            for field, ftype in FIELD_TYPES.get(object_name, {}).items()
            if ftype in _NON_TEXT_TYPES and field.lower() in columns
        ]
        if typed:  # empty strings (CSV-style exports) are NULL, in one pass over the table
            connection.execute(
                f'UPDATE "{table}" SET '
                + ", ".join(f'"{c}" = NULLIF("{c}", \'\')' for c, _ in typed)
                + " WHERE "
                + " OR ".join(f"\"{c}\" = ''" for c, _ in typed)
            )
        for column, ftype in typed:
            _normalise(connection, table, column, ftype)
    connection.commit()


def _normalise(connection: sqlite3.Connection, table: str, column: str, ftype: str) -> None:
    """Bring one column's values into our forms; values that cannot be read are left as they are
    (`Org.check_integrity` names them)."""
    q = f'"{column}"'
    if ftype == "boolean":
        connection.execute(
            f"UPDATE \"{table}\" SET {q} = CASE lower({q}) WHEN 'true' THEN 1 ELSE 0 END "
            f"WHERE typeof({q}) = 'text' AND lower({q}) IN ('true', 'false')"
        )
        return
    if ftype not in ("datetime", "date"):
        return
    values = connection.execute(
        f"SELECT rowid, {q} FROM \"{table}\" WHERE {q} IS NOT NULL AND NOT (typeof({q}) = 'text' AND "
        + (f"{q} GLOB '{_DATETIME_GLOB}')" if ftype == "datetime" else f"length({q}) = 10)")
    ).fetchall()
    updates = []
    for rowid, value in values:
        try:
            moment = parse_datetime(str(value))
        except ValueError:
            try:
                moment = datetime.fromisoformat(str(value))
            except ValueError:
                continue
        updates.append((format_datetime(moment) if ftype == "datetime" else moment.date().isoformat(), rowid))
    connection.executemany(f'UPDATE "{table}" SET {q} = ? WHERE rowid = ?', updates)
