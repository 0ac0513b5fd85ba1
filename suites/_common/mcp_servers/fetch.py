"""Page fetching over the seeded corpus: MCP-Universe's ``fetch`` server (upstream: PyPI
``mcp-server-fetch``, run with ``--ignore-robots-txt``), tool ``fetch(url, max_length=5000,
start_index=0, raw=False)``.

As upstream: the page is returned as markdown (``raw=False``) or as its HTML with the prefix
``Content type text/html; charset=utf-8 cannot be simplified to markdown, but here is the raw
content:`` (``raw=True``); the text is ``Contents of <url>:`` followed by the characters
``[start_index, start_index + max_length)`` of the page; when more remains, the note
``<error>Content truncated. Call the fetch tool with a start_index of N to get more
content.</error>`` follows; a ``start_index`` at or past the end gives ``<error>No more content
available.</error>``. ``max_length`` must be in (0, 1000000) and ``start_index`` at least 0
(the input schema says so; a violation is an error result).

A URL outside the corpus is what a dead link is on the web: an error result ``Failed to fetch
<url> - status code 404`` (upstream's wording for an HTTP error status). The URL is matched
after :func:`~.web_corpus.canonical_url` (scheme and host case, a trailing slash and a
fragment do not matter).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field

from suites._common.mcp_servers._base import BadRequest, make_server
from suites._common.mcp_servers.web_corpus import Corpus, build_corpus, canonical_url

__all__ = ["RAW_PREFIX", "build_server", "build_world", "fetch"]

RAW_PREFIX = (
    "Content type text/html; charset=utf-8 cannot be simplified to markdown, but here is the raw content:\n"
)
"""Upstream's prefix of a raw (HTML) result."""


def build_world(seed: int) -> Corpus:
    """The corpus the server serves (see :mod:`.web_corpus`)."""
    return build_corpus(seed)


def fetch(seed: int, url: str, max_length: int = 5000, start_index: int = 0, raw: bool = False) -> str:
    """The tool's text for one call (module docstring).

    Raises:
        BadRequest: not an http(s) URL, a URL outside the corpus (404), or a bad bound.
    """
    text = str(url).strip()
    if not re.match(r"^https?://[^/\s]+", text, re.IGNORECASE):
        raise BadRequest(f"url must be an absolute http(s) URL, got {url!r}")
    if not 0 < max_length < 1_000_000:
        raise BadRequest(f"max_length must be greater than 0 and less than 1000000, got {max_length}")
    if start_index < 0:
        raise BadRequest(f"start_index must be at least 0, got {start_index}")
    canonical = canonical_url(text)
    page = build_corpus(seed).pages.get(canonical)
    if page is None:
        raise BadRequest(f"Failed to fetch {canonical} - status code 404")
    content, prefix = (page.html, RAW_PREFIX) if raw else (page.markdown, "")
    if start_index >= len(content):
        body = "<error>No more content available.</error>"
    else:
        body = content[start_index : start_index + max_length]
        next_start = start_index + len(body)
        if len(body) == max_length and next_start < len(content):
            body += (
                f"\n\n<error>Content truncated. Call the fetch tool with a start_index of "
                f"{next_start} to get more content.</error>"
            )
    return f"{prefix}Contents of {canonical}:\n{body}"


def build_server(seed: int = 42) -> Any:
    """Fetch MCP server over the seeded corpus (MCP-Universe's fetch)."""
    build_corpus(seed)

    def fetch_tool(
        url: str,
        max_length: Annotated[int, Field(gt=0, lt=1_000_000)] = 5000,
        start_index: Annotated[int, Field(ge=0)] = 0,
        raw: bool = False,
    ) -> str:
        """Fetches a URL from the internet and optionally extracts its contents as markdown.

        Args:
            url: URL to fetch
            max_length: Maximum number of characters to return.
            start_index: On return output starting at this character index, useful if a previous
                fetch was truncated and more context is required.
            raw: Get the actual HTML content of the requested page, without simplification.
        """
        return fetch(seed, url, max_length, start_index, raw)

    fetch_tool.__name__ = "fetch"
    return make_server("fetch", "Fetch web pages.", [(fetch_tool, False)])


if __name__ == "__main__":
    from suites._common.mcp_servers._base import main

    main(build_server)
