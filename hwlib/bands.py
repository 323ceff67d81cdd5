"""Filling a large numpy result fast: reused memory for big blocks, and row bands filled on a few threads.

Numpy releases the GIL inside its loops, so bands of a grid run at once on a multi-core machine; reusing a
block spares the page faults of fresh memory, which cost as much as the arithmetic on a 10^6-point grid
(see benchmarks/run.py). Used by the layer model (chapter :ref:`ch-compute-and-commute`).
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import sys
from collections.abc import Callable

import numpy as np

PARALLEL_ELEMENTS = 2**18
"""Grids of at least this many points are filled by row bands on several threads."""

_SPARE_BLOCKS: list[np.ndarray] = []
"""The two most recent large blocks, reused once nothing else refers to them."""


def new_block(shape: tuple[int, ...]) -> np.ndarray:
    """Memory of ``shape``: a spare block that no result or view still holds (its only references are the
    list, the loop and getrefcount's argument), else a new one."""
    for block in _SPARE_BLOCKS:
        if block.shape == shape and sys.getrefcount(block) == 3:
            return block
    block = np.empty(shape)
    if block.nbytes >= 2**22:
        _SPARE_BLOCKS.append(block)
        del _SPARE_BLOCKS[:-2]
    return block


@functools.cache
def _threads() -> concurrent.futures.ThreadPoolExecutor:
    return concurrent.futures.ThreadPoolExecutor(max_workers=min(os.cpu_count() or 1, 4))


def fill_in_bands(
    fill: Callable[..., None], block: np.ndarray, factors: dict[str, np.ndarray], *args: object
) -> np.ndarray:
    """``fill(block, factors, *args)``, where ``block`` is (fields, *grid) and each factor broadcasts to the
    grid: in one call for a small grid, else in row bands of the grid on a few threads. Returns ``block``."""
    grid = block.shape[1:]
    if block[0].size < PARALLEL_ELEMENTS or grid[0] < 2:
        fill(block, factors, *args)
        return block
    full = {name: np.broadcast_to(value, grid) for name, value in factors.items()}
    bands = np.linspace(0, grid[0], min(_threads()._max_workers, grid[0]) + 1).astype(int)
    jobs = [
        _threads().submit(fill, block[:, lo:hi], {k: v[lo:hi] for k, v in full.items()}, *args)
        for lo, hi in zip(bands[:-1], bands[1:])
    ]
    for job in jobs:
        job.result()
    return block
