"""The HERB environment: the retrieval index and the agent's tools (reference §2.3, §4.3).

Unstructured search (``retrieve_all``) covers Slack messages, documents, meeting transcripts
and meeting chats, one artifact per retrieval unit, rendered as upstream renders them
(a header with ids, channel, date, author or participants, then the text). URLs and pull
requests are reachable only by link through ``url_search`` / ``pr_search`` unless
``index_links`` is set. Retrieval is BM25 (``bm25s``); ``hybrid`` is the union of the BM25
top-k and a dense top-k, deduplicated, BM25 first, without re-scoring (upstream's
``EnsembleRetriever``).

The seven metadata tools pull entities out of their text argument deterministically (regexes
for ``eid_…``, ``CUST-…`` and links; gazetteers for employee names and name parts, roles and
company names) where upstream asks GPT-4o, then look them up case-insensitively in
dictionaries built from the whole world. Two upstream defects are fixed by default and
reproduced with ``faithful_tool_bugs=True``: ``role_to_id_search`` fails on every call (its
prompt template is formatted with the wrong placeholder names) and ``id_to_role_search``
returns the matched ids instead of the roles.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
import zlib
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from pytest_egi.agents.tools import Tool, ToolError, Toolkit
from pytest_egi.cache.shared import build_once
from suites._common.bm25 import import_bm25s
from suites.herb.data import SUITE_VERSION, World, get_world, release_worlds

if TYPE_CHECKING:  # numpy is imported where it is used: collecting the suite needs none of it
    import numpy as np

__all__ = [
    "DenseEncoder",
    "HashingEncoder",
    "HerbEnv",
    "NO_RESULTS",
    "RESULT_SEPARATOR",
    "get_env",
]

RESULT_SEPARATOR = "\n\n-----\n\n"
"""Between two artifacts in a ``retrieve_all`` observation."""
NO_RESULTS = "No results found."
EID_RE = re.compile(r"\beid_[A-Za-z0-9]+\b")
CUST_RE = re.compile(r"\bCUST-\d+\b", re.IGNORECASE)
LINK_RE = re.compile(r"https?://[^\s<>\"'\]\[(){},]+", re.IGNORECASE)


def find_links(text: str) -> list[str]:
    """Links in ``text`` in order, trailing sentence punctuation removed, deduplicated."""
    return list(dict.fromkeys(m.group(0).rstrip(".;:!?") for m in LINK_RE.finditer(text)))


def gazetteer(terms: list[str], plural: bool = False) -> re.Pattern[str] | None:
    """A case-insensitive, whole-word alternation of ``terms`` (longest first)."""
    terms = sorted({t for t in terms if t}, key=lambda t: (-len(t), t.lower()))
    if not terms:
        return None
    body = "|".join(re.escape(t) for t in terms)
    suffix = "s?" if plural else ""
    return re.compile(rf"(?<!\w)({body}){suffix}(?!\w)", re.IGNORECASE)


class DenseEncoder(Protocol):
    """A dense retriever plug-in: texts in, one row vector per text out."""

    def encode(self, texts: list[str]) -> np.ndarray: ...


class HashingEncoder:
    """Signed feature hashing of word unigrams and bigrams into ``dim`` floats, L2-normalised.

    A stand-in so that ``retriever="hybrid"`` runs offline (no embedding model can be
    downloaded at run time); plug a real encoder in with ``dense_encoder="pkg.mod:factory"``.
    """

    def __init__(self, dim: int = 1024) -> None:
        self.dim = dim

    def encode(self, texts: list[str]) -> np.ndarray:
        """Return a ``(len(texts), dim)`` float32 matrix of unit rows (zero rows stay zero)."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            toks = re.findall(r"\w\w+", text.lower())
            for feat in [*toks, *(f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False))]:
                h = zlib.crc32(feat.encode())
                out[i, h % self.dim] += 1.0 if h & 0x80000000 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


def load_encoder(spec: str | None) -> DenseEncoder:
    """``None`` -> :class:`HashingEncoder`; ``"pkg.mod:factory"`` -> ``factory()``.

    Raises:
        ValueError: the spec cannot be imported or does not give an object with ``encode``.
    """
    if not spec:
        return HashingEncoder()
    module, _, attr = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(module), attr)
        encoder = factory()
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(
            f"herb.dense_encoder={spec!r} cannot be loaded ({exc}). Fix: give "
            "'package.module:factory' where factory() returns an object with encode(texts)."
        ) from None
    if not callable(getattr(encoder, "encode", None)):
        raise ValueError(f"herb.dense_encoder={spec!r}: the object has no encode(texts) method")
    return encoder


