"""The Salesforce-style error raised by the local org's SOQL/SOSL engine for a bad query."""

from __future__ import annotations

from pytest_egi.agents.tools import ToolError

__all__ = ["SalesforceError", "TOO_COMPLICATED"]

TOO_COMPLICATED = "Query is either selecting too many fields or the filter conditions are too complicated."
"""Salesforce's QUERY_TOO_COMPLICATED message (the API's wording as reported in
capeterson/Grey-Tab issue #23)."""


class SalesforceError(ToolError):
    """A mistake in the model's query, in Salesforce's ``errorCode`` + ``message`` shape.

    ``str(error)`` is ``"ERRORCODE: message"``, which is exactly what the original
    `SalesforceConnector.run_query` handed to the agent (reference §1.4). As a
    :class:`~pytest_egi.agents.tools.ToolError` it is the only exception the agent loops turn
    into an observation; anything else the engine raises is an environment fault (the item
    errors). So every mistake a model can make in a query must surface as a SalesforceError,
    and nothing else may.

    Attributes:
        code: Salesforce error code, e.g. ``MALFORMED_QUERY``, ``INVALID_FIELD``,
            ``INVALID_TYPE``, ``INVALID_QUERY_FILTER_OPERATOR``, ``MALFORMED_SEARCH``,
            ``NUMBER_OUTSIDE_VALID_RANGE``, ``QUERY_TOO_COMPLICATED``.
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

    @property
    def observation(self) -> str:
        """What the agent reads: ``"ERRORCODE: message"`` (no ``Error:`` prefix, as upstream)."""
        return str(self)

    def __reduce__(self):  # keeps the error picklable (pytest-xdist, multiprocessing)
        return (SalesforceError, (self.code, self.message, self.column))
