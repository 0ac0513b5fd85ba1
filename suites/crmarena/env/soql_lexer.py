"""Tokenizer of the SOQL subset (also used for SOSL RETURNING clauses), reference §4.2.

Tokens: identifiers (dotted paths kept whole, e.g. ``Account.Name``), quoted strings with SOQL
escapes, numbers, unquoted date (``2024-03-01``) and datetime literals (``…Z``, ``…+0000``,
``….000+0000``, ``…-04:00``), comparison operators and ``( ) , :``. A datetime without a time
zone is rejected, as Salesforce does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import SalesforceError

__all__ = ["Token", "tokenize", "decode_string", "malformed"]

_TOKEN_RE = re.compile(
    r"""
     (?P<ws>\s+)
    |(?P<datetime>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:?\d{2}))
    |(?P<zoneless>\d{4}-\d{2}-\d{2}T[\d:.]*)
    |(?P<date>\d{4}-\d{2}-\d{2})(?![\dT:])
    |(?P<number>-?\d+(?:\.\d+)?)(?![A-Za-z_])
    |(?P<string>'(?:[^'\\]|\\.)*')
    |(?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
    |(?P<op><=|>=|!=|<>|=|<|>)
    |(?P<punct>[(),:])
    """,
    re.VERBOSE,
)

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


@dataclass(frozen=True)
class Token:
    """One lexical token: kind is ident/string/number/date/datetime/op/punct/eof."""

    kind: str
    text: str
    pos: int  # 0-based offset in the query text

    @property
    def upper(self) -> str:
        """The token text in upper case (keywords are case-insensitive)."""
        return self.text.upper()


def malformed(token: Token | None, text: str | None = None) -> SalesforceError:
    """MALFORMED_QUERY error in Salesforce's ``unexpected token: 'X'`` wording."""
    if text is not None:
        shown = text
    else:
        shown = token.text if token is not None and token.kind != "eof" else "<EOF>"
    column = token.pos + 1 if token else None
    return SalesforceError("MALFORMED_QUERY", f"unexpected token: '{shown}'", column)


def tokenize(text: str) -> list[Token]:
    """Split SOQL text into tokens (whitespace dropped, an ``eof`` token appended).

    Raises:
        SalesforceError: MALFORMED_QUERY on a character that starts no token (for example an
            unterminated string).
    """
    tokens: list[Token] = []
    append = tokens.append
    pos = 0
    # one scan in C (a hot loop: thousands of queries with long IN lists at task generation);
    # a match that does not start where the last one ended skipped a character no token starts
    for match in _TOKEN_RE.finditer(text):
        if match.start() != pos:
            break
        kind = match.lastgroup or ""
        if kind == "zoneless":
            raise SalesforceError(
                "MALFORMED_QUERY",
                f"unexpected token: '{match.group()}' (a datetime literal needs a time zone, "
                f"e.g. {match.group()[:10]}T00:00:00Z)",
                pos + 1,
            )
        if kind != "ws":
            append(Token(kind, match.group(), pos))
        pos = match.end()
    if pos < len(text):
        bad = re.match(r"[^\s(),]+", text[pos:])
        bad = bad.group() if bad else text[pos]
        if bad.startswith("'"):
            raise SalesforceError(
                "MALFORMED_QUERY", "unterminated string literal (missing closing quote)", pos + 1
            )
        raise SalesforceError("MALFORMED_QUERY", f"unexpected token: '{bad}'", pos + 1)
    tokens.append(Token("eof", "", len(text)))
    return tokens


def decode_string(raw: str, keep_like_escapes: bool = False) -> str:
    """Decode a quoted SOQL string literal (quotes included) into its value.

    Args:
        raw: The token text, e.g. ``'O\\'Brien'``.
        keep_like_escapes: Keep ``\\%``, ``\\_`` and ``\\\\`` as escapes (for LIKE patterns,
            which are then used with ``ESCAPE '\\'``).
    """
    body = raw[1:-1]
    if "\\" not in body:  # nothing escaped (most literals): the body is the value
        return body
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            nxt = body[index + 1]
            if keep_like_escapes and nxt in "%_\\":
                out.append("\\" + nxt)
            elif nxt in "%_":
                out.append(nxt)
            else:
                out.append(_ESCAPES.get(nxt, nxt))
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)
