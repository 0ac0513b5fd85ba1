"""SOQL subset on SQLite: name resolution, type checks, SQL emission and result shaping.

The parser lives in `soql_parser.py`; this module turns its AST into one parameterised SQLite
statement and shapes the rows like the original harness did (reference §1.4, §4.2).

Result shape (documented choices):

- A list of dicts, one per record, ``attributes`` never present. Keys are the canonical field API
  names (SOQL names are case-insensitive; ``select id from case`` gives ``Id``).
- Dotted relationship paths are nested dicts as Salesforce returns them:
  ``SELECT Account.Name FROM Case`` -> ``{'Account': {'Name': 'Jane Doe'}}``; a null lookup
  gives ``{'Account': None}``. A leading object name or alias is accepted and stripped
  (``OrderItem.Order.AccountId`` from ``OrderItem`` -> ``{'Order': {'AccountId': ...}}``).
- Aggregate queries return flat AggregateResult rows: grouped fields under their last path
  segment (``Account.ShippingState`` -> ``ShippingState``), aggregates and date functions under
  their alias or, without one, ``expr0``, ``expr1``… numbered in SELECT order.
- Columns that are null in every row are dropped (the original `run_query` did this); an empty
  result is ``[]``.
- ``SELECT COUNT() …``: Salesforce reports the count only in ``totalSize`` and the original
  harness therefore returned ``[]`` (reference §3b). **Deviation:** we return
  ``[{'totalSize': n}]`` so an agent can read the count; ``count_quirk=True`` restores ``[]``.
- Booleans come back as ``True``/``False``, currency and double fields as floats, datetimes as
  ``YYYY-MM-DDTHH:MM:SS.000+0000`` strings, dates as ``YYYY-MM-DD``.

Semantics copied from Salesforce: text comparisons and LIKE are case-insensitive; ``!=`` and
``NOT IN`` also match null values; 15-character ids are accepted and widened to 18; a
datetime field only accepts datetime literals (``2024-03-01T00:00:00Z``, ``+0000`` or
``.000+0000``) or relative date literals, a date field only date literals; AND and OR cannot be
mixed without parentheses. Date literals are evaluated against a configurable "today".

Salesforce's documented query limits (each answers with a Salesforce-style error, never a
Python exception; sources in brackets):

- A statement longer than 100,000 characters: ``MALFORMED_QUERY: SOQL statements can not be
  longer than 100000 characters.`` [limit: "SOQL and SOSL Limits for Search Queries",
  Salesforce App Limits Cheatsheet; wording: the API's fault string as reported in
  django-salesforce issue #164 and IlluminatedCloud issue #466].
- OFFSET above 2,000: ``NUMBER_OUTSIDE_VALID_RANGE: Maximum SOQL offset allowed is 2000``
  [SOQL and SOSL Reference, "OFFSET": "Requesting an offset greater than 2,000 results in a
  NUMBER_OUTSIDE_VALID_RANGE error"]; OFFSET inside a WHERE-clause subquery: MALFORMED_QUERY
  [same page].
- LIMIT and OFFSET take a non-negative integer literal (``LIMIT -1``, ``LIMIT 1.5``:
  ``MALFORMED_QUERY: unexpected token: '-1'``). ``SELECT COUNT() … LIMIT n`` counts up to n
  ["LIMIT": "You can use LIMIT with count() … to count up to the maximum specified"]. No row
  cap applies: the 50,000-row limit is an Apex governor limit ("Too many query rows"), not an
  API one, and the original harness queried through the REST API (``query_all``).
- Filters nested deeper than 100 levels or too long for the engine: ``QUERY_TOO_COMPLICATED:
  Query is either selecting too many fields or the filter conditions are too complicated.``
  [code: the limits cheatsheet above; wording: `errors.TOO_COMPLICATED`].
- Relative date literals must stay within Salesforce's valid dates (`sftime.date_literal_range`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import date

from .errors import TOO_COMPLICATED, SalesforceError
from .schema import ID_TYPES, NUMBER_TYPES, TEXT_TYPES, looks_like_id, to_18_char_id
from .sftime import FIXED_DATE_LITERALS, N_DATE_LITERALS, date_literal_range, format_datetime, parse_datetime
from .soql_parser import (
    AGGREGATE_FUNCTIONS,
    BoolOp,
    Comparison,
    FieldPath,
    FuncCall,
    Literal,
    NotOp,
    SelectQuery,
    parse_soql,
)
from .soql_schema import ObjectInfo, OrgSchema

__all__ = [
    "MAX_OFFSET",
    "MAX_QUERY_LENGTH",
    "drop_all_null_columns",
    "execute_sql",
    "run_soql",
    "shape_rows",
]

MAX_QUERY_LENGTH = 100_000
"""Longest SOQL statement Salesforce accepts, in characters (App Limits Cheatsheet)."""
MAX_OFFSET = 2000
"""Largest OFFSET Salesforce accepts (SOQL and SOSL Reference, "OFFSET")."""
_SQLITE_INT_MAX = 2**63 - 1
_SQLITE_LIMIT_ERRORS = ("expression tree is too large", "too many sql variables", "parser stack overflow",
                        "too many terms")  # fmt: skip
"""SQLite's own size limits, reached only by an oversized query (never by a fault)."""

