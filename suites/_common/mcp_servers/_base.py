"""What every local MCP server here shares: the fixed "today", seeded randomness, the error
convention, and the ``python -m <module> --seed N`` entry point.

Error convention (so the client can tell the model's mistakes from faults):

- Tool logic raises :class:`BadRequest` for input the model got wrong (an unknown id, a bad
  date, an invalid enum value). The server turns it into an MCP error *result*
  (``isError: true``) whose text is ``Error executing tool <name>: <message>``, the wording
  the SDK uses for arguments that fail the input schema and for an unknown tool
  (``Unknown tool: <name>``).
- Any other exception is a bug: the server answers the request with a JSON-RPC internal error
  (``-32603``), which the client raises as an environment fault, never shown to the model.

Tool logic lives in plain functions over a seeded world (a dict built by each module's
``build_world(seed)``), importable without the ``mcp`` SDK, so task generators and tests can
use the same data the server serves.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

__all__ = [
    "OPEN_WORLD_FLAG",
    "TODAY",
    "BadRequest",
    "main",
    "make_server",
    "open_key",
    "open_rng",
    "parse_date",
    "rng",
]

TODAY = date(2025, 6, 5)
"""The servers' "today" (upstream MCPEval's finance prompt pins 2025-06-05)."""


class BadRequest(Exception):
    """The model's mistake (unknown id, malformed date, invalid choice): an MCP error result."""


def rng(seed: int, domain: str) -> random.Random:
    """The random generator of one domain's world (string seeding is stable across runs)."""
    return random.Random(f"egi-mcp:{domain}:{seed}")


OPEN_WORLD_FLAG = {"--open-world": "answer any well-formed query from records generated from the query"}
"""The ``--open-world`` flag of a server with an open world (for :func:`main`)."""


def open_key(text: Any) -> str:
    """The key an open world generates a record from: the text lower-cased, with every run
    of characters other than letters and digits made one space (``"Paris, France"`` and
    ``" paris  france"`` give ``"paris france"``)."""
    return " ".join("".join(c if c.isalnum() else " " for c in str(text).lower()).split())


def open_rng(seed: int, domain: str, kind: str, key: Any) -> random.Random:
    """The random generator of one open-world record: a function of (seed, domain, kind,
    key) alone, so the same query gets the same answer in every process, whatever was
    asked before (string seeding is stable across runs)."""
    return random.Random(f"egi-mcp-open:{domain}:{kind}:{seed}:{key}")


def parse_date(value: str, field: str) -> date:
    """A ``YYYY-MM-DD`` date, or :class:`BadRequest` naming the field."""
    try:
        return datetime.strptime(str(value).strip(), "%Y-%m-%d").date()
    except ValueError:
        raise BadRequest(f"{field} must be a date in YYYY-MM-DD format, got {value!r}") from None


def days(start: date, end: date) -> list[date]:
    """Every date from ``start`` up to but excluding ``end``."""
    return [start + timedelta(days=i) for i in range((end - start).days)]


def make_server(name: str, instructions: str, tools: Sequence[tuple[Callable[..., Any], bool]]) -> Any:
    """An ``MCPServer`` serving ``tools`` (each ``(function, structured_output)``).

    The function's name, signature, annotations and docstring become the tool's name, input
    schema and description (the SDK derives them). :class:`BadRequest` becomes an error
    result; any other exception a JSON-RPC internal error (module docstring).
    """
    from mcp import MCPError
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from mcp_types import INTERNAL_ERROR

    class DomainServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            try:
                return await super().call_tool(name, arguments, context)
            except UnexpectedToolError as exc:
                cause = exc.__cause__
                if isinstance(cause, BadRequest):
                    raise ToolError(f"Error executing tool {name}: {cause}") from cause
                raise MCPError(
                    code=INTERNAL_ERROR, message=f"tool {name!r} failed: {type(cause).__name__}: {cause}"
                ) from exc

    server = DomainServer(name, instructions=instructions, log_level="WARNING")
    for fn, structured in tools:
        summary = describe_parameters(fn)
        server.add_tool(fn, description=summary, structured_output=structured)
    return server


def describe_parameters(fn: Callable[..., Any]) -> str:
    """Move the docstring's ``Args:`` lines into the parameters' schema descriptions.

    Each ``name: text`` line under ``Args:`` becomes ``description`` of that parameter in the
    tool's input schema (``Annotated[..., Field(description=...)]``); the text before
    ``Args:`` is returned as the tool's description.
    """
    import inspect
    import typing
    from typing import Annotated

    from pydantic import Field

    doc = inspect.cleandoc(fn.__doc__ or "")
    summary, _, args = doc.partition("Args:")
    described: dict[str, str] = {}
    current = None
    for line in args.splitlines():
        head, sep, text = line.strip().partition(":")
        if (
            sep
            and head.isidentifier()
            and line.startswith(("    ", "\t"))
            and not line.startswith("        ")
        ):
            current = head
            described[current] = text.strip()
        elif current and line.strip():
            described[current] += " " + line.strip()
    hints = typing.get_type_hints(fn, include_extras=True)  # resolved: string annotations cannot be wrapped
    for param, text in described.items():
        if param not in hints:
            raise TypeError(f"{fn.__name__}: docstring describes unknown parameter {param!r}")
        hints[param] = Annotated[hints[param], Field(description=text)]
    fn.__annotations__ = hints
    return " ".join(summary.split())


def main(
    build_server: Callable[..., Any],
    argv: Sequence[str] | None = None,
    flags: Mapping[str, str] | None = None,
) -> None:
    """Parse ``--seed N`` (and the server's own on/off ``flags``) and serve over stdio until
    stdin closes.

    Args:
        build_server: ``build_server(seed, **flags)``.
        argv: the command line (default ``sys.argv[1:]``).
        flags: option name → help text of boolean options the server takes
            (``{"--open-world": "..."}``); each is passed to ``build_server`` as a keyword
            (``open_world=True``) only when given on the command line.
    """
    parser = argparse.ArgumentParser(description=(build_server.__doc__ or "").strip().splitlines()[0])
    parser.add_argument("--seed", type=int, default=42, help="world seed (default 42)")
    for flag, text in (flags or {}).items():
        parser.add_argument(flag, action="store_true", help=text)
    args = parser.parse_args(argv)
    chosen = {
        flag.lstrip("-").replace("-", "_"): True
        for flag in (flags or {})
        if getattr(args, flag.lstrip("-").replace("-", "_"))
    }
    server = build_server(args.seed, **chosen)
    try:
        server.run()  # stdio
    except KeyboardInterrupt:
        sys.exit(0)
