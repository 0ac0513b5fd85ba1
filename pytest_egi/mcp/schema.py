"""MCP tool definitions → OpenAI / LiteLLM function ``tools``.

Pure functions over plain data: no import of the ``mcp`` SDK, so suites, scorers and
reports can use them without paying for it.

An MCP tool has a ``name`` (any string the server likes: dots, slashes, spaces, any length),
an optional ``description`` and an ``inputSchema`` (a JSON-Schema object, possibly empty or
missing). An OpenAI-style function tool (what LiteLLM sends to every provider) needs a name
matching ``^[a-zA-Z0-9_-]{1,64}$`` and a ``parameters`` object schema. The mapping here:

- ``{"type": "function", "function": {"name": N, "description": D or "", "parameters": S}}``
  with ``S`` the tool's input schema, unchanged except that a missing or empty schema
  becomes ``{"type": "object", "properties": {}}`` and an object schema without
  ``properties`` gets ``"properties": {}`` (some providers reject either). ``strict`` is not
  set: strict mode needs every property required and ``additionalProperties: false``.
  This is the mapping MCPEval and MCP-Universe's function-call agent use (reference §3.3).
- Names: :class:`ToolNames` maps each (server, MCP tool name) to an OpenAI name and back.
  A name that is already valid is kept as is (so MCPEval's tools keep their original names);
  with ``prefix`` set (several servers in one toolkit) the OpenAI name is
  ``<server>__<tool>``, as MCP-Universe's function-call agent names them. Invalid
  characters become ``_``; a name longer than 64 characters is cut to 55 characters plus
  ``_`` and 8 hex digits of its SHA-256, so distinct long names stay distinct; a clash
  after mapping gets the same hash suffix.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "OPENAI_NAME_RE",
    "McpToolSpec",
    "ToolNames",
    "openai_name",
    "openai_parameters",
    "openai_tool",
]

OPENAI_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What OpenAI (and so LiteLLM) accepts as a function name."""

_MAX = 64
_BAD = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True)
class McpToolSpec:
    """One tool as an MCP server lists it, in plain builtins.

    Attributes:
        name: the MCP tool name (what ``tools/call`` takes).
        description: the tool's description ("" when the server gave none).
        input_schema: the JSON schema of the arguments object, as the server sent it
            (``{}`` when missing).
        output_schema: the JSON schema of the structured result, or None.
    """

    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None

    @classmethod
    def from_sdk(cls, tool: Any) -> McpToolSpec:
        """From an SDK ``Tool`` object (``input_schema`` in mcp 2.x, ``inputSchema`` in 1.x)
        or an MCP-shaped dict (``inputSchema`` / ``input_schema`` keys)."""
        get = tool.get if isinstance(tool, Mapping) else lambda key, default=None: getattr(tool, key, default)
        schema = get("input_schema", None)
        if schema is None:
            schema = get("inputSchema", None)
        output = get("output_schema", None)
        if output is None:
            output = get("outputSchema", None)
        return cls(
            name=str(get("name")),
            description=get("description", None) or "",
            input_schema=dict(schema or {}),
            output_schema=dict(output) if output else None,
        )

    def to_mcp_dict(self) -> dict[str, Any]:
        """The wire (camelCase) form, as MCPEval stores a task's ``tools`` snapshot."""
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": copy.deepcopy(self.input_schema),
        }
        if self.output_schema is not None:
            out["outputSchema"] = copy.deepcopy(self.output_schema)
        return out