# --------------------------------------------------------------------------------------------
# Compilation
# --------------------------------------------------------------------------------------------


@dataclass
class _Resolved:
    sql: str
    type: str
    key: tuple[str, ...]  # canonical output path, e.g. ("Account", "Name")
    presence: tuple[str, ...] = ()  # per relationship level: SQL of the parent's Id column
    label: str = ""  # the expression as written, for error messages


@dataclass
class _Output:
    key: tuple[str, ...]
    type: str
    presence: tuple[str, ...] = ()


def _invalid_field(name: str, entity: str, pos: int) -> SalesforceError:
    return SalesforceError(
        "INVALID_FIELD",
        f"No such column '{name}' on entity '{entity}'. If you are attempting to use a custom "
        "field, be sure to append the '__c' after the custom field name. Please reference your "
        "WSDL or the describe call for the appropriate names.",
        pos + 1,
    )


class _Scope:
    """Name resolution and LEFT JOINs for one SELECT (the main query or a semi-join)."""

    def __init__(self, compiler: _Compiler, obj: ObjectInfo, alias: str | None) -> None:
        self.compiler = compiler
        self.obj = obj
        self.alias = compiler.new_alias("t")
        self.prefixes = {obj.name.lower()} | ({alias.lower()} if alias else set())
        self.joins: dict[tuple[str, ...], tuple[str, ObjectInfo]] = {}
        self.join_sql: list[str] = []

    def resolve(self, path: FieldPath) -> _Resolved:
        parts = list(path.parts)
        if len(parts) > 1 and parts[0].lower() in self.prefixes and parts[0].lower() not in self.obj.lookups:
            parts = parts[1:]
        current, alias, key, presence = self.obj, self.alias, [], []
        for rel in parts[:-1]:
            lookup = current.lookups.get(rel.lower())
            if lookup is None:
                raise SalesforceError(
                    "INVALID_FIELD",
                    f"Didn't understand relationship '{rel}' in field path. If you are attempting "
                    "to use a custom relationship, be sure to append the '__r' after the custom "
                    "relationship name. Please reference your WSDL or the describe call for the "
                    "appropriate names.",
                    path.pos + 1,
                )
            lookup_field, rel_name, parent_name = lookup
            key.append(rel_name)
            join_key = tuple(key)
            if join_key not in self.joins:
                parent = self.compiler.schema.get(parent_name)
                join_alias = self.compiler.new_alias("j")
                id_column = parent.fields["id"].column
                self.join_sql.append(
                    f'LEFT JOIN "{parent.table}" AS {join_alias} '
                    f'ON {join_alias}."{id_column}" = {alias}."{lookup_field.column}"'
                )
                self.joins[join_key] = (join_alias, parent)
            alias, current = self.joins[join_key]
            presence.append(f'{alias}."{current.fields["id"].column}"')
        info = current.fields.get(parts[-1].lower())
        if info is None:
            raise _invalid_field(parts[-1], current.name, path.pos)
        return _Resolved(
            f'{alias}."{info.column}"', info.type, tuple(key + [info.name]), tuple(presence), path.text
        )


