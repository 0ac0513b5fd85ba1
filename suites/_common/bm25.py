"""Import ``bm25s`` without SciPy.

``bm25s`` (pinned in pyproject.toml) imports ``scipy.sparse`` when it can, only to offer its
``csc_backend="scipy"`` index builder; the suites build with its default ``"numpy"`` backend,
so SciPy does nothing for them but cost about 20 MB of memory in every process that searches
(pytest and each xdist worker). :func:`import_bm25s` imports ``bm25s`` with ``scipy.sparse``
hidden, unless something else already imported it. The scores are the same: ``BM25()`` builds
with ``"numpy"`` either way.
"""

from __future__ import annotations

import sys
from types import ModuleType

__all__ = ["import_bm25s"]


def import_bm25s() -> ModuleType:
    """The ``bm25s`` module, imported (the first time) without loading ``scipy.sparse``.

    Call it before ``import bm25s`` and before unpickling an index built with it (unpickling
    imports the module).
    """
    if "bm25s" in sys.modules:
        return sys.modules["bm25s"]
    hide = "scipy.sparse" not in sys.modules
    if hide:
        sys.modules["scipy.sparse"] = None  # type: ignore[assignment]  # import fails: no SciPy
    try:
        import bm25s
    finally:
        if hide and sys.modules.get("scipy.sparse", False) is None:
            del sys.modules["scipy.sparse"]
    return bm25s