def openai_parameters(input_schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``parameters`` object for an MCP input schema (a deep copy; the input is not changed).

    Missing / empty schema → ``{"type": "object", "properties": {}}``; a schema without
    ``type`` gets ``"type": "object"``; an object schema without ``properties`` gets
    ``"properties": {}``. Everything else (``required``, ``$defs``, titles, defaults) is kept.

    Raises:
        ValueError: the schema declares a ``type`` other than ``object`` (an MCP input
            schema must describe the arguments object).
    """
    schema = copy.deepcopy(dict(input_schema or {}))
    kind = schema.setdefault("type", "object")
    if kind != "object":
        raise ValueError(f"an MCP tool's input schema must have type 'object', got {kind!r}")
    schema.setdefault("properties", {})
    return schema


def openai_name(name: str, prefix: str | None = None) -> str:
    """The OpenAI function name for an MCP tool name (optionally ``<prefix>__<name>``).

    A valid result is returned unchanged; otherwise invalid characters become ``_`` and an
    over-long name is cut to 55 characters + ``_`` + the first 8 hex digits of the SHA-256
    of the full unmapped name. An empty name becomes ``tool``.
    """
    full = f"{prefix}__{name}" if prefix else name
    if OPENAI_NAME_RE.match(full):
        return full
    mapped = _BAD.sub("_", full) or "tool"
    if len(mapped) > _MAX:
        mapped = f"{mapped[: _MAX - 9]}_{_digest(full)}"
    return mapped


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def openai_tool(name: str, description: str | None, input_schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """One OpenAI-format function tool; ``name`` must already be a valid OpenAI name.

    Raises:
        ValueError: ``name`` does not match :data:`OPENAI_NAME_RE` (use :func:`openai_name`),
            or the schema is not an object schema.
    """
    if not OPENAI_NAME_RE.match(name):
        raise ValueError(f"{name!r} is not a valid OpenAI function name (^[a-zA-Z0-9_-]{{1,64}}$)")
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description or "",
            "parameters": openai_parameters(input_schema),
        },
    }


@dataclass
class ToolNames:
    """The two-way map between OpenAI function names and (server, MCP tool name).

    Build it with :meth:`build`; :meth:`tools` gives the OpenAI ``tools`` list in listing
    order, :meth:`to_mcp` resolves the name a model called.
    """

    by_openai: dict[str, tuple[str, McpToolSpec]] = field(default_factory=dict)
    """OpenAI name → (server name, tool)."""

    @classmethod
    def build(cls, servers: Mapping[str, Iterable[McpToolSpec]], prefix: bool = False) -> ToolNames:
        """Map every tool of every server.

        Args:
            servers: server name → its tools, in listing order.
            prefix: name tools ``<server>__<tool>`` (needed when two servers may share a
                tool name; MCP-Universe's convention). Without it, a tool name listed by
                two servers is refused.

        Raises:
            ValueError: two servers list the same tool name and ``prefix`` is False.
        """
        names = cls()
        seen: dict[str, str] = {}
        for server, tools in servers.items():
            for tool in tools:
                if not prefix and tool.name in seen:
                    raise ValueError(
                        f"tool {tool.name!r} is listed by both {seen[tool.name]!r} and {server!r}; "
                        "build the names with prefix=True"
                    )
                seen[tool.name] = server
                mapped = openai_name(tool.name, server if prefix else None)
                if mapped in names.by_openai:  # a clash created by the mapping itself
                    full = f"{server}__{tool.name}" if prefix else tool.name
                    mapped = f"{mapped[: _MAX - 9]}_{_digest(full)}"
                names.by_openai[mapped] = (server, tool)
        return names

    def tools(self) -> list[dict[str, Any]]:
        """The OpenAI / LiteLLM ``tools`` list, in listing order."""
        return [openai_tool(n, t.description, t.input_schema) for n, (_, t) in self.by_openai.items()]

    def to_mcp(self, openai: str) -> tuple[str, str] | None:
        """(server name, MCP tool name) for an OpenAI name, or None when no tool has it."""
        hit = self.by_openai.get(openai)
        return None if hit is None else (hit[0], hit[1].name)

    def to_openai(self, server: str, tool: str) -> str:
        """The OpenAI name of ``tool`` on ``server``.

        Raises:
            KeyError: no such tool was mapped.
        """
        for name, (srv, spec) in self.by_openai.items():
            if srv == server and spec.name == tool:
                return name
        raise KeyError(f"no tool {tool!r} on server {server!r}")