_DATE_FUNCTION_SQL = {
    "CALENDAR_MONTH": ("CAST(strftime('%m', substr({0}, 1, 19)) AS INTEGER)", "int"),
    "CALENDAR_YEAR": ("CAST(strftime('%Y', substr({0}, 1, 19)) AS INTEGER)", "int"),
    "CALENDAR_QUARTER": ("((CAST(strftime('%m', substr({0}, 1, 19)) AS INTEGER) + 2) / 3)", "int"),
    "DAY_IN_MONTH": ("CAST(strftime('%d', substr({0}, 1, 19)) AS INTEGER)", "int"),
    "DAY_IN_WEEK": ("(CAST(strftime('%w', substr({0}, 1, 19)) AS INTEGER) + 1)", "int"),
    "HOUR_IN_DAY": ("CAST(strftime('%H', substr({0}, 1, 19)) AS INTEGER)", "int"),
    "DAY_ONLY": ("substr({0}, 1, 10)", "date"),
}


class _Compiler:
    """Turns a SelectQuery into (sql, params, outputs)."""

    def __init__(self, schema: OrgSchema, today: date) -> None:
        self.schema = schema
        self.today = today
        self.params: list[object] = []
        self._alias_counter = 0

    def new_alias(self, prefix: str) -> str:
        self._alias_counter += 1
        return f"{prefix}{self._alias_counter}"

    # -- operands ----------------------------------------------------------------------------
    def operand(self, scope: _Scope, expr, allow_aggregate: bool) -> _Resolved:
        if isinstance(expr, FieldPath):
            return scope.resolve(expr)
        label = f"{expr.name}({expr.arg.text if expr.arg else ''})"
        if expr.name in AGGREGATE_FUNCTIONS:
            if not allow_aggregate:
                raise SalesforceError(
                    "MALFORMED_QUERY",
                    f"aggregate function {expr.name} is not allowed here",
                    expr.pos + 1,
                )
            if expr.arg is None:
                return _Resolved("COUNT(*)", "int", ("expr",), (), label)
            inner = scope.resolve(expr.arg)
            field_name = inner.key[-1]
            if expr.name in ("SUM", "AVG") and inner.type not in NUMBER_TYPES:
                raise SalesforceError(
                    "INVALID_FIELD",
                    f"field {field_name} does not support aggregate operator {expr.name}",
                    expr.pos + 1,
                )
            if expr.name in ("MIN", "MAX") and inner.type in ("boolean", "textarea"):
                raise SalesforceError(
                    "INVALID_FIELD",
                    f"field {field_name} does not support aggregate operator {expr.name}",
                    expr.pos + 1,
                )
            if expr.name == "COUNT":
                return _Resolved(f"COUNT({inner.sql})", "int", ("expr",), (), label)
            if expr.name == "COUNT_DISTINCT":
                return _Resolved(f"COUNT(DISTINCT {inner.sql})", "int", ("expr",), (), label)
            if expr.name == "AVG":
                return _Resolved(f"AVG({inner.sql})", "double", ("expr",), (), label)
            result_type = "double" if expr.name == "SUM" else inner.type
            return _Resolved(f"{expr.name}({inner.sql})", result_type, ("expr",), (), label)
        inner = scope.resolve(expr.arg)
        template, result_type = _DATE_FUNCTION_SQL[expr.name]
        needs_datetime = expr.name in ("DAY_ONLY", "HOUR_IN_DAY")
        if inner.type not in ("date", "datetime") or needs_datetime and inner.type != "datetime":
            raise SalesforceError(
                "INVALID_FIELD",
                f"Invalid field type for function {expr.name}: {inner.key[-1]} is of type {inner.type}",
                expr.pos + 1,
            )
        return _Resolved(template.format(inner.sql), result_type, ("expr",), (), label)

    # -- values ------------------------------------------------------------------------------
    def bind(self, target: _Resolved, literal: Literal) -> object:
        """Check a literal against the target's type and return the value to bind."""
        ftype, name = target.type, target.key[-1] if target.key != ("expr",) else target.label

        def wrong(expected: str, quoted: bool) -> SalesforceError:
            quote = "should be enclosed in quotes" if quoted else "should not be enclosed in quotes"
            return SalesforceError(
                "INVALID_FIELD",
                f"value of filter criterion for field '{name}' must be of type {expected} and {quote}",
                literal.pos + 1,
            )

        if ftype in ID_TYPES:
            if literal.kind != "string":
                raise wrong("id", True)
            value = str(literal.value)
            if not looks_like_id(value):
                raise SalesforceError(
                    "INVALID_QUERY_FILTER_OPERATOR", f"invalid ID field: {value}", literal.pos + 1
                )
            return to_18_char_id(value)
        if ftype in TEXT_TYPES:
            if literal.kind != "string":
                raise wrong("string", True)
            return literal.value
        if ftype == "boolean":
            if literal.kind != "boolean":
                raise wrong("boolean", False)
            return 1 if literal.value else 0
        if ftype in NUMBER_TYPES or ftype == "int":
            if literal.kind != "number":
                raise wrong("double" if ftype != "int" else "int", False)
            value = literal.value
            if isinstance(value, int) and abs(value) > _SQLITE_INT_MAX:
                return float(value)  # SQLite integers are 64-bit; compare as a double
            return value
        if ftype == "date":
            if literal.kind != "date":
                raise wrong("date", False)
            try:
                date.fromisoformat(str(literal.value))
            except ValueError as exc:
                raise wrong("date", False) from exc
            return literal.value
        if ftype == "datetime":
            if literal.kind != "datetime":
                raise wrong("dateTime", False)
            try:
                return format_datetime(parse_datetime(str(literal.value)))
            except ValueError as exc:
                raise wrong("dateTime", False) from exc
        if literal.kind != "string":
            raise wrong("string", True)
        return literal.value

    def placeholder(self, value: object) -> str:
        self.params.append(value)
        return "?"

    # -- conditions --------------------------------------------------------------------------
    def condition(self, scope: _Scope, node, allow_aggregate: bool) -> str:
        if isinstance(node, BoolOp):
            joined = f" {node.op} ".join(self.condition(scope, item, allow_aggregate) for item in node.items)
            return f"({joined})"
        if isinstance(node, NotOp):
            return f"(NOT {self.condition(scope, node.item, allow_aggregate)})"
        assert isinstance(node, Comparison)
        target = self.operand(scope, node.left, allow_aggregate)
        column = target.sql
        collate = " COLLATE NOCASE" if target.type in TEXT_TYPES else ""
        op, value = node.op, node.value
        if op in ("IN", "NOT_IN"):
            return self.in_condition(scope, target, op, value)
        assert isinstance(value, Literal)
        if op == "LIKE":
            if target.type not in TEXT_TYPES:
                raise SalesforceError(
                    "INVALID_QUERY_FILTER_OPERATOR",
                    f"invalid operator on {target.type} field: LIKE",
                    node.pos + 1,
                )
            return f"({column} LIKE {self.placeholder(value.value)} ESCAPE '\\')"
        if value.kind == "null":
            if op == "=":
                return f"({column} IS NULL)"
            if op == "!=":
                return f"({column} IS NOT NULL)"
            raise SalesforceError(
                "INVALID_QUERY_FILTER_OPERATOR", f"invalid operator for null value: {op}", node.pos + 1
            )
        if value.kind == "date_literal":
            return self.date_literal_condition(target, op, value)
        bound = self.bind(target, value)
        if op == "!=":
            return f"({column} IS NULL OR {column} <> {self.placeholder(bound)}{collate})"
        return f"({column} {op} {self.placeholder(bound)}{collate})"

    def date_literal_condition(self, target: _Resolved, op: str, value: Literal) -> str:
        name = target.key[-1] if target.key != ("expr",) else target.label
        known = value.value in FIXED_DATE_LITERALS or value.value in N_DATE_LITERALS
        if not known:  # an unquoted word that is no date literal (e.g. a field name)
            raise SalesforceError("MALFORMED_QUERY", f"unexpected token: '{value.raw}'", value.pos + 1)
        if target.type not in ("date", "datetime"):
            expected = "string" if target.type in TEXT_TYPES | ID_TYPES else target.type
            quote = (
                "should be enclosed in quotes" if expected == "string" else "should not be enclosed in quotes"
            )
            raise SalesforceError(
                "INVALID_FIELD",
                f"value of filter criterion for field '{name}' must be of type {expected} and {quote}",
                value.pos + 1,
            )
        start, end = date_literal_range(str(value.value), value.count, self.today)
        if target.type == "datetime":
            low, high = f"{start.isoformat()}T00:00:00.000+0000", f"{end.isoformat()}T00:00:00.000+0000"
        else:
            low, high = start.isoformat(), end.isoformat()
        column = target.sql
        if op == "=":
            return f"({column} >= {self.placeholder(low)} AND {column} < {self.placeholder(high)})"
        if op == "!=":
            return (
                f"({column} IS NULL OR {column} < {self.placeholder(low)} "
                f"OR {column} >= {self.placeholder(high)})"
            )
        bound = {"<": ("<", low), "<=": ("<", high), ">": (">=", high), ">=": (">=", low)}[op]
        return f"({column} {bound[0]} {self.placeholder(bound[1])})"

    def in_condition(self, scope: _Scope, target: _Resolved, op: str, value) -> str:
        column = target.sql
        collate = " COLLATE NOCASE" if target.type in TEXT_TYPES else ""
        if isinstance(value, SelectQuery):
            sub_sql = self.semi_join(value)
            if op == "IN":
                return f"({column} IN ({sub_sql}))"
            return f"({column} IS NULL OR {column} NOT IN ({sub_sql}))"
        literals = [lit for lit in value if lit.kind != "null"]
        has_null = len(literals) != len(value)
        for lit in literals:
            if lit.kind == "date_literal":
                raise SalesforceError(
                    "MALFORMED_QUERY", "date literals are not allowed in an IN list", lit.pos + 1
                )
        marks = ", ".join(self.placeholder(self.bind(target, lit)) for lit in literals)
        if op == "IN":
            parts = [f"{column}{collate} IN ({marks})"] if literals else []
            if has_null:
                parts.append(f"{column} IS NULL")
            return "(" + (" OR ".join(parts) or "0") + ")"
        if not literals:
            return f"({column} IS NOT NULL)" if has_null else "(1)"
        if has_null:
            return f"({column} IS NOT NULL AND {column}{collate} NOT IN ({marks}))"
        return f"({column} IS NULL OR {column}{collate} NOT IN ({marks}))"

    def semi_join(self, query: SelectQuery) -> str:
        obj = self.schema.get(query.object_name, query.object_pos + 1)
        scope = _Scope(self, obj, query.alias)
        if len(query.items) != 1 or not isinstance(query.items[0], FieldPath):
            raise SalesforceError(
                "MALFORMED_QUERY",
                "a semi-join or anti-join subquery must select exactly one Id or reference field",
                query.object_pos + 1,
            )
        if query.group_by or query.having or query.order_by:
            raise SalesforceError(
                "MALFORMED_QUERY",
                "GROUP BY, HAVING and ORDER BY are not allowed in a semi-join subquery",
                query.object_pos + 1,
            )
        if query.offset is not None:
            raise SalesforceError(
                "MALFORMED_QUERY",
                "OFFSET is not allowed in a WHERE clause subquery",
                query.object_pos + 1,
            )
        selected = scope.resolve(query.items[0])
        where = self.condition(scope, query.where, False) if query.where is not None else "1"
        sql = (
            f'SELECT {selected.sql} FROM "{obj.table}" AS {scope.alias} '
            f"{' '.join(scope.join_sql)} WHERE {where} AND {selected.sql} IS NOT NULL"
        )
        if query.limit is not None:
            sql += f" LIMIT {min(int(query.limit), _SQLITE_INT_MAX)}"
        return sql

    # -- statements --------------------------------------------------------------------------
    def compile(self, query: SelectQuery) -> tuple[str, list[_Output], bool]:
        """Return (sql, outputs, count_only)."""
        if query.offset is not None and query.offset > MAX_OFFSET:
            raise SalesforceError(
                "NUMBER_OUTSIDE_VALID_RANGE", f"Maximum SOQL offset allowed is {MAX_OFFSET}"
            )
        obj = self.schema.get(query.object_name, query.object_pos + 1)
        scope = _Scope(self, obj, query.alias)
        items = self.expand_fields(query.items, obj)
        count_only = any(isinstance(i, FuncCall) and i.name == "COUNT" and i.arg is None for i in items)
        if count_only and (len(items) != 1 or query.group_by or query.having is not None):
            raise SalesforceError(
                "MALFORMED_QUERY",
                "COUNT() must be the only element in the SELECT list and cannot be used with "
                "GROUP BY or HAVING",
                query.object_pos + 1,
            )
        aggregate = bool(query.group_by) or any(
            isinstance(i, FuncCall) and i.name in AGGREGATE_FUNCTIONS for i in items
        )
        select_sql: list[str] = []
        outputs: list[_Output] = []
        group_sql: list[str] = []
        group_keys: dict[str, str] = {}
        for expr in query.group_by:
            resolved = self.operand(scope, expr, False)
            group_sql.append(resolved.sql)
            group_keys[resolved.sql] = resolved.type
        expr_counter = 0
        seen_keys: set[tuple[str, ...]] = set()
        for item in items:
            resolved = self.operand(scope, item, aggregate)
            if isinstance(item, FuncCall):
                if aggregate and item.name not in AGGREGATE_FUNCTIONS and resolved.sql not in group_keys:
                    raise SalesforceError(
                        "MALFORMED_QUERY",
                        f"Field must be grouped or aggregated: {resolved.label}",
                        item.pos + 1,
                    )
                if item.alias:
                    key = (item.alias,)
                else:
                    key = (f"expr{expr_counter}",)
                    expr_counter += 1
                outputs.append(_Output(key, resolved.type))
            else:
                if aggregate and resolved.sql not in group_keys:
                    raise SalesforceError(
                        "MALFORMED_QUERY",
                        f"Field must be grouped or aggregated: {item.text}",
                        item.pos + 1,
                    )
                key = (resolved.key[-1],) if aggregate else resolved.key
                outputs.append(_Output(key, resolved.type, () if aggregate else resolved.presence))
            if key in seen_keys:
                raise SalesforceError(
                    "MALFORMED_QUERY",
                    f"duplicate field selected: {'.'.join(key)}",
                    getattr(item, "pos", 0) + 1,
                )
            seen_keys.add(key)
            select_sql.append(resolved.sql)
            select_sql.extend(outputs[-1].presence)
        where_sql = self.condition(scope, query.where, False) if query.where is not None else ""
        having_sql = ""
        if query.having is not None:
            if not aggregate:
                raise SalesforceError(
                    "MALFORMED_QUERY",
                    "HAVING requires GROUP BY or an aggregate function",
                    query.object_pos + 1,
                )
            having_sql = self.condition(scope, query.having, True)
        order_sql: list[str] = []
        for spec in query.order_by:
            resolved = self.operand(scope, spec.expr, aggregate)
            if (
                aggregate
                and not (isinstance(spec.expr, FuncCall) and spec.expr.name in AGGREGATE_FUNCTIONS)
                and resolved.sql not in group_keys
            ):
                raise SalesforceError(
                    "MALFORMED_QUERY",
                    f"Ordered field must be grouped or aggregated: {resolved.label}",
                    getattr(spec.expr, "pos", 0) + 1,
                )
            term = resolved.sql + (" COLLATE NOCASE" if resolved.type in TEXT_TYPES else "")
            term += " DESC" if spec.descending else " ASC"
            if spec.nulls:
                term += f" NULLS {spec.nulls}"
            order_sql.append(term)
        if not count_only:
            order_sql.extend(group_sql if aggregate else [f"{scope.alias}.rowid"])
        counted = count_only and (query.limit is not None or query.offset is not None)
        sql = (
            f"SELECT {'1' if counted else 'COUNT(*)' if count_only else ', '.join(select_sql)} "
            f'FROM "{obj.table}" AS {scope.alias} {" ".join(scope.join_sql)}'
        )
        if where_sql:
            sql += f" WHERE {where_sql}"
        if group_sql:
            sql += " GROUP BY " + ", ".join(group_sql)
        if having_sql:
            sql += f" HAVING {having_sql}"
        if order_sql:
            sql += " ORDER BY " + ", ".join(order_sql)
        if query.limit is not None or query.offset is not None:
            limit = min(int(query.limit), _SQLITE_INT_MAX) if query.limit is not None else -1
            sql += f" LIMIT {limit}"
            if query.offset is not None:
                sql += f" OFFSET {int(query.offset)}"
        if counted:  # COUNT() with LIMIT counts up to the limit (the rows the query returns)
            sql = f"SELECT COUNT(*) FROM ({sql})"
        return sql, outputs, count_only

    def expand_fields(self, items: list, obj: ObjectInfo) -> list:
        expanded = []
        for item in items:
            if isinstance(item, FuncCall) and item.name == "FIELDS":
                which = item.arg.parts[0] if item.arg else "ALL"
                for info in obj.field_order():
                    custom = info.name.endswith("__c")
                    if which == "ALL" or (which == "CUSTOM") == custom:
                        expanded.append(FieldPath((info.name,), item.pos))
            else:
                expanded.append(item)
        return expanded


