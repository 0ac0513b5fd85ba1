"""Text a model sends that is not valid Unicode: cleaned where every reply arrives.

A provider's JSON may carry a lone UTF-16 surrogate (``"\\ud800"``: half of a pair, no
character on its own). Python decodes it into a ``str`` that no UTF-8 writer, no SQLite
binding, no execnet channel (pytest-xdist) and no MCP server accepts: left as it is, one such
reply aborted a whole session while its trajectory was written. A lone surrogate is the
model's own output, so it is kept and scored, not turned into an error:

- :func:`clean_reply` replaces each lone surrogate of a reply (text content, reasoning,
  tool-call names, tool-call arguments, and every other string of the message) with U+FFFD
  (the replacement character), what a UTF-8 decoder makes of invalid input. That cleaned
  reply is what the scaffold, the tools and the scorer see: the score is of the cleaned text.
- The fields it changed are returned beside it in their **raw form**, made JSON-safe by
  :func:`escape_text` (the surrogate written as the six characters ``\\ud800``), so the
  trajectory shows what the model sent (``Trajectory.info["raw_replies"]``).

Tool-call arguments are JSON text; a lone surrogate there may also be written as a JSON
escape (``{"q": "\\ud800"}``), which parsing the arguments would turn into a lone surrogate
again. :func:`clean_arguments` replaces those escapes with ``\\ufffd`` too.

The LiteLLM client calls :func:`clean_reply` on every reply, from the network (in this
process or through the model gateway) and from the response cache alike
(:meth:`pytest_egi.models.litellm_client.LiteLLMClient.complete`). The record and trajectory
writers escape any lone surrogate that reaches them by another way (:func:`escape_obj`), so
one never aborts a session.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "REPLACEMENT",
    "clean_arguments",
    "clean_obj",
    "clean_reply",
    "clean_text",
    "escape_obj",
    "escape_text",
    "has_lone_surrogate",
]

REPLACEMENT = "\ufffd"
"""U+FFFD, the character a lone surrogate becomes in the cleaned reply."""

_LONE = re.compile("[\ud800-\udfff]")
"""Any surrogate code point in a Python ``str``: JSON decoding joins a valid escaped pair into
one character, so a surrogate left in a ``str`` is always a lone one."""

_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.DOTALL)
"""One backslash escape of JSON text (``\\\\`` is consumed whole, so ``\\\\ud800`` is not a
``\\u`` escape)."""


def has_lone_surrogate(text: str) -> bool:
    """True when ``text`` holds a lone surrogate (one regular-expression search)."""
    return _LONE.search(text) is not None


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD; ``text`` itself when it has none."""
    return _LONE.sub(REPLACEMENT, text) if _LONE.search(text) else text


def escape_text(text: str) -> str:
    """``text`` with every lone surrogate written as the six characters ``\\udXXX`` (lower-case
    hex): the JSON-safe form of the raw text, for a reader to see what was sent."""
    return _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _LONE.search(text) else text


def _is_surrogate_escape(token: str) -> int:
    """0 for no surrogate, 1 for a high (lead) and 2 for a low (trail) surrogate escape."""
    if len(token) != 5 or token[0] != "u":
        return 0
    code = int(token[1:], 16)
    if 0xD800 <= code <= 0xDBFF:
        return 1
    return 2 if 0xDC00 <= code <= 0xDFFF else 0


