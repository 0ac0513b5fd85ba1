"""Queryable schema of an org's SQLite database, resolved case-insensitively like SOQL.

Types come from `schema.FIELD_TYPES`; columns of a user's export that the schema does not know
are typed from their declared SQLite type. Lookups follow `schema.RELATIONSHIPS` and
`schema.relationship_name`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from .errors import SalesforceError
from .schema import FIELD_TYPES, OBJECTS, RELATIONSHIPS, relationship_name

__all__ = ["FieldInfo", "ObjectInfo", "OrgSchema"]

_SQLITE_TYPE_HINTS = (
    ("DATETIME", "datetime"),
    ("TIMESTAMP", "datetime"),
    ("DATE", "date"),
    ("BOOL", "boolean"),
    ("INT", "double"),
    ("REAL", "double"),
    ("NUM", "double"),
)


@dataclass(frozen=True)
class FieldInfo:
    """One queryable field: canonical API name, actual SQLite column and Salesforce type."""

    name: str
    column: str
    type: str


@dataclass
class ObjectInfo:
    """One sObject: its table, fields (by lower-case name) and lookups (by relationship name)."""

    name: str
    table: str
    fields: dict[str, FieldInfo]
    lookups: dict[str, tuple[FieldInfo, str, str]] = field(default_factory=dict)
    """lower relationship name -> (lookup field, relationship name, parent object name)."""

    def field_order(self) -> list[FieldInfo]:
        """Fields in table column order (used by FIELDS(ALL))."""
        return list(self.fields.values())


class OrgSchema:
    """Queryable objects of one SQLite database, resolved case-insensitively like SOQL."""

    def __init__(self, objects: dict[str, ObjectInfo]) -> None:
        self.objects = {name.lower(): info for name, info in objects.items()}

    @classmethod
    def from_connection(cls, connection: sqlite3.Connection) -> OrgSchema:
        """Build the schema from the tables present in ``connection`` that name an sObject."""
        tables = {
            row[0].lower(): row[0]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        objects: dict[str, ObjectInfo] = {}
        for object_name in OBJECTS:
            table = tables.get(object_name.lower())
            if table is None:
                continue
            declared = FIELD_TYPES.get(object_name, {})
            canonical = {name.lower(): name for name in OBJECTS[object_name]}
            canonical.update({name.lower(): name for name in declared})
            fields: dict[str, FieldInfo] = {}
            for _, column, sql_type, *_ in connection.execute(f'PRAGMA table_info("{table}")'):
                name = canonical.get(column.lower(), column)
                ftype = declared.get(name) or _type_from_sqlite(sql_type, name)
                fields[column.lower()] = FieldInfo(name, column, ftype)
            objects[object_name] = ObjectInfo(object_name, table, fields)
        for child, lookups in RELATIONSHIPS.items():
            if child not in objects:
                continue
            info = objects[child]
            for field_name, parent in lookups.items():
                lookup = info.fields.get(field_name.lower())
                if lookup is not None and parent in objects:
                    rel = relationship_name(field_name)
                    info.lookups[rel.lower()] = (lookup, rel, parent)
        return cls(objects)

    def get(self, name: str, pos: int | None = None) -> ObjectInfo:
        """Look an object up by name; raise Salesforce's INVALID_TYPE when it is unknown."""
        info = self.objects.get(name.lower())
        if info is None:
            raise SalesforceError(
                "INVALID_TYPE",
                f"sObject type '{name}' is not supported. If you are attempting to use a custom "
                "object, be sure to append the '__c' after the entity name. Please reference your "
                "WSDL or the describe call for the appropriate names.",
                pos,
            )
        return info


def _type_from_sqlite(sql_type: str, name: str) -> str:
    upper = (sql_type or "").upper()
    if name == "Id":
        return "id"
    for hint, ftype in _SQLITE_TYPE_HINTS:
        if hint in upper:
            return ftype
    return "string"