# --------------------------------------------------------------------------------------------
# Execution and result shaping
# --------------------------------------------------------------------------------------------


_CONVERTED = frozenset({"boolean", "double", "currency", "percent", "int"})
"""Field types whose SQLite value :func:`_convert` changes (others are returned as they are)."""


def _convert(value: object, ftype: str) -> object:
    if value is None:
        return None
    if ftype == "boolean":
        return bool(value)
    if ftype in ("double", "currency", "percent"):
        return float(value)  # type: ignore[arg-type]
    if ftype == "int":
        return int(value)  # type: ignore[arg-type]
    return value


def shape_rows(rows: list[tuple], outputs: list[_Output]) -> list[dict]:
    """Turn SQLite rows into Salesforce-style (possibly nested) dicts."""
    if all(not output.presence and len(output.key) == 1 for output in outputs):
        # only top-level fields (most queries): one value per column, nothing nested
        plain = [(output.key[0], output.type) for output in outputs]
        if all(ftype not in _CONVERTED for _key, ftype in plain):
            keys = [key for key, _ftype in plain]
            return [dict(zip(keys, row, strict=True)) for row in rows]
        return [
            {key: _convert(value, ftype) for (key, ftype), value in zip(plain, row, strict=True)}
            for row in rows
        ]
    records: list[dict] = []
    for row in rows:
        record: dict = {}
        index = 0
        for output in outputs:
            value = _convert(row[index], output.type)
            index += 1
            presence = row[index : index + len(output.presence)]
            index += len(output.presence)
            target = record
            missing = False
            for level, rel in enumerate(output.key[:-1]):
                if target.get(rel, {}) is None:
                    missing = True
                    break
                if presence[level] is None:
                    target[rel] = None
                    missing = True
                    break
                target = target.setdefault(rel, {})
            if not missing:
                target[output.key[-1]] = value
        records.append(record)
    return records


