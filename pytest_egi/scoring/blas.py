"""One BLAS thread for a stretch of code (the bootstrap's small matrix products).

numpy's bundled OpenBLAS runs a matrix product above a few hundred thousand multiply-adds on
every core, and its helper threads then busy-wait for the next product (OpenBLAS'
``THREAD_TIMEOUT``, about 2**28 cycles) before they sleep. The bootstrap
(:meth:`pytest_egi.scoring.egi.BootstrapPlan.run`) does one small product per suite and chunk
of resamples, between stretches of plain Python that draw the next chunk: the helper threads
never sleep, and the bootstrap's CPU time doubles on two cores (measured: 5.5 s against 1.4 s
for a deep run of seven suites), with no gain in wall time. OpenBLAS splits a product among its
threads by rows and columns of the result, each cell's sum in the same order, so the products
are the same bit for bit on one thread.

Only numpy's OpenBLAS (found among the libraries this process has loaded, on Linux) is
handled; anywhere else :func:`one_blas_thread` changes nothing.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_PREFIXES = ("scipy_openblas", "openblas")
_SUFFIXES = ("64_", "")


def _loaded_openblas() -> list[str]:
    """Paths of the OpenBLAS libraries mapped into this process (``/proc/self/maps``), in
    the order first mapped; empty off Linux or when none is loaded."""
    maps = Path("/proc/self/maps")
    if not sys.platform.startswith("linux") or not maps.is_file():
        return []
    paths: dict[str, None] = {}
    try:
        text = maps.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    for line in text.splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and "openblas" in Path(parts[5]).name.lower():
            paths[parts[5]] = None
    return list(paths)


def _thread_controls() -> list[tuple[ctypes._CFuncPtr, ctypes._CFuncPtr]]:
    """``(get_num_threads, set_num_threads)`` of each loaded OpenBLAS that exports them."""
    out = []
    for path in _loaded_openblas():
        try:
            lib = ctypes.CDLL(path)  # already loaded: the same library, its reference count + 1
        except OSError:
            continue
        for prefix in _PREFIXES:
            for suffix in _SUFFIXES:
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    get.restype, get.argtypes = ctypes.c_int, []
                    put.restype, put.argtypes = None, [ctypes.c_int]
                    out.append((get, put))
                    break
            else:
                continue
            break
    return out


@contextmanager
def one_blas_thread() -> Iterator[int]:
    """Run the block with numpy's OpenBLAS on one thread; the thread counts are put back
    after it (also when it raises). Import numpy before entering (its library must be loaded
    to be found).

    Yields:
        The number of OpenBLAS libraries set to one thread (0: none found, nothing changed).
    """
    controls = _thread_controls()
    before = [get() for get, _ in controls]
    for _, put in controls:
        put(1)
    try:
        yield len(controls)
    finally:
        for (_, put), count in zip(controls, before, strict=True):
            put(count)
