"""Tokenizer and recursive-descent parser for the SOQL subset of the local org (reference §4.2).

Grammar (keywords case-insensitive)::

    query      := SELECT item ("," item)* FROM Object [alias]
                  [WHERE cond] [GROUP BY expr ("," expr)*] [HAVING cond]
                  [ORDER BY order ("," order)*] [LIMIT int] [OFFSET int]
    item       := COUNT "(" ")" | FIELDS "(" ALL|STANDARD|CUSTOM ")"
                | func "(" path ")" [alias] | path
    func       := COUNT | COUNT_DISTINCT | SUM | AVG | MIN | MAX
                | CALENDAR_MONTH | CALENDAR_YEAR | CALENDAR_QUARTER | DAY_ONLY
                | DAY_IN_MONTH | DAY_IN_WEEK | HOUR_IN_DAY
    cond       := term (AND term)* | term (OR term)*      -- mixing needs parentheses
    term       := NOT term | "(" cond ")" | operand comparison
    comparison := op value | [NOT] IN "(" (values | query) ")" | LIKE string
    value      := 'string' | number | TRUE | FALSE | NULL | 2024-03-01
                | 2024-03-01T00:00:00Z | DATE_LITERAL [":" int]
    order      := expr [ASC|DESC] [NULLS FIRST|LAST]

The parser only builds the AST; names are resolved and types checked by `soql.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import TOO_COMPLICATED, SalesforceError
from .soql_lexer import Token, decode_string, malformed, tokenize

__all__ = [
    "FieldPath",
    "FuncCall",
    "Literal",
    "Comparison",
    "BoolOp",
    "NotOp",
    "OrderSpec",
    "SelectQuery",
    "Parser",
    "parse_soql",
    "AGGREGATE_FUNCTIONS",
    "DATE_FUNCTIONS",
]

AGGREGATE_FUNCTIONS = frozenset({"COUNT", "COUNT_DISTINCT", "SUM", "AVG", "MIN", "MAX"})
DATE_FUNCTIONS = frozenset(
    {
        "CALENDAR_MONTH",
        "CALENDAR_YEAR",
        "CALENDAR_QUARTER",
        "DAY_ONLY",
        "DAY_IN_MONTH",
        "DAY_IN_WEEK",
        "HOUR_IN_DAY",
    }
)
_UNSUPPORTED_FUNCTIONS = frozenset(
    {
        "TOLABEL",
        "CONVERTCURRENCY",
        "FORMAT",
        "GROUPING",
        "FISCAL_YEAR",
        "FISCAL_QUARTER",
        "FISCAL_MONTH",
        "WEEK_IN_YEAR",
        "WEEK_IN_MONTH",
        "DAY_IN_YEAR",
        "CONVERTTIMEZONE",
        "DISTANCE",
        "GEOLOCATION",
    }
)
KEYWORDS = frozenset(
    {
        "SELECT",
        "FROM",
        "WHERE",
        "AND",
        "OR",
        "NOT",
        "IN",
        "LIKE",
        "GROUP",
        "BY",
        "HAVING",
        "ORDER",
        "ASC",
        "DESC",
        "NULLS",
        "FIRST",
        "LAST",
        "LIMIT",
        "OFFSET",
        "NULL",
        "TRUE",
        "FALSE",
        "INCLUDES",
        "EXCLUDES",
        "WITH",
        "USING",
        "FOR",
        "TYPEOF",
        "ROLLUP",
        "CUBE",
    }
)

# --------------------------------------------------------------------------------------------
# AST
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldPath:
    """A field reference as written, e.g. ``Account.Name`` -> ("Account", "Name")."""

    parts: tuple[str, ...]
    pos: int

    @property
    def text(self) -> str:
        """The path as written, dots included."""
        return ".".join(self.parts)


@dataclass(frozen=True)
class FuncCall:
    """An aggregate or date function call; ``arg`` is None only for ``COUNT()``."""

    name: str
    arg: FieldPath | None
    alias: str | None
    pos: int


@dataclass(frozen=True)
class Literal:
    """A value: kind is string/number/boolean/null/date/datetime/date_literal/list."""

    kind: str
    value: object
    pos: int
    raw: str = ""
    count: int | None = None  # n of LAST_N_DAYS:n and friends


@dataclass(frozen=True)
class Comparison:
    """``left op value``; op is one of = != < <= > >= IN NOT_IN LIKE."""

    left: FieldPath | FuncCall
    op: str
    value: Literal | SelectQuery | tuple[Literal, ...]
    pos: int


@dataclass(frozen=True)
class BoolOp:
    """AND/OR over two or more conditions."""

    op: str
    items: tuple


@dataclass(frozen=True)
class NotOp:
    """NOT over one condition."""

    item: object


@dataclass(frozen=True)
class OrderSpec:
    """One ORDER BY entry."""

    expr: FieldPath | FuncCall
    descending: bool
    nulls: str | None  # "FIRST", "LAST" or None (Salesforce default)


@dataclass
class SelectQuery:
    """A parsed SELECT statement."""

    items: list
    object_name: str
    object_pos: int
    alias: str | None = None
    where: object | None = None
    group_by: list = field(default_factory=list)
    having: object | None = None
    order_by: list[OrderSpec] = field(default_factory=list)
    limit: int | None = None
    offset: int | None = None


# --------------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------------


class Parser:
    """Recursive-descent parser over a token list (also used by the SOSL parser)."""

    MAX_NESTING = 100
    """Deepest nesting of parentheses, NOT and subqueries in one condition; deeper is
    Salesforce's QUERY_TOO_COMPLICATED (its limit is undocumented; real filters nest a few
    levels, and this keeps the parser and SQLite's expression depth in bounds)."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.index = 0
        self.depth = 0

    # -- token helpers -----------------------------------------------------------------------
    @property
    def current(self) -> Token:
        """The token at the cursor."""
        return self.tokens[self.index]

    def peek(self, ahead: int = 1) -> Token:
        """The token ``ahead`` positions after the cursor (eof at the end)."""
        return self.tokens[min(self.index + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        """Return the current token and move past it (never past eof)."""
        token = self.tokens[self.index]
        if token.kind != "eof":
            self.index += 1
        return token

    def at_keyword(self, *words: str) -> bool:
        """True when the current token is one of ``words`` (case-insensitive)."""
        return self.current.kind == "ident" and self.current.upper in words

    def accept_keyword(self, word: str) -> bool:
        """Consume ``word`` if it is next; return whether it was."""
        if self.at_keyword(word):
            self.advance()
            return True
        return False

    def expect_keyword(self, word: str) -> Token:
        """Consume ``word`` or raise MALFORMED_QUERY naming the unexpected token."""
        if not self.at_keyword(word):
            raise malformed(self.current)
        return self.advance()

    def expect_punct(self, char: str) -> Token:
        """Consume the punctuation ``char`` or raise MALFORMED_QUERY."""
        if self.current.kind != "punct" or self.current.text != char:
            raise malformed(self.current)
        return self.advance()

    def at_punct(self, char: str) -> bool:
        """True when the current token is the punctuation ``char``."""
        return self.current.kind == "punct" and self.current.text == char

    # -- statements --------------------------------------------------------------------------
    def parse_query(self) -> SelectQuery:
        """Parse one SELECT statement, stopping before ``)`` or end of input."""
        self.expect_keyword("SELECT")
        items = [self.parse_select_item()]
        while self.at_punct(","):
            self.advance()
            items.append(self.parse_select_item())
        self.expect_keyword("FROM")
        obj = self.current
        order_object = obj.upper == "ORDER" and not (
            self.peek().kind == "ident" and self.peek().upper == "BY"
        )
        if obj.kind != "ident" or "." in obj.text or (obj.upper in KEYWORDS and not order_object):
            raise malformed(obj)
        self.advance()
        query = SelectQuery(items=items, object_name=obj.text, object_pos=obj.pos)
        if self.current.kind == "ident" and self.current.upper not in KEYWORDS:
            query.alias = self.advance().text
        if self.at_keyword("USING", "WITH", "FOR", "TYPEOF"):
            raise SalesforceError(
                "MALFORMED_QUERY",
                f"{self.current.upper} clauses are not supported by this local org",
                self.current.pos + 1,
            )
        if self.accept_keyword("WHERE"):
            query.where = self.parse_condition()
        if self.accept_keyword("GROUP"):
            self.expect_keyword("BY")
            if self.at_keyword("ROLLUP", "CUBE"):
                raise SalesforceError(
                    "MALFORMED_QUERY", "GROUP BY ROLLUP/CUBE is not supported by this local org"
                )
            query.group_by += self.parse_comma_list(lambda: self.parse_operand(allow_aggregate=False))
        if self.accept_keyword("HAVING"):
            query.having = self.parse_condition()
        self.parse_order_limit_offset(query)
        return query

    def parse_order_limit_offset(self, target) -> None:
        """Optional ``ORDER BY ... LIMIT n OFFSET m`` into ``target.order_by/limit/offset``
        (the tail of a SOQL query and of a SOSL ``RETURNING Obj(...)`` clause)."""
        if self.accept_keyword("ORDER"):
            self.expect_keyword("BY")
            target.order_by += self.parse_comma_list(self.parse_order)
        if self.accept_keyword("LIMIT"):
            target.limit = self.parse_int()
        if self.accept_keyword("OFFSET"):
            target.offset = self.parse_int()

    def parse_comma_list(self, parse_item):
        """One or more items separated by commas, each read by ``parse_item()``."""
        items = [parse_item()]
        while self.at_punct(","):
            self.advance()
            items.append(parse_item())
        return items

    def parse_int(self) -> int:
        """Parse a non-negative integer literal (LIMIT/OFFSET); its range is checked by the
        caller (SOQL OFFSET at most 2,000, SOSL OFFSET at most 2,000, SOSL LIMIT capped).

        Raises:
            SalesforceError: MALFORMED_QUERY ``unexpected token: '-1'`` for anything but
                digits (a sign, a decimal point, a word).
        """
        token = self.current
        if token.kind != "number" or not token.text.isdigit():
            raise malformed(token)
        self.advance()
        return int(token.text)

    def parse_select_item(self):
        """Parse one SELECT item: field path, function call with alias, COUNT() or FIELDS(...)."""
        token = self.current
        if token.kind == "punct" and token.text == "(":
            raise SalesforceError(
                "MALFORMED_QUERY",
                "parent-to-child relationship subqueries are not supported by this local org; "
                "query the child object and filter on its lookup field instead",
                token.pos + 1,
            )
        if token.kind != "ident" or token.upper in KEYWORDS - {"FIRST", "LAST"}:
            raise malformed(token)
        if self.peek().kind == "punct" and self.peek().text == "(":
            name = token.upper
            if name == "FIELDS":
                self.advance()
                self.advance()
                which = self.current
                if which.kind != "ident" or which.upper not in {"ALL", "STANDARD", "CUSTOM"}:
                    raise malformed(which)
                self.advance()
                self.expect_punct(")")
                return FuncCall("FIELDS", FieldPath((which.upper,), which.pos), None, token.pos)
            call = self.parse_function_call()
            if self.current.kind == "ident" and self.current.upper not in KEYWORDS:
                alias = self.advance().text
                call = FuncCall(call.name, call.arg, alias, call.pos)
            return call
        self.advance()
        path = FieldPath(tuple(token.text.split(".")), token.pos)
        if self.current.kind == "ident" and self.current.upper not in KEYWORDS:
            following = self.peek()
            if (
                following.kind == "ident"
                and following.upper == "FROM"
                or following.kind == "punct"
                and following.text == ","
            ):
                raise SalesforceError(
                    "MALFORMED_QUERY", "only aggregate expressions use field aliasing", self.current.pos + 1
                )
            raise malformed(self.current)
        return path

    def parse_function_call(self) -> FuncCall:
        """Parse ``NAME(path)`` or ``COUNT()`` for the supported aggregate and date functions."""
        token = self.advance()
        name = token.upper
        if name in _UNSUPPORTED_FUNCTIONS:
            raise SalesforceError(
                "MALFORMED_QUERY", f"function {name} is not supported by this local org", token.pos + 1
            )
        if name not in AGGREGATE_FUNCTIONS and name not in DATE_FUNCTIONS:
            raise SalesforceError("MALFORMED_QUERY", f"Unknown function: {token.text}", token.pos + 1)
        self.expect_punct("(")
        if self.at_punct(")"):
            if name != "COUNT":
                raise malformed(self.current)
            self.advance()
            return FuncCall("COUNT", None, None, token.pos)
        arg_token = self.current
        if arg_token.kind != "ident" or arg_token.upper in KEYWORDS:
            raise malformed(arg_token)
        if self.peek().kind == "punct" and self.peek().text == "(":
            raise SalesforceError(
                "MALFORMED_QUERY",
                f"nested function calls are not supported: {token.text}({arg_token.text}(...))",
                arg_token.pos + 1,
            )
        self.advance()
        self.expect_punct(")")
        return FuncCall(name, FieldPath(tuple(arg_token.text.split(".")), arg_token.pos), None, token.pos)

    def parse_operand(self, allow_aggregate: bool = True):
        """Parse a field path or function call (aggregates only when ``allow_aggregate``)."""
        token = self.current
        if token.kind != "ident" or token.upper in KEYWORDS:
            raise malformed(token)
        if self.peek().kind == "punct" and self.peek().text == "(":
            call = self.parse_function_call()
            if call.name in AGGREGATE_FUNCTIONS and not allow_aggregate:
                raise SalesforceError(
                    "MALFORMED_QUERY", "Grouped field should not be aggregated", call.pos + 1
                )
            return call
        self.advance()
        return FieldPath(tuple(token.text.split(".")), token.pos)

    def parse_order(self) -> OrderSpec:
        """Parse one ORDER BY entry with optional ASC/DESC and NULLS FIRST/LAST."""
        expr = self.parse_operand()
        descending = False
        if self.accept_keyword("DESC"):
            descending = True
        else:
            self.accept_keyword("ASC")
        nulls = None
        if self.accept_keyword("NULLS"):
            if not self.at_keyword("FIRST", "LAST"):
                raise malformed(self.current)
            nulls = self.advance().upper
        return OrderSpec(expr, descending, nulls)

    # -- conditions --------------------------------------------------------------------------
    def parse_condition(self):
        """Parse AND-chains or OR-chains; mixing them without parentheses is an error, as in
        Salesforce."""
        first = self.parse_term()
        if not self.at_keyword("AND", "OR"):
            return first
        op = self.current.upper
        items = [first]
        while self.at_keyword("AND", "OR"):
            if self.current.upper != op:
                raise malformed(self.current)
            self.advance()
            items.append(self.parse_term())
        return BoolOp(op, tuple(items))

    def nested(self) -> None:
        """Enter one nesting level (NOT, parentheses, subquery).

        Raises:
            SalesforceError: QUERY_TOO_COMPLICATED beyond `MAX_NESTING` levels.
        """
        self.depth += 1
        if self.depth > self.MAX_NESTING:
            raise SalesforceError("QUERY_TOO_COMPLICATED", TOO_COMPLICATED, self.current.pos + 1)

    def parse_term(self):
        """Parse NOT, a parenthesised condition or one comparison."""
        if self.accept_keyword("NOT"):
            self.nested()
            term = NotOp(self.parse_term())
            self.depth -= 1
            return term
        if self.at_punct("("):
            self.advance()
            self.nested()
            inner = self.parse_condition()
            self.depth -= 1
            self.expect_punct(")")
            return inner
        left = self.parse_operand()
        token = self.current
        if token.kind == "op":
            self.advance()
            op = "!=" if token.text == "<>" else token.text
            return Comparison(left, op, self.parse_value(), token.pos)
        if self.at_keyword("NOT") and self.peek().kind == "ident" and self.peek().upper == "IN":
            self.advance()
            self.advance()
            return Comparison(left, "NOT_IN", self.parse_in_values(), token.pos)
        if self.accept_keyword("IN"):
            return Comparison(left, "IN", self.parse_in_values(), token.pos)
        if self.accept_keyword("LIKE"):
            value = self.current
            if value.kind != "string":
                raise malformed(value)
            self.advance()
            return Comparison(
                left,
                "LIKE",
                Literal("string", decode_string(value.text, True), value.pos, value.text),
                token.pos,
            )
        if self.at_keyword("INCLUDES", "EXCLUDES"):
            raise SalesforceError(
                "MALFORMED_QUERY",
                "INCLUDES/EXCLUDES apply to multi-select picklists; this org has none",
                token.pos + 1,
            )
        raise malformed(token)

    def parse_in_values(self):
        """Parse the parenthesised value list or semi-join subquery after IN / NOT IN."""
        self.expect_punct("(")
        if self.at_keyword("SELECT"):
            self.nested()
            sub = self.parse_query()
            self.depth -= 1
            self.expect_punct(")")
            return sub
        values = [self.parse_value()]
        while self.at_punct(","):
            self.advance()
            values.append(self.parse_value())
        self.expect_punct(")")
        return tuple(values)

    def parse_value(self) -> Literal:
        """Parse a literal: string, number, boolean, NULL, date, datetime or date literal."""
        token = self.current
        kind = token.kind
        if kind == "string":
            self.advance()
            return Literal("string", decode_string(token.text), token.pos, token.text)
        if kind == "number":
            self.advance()
            number = float(token.text) if "." in token.text else int(token.text)
            return Literal("number", number, token.pos, token.text)
        if kind in ("date", "datetime"):
            self.advance()
            return Literal(kind, token.text, token.pos, token.text)
        if kind == "ident":
            word = token.upper
            if word in ("TRUE", "FALSE"):
                self.advance()
                return Literal("boolean", word == "TRUE", token.pos, token.text)
            if word == "NULL":
                self.advance()
                return Literal("null", None, token.pos, token.text)
            if word not in KEYWORDS:
                self.advance()
                count = None
                if self.at_punct(":"):
                    self.advance()
                    number = self.current
                    if number.kind != "number" or not number.text.isdigit():
                        raise malformed(number)
                    self.advance()
                    count = int(number.text)
                return Literal("date_literal", word, token.pos, token.text, count)
        raise malformed(token)


def parse_soql(text: str) -> SelectQuery:
    """Parse a complete SOQL statement.

    Args:
        text: Query text without code fences.

    Returns:
        The SelectQuery AST.

    Raises:
        SalesforceError: MALFORMED_QUERY with Salesforce's ``unexpected token: 'X'`` wording.
    """
    parser = Parser(tokenize(text))
    query = parser.parse_query()
    if parser.current.kind != "eof":
        raise malformed(parser.current)
    return query
