"""What a suite's ``release`` hook (``pytest_egi.suite.Suite.release``) shares: clearing the
per-process caches of functions, in modules this process has imported.

A suite's worlds and indexes live in ``functools`` caches of its modules (and of the shared
servers' modules, :mod:`suites._common.mcp_servers`, whose worlds the suites' scorers read in
the pytest process too). Once a process has run its last item of the suite, the core calls the
suite's ``release``, which clears them with :func:`clear_caches`; a cleared cache is filled
again on its next use, with the same values (the worlds are seeded).
"""

from __future__ import annotations

import sys

__all__ = ["clear_caches"]


def clear_caches(*names: str) -> list[str]:
    """Clear the cache of each ``"module:function"`` (a ``functools.lru_cache`` or
    ``functools.cache``) whose module is imported in this process; a module that is not
    imported holds nothing and is not imported here.

    Returns:
        The names whose cache was cleared, in the order given.

    Raises:
        AttributeError: the module has no such function, or it has no ``cache_clear`` (a
            suite naming a function that is not a cache is a bug in the suite).
    """
    cleared = []
    for name in names:
        module_name, _, function = name.partition(":")
        module = sys.modules.get(module_name)
        if module is None:
            continue
        cached = getattr(module, function)
        cached.cache_clear()
        cleared.append(name)
    return cleared