def clean_arguments(text: str) -> str:
    """Tool-call arguments (JSON text) with every lone surrogate replaced by U+FFFD: raw ones
    as in :func:`clean_text`, and ``\\uD800``-style escapes that are not half of a valid
    escaped pair by the escape ``\\ufffd``. Anything else (valid pairs, ``\\\\ud800``, which is
    a backslash and five letters, malformed JSON) is left as it is: the scaffold judges it."""
    text = clean_text(text)
    if "\\" not in text:
        return text
    escapes = list(_ESCAPE.finditer(text))
    lone: list[re.Match[str]] = []
    for i, m in enumerate(escapes):
        kind = _is_surrogate_escape(m.group(1))
        if kind == 0:
            continue
        prev = escapes[i - 1] if i else None
        nxt = escapes[i + 1] if i + 1 < len(escapes) else None
        paired = (kind == 1 and nxt is not None and nxt.start() == m.end()
                  and _is_surrogate_escape(nxt.group(1)) == 2) or (
            kind == 2 and prev is not None and prev.end() == m.start()
            and _is_surrogate_escape(prev.group(1)) == 1)
        if not paired:
            lone.append(m)
    if not lone:
        return text
    parts, at = [], 0
    for m in lone:
        parts += [text[at:m.start()], "\\ufffd"]
        at = m.end()
    parts.append(text[at:])
    return "".join(parts)


def clean_reply(message: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str] | None]:
    """One assistant message (OpenAI format) cleaned of lone surrogates, and the raw form of
    what changed.

    Every string of the message is cleaned with :func:`clean_text`; the ``arguments`` of a
    tool call with :func:`clean_arguments`. Dict keys are left alone (the wire format's own).

    Args:
        message: the assistant message as the provider (or the response cache) gave it.

    Returns:
        ``(cleaned, raw)``: ``cleaned`` is ``message`` itself when nothing changed, else a copy
        (the input is never modified); ``raw`` is None when nothing changed, else
        ``{field path: raw text in JSON-safe form}`` (:func:`escape_text`), with paths such as
        ``content``, ``tool_calls[0].function.arguments``, ``reasoning_content``.
    """
    raw: dict[str, str] = {}

    def walk(node: Any, path: str, key: str) -> Any:
        if isinstance(node, str):
            fixed = clean_arguments(node) if key == "arguments" else clean_text(node)
            if fixed is not node:
                raw[path] = escape_text(node)
                return fixed
            return node
        if isinstance(node, dict):
            out = {k: walk(v, f"{path}.{k}" if path else str(k), str(k)) for k, v in node.items()}
            return node if all(out[k] is node[k] for k in node) else out
        if isinstance(node, list):
            items = [walk(v, f"{path}[{i}]", key) for i, v in enumerate(node)]
            return node if all(a is b for a, b in zip(items, node, strict=True)) else items
        return node

    cleaned = walk(message, "", "")
    return (cleaned, raw) if raw else (message, None)


def _map_strings(obj: Any, fn: Any) -> Any:
    """``obj`` with ``fn`` applied to every string (keys too); copies only what changes."""
    if isinstance(obj, str):
        return fn(obj)
    if isinstance(obj, dict):
        out = {_map_strings(k, fn): _map_strings(v, fn) for k, v in obj.items()}
        same = len(out) == len(obj) and all(k in obj and out[k] is obj[k] for k in out)
        return obj if same else out
    if isinstance(obj, (list, tuple)):
        items = [_map_strings(v, fn) for v in obj]
        if all(a is b for a, b in zip(items, obj, strict=True)):
            return obj
        return tuple(items) if isinstance(obj, tuple) else items
    return obj


def escape_obj(obj: Any) -> Any:
    """A JSON-like structure with every lone surrogate of its strings (keys too) escaped
    (:func:`escape_text`); ``obj`` itself when none holds one. Dicts, lists and tuples on the
    way to a changed string are copied; nothing is modified in place."""
    return _map_strings(obj, escape_text)


def clean_obj(obj: Any) -> Any:
    """A JSON-like structure with every lone surrogate of its strings (keys too) replaced by
    U+FFFD (:func:`clean_text`); ``obj`` itself when none holds one (nothing is modified in
    place). For a request: no provider accepts a lone surrogate (its UTF-8 encoding fails
    before anything is sent), so one that reached the conversation some other way (a tool's
    output) is replaced rather than failing the call."""
    return _map_strings(obj, clean_text)
