"""Unicode-aware answer normalisation shared by every suite's scorer.

Upstream benchmarks normalise answers with ASCII-only rules (``str.lower``, ``string.punctuation``),
so a model that writes a typographic apostrophe (``Kelly’s``), a non-breaking space, an en dash
or a full-width digit loses a match a reader would grant. Every scorer here first *folds* the
text (:func:`fold_text`), then applies its benchmark's own rule on top (:func:`normalize_answer`
with the options the upstream formula uses). Only the normalisation is Unicode-aware: the
formulas that compare the normalised texts stay the benchmark's.

Folding, in order:

1. typographic quotes, apostrophes, primes and dashes are mapped to their ASCII counterparts
   (``‘ ’ ‚ ‛ ′ ʼ ´`` → ``'``; ``“ ” „ ‟ ″ « »`` → ``"``; ``‐ ‑ ‒ – — ― −`` → ``-``);
2. Unicode NFKC (full-width forms, ligatures such as ``ﬁ``, ``…`` → ``...``, superscripts);
3. the mapping of step 1 again (NFKC can produce a dash or a prime it then leaves as is);
4. invisible format characters (zero-width space/joiners, word joiner, BOM, soft hyphen)
   are removed;
5. every run of Unicode whitespace becomes one space; leading/trailing space is dropped.

Folding never changes letter case, so case-sensitive identifiers (Salesforce record ids)
survive it; :func:`normalize_answer` casefolds.
"""

from __future__ import annotations

import re
import string
import unicodedata
from typing import Literal

__all__ = ["REFUSAL_RE", "fold_text", "is_punctuation", "is_refusal", "normalize_answer"]

_TYPOGRAPHIC = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035\u02bc\u00b4", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58\ufe63\uff0d", "-"),
    }
)
_INVISIBLE = str.maketrans(dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_ASCII_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def fold_text(text: str) -> str:
    """Fold ``text`` to its plain form: typographic marks to ASCII, NFKC, no invisible
    characters, whitespace collapsed; letter case is kept.

    Args:
        text: any string (a non-string is converted with ``str``).

    Returns:
        The folded text, e.g. ``fold_text("Kelly’s\u00a0 report — final")`` is
        ``"Kelly's report - final"``.
    """
    text = str(text).translate(_TYPOGRAPHIC)
    text = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHIC).translate(_INVISIBLE)
    return " ".join(text.split())


def is_punctuation(ch: str) -> bool:
    """True for ASCII punctuation (``string.punctuation``, which upstream normalisers use,
    symbols such as ``$`` and ``+`` included) and for any Unicode punctuation (category P*)."""
    return ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P")


def normalize_answer(
    text: str,
    *,
    punctuation: Literal["keep", "drop", "space"] = "keep",
    articles: bool = False,
) -> str:
    """Fold ``text`` (:func:`fold_text`), casefold it, then apply a benchmark's own rule.

    Args:
        text: the answer or gold text.
        punctuation: ``keep``; ``drop`` deletes each punctuation character (HERB / SQuAD
            ``normalize``: ``"PRD's"`` → ``"prds"``); ``space`` replaces it by a space
            (CRMArena ``fuzzy_match``: ``"customer_id's"`` → ``"customer id s"``). Punctuation
            is ASCII ``string.punctuation`` plus Unicode category P*, see :func:`is_punctuation`.
        articles: drop the whole words ``a``, ``an``, ``the`` (both upstream rules do).

    Returns:
        Space-separated tokens, e.g. ``normalize_answer("The  Kelly’s Report!",
        punctuation="drop", articles=True)`` is ``"kellys report"``, the same as for
        ``"the kelly's report"``.
    """
    text = fold_text(text).casefold()
    if punctuation == "drop":
        text = "".join(ch for ch in text if not is_punctuation(ch))
    elif punctuation == "space":
        text = "".join(" " if is_punctuation(ch) else ch for ch in text)
    elif punctuation != "keep":
        raise ValueError(f"punctuation must be 'keep', 'drop' or 'space', got {punctuation!r}")
    if articles:
        text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


REFUSAL_RE = re.compile(
    r"\b(i\s+(do\s+not|don'?t|cannot|can'?t|could\s*not|couldn'?t|am\s+unable\s+to|was\s+unable"
    r"\s+to)\s+(know|find|answer|determine|locate|identify|tell)"
    r"|(cannot|can'?t|could\s*not|couldn'?t|unable\s+to)\s+(be\s+)?(answer|find|determin|locat"
    r"|identif|found)\w*"
    r"|(is|are|was|were)\s+not\s+(available|mentioned|provided|found|specified|stated|present"
    r"|included)"
    r"|no\s+(information|record|records|mention|data|evidence|details?)\b"
    r"|(does|do)\s+not\s+(contain|provide|mention|include|specify|say)"
    r"|(not|un)\s*answerable|insufficient\s+(information|context|evidence)"
    r"|there\s+(is|are)\s+no\s+(such|matching|relevant))",
    re.IGNORECASE,
)
"""A phrase that declines to answer ("I don't know", "I could not find", "the information is
not available", "insufficient context"), searched in folded text. HERB's abstention rule
(reference §2, "unanswerable": an answer that says the information is missing) reads it with
its own guard (the reply names no entity); :func:`is_refusal` with a length guard."""

REFUSAL_MAX_WORDS = 30
"""A reply longer than this is never read as a bare refusal by :func:`is_refusal` (a long reply
that says it could not find one thing usually goes on to answer)."""


def is_refusal(text: str) -> bool:
    """True when ``text`` only declines to answer: "I don't know.", "I could not find that",
    "The information is not available." (:data:`REFUSAL_RE`, after :func:`fold_text`, so
    ``I don’t know`` with a typographic apostrophe counts), in at most
    :data:`REFUSAL_MAX_WORDS` words. The one rule every suite uses to count an "I don't
    know"-style answer (failure kind ``gave_up``, :func:`pytest_egi.outcomes.ending_kind`);
    a blank text is not a refusal but no answer.

    Args:
        text: the final answer text.
    """
    folded = fold_text(text)
    return bool(folded) and len(folded.split()) <= REFUSAL_MAX_WORDS and bool(REFUSAL_RE.search(folded))
