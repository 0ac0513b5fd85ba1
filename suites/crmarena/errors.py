"""The Salesforce-style error raised by the local org's SOQL/SOSL engine."""

from __future__ import annotations

__all__ = ["SalesforceError"]


class SalesforceError(Exception):
    """A query error in Salesforce's ``errorCode`` + ``message`` shape.

    ``str(error)`` is ``"ERRORCODE: message"``, which is exactly what the original
    `SalesforceConnector.run_query` handed to the agent (reference §1.4).

    Attributes:
        code: Salesforce error code, e.g. ``MALFORMED_QUERY``, ``INVALID_FIELD``,
            ``INVALID_TYPE``, ``INVALID_QUERY_FILTER_OPERATOR``, ``MALFORMED_SEARCH``.
        message: Human-readable message, worded like Salesforce's.
        column: 1-based column in the query text where the problem was found, when known.
    """

    def __init__(self, code: str, message: str, column: int | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.column = column

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __reduce__(self):  # keeps the error picklable (pytest-xdist, multiprocessing)
        return (SalesforceError, (self.code, self.message, self.column))