def _render_units(world: World, index_links: bool) -> list[tuple[str, str, str]]:
    """(artifact id, product, rendered text) for every retrieval unit, upstream formats."""
    units: list[tuple[str, str, str]] = []
    for product, data in world.products.items():
        for m in data.get("slack", []):
            u = m["Message"]["User"]
            units.append(
                (
                    u["utterranceID"],
                    product,
                    f"Message ID: {u['utterranceID']}\nChannel Name: {m['Channel']['name']}"
                    f"\nTimestamp: {u['timestamp']}\n\n{u['userId']}: {u['text']}",
                )
            )
        for d in data.get("documents", []):
            units.append(
                (
                    d["id"],
                    product,
                    f"Doc ID: {d['id']}\nLink: {d['document_link']}\n{d['date']}\n"
                    f"Author: {d['author']}\n\n{d['type']}\n{d['content']}",
                )
            )
        for t in data.get("meeting_transcripts", []):
            people = t["participants"]
            people = ", ".join(people) if isinstance(people, list) else str(people)
            units.append(
                (
                    t["id"],
                    product,
                    f"Meeting ID: {t['id']}\n{t['date']}\nParticipants: {people}\n\n{t['transcript']}",
                )
            )
        for c in data.get("meeting_chats", []):
            units.append((c["id"], product, f"Meeting ID: {c['id']}\n\nChats:\n{c['text']}"))
        if index_links:
            for u in data.get("urls", []):
                units.append((u["id"], product, f"URL: {u['link']}\n\nDescription: {u['description']}"))
            for p in data.get("prs", []):
                reviews = "".join(
                    f"- {r['state']} by {r['user']['login']} at {r['submitted_at']}: {r.get('comment', '')}\n"
                    for r in p.get("reviews", [])
                )
                units.append(
                    (
                        p["id"],
                        product,
                        f"Title: {p['title']}\nAuthor: {p['user']['login']}\nCreated At: "
                        f"{p['created_at']}\nState: {p['state']}\nLink: {p['link']}\n"
                        f"Summary: {p['summary']}\n\nReviews:\n{reviews}",
                    )
                )
    return units


