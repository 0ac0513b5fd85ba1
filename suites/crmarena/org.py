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
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Literal

from .errors import SalesforceError
from .schema import (
    FIELD_TYPES,
    KEY_PREFIXES,
    OBJECTS,
    RELATIONSHIPS,
    REQUIRED_FIELDS,
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
        """Build a seeded synthetic org (see `generator.py` for the latent structure).

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
        from .generator import populate

        if path is not None and Path(path).exists():
            raise FileExistsError(f"{path}: refusing to overwrite an existing file; pick a new path")
        connection = sqlite3.connect(":memory:" if path is None else str(path), check_same_thread=False)
        create_tables(connection)
        populate(connection, seed, scale)
        connection.commit()
        return cls(connection, source=f"generated(seed={seed}, scale={scale})")

    @classmethod
    def from_sqlite(cls, path: str | Path) -> Org:
        """Load a user's SQLite export of an org into memory (the file is never modified).

        Tables and columns must carry the Salesforce API names. Columns in `REQUIRED_FIELDS`
        must exist; other `OBJECTS` fields that are missing are added as NULL columns (and
        ``Name`` is filled from FirstName/LastName). Datetime columns are normalised to
        ``YYYY-MM-DDTHH:MM:SS.000+0000``.

        Args:
            path: The SQLite file.

        Returns:
            The loaded Org.

        Raises:
            FileNotFoundError: When the file does not exist.
            ValueError: When the file is not SQLite or a required table/column is missing; the
                message names the file, the table/column and the fix.
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file (expected an SQLite export of the org)")
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
        _complete_export(connection, path)
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

    def check_integrity(self) -> list[str]:
        """Foreign-key problems of the org; an empty list means every reference resolves.

        Checks every lookup in `RELATIONSHIPS`, the User ids in CaseHistory__c owner
        assignments, and duplicate Ids. Each problem is one line naming object, record, field
        and the missing target (at most 5 lines per kind, then a count).
        """
        problems: list[str] = []

        def report(kind: str, rows: list[tuple], describe) -> None:
            for row in rows[:5]:
                problems.append(describe(row))
            if len(rows) > 5:
                problems.append(f"... and {len(rows) - 5} more {kind} problems")

        objects = self.schema.objects
        for child, lookups in RELATIONSHIPS.items():
            child_info = objects.get(child.lower())
            if child_info is None:
                continue
            for field_name, parent in lookups.items():
                parent_info = objects.get(parent.lower())
                column = child_info.fields.get(field_name.lower())
                if parent_info is None or column is None:
                    continue
                rows = self.connection.execute(
                    f'SELECT c."Id", c."{column.column}" FROM "{child_info.table}" AS c '
                    f'LEFT JOIN "{parent_info.table}" AS p ON p."Id" = c."{column.column}" '
                    f'WHERE c."{column.column}" IS NOT NULL AND p."Id" IS NULL ORDER BY c.rowid'
                ).fetchall()
                report(
                    f"{child}.{field_name}",
                    rows,
                    lambda r, c=child, f=field_name, p=parent: (
                        f"{c} {r[0]}: {f} = {r[1]} but no {p} has that Id "
                        f"(relationship {relationship_name(f)})"
                    ),
                )
        history = objects.get("casehistory__c")
        if history is not None and "user" in objects:
            for column in ("OldValue__c", "NewValue__c"):
                rows = self.connection.execute(
                    f'SELECT h."Id", h."{column}" FROM "{history.table}" AS h '
                    f'LEFT JOIN "{objects["user"].table}" AS u ON u."Id" = h."{column}" '
                    f'WHERE h."Field__c" = \'Owner Assignment\' AND h."{column}" IS NOT NULL '
                    'AND u."Id" IS NULL ORDER BY h.rowid'
                ).fetchall()
                report(
                    f"CaseHistory__c.{column}",
                    rows,
                    lambda r, c=column: f"CaseHistory__c {r[0]}: {c} = {r[1]} but no User has that Id",
                )
        for info in objects.values():
            rows = self.connection.execute(
                f'SELECT "Id", COUNT(*) FROM "{info.table}" GROUP BY "Id" HAVING COUNT(*) > 1'
            ).fetchall()
            report(f"{info.name}.Id", rows, lambda r, o=info.name: f"{o}: Id {r[0]} appears {r[1]} times")
        return problems

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


def _complete_export(connection: sqlite3.Connection, path: Path) -> None:
    """Validate a loaded export and fill in optional columns; normalise datetimes."""
    tables = {
        row[0].lower(): row[0]
        for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    for object_name, required in REQUIRED_FIELDS.items():
        table = tables.get(object_name.lower())
        if table is None:
            raise ValueError(
                f"{path}: table '{object_name}' is missing. Fix: export the {object_name} object "
                f"to a table named '{object_name}' (Salesforce API names), or use "
                "Org.generate(seed) for a synthetic org."
            )
        columns = {row[1].lower(): row[1] for row in connection.execute(f'PRAGMA table_info("{table}")')}
        for field in required:
            if field.lower() not in columns:
                raise ValueError(
                    f"{path}: table '{object_name}' is missing column '{field}', which the CRMArena "
                    f"tasks need. Fix: export the {object_name}.{field} field under its Salesforce "
                    "API name as a column of that table."
                )
        for field in OBJECTS[object_name]:
            if field.lower() not in columns:
                sql_type = _sql_type(field_type(object_name, field))
                connection.execute(f'ALTER TABLE "{table}" ADD COLUMN "{field}" {sql_type}')
                columns[field.lower()] = field
        if "name" in columns and "firstname" in columns and "lastname" in columns:
            connection.execute(
                f'UPDATE "{table}" SET "{columns["name"]}" = TRIM(COALESCE("{columns["firstname"]}", \'\') '
                f"|| ' ' || COALESCE(\"{columns['lastname']}\", '')) WHERE \"{columns['name']}\" IS NULL"
            )
        for field, ftype in FIELD_TYPES.get(object_name, {}).items():
            if ftype != "datetime":
                continue
            column = columns[field.lower()]
            values = connection.execute(
                f'SELECT rowid, "{column}" FROM "{table}" WHERE "{column}" IS NOT NULL'
            ).fetchall()
            updates = []
            for rowid, value in values:
                if isinstance(value, str) and _API_DATETIME_RE.match(value):
                    continue
                try:
                    normalised = format_datetime(parse_datetime(str(value)))
                except ValueError:
                    try:
                        normalised = format_datetime(datetime.fromisoformat(str(value)))
                    except ValueError as exc:
                        raise ValueError(
                            f"{path}: {object_name}.{field} value {value!r} (rowid {rowid}) is not a "
                            "datetime. Fix: store datetimes as 'YYYY-MM-DDTHH:MM:SS.000+0000'."
                        ) from exc
                updates.append((normalised, rowid))
            connection.executemany(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?', updates)
    connection.commit()