def drop_all_null_columns(records: list[dict]) -> list[dict]:
    """Remove top-level keys whose value is None in every record (original `run_query` rule).

    Keys are collected over all records first, so records with different key sets (SOSL over
    several objects) never raise a KeyError (the original could, reference §3b).
    """
    keys: dict[str, bool] = {}
    for record in records:
        for key, value in record.items():
            keys[key] = keys.get(key, False) or value is not None
    empty = {key for key, has_value in keys.items() if not has_value}
    if not empty:
        return records
    return [{k: v for k, v in record.items() if k not in empty} for record in records]


def execute_sql(connection: sqlite3.Connection, sql: str, params: list[object]) -> list[tuple]:
    """Run one compiled statement and fetch all rows.

    Only SQLite's own size limits (expression depth, bound-variable count), which an
    oversized query reaches, become the model's ``QUERY_TOO_COMPLICATED`` error; every other
    database error is an environment fault and propagates unchanged.

    Raises:
        SalesforceError: QUERY_TOO_COMPLICATED.
        sqlite3.Error: any other database failure.
    """
    try:
        return connection.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if any(marker in str(exc).lower() for marker in _SQLITE_LIMIT_ERRORS):
            raise SalesforceError("QUERY_TOO_COMPLICATED", TOO_COMPLICATED) from exc
        raise