class HerbEnv:
    """Index and lookup tables over one world (shared by all trials; tools are per trial).

    Args:
        world: the world to search.
        retriever: ``bm25`` or ``hybrid`` (BM25 ∪ dense).
        dense_encoder: plug-in spec for the dense half of ``hybrid`` (None = hashing).
        index_links: also index URLs and PRs for ``retrieve_all`` (upstream does not).
    """

    def __init__(self, world: World, *, retriever: str = "bm25", dense_encoder: str | None = None,
                 index_links: bool = False) -> None:  # fmt: skip
        self._tables(world, index_links)
        self._index(retriever, dense_encoder)

    @classmethod
    def from_world(cls, load: Callable[[], World], release: Callable[[], None], *, retriever: str = "bm25",
                   dense_encoder: str | None = None, index_links: bool = False) -> HerbEnv:  # fmt: skip
        """Build the environment of the world ``load()`` returns, calling ``release()`` (which
        lets go of every other reference to that world) before the index is built: the
        world's artifacts (tens of MB) and the tokenizer's lists are never in memory together.
        """
        env = cls.__new__(cls)
        env._tables(load(), index_links)
        release()
        env._index(retriever, dense_encoder)
        return env

    def _tables(self, world: World, index_links: bool) -> None:
        # the world itself is not kept: the index, the texts and the look-up tables are all
        # a trial needs (and what a pickled env carries to the other xdist workers)
        self.units = _render_units(world, index_links)
        self.ids = [u[0] for u in self.units]
        self.texts = [u[2] for u in self.units]
        self._lookups(world)

    def _index(self, retriever: str, dense_encoder: str | None) -> None:
        bm25s = import_bm25s()
        from bm25s.tokenization import Tokenizer

        self._tokenizer = Tokenizer(stopwords="en", lower=True)
        ids = self._tokenizer.tokenize(self.texts, return_as="ids", show_progress=False)
        self._bm25 = bm25s.BM25()
        self._bm25.index(ids, show_progress=False)
        del ids
        self._dense: tuple[DenseEncoder, np.ndarray] | None = None
        if retriever == "hybrid":
            import numpy as np

            encoder = load_encoder(dense_encoder)
            self._dense = (encoder, np.asarray(encoder.encode(self.texts), dtype=np.float32))
        elif retriever != "bm25":
            raise ValueError(f"herb.retriever must be 'bm25' or 'hybrid', got {retriever!r}")

    def _lookups(self, w: World) -> None:
        self.name2id: dict[str, list[str]] = defaultdict(list)
        self.role2id: dict[str, list[str]] = defaultdict(list)
        self.id2name = {e["employee_id"]: e["name"] for e in w.employees.values()}
        self.id2role = {e["employee_id"]: e["role"] for e in w.employees.values()}
        full, parts = [], []
        for e in w.employees.values():
            self.name2id[e["name"].lower()].append(e["employee_id"])
            full.append(e["name"])
            for part in e["name"].split():
                self.name2id[part.lower()].append(e["employee_id"])
                parts.append(part)
            self.role2id[e["role"].lower()].append(e["employee_id"])
        self.cust2id: dict[str, list[str]] = defaultdict(list)
        self.id2cust: dict[str, str] = {}
        for c in w.customers:
            self.cust2id[c["company"].lower()].append(c["id"])
            self.id2cust[c["id"].lower()] = c["company"]
        self.pr_meta: dict[str, dict[str, Any]] = {}
        self.url_meta: dict[str, dict[str, Any]] = {}
        for data in w.products.values():
            for p in data.get("prs", []):
                self.pr_meta[p["link"].lower()] = p
            for u in data.get("urls", []):
                self.url_meta[u["link"].lower()] = u
            for d in data.get("documents", []):
                self.url_meta[d["document_link"].lower()] = d
        self.full_names = gazetteer(full)
        self.name_parts = gazetteer(parts)
        self.roles = gazetteer(sorted({e["role"] for e in w.employees.values()}), plural=True)
        self.companies = gazetteer(w.company_names)

    # -- retrieval ---------------------------------------------------------------------------
    def search(self, query: str, top_k: int) -> list[int]:
        """Indices of the retrieved units: BM25 top-k (score > 0), then dense top-k if hybrid."""
        n = len(self.units)
        k = max(1, min(top_k, n))
        q = self._tokenizer.tokenize([query], update_vocab=False, return_as="ids",
                                     show_progress=False)  # fmt: skip
        docs, scores = self._bm25.retrieve(q, k=k, show_progress=False)
        hits = [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
        if self._dense is not None:
            import numpy as np

            encoder, matrix = self._dense
            qv = np.asarray(encoder.encode([query]), dtype=np.float32)[0]
            sims = matrix @ qv
            order = np.argsort(-sims, kind="stable")[:k]
            hits += [int(i) for i in order if sims[i] > 0 and int(i) not in hits]
        return hits

    def retrieve(self, query: str, top_k: int) -> str:
        """The ``retrieve_all`` observation: rendered artifacts joined by a separator line."""
        hits = self.search(query, top_k)
        return RESULT_SEPARATOR.join(self.texts[i] for i in hits) if hits else NO_RESULTS

    # -- metadata look-ups ------------------------------------------------------------------
    def names_in(self, text: str) -> list[str]:
        """Full employee names, then name parts outside them, as written (lowercased)."""
        found: list[str] = []
        rest = text
        if self.full_names:
            for m in self.full_names.finditer(text):
                found.append(m.group(1).lower())
            rest = self.full_names.sub(" ", text)
        if self.name_parts:
            found += [m.group(1).lower() for m in self.name_parts.finditer(rest)]
        return list(dict.fromkeys(found))

    def name_to_id(self, text: str) -> dict[str, list[str]]:
        """Employee ids per name found in ``text`` (``name_to_id_search``)."""
        return {n: self.name2id[n] for n in self.names_in(text) if n in self.name2id}

    def role_to_id(self, text: str) -> dict[str, list[str]]:
        """Employee ids per role found in ``text`` (``role_to_id_search``, fixed)."""
        if not self.roles:
            return {}
        found = dict.fromkeys(m.group(1).lower() for m in self.roles.finditer(text))
        return {r: self.role2id[r] for r in found if r in self.role2id}

    def id_to_name(self, text: str) -> dict[str, str]:
        """Name per employee id in ``text`` (``id_to_name_search``)."""
        return {e: self.id2name[e] for e in dict.fromkeys(EID_RE.findall(text)) if e in self.id2name}

    def id_to_role(self, text: str) -> dict[str, str]:
        """Role per employee id in ``text`` (``id_to_role_search``, fixed)."""
        return {e: self.id2role[e] for e in dict.fromkeys(EID_RE.findall(text)) if e in self.id2role}

    def company_to_id(self, text: str) -> dict[str, list[str]]:
        """Customer ids per company found in ``text`` (``company_to_id_search``)."""
        if not self.companies:
            return {}
        found = dict.fromkeys(m.group(1).lower() for m in self.companies.finditer(text))
        return {c: self.cust2id[c] for c in found}

    def id_to_company(self, text: str) -> dict[str, str]:
        """Company per customer id in ``text``, as written (``id_to_company_search``)."""
        ids = dict.fromkeys(m.group(0) for m in CUST_RE.finditer(text))
        return {i: self.id2cust[i.lower()] for i in ids if i.lower() in self.id2cust}

    def prs(self, text: str) -> list[dict[str, Any]]:
        """PR records for the links in ``text`` (``pr_search``), case-insensitive."""
        return [self.pr_meta[link.lower()] for link in find_links(text)
                if link.lower() in self.pr_meta]  # fmt: skip

    def urls(self, text: str) -> list[dict[str, Any]]:
        """URL or document records for the links in ``text`` (``url_search``)."""
        return [self.url_meta[link.lower()] for link in find_links(text)
                if link.lower() in self.url_meta]  # fmt: skip

    # -- tools -------------------------------------------------------------------------------
    def toolkit(self, *, top_k: int = 20, faithful_tool_bugs: bool = False) -> Toolkit:
        """A fresh toolkit (own call log) with the nine HERB tools and ``submit``.

        Arguments are checked against each tool's JSON schema (a mismatch is the model's
        mistake, an ``Error: ...`` observation); ``submit`` coerces its own (see
        `make_submission`). The tools raise nothing else for the model's input: an exception
        from the index or the look-up tables (a corrupt index, a bug) is an environment fault
        and propagates, so the item becomes an error, never a scored answer.
        """

        def retrieve_all(input: str) -> str:  # noqa: A002  (upstream's argument name)
            return self.retrieve(str(input), top_k)

        def role_to_id_search(text: str) -> dict[str, list[str]]:
            if faithful_tool_bugs:  # upstream raises a KeyError here; the model reads why
                raise ToolError(
                    "role_to_id_search failed: its prompt template expects a 'text' "
                    "placeholder that the call does not fill (upstream defect, reference §3b)"
                )
            return self.role_to_id(str(text))

        def id_to_role_search(content: str) -> Any:
            found = self.id_to_role(str(content))
            return sorted(found) if faithful_tool_bugs else found

        def submit(answer: str, entities: Any = None, answerable: Any = True) -> dict[str, Any]:
            return make_submission(answer, entities, answerable)

        text_arg = {
            "type": "object",
            "required": ["content"],
            "properties": {
                "content": {"type": "string", "description": "Text containing the items to look up."}
            },
        }
        t = Tool
        return Toolkit.of(
            t(
                "retrieve_all",
                "Search all unstructured sources (Slack messages, documents, "
                "meeting transcripts and meeting chats) and return the most relevant artifacts "
                "with their metadata (ids, channel, date, author or participants).",
                {
                    "type": "object",
                    "required": ["input"],
                    "properties": {"input": {"type": "string", "description": "The search query."}},
                },
                retrieve_all,
            ),
            t(
                "role_to_id_search",
                "Find the role names (e.g. 'Product Manager') in a text and "
                "return the employee IDs holding each role.",
                {
                    "type": "object",
                    "required": ["text"],
                    "properties": {
                        "text": {"type": "string", "description": "Text that names one or more roles."}
                    },
                },
                role_to_id_search,
            ),
            t(
                "name_to_id_search",
                "Find employee names (full names or single first/last "
                "names) in a text and return the matching employee IDs per name.",
                text_arg,
                lambda content: self.name_to_id(str(content)),
            ),
            t(
                "company_to_id_search",
                "Find customer company names in a text and return their customer IDs.",
                text_arg,
                lambda content: self.company_to_id(str(content)),
            ),
            t(
                "id_to_company_search",
                "Find customer IDs (e.g. CUST-0012345) in a text and return the company name of each.",
                text_arg,
                lambda content: self.id_to_company(str(content)),
            ),
            t(
                "id_to_name_search",
                "Find employee IDs (e.g. eid_1a2b3c4d) in a text and return the employee name of each.",
                text_arg,
                lambda content: self.id_to_name(str(content)),
            ),
            t(
                "id_to_role_search",
                "Find employee IDs in a text and return the role of each (e.g. 'Software Engineer').",
                text_arg,
                id_to_role_search,
            ),
            t(
                "pr_search",
                "Find GitHub pull request links in a text and return each PR's "
                "metadata: title, author, state, summary and reviews.",
                text_arg,
                lambda content: self.prs(str(content)),
            ),
            t(
                "url_search",
                "Find URLs (web pages or document links) in a text and return what "
                "is known about each: its description, or the document behind it.",
                text_arg,
                lambda content: self.urls(str(content)),
            ),
            t(
                "submit",
                "Submit the final answer. Put the answer text in 'answer', the "
                "entities that make up the answer (employee IDs, customer company names, URLs or "
                "PR links) in 'entities', and set 'answerable' to false when the sources do not "
                "contain the answer.",
                {
                    "type": "object",
                    "required": ["answer"],
                    "properties": {
                        "answer": {"type": "string", "description": "The final answer text."},
                        "entities": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "Entities that make up the answer.",
                        },
                        "answerable": {
                            "type": "boolean",
                            "description": "False when the question cannot be answered from the sources.",
                        },
                    },
                },
                submit,
                kind="submit",
                validate=False,  # make_submission reads loosely typed entities/answerable
            ),
        )


