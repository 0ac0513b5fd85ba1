"""Upstream Benchforce's repository layout, read as it is (``--egi-opt benchforce.data_dir=PATH``).

``PATH`` is a checkout of upstream's repository: an environment's files are under
``PATH/src/environments/<env>/`` (data tables, and ``entries_dump.json`` or ``entries.py``).
Each environment reads its own files (:attr:`Environment.load_upstream`); this module finds the
folder, caches what was read per process, and turns a missing folder or an environment that
cannot read upstream's files into a clear error. (Without that option the worlds and entries
are generated from the seed by each environment, :mod:`suites.benchforce.env`.)
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from suites.benchforce.env.base import Environment, UpstreamData

__all__ = ["env_dir", "load_upstream", "load_world"]


def env_dir(data_dir: Path, env_name: str) -> Path:
    """``data_dir/src/environments/<env_name>``.

    Raises:
        FileNotFoundError: the folder is absent (the message names it and what PATH must be).
    """
    folder = Path(data_dir) / "src" / "environments" / env_name
    if not folder.is_dir():
        raise FileNotFoundError(
            f"data_dir {str(data_dir)!r} has no {env_name} folder at {str(folder)!r}; "
            "set --egi-opt benchforce.data_dir=PATH to a checkout of upstream's repository (the "
            "folder holding src/environments/)"
        )
    return folder


@functools.lru_cache(maxsize=8)
def _load(env_name: str, folder: str) -> UpstreamData:
    from suites.benchforce.env import environment

    env = environment(env_name)
    if env.load_upstream is None:
        raise ValueError(f"the {env_name} environment cannot read upstream's files yet")
    return env.load_upstream(Path(folder))


def load_upstream(env: Environment, data_dir: Path) -> UpstreamData:
    """What ``env`` reads from upstream's files under ``data_dir`` (cached per process).

    Raises:
        FileNotFoundError: no folder for ``env`` (see :func:`env_dir`).
        ValueError: ``env`` cannot read upstream's files, or a file is malformed (the
            environment's message names the file, the field and the fix).
    """
    return _load(env.name, str(env_dir(data_dir, env.name).resolve()))


def load_world(env: Environment, data_dir: Path) -> dict[str, Any]:
    """The world built from upstream's data files (what the server's sessions start from)."""
    return load_upstream(env, data_dir).world
