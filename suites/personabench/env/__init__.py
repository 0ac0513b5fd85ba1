"""Retrieval over one person's documents (PersonaBench ``retrieval_and_generation.py``).

One index per (person, noise level), one chunk per session (:func:`data.person_chunks`), the
raw question as the query, the top ``k`` = 5 chunks. Retrievers:

- ``all-MiniLM-L6-v2``: upstream's dense retriever, the real weights run by
  :mod:`suites.personabench.env.minilm`; cosine = inner product of normalised embeddings, exact
  search (FAISS ``IndexFlatIP`` gives the same ranking), ties in chunk order.
- ``bm25``: ``bm25s`` (English stop words), used when the MiniLM extra is not installed; not
  comparable with upstream's dense rows, and flagged so.
- ``gt-context``: upstream's oracle retriever: the first alternative segment of each gold
  answer item, padded to ``k`` by repeating the list (upstream's ``extract_gt_segment_ids``);
  more gold items than ``k`` is an error, as upstream.

Indexes are built once per process (and shared across xdist workers with
:func:`pytest_egi.cache.shared.build_once`).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pytest_egi.cache.shared import build_once
from suites.personabench.data import person_chunks

if TYPE_CHECKING:
    import numpy as np

__all__ = ["BM25", "GT_CONTEXT", "MINILM", "RETRIEVERS", "gt_context_ids", "render_context", "retrieve"]

MINILM = "all-MiniLM-L6-v2"
BM25 = "bm25"
GT_CONTEXT = "gt-context"
RETRIEVERS = (MINILM, BM25, GT_CONTEXT)


def gt_context_ids(gold: dict[str, list[str]], k: int) -> list[str]:
    """Upstream's ground-truth context: the first alternative of each answer item, in the gold
    map's order, repeated to fill ``k``.

    Raises:
        ValueError: more answer items than ``k`` (upstream raises the same).
    """
    ids = [alts[0] for alts in gold.values()]
    if not ids:
        raise ValueError("the gold map has no answer item to build a ground-truth context from")
    if len(ids) > k:
        raise ValueError(f"find {len(ids)} ground truth, which is larger than {k}")
    extra = k - len(ids)
    return ids + ids * (extra // len(ids)) + ids[: extra % len(ids)]


def render_context(chunks: list[str]) -> str:
    """The retrieved chunks as upstream puts them in the prompt: the string form of a NumPy
    array of strings (``str(np.array(chunks))``)."""
    import numpy as np

    return str(np.array(chunks))


def _minilm_embeddings(spec_json: str, c: int, name: str, level: float) -> np.ndarray:
    from suites.personabench.env.minilm import load_minilm

    chunks, _ = person_chunks(json.loads(spec_json), c, name, level)
    return load_minilm().encode(list(chunks))


@lru_cache(maxsize=32)
def _dense_index(spec_json: str, c: int, name: str, level: float) -> np.ndarray:
    key = {"spec": spec_json, "community": c, "person": name, "level": level}
    return build_once("personabench-minilm", key, lambda: _minilm_embeddings(spec_json, c, name, level))


@lru_cache(maxsize=32)
def _bm25_index(spec_json: str, c: int, name: str, level: float) -> Any:
    from suites._common.bm25 import import_bm25s

    bm25s = import_bm25s()
    chunks, _ = person_chunks(json.loads(spec_json), c, name, level)
    index = bm25s.BM25()
    index.index(bm25s.tokenize(list(chunks), stopwords="en", show_progress=False), show_progress=False)
    return index


def retrieve(
    spec: dict[str, Any],
    c: int,
    name: str,
    level: float,
    question: str,
    retriever: str,
    gold: dict[str, list[str]],
    k: int = 5,
) -> list[str]:
    """The ``k`` segment ids retrieved for ``question`` from the person's index, best first.

    Raises:
        ValueError: unknown retriever; ``gt-context`` with more gold items than ``k`` or a gold
            segment missing from the index.
        MiniLMUnavailable: MiniLM asked for and not installed.
    """
    import numpy as np

    chunks, ids = person_chunks(spec, c, name, level)
    spec_json = json.dumps(spec, sort_keys=True)
    if retriever == GT_CONTEXT:
        out = gt_context_ids(gold, k)
        missing = sorted(set(out) - set(ids))
        if missing:
            raise ValueError(f"gold segments {missing} are not in {name}'s documents at noise {level}")
        return out
    k = min(k, len(ids))
    if retriever == MINILM:
        from suites.personabench.env.minilm import load_minilm

        emb = _dense_index(spec_json, c, name, level)
        query = load_minilm().encode([question])[0]
        scores = emb @ query
        order = np.argsort(-scores, kind="stable")[:k]
        return [ids[i] for i in order]
    if retriever == BM25:
        from suites._common.bm25 import import_bm25s

        bm25s = import_bm25s()
        index = _bm25_index(spec_json, c, name, level)
        query = _query_tokens(bm25s.tokenize([question], stopwords="en", show_progress=False))
        scores = np.asarray(index.get_scores(query), dtype=np.float64) if query else np.zeros(len(ids))
        order = np.argsort(-scores, kind="stable")[:k]
        return [ids[i] for i in order]
    raise ValueError(f"unknown retriever {retriever!r}; use one of {list(RETRIEVERS)}")


def _query_tokens(tokens: Any) -> list[str]:
    inverse = {v: k for k, v in tokens.vocab.items()}
    return [inverse[t] for t in tokens.ids[0]]