def make_submission(answer: Any, entities: Any = None, answerable: Any = True) -> dict[str, Any]:
    """Normalise a ``submit`` call: ``{"answer": str, "entities": [str], "answerable": bool}``.

    A string ``entities`` becomes a one-item list; ``answerable`` given as text is read as
    false for ``false``/``no``/``0``.
    """
    if entities is None:
        ents: list[str] = []
    elif isinstance(entities, str):
        ents = [entities] if entities.strip() else []
    elif isinstance(entities, (list, tuple)):
        ents = [str(e) for e in entities if str(e).strip()]
    else:
        ents = [json.dumps(entities)]
    if isinstance(answerable, str):
        flag = answerable.strip().lower() not in ("false", "no", "0")
    else:
        flag = bool(answerable)
    return {"answer": "" if answer is None else str(answer), "entities": ents, "answerable": flag}


@functools.lru_cache(maxsize=8)
def _cached_env(world_key: str, retriever: str, dense: str | None, index_links: bool) -> HerbEnv:
    def build() -> HerbEnv:  # the world is let go of before indexing (see HerbSuite.prepare)
        return HerbEnv.from_world(lambda: get_world(json.loads(world_key)), release_worlds,
                                  retriever=retriever, dense_encoder=dense,
                                  index_links=index_links)  # fmt: skip

    if dense is not None:  # a plug-in encoder may not pickle (or may hold a model): not shared
        return build()
    import_bm25s()  # before a shared build is unpickled (which imports bm25s)
    key = {"world": json.loads(world_key), "retriever": retriever, "index_links": index_links,
           "version": SUITE_VERSION}  # fmt: skip
    return build_once("herb-env", key, build, isolate=True)  # the world stays in the builder


def get_env(spec: dict[str, Any], options: Any) -> HerbEnv:
    """The environment for world ``spec`` under ``options``, built once per process.

    Under pytest-xdist one worker per session builds it (index and look-up tables) and the
    others unpickle it (:func:`pytest_egi.cache.shared.build_once`), unless ``dense_encoder`` names
    a plug-in: then each process builds its own.
    """
    return _cached_env(json.dumps(spec, sort_keys=True), options.retriever,
                       options.dense_encoder, options.index_links)  # fmt: skip
