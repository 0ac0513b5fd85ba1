"""A pattern for Python exception names, which no message shown to a model may contain."""

from __future__ import annotations

import builtins
import re
import sqlite3


def _exception_names(module: object) -> set[str]:
    return {
        name
        for name in dir(module)
        if isinstance(getattr(module, name), type) and issubclass(getattr(module, name), BaseException)
    }


PYTHON_EXCEPTION = re.compile(
    r"\b("
    + "|".join(sorted((_exception_names(builtins) | _exception_names(sqlite3)) - {"Error"}))
    + r"|Traceback|sqlite3|SalesforceError|ToolError|ProviderError)\b"
)
"""Any builtin or sqlite3 exception class name (``KeyError``, ``OperationalError``, ...), or
a traceback. The bare word ``Error`` is allowed: ``Error: ...`` is the benchmarks' own prefix
for a tool's error message (reference §1.4)."""