def run_soql(
    connection: sqlite3.Connection,
    schema: OrgSchema,
    text: str,
    today: date,
    count_quirk: bool = False,
) -> list[dict]:
    """Parse, translate and run one SOQL query.

    Args:
        connection: SQLite connection holding the org tables.
        schema: The org's schema (see `OrgSchema.from_connection`).
        text: SOQL text (code fences already stripped).
        today: Date that relative date literals (TODAY, LAST_N_DAYS:n …) refer to.
        count_quirk: Reproduce the original harness: ``SELECT COUNT()`` returns ``[]``.

    Returns:
        Records shaped as described in the module docstring.

    Raises:
        SalesforceError: a mistake in the query (MALFORMED_QUERY, INVALID_FIELD, INVALID_TYPE,
            INVALID_QUERY_FILTER_OPERATOR, NUMBER_OUTSIDE_VALID_RANGE, QUERY_TOO_COMPLICATED),
            worded like Salesforce.
        sqlite3.Error: the org's database failed (an environment fault, not the query's).
    """
    if len(text) > MAX_QUERY_LENGTH:
        raise SalesforceError(
            "MALFORMED_QUERY", f"SOQL statements can not be longer than {MAX_QUERY_LENGTH} characters."
        )
    query = parse_soql(text)
    compiler = _Compiler(schema, today)
    sql, outputs, count_only = compiler.compile(query)
    rows = execute_sql(connection, sql, compiler.params)
    if count_only:
        return [] if count_quirk else [{"totalSize": int(rows[0][0])}]
    return drop_all_null_columns(shape_rows(rows, outputs))
