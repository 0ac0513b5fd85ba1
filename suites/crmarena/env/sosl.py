"""SOSL subset over SQLite FTS5 (reference §4.2).

Supported::

    FIND {terms} | FIND 'terms'
        [IN ALL FIELDS | IN NAME FIELDS | IN EMAIL FIELDS | IN PHONE FIELDS]
        [RETURNING Obj [(field, ... [WHERE cond] [ORDER BY ...] [LIMIT n] [OFFSET n])], ...]
        [LIMIT n]

Search terms: words and "quoted phrases", implicit AND between terms, ``AND``, ``OR``,
``AND NOT``, parentheses, and a trailing ``*`` wildcard (``run*``). ``?`` (one character) is
approximated by a prefix match. Matching is token based (FTS5 ``unicode61``); a bare word is
reduced by light English suffix stripping and matched as a prefix (``shoes`` -> ``shoe*``,
``running`` -> ``run*``), which stands in for Salesforce's lemmatised search, while quoted
phrases match exactly. Without ORDER BY, each object's
records are ranked by bm25 relevance.

Result shape (documented choice): one flat list of records in RETURNING order, each record a
dict whose first key ``type`` names its object (``{'type': 'Product2', 'Id': …, 'Name': …}``),
so a mixed result stays readable after ``attributes`` is dropped. All-null columns are dropped
per object, which avoids the KeyError the original drop step could raise on mixed objects
(reference §3b). Without RETURNING, every searchable object is searched and only Ids returned.

Salesforce's documented SOSL limits [SOQL and SOSL Reference, "SOSL Syntax", "LIMIT n",
"OFFSET n"]: at most 2,000 rows in all (a larger LIMIT is capped); OFFSET above 2,000 is
``MALFORMED_SEARCH: SOSL offset should be between 0 to 2000``; search terms longer than
4,000 characters lose their logical operators (AND and AND NOT become OR), longer than
10,000 characters return no rows.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from datetime import date

from .errors import SalesforceError
from .schema import EMAIL_FIELDS, NAME_FIELDS, PHONE_FIELDS, SEARCH_FIELDS
from .soql import MAX_OFFSET, _Compiler, _Output, _Scope, drop_all_null_columns, execute_sql, shape_rows
from .soql_lexer import tokenize
from .soql_parser import FieldPath, OrderSpec, Parser
from .soql_schema import OrgSchema

__all__ = ["run_sosl", "build_search_index", "fts_table"]

_SCOPE_FIELDS = {"ALL": SEARCH_FIELDS, "NAME": NAME_FIELDS, "EMAIL": EMAIL_FIELDS, "PHONE": PHONE_FIELDS}
_DEFAULT_LIMIT = 2000
"""Most rows one search returns, and the cap on LIMIT (API 28.0 and later)."""
OPERATORS_DROPPED_ABOVE = 4000
"""Search terms longer than this many characters lose their logical operators."""
NO_ROWS_ABOVE = 10_000
"""Search terms longer than this many characters return no rows."""


def fts_table(object_name: str) -> str:
    """Name of the FTS5 table that indexes ``object_name``."""
    return f"_fts_{object_name}"


def build_search_index(connection: sqlite3.Connection, schema: OrgSchema) -> None:
    """(Re)build one FTS5 table per searchable object present in ``schema``.

    Each table holds ``Id`` (unindexed) plus the object's `SEARCH_FIELDS` columns that exist.
    """
    for object_name, fields in SEARCH_FIELDS.items():
        info = schema.objects.get(object_name.lower())
        table = fts_table(object_name)
        connection.execute(f'DROP TABLE IF EXISTS "{table}"')
        if info is None:
            continue
        present = [info.fields[f.lower()] for f in fields if f.lower() in info.fields]
        columns = ", ".join(f'"{f.name}"' for f in present)
        connection.execute(
            f'CREATE VIRTUAL TABLE "{table}" USING fts5("Id" UNINDEXED, {columns}, '
            "tokenize='unicode61 remove_diacritics 2')"
        )
        source_columns = ", ".join(f'"{f.column}"' for f in present)
        connection.execute(
            f'INSERT INTO "{table}" ("Id", {columns}) '
            f'SELECT "{info.fields["id"].column}", {source_columns} FROM "{info.table}" ORDER BY rowid'
        )


@dataclass
class _Returning:
    object_name: str
    pos: int
    fields: list[FieldPath] = field(default_factory=list)
    where: object | None = None
    order_by: list[OrderSpec] = field(default_factory=list)
    limit: int | None = None
    offset: int | None = None


def _malformed_search(message: str) -> SalesforceError:
    return SalesforceError("MALFORMED_SEARCH", message)


def _split_find(text: str) -> tuple[str, str]:
    """Return (search terms, rest of the statement) of ``FIND {…} …`` / ``FIND '…' …``."""
    body = text.strip()
    match = re.match(r"(?is)^FIND\s*", body)
    if not match:
        raise _malformed_search("a SOSL search must start with FIND")
    body = body[match.end() :]
    if not body or body[0] not in "{'":
        raise _malformed_search("search terms must be enclosed in braces: FIND {terms}")
    closing = "}" if body[0] == "{" else "'"
    index = 1
    while index < len(body):
        if body[index] == "\\":
            index += 2
            continue
        if body[index] == closing:
            return body[1:index], body[index + 1 :]
        index += 1
    raise _malformed_search(f"missing closing '{closing}' after the search terms")


def search_stem(token: str) -> str:
    """Light English suffix stripping for prefix matching (``batteries`` -> ``batter``).

    Only strips when at least 3 characters remain; a doubled final consonant left by ``-ing`` /
    ``-ed`` is undoubled (``running`` -> ``run``).
    """
    word = token.lower()
    for suffix in ("ies", "ing", "ed", "es", "s", "y"):
        if not word.endswith(suffix) or len(word) - len(suffix) < 3:
            continue
        if suffix == "s" and word.endswith("ss"):
            continue
        if suffix == "es" and not word[:-2].endswith(("s", "x", "z", "ch", "sh")):
            continue
        stem = word[: -len(suffix)]
        if suffix in ("ing", "ed") and len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "aeiouls":
            stem = stem[:-1]
        return stem
    return word


_TERM_RE = re.compile(r'\s*(?:(?P<phrase>"[^"]*")|(?P<paren>[()])|(?P<word>[^\s()"]+))')


def to_fts_query(terms: str) -> str:
    """Translate SOSL search terms into an FTS5 MATCH expression.

    Terms longer than `OPERATORS_DROPPED_ABOVE` characters are searched with every logical
    operator removed and OR between the terms, as Salesforce documents.

    Raises:
        SalesforceError: MALFORMED_SEARCH when no term has at least two characters.
    """
    operators = len(terms) <= OPERATORS_DROPPED_ABOVE
    parts: list[str] = []
    position = 0
    longest = 0
    pending_and = False
    terms = terms.replace("\\", " ")
    while position < len(terms):
        match = _TERM_RE.match(terms, position)
        if not match or match.end() == position:
            break
        position = match.end()
        if match.group("paren"):
            parts.append(match.group("paren"))
            continue
        raw = match.group("phrase") or match.group("word")
        upper = raw.upper()
        if not operators and match.group("word") and upper in ("AND", "OR", "NOT"):
            continue
        if match.group("word") and upper in ("AND", "OR"):
            if upper == "AND":
                pending_and = True
                continue
            parts.append("OR")
            continue
        if match.group("word") and upper == "NOT":
            parts.append("NOT")
            pending_and = False
            continue
        if pending_and:
            pending_and = False
        prefix = raw.endswith("*") or raw.endswith("?")
        tokens = re.findall(r"[^\W_]+", raw.strip('"'), flags=re.UNICODE)
        if not tokens:
            continue
        longest = max(longest, max(len(t) for t in tokens))
        if not operators and parts:
            parts.append("OR")
        if match.group("word") and len(tokens) == 1 and not prefix:
            parts.append('"' + search_stem(tokens[0]) + '"*')
        else:
            parts.append('"' + " ".join(tokens) + '"' + ("*" if prefix else ""))
    if longest < 2:
        raise _malformed_search(f"search term must be longer than one character: {terms.strip()}")
    return " ".join(parts)


def _parse_rest(rest: str) -> tuple[str, list[_Returning] | None, int | None]:
    parser = Parser(tokenize(rest))
    scope_name = "ALL"
    if parser.accept_keyword("IN"):
        token = parser.current
        if token.kind != "ident" or token.upper not in _SCOPE_FIELDS:
            raise _malformed_search(f"unexpected token: '{token.text or '<EOF>'}'")
        scope_name = parser.advance().upper
        if not parser.accept_keyword("FIELDS"):
            raise _malformed_search(f"unexpected token: '{parser.current.text or '<EOF>'}'")
    returning: list[_Returning] | None = None
    if parser.at_keyword("RETURNING"):
        parser.advance()
        returning = [_parse_returning(parser)]
        while parser.at_punct(","):
            parser.advance()
            returning.append(_parse_returning(parser))
    limit = None
    if parser.accept_keyword("LIMIT"):
        limit = parser.parse_int()
    if parser.current.kind != "eof":
        raise _malformed_search(f"unexpected token: '{parser.current.text}'")
    return scope_name, returning, limit


def _parse_returned_field(parser: Parser) -> FieldPath:
    """One field of a RETURNING list: a field path (functions are not supported there)."""
    token = parser.current
    field_path = parser.parse_operand(allow_aggregate=False)
    if not isinstance(field_path, FieldPath):
        raise _malformed_search(f"unexpected token: '{token.text}('")
    return field_path


def _parse_returning(parser: Parser) -> _Returning:
    token = parser.current
    if token.kind != "ident" or "." in token.text:
        raise _malformed_search(f"unexpected token: '{token.text or '<EOF>'}'")
    parser.advance()
    spec = _Returning(token.text, token.pos)
    if not parser.at_punct("("):
        return spec
    parser.advance()
    spec.fields += parser.parse_comma_list(lambda: _parse_returned_field(parser))
    if parser.accept_keyword("WHERE"):
        spec.where = parser.parse_condition()
    parser.parse_order_limit_offset(spec)
    parser.expect_punct(")")
    return spec


def run_sosl(connection: sqlite3.Connection, schema: OrgSchema, text: str, today: date) -> list[dict]:
    """Run one SOSL search.

    Args:
        connection: SQLite connection with the org tables and their FTS5 indexes
            (`build_search_index`).
        schema: The org's schema.
        text: ``FIND …`` text (code fences already stripped).
        today: Date for relative date literals in RETURNING … WHERE.

    Returns:
        Records as described in the module docstring.

    Raises:
        SalesforceError: MALFORMED_SEARCH for bad search syntax or an OFFSET above 2,000,
            INVALID_TYPE for an object that is not searchable, INVALID_FIELD / MALFORMED_QUERY
            for bad RETURNING clauses.
        sqlite3.Error: the org's database failed (an environment fault, not the query's).
    """
    terms, rest = _split_find(text)
    match_expr = to_fts_query(terms)
    scope_name, returning, overall_limit = _parse_rest(rest)
    for spec in returning or ():
        if spec.offset is not None and spec.offset > MAX_OFFSET:
            raise _malformed_search(f"SOSL offset should be between 0 to {MAX_OFFSET}")
    if len(terms) > NO_ROWS_ABOVE:
        return []
    scope_fields = _SCOPE_FIELDS[scope_name]
    if returning is None:
        returning = [_Returning(name, 0) for name in SEARCH_FIELDS if name.lower() in schema.objects]
    remaining = min(overall_limit or _DEFAULT_LIMIT, _DEFAULT_LIMIT)
    results: list[dict] = []
    for spec in returning:
        info = schema.get(spec.object_name, spec.pos + 1)
        if info.name not in SEARCH_FIELDS:
            raise SalesforceError(
                "INVALID_TYPE", f"entity type {info.name} does not support search", spec.pos + 1
            )
        columns = [f for f in scope_fields.get(info.name, ()) if f.lower() in info.fields]
        if not columns or remaining <= 0:
            continue
        compiler = _Compiler(schema, today)
        scope = _Scope(compiler, info, None)
        fields = spec.fields or [FieldPath(("Id",), spec.pos)]
        outputs: list[_Output] = []
        select_sql: list[str] = []
        for path in fields:
            resolved = scope.resolve(path)
            outputs.append(_Output(resolved.key, resolved.type, resolved.presence))
            select_sql.append(resolved.sql)
            select_sql.extend(resolved.presence)
        table = fts_table(info.name)
        column_filter = "{" + " ".join(columns) + "} : "
        conditions = [f'"{table}" MATCH ?']
        compiler.params.append(column_filter + "(" + match_expr + ")")
        if spec.where is not None:
            conditions.append(compiler.condition(scope, spec.where, False))
        order_sql = []
        for order in spec.order_by:
            resolved = compiler.operand(scope, order.expr, False)
            term = resolved.sql + (" DESC" if order.descending else " ASC")
            if order.nulls:
                term += f" NULLS {order.nulls}"
            order_sql.append(term)
        order_sql += [f'bm25("{table}")', f"{scope.alias}.rowid"]
        limit = min(spec.limit if spec.limit is not None else remaining, remaining)
        sql = (
            f'SELECT {", ".join(select_sql)} FROM "{table}" '
            f'JOIN "{info.table}" AS {scope.alias} '
            f'ON {scope.alias}."{info.fields["id"].column}" = "{table}"."Id" '
            f"{' '.join(scope.join_sql)} WHERE {' AND '.join(conditions)} "
            f"ORDER BY {', '.join(order_sql)} LIMIT {int(limit)} OFFSET {int(spec.offset or 0)}"
        )
        try:
            rows = execute_sql(connection, sql, compiler.params)
        except sqlite3.OperationalError as exc:  # FTS5 refused the MATCH expression built from the terms
            if "fts5: syntax error" in str(exc).lower():
                raise _malformed_search(f"invalid search terms: {terms.strip()}") from exc
            raise
        records = drop_all_null_columns(shape_rows(rows, outputs))
        results.extend({"type": info.name, **record} for record in records)
        remaining -= len(records)
    return results
