"""Loaded with ``-p bench._rss_plugin``: each pytest process (the controller and every xdist
worker) writes its own peak RSS (KiB, ``ru_maxrss`` of itself) at session end to
``$EGI_BENCH_RSS_DIR/<worker id or controller>.txt``."""

from __future__ import annotations

import os
import resource
from pathlib import Path


def pytest_sessionfinish(session):  # noqa: D103 - a pytest hook
    where = os.environ.get("EGI_BENCH_RSS_DIR")
    if where:
        name = os.environ.get("PYTEST_XDIST_WORKER", "controller")
        Path(where, f"{name}.txt").write_text(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
