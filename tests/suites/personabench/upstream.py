"""Where the released PersonaBench files are read from (never shipped: CC BY-NC-SA 4.0)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
UPSTREAM = Path(
    os.environ.get(
        "EGI_PERSONABENCH_UPSTREAM",
        ROOT.parent / "shared" / "upstream" / "personabench" / "eval_data" / "eval_data_v1",
    )
)
"""``$EGI_PERSONABENCH_UPSTREAM``, else ``<repo>/../shared/upstream/personabench/eval_data/eval_data_v1``."""


def needs_upstream() -> pytest.MarkDecorator:
    """Skip when the released files are not beside the checkout."""
    return pytest.mark.skipif(
        not (UPSTREAM / "synthetic_data").is_dir(),
        reason=f"upstream PersonaBench files not found at {UPSTREAM}",
    )
