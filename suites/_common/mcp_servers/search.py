"""Web search over the seeded corpus: MCP-Universe's ``google-search`` server (upstream: a local
Python server calling SerpAPI's Google engine), tool ``search(query)``.

The result is JSON text shaped as SerpAPI's Google response, reduced to what the upstream
server passes on: ``search_parameters`` (``engine``, ``q``), ``search_information``
(``total_results``: pages with a positive score) and ``organic_results``, the top
:data:`RESULTS_PER_PAGE` pages, each ``{position, title, link, displayed_link, snippet,
source}``. The snippet is the page's one-sentence description (it never states the facts a
task asks for, so an agent must ``fetch`` the page to read them).

Ranking: BM25 (``bm25s``, English stop words, lowercase) over each page's text (link targets
removed) plus :data:`TITLE_WEIGHT` times BM25 over the titles alone (one shared vocabulary);
ties are broken by the page's position in the corpus, so a query always gives the same list.
A query no page matches gives an empty ``organic_results`` list (not an error); an empty query
is the model's mistake (an error result).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from suites._common.mcp_servers._base import BadRequest, make_server
from suites._common.mcp_servers.web_corpus import Corpus, build_corpus

__all__ = ["RESULTS_PER_PAGE", "SearchIndex", "build_server", "build_world", "search", "search_index"]

RESULTS_PER_PAGE = 10
"""Organic results per query (Google's default page size)."""

TITLE_WEIGHT = 3.0
"""Weight of the title field's BM25 score added to the page text's (a fielded search: a page
whose title matches the query ranks above long pages that merely mention it)."""

_LINK_TARGET = re.compile(r"\]\([^)\s]+\)")


def build_world(seed: int) -> Corpus:
    """The corpus the server searches (see :mod:`.web_corpus`)."""
    return build_corpus(seed)


class SearchIndex:
    """A BM25 index over every page of one corpus.

    Args:
        corpus: the pages to index.
    """

    def __init__(self, corpus: Corpus) -> None:
        from suites._common.bm25 import import_bm25s

        bm25s = import_bm25s()
        from bm25s.tokenization import Tokenized, Tokenizer

        self.corpus = corpus
        self.urls = list(corpus.pages)
        pages = [corpus.pages[url] for url in self.urls]
        self._tokenizer = Tokenizer(stopwords="en", lower=True)
        texts = [_LINK_TARGET.sub("]", p.markdown) for p in pages] + [p.title for p in pages]
        ids = self._tokenizer.tokenize(texts, return_as="ids", show_progress=False)
        vocab = self._tokenizer.get_vocab_dict()
        self._fields = []
        for part in (ids[: len(pages)], ids[len(pages) :]):  # page text, titles: one vocabulary
            bm25 = bm25s.BM25()
            bm25.index(Tokenized(ids=part, vocab=vocab), show_progress=False)
            self._fields.append(bm25)

    def rank(self, query: str) -> list[tuple[str, float]]:
        """Every page with a positive BM25 score for ``query``: ``[(url, score)]``, best
        first, ties in corpus order."""
        tokens = self._tokenizer.tokenize([query], update_vocab=False, return_as="ids", show_progress=False)
        text, title = self._fields
        scores = text.get_scores(tokens[0]) + TITLE_WEIGHT * title.get_scores(tokens[0])
        hits = [(float(s), i) for i, s in enumerate(scores) if s > 0]
        hits.sort(key=lambda t: (-t[0], t[1]))
        return [(self.urls[i], s) for s, i in hits]


@lru_cache(maxsize=8)
def search_index(seed: int) -> SearchIndex:
    """The index of ``build_corpus(seed)`` (cached per process)."""
    return SearchIndex(build_corpus(seed))


def search(seed: int, query: str) -> dict[str, Any]:
    """SerpAPI-shaped results for ``query`` (module docstring).

    Raises:
        BadRequest: an empty query.
    """
    q = " ".join(str(query).split())
    if not q:
        raise BadRequest("query must not be empty")
    index = search_index(seed)
    ranked = index.rank(q)
    results = []
    for position, (url, _score) in enumerate(ranked[:RESULTS_PER_PAGE], start=1):
        page = index.corpus.pages[url]
        host = url.split("://", 1)[1]
        results.append({
            "position": position,
            "title": page.title,
            "link": url,
            "displayed_link": "https://" + host.replace("/", " › ", 1).replace("/", " › "),
            "snippet": page.description,
            "source": page.site,
        })  # fmt: skip
    return {
        "search_parameters": {"engine": "google", "q": q},
        "search_information": {"total_results": len(ranked)},
        "organic_results": results,
    }


def build_server(seed: int = 42) -> Any:
    """Web search MCP server over the seeded corpus (MCP-Universe's google-search)."""
    search_index(seed)  # index once at start-up, not on the first call

    def search_tool(query: str) -> str:
        """Search the web with Google and return the organic results (title, link and snippet of
        each page), best match first.

        Args:
            query: The search query.
        """
        return json.dumps(search(seed, query), ensure_ascii=False)

    search_tool.__name__ = "search"
    return make_server("google-search", "Search the web.", [(search_tool, False)])


if __name__ == "__main__":
    from suites._common.mcp_servers._base import main

    main(build_server)
