"""Where the tests find upstream MCP-Universe's task files.

The upstream repository checkout is ``$EGI_MCP_UNIVERSE_UPSTREAM``, else
``<repo>/../shared/upstream/mcp_universe``; its task files are in
``mcpuniverse/benchmark/configs/test/<domain>/*.json``. Tests that need them are skipped (with
the folder in the reason) when they are absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CHECKOUT = Path(
    os.environ.get("EGI_MCP_UNIVERSE_UPSTREAM", ROOT.parent / "shared" / "upstream" / "mcp_universe")
)
"""The upstream repository checkout."""
TASK_ROOT = CHECKOUT / "mcpuniverse" / "benchmark" / "configs" / "test"
"""The folder of upstream's task files, one subfolder per domain."""


def task_files(domain: str) -> list[Path]:
    """Upstream's task files of ``domain``, sorted by path; ``[]`` when the folder is absent."""
    folder = TASK_ROOT / domain
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def needs_upstream(domain: str | None = None) -> pytest.MarkDecorator:
    """Skip unless upstream's task files (of ``domain``, else the folder of all) are present."""
    if domain is None:
        return pytest.mark.skipif(
            not TASK_ROOT.is_dir(),
            reason=f"upstream task files not found at {TASK_ROOT} (set EGI_MCP_UNIVERSE_UPSTREAM to the "
            "upstream MCP-Universe checkout)",
        )
    folder = TASK_ROOT / domain
    return pytest.mark.skipif(
        not task_files(domain),
        reason=f"upstream {domain} task files not found at {folder} (set EGI_MCP_UNIVERSE_UPSTREAM to the "
        "upstream MCP-Universe checkout)",
    )
