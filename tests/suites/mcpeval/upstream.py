"""Where upstream MCPEval's stored analysis files are read from, for the acceptance tests."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
"""The repository root."""
UPSTREAM = Path(os.environ.get("EGI_MCPEVAL_UPSTREAM", ROOT.parent / "shared" / "upstream" / "mcpeval"))
"""``$EGI_MCPEVAL_UPSTREAM``, else ``<repo>/../shared/upstream/mcpeval`` (upstream's
``benchmarks/playwright/llm_judger_results/<model>/{task_metrics,summary_analysis}.json``)."""
