"""Resampling documents as weights on the rows of a count table.

A bootstrap resample of ``n`` documents is a vector of multiplicities ``w``
(how often each document was drawn, summing to ``n``); the resample's summed
counts are ``w @ counts``. Drawing the indices, counting them with
``np.bincount`` and multiplying by the table a chunk of resamples at a time
keeps memory at ``chunk × n`` integers whatever the number of resamples.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

CHUNK_CELLS = 4_000_000  # indices drawn at once: 32 MB of int64


def bootstrap_sums(counts: np.ndarray, resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Yield ``[chunk, k]`` arrays of summed counts, ``resamples`` rows in all, each a bootstrap resample.

    ``counts`` is ``[n, k]`` (or ``[n, m, k]`` for ``m`` systems resampled
    together, yielding ``[chunk, m, k]``: paired resamples draw the same
    documents for every system).
    """
    n = counts.shape[0]
    flat = counts.reshape(n, -1).astype(np.float64, copy=False)
    for weights in bootstrap_weights(n, resamples, rng):
        yield (weights @ flat).reshape((len(weights), *counts.shape[1:]))


def bootstrap_weights(
    n: int, resamples: int, rng: np.random.Generator, strata: tuple[int, ...] = ()
) -> Iterator[np.ndarray]:
    """Yield ``[chunk, n]`` float arrays of multiplicities ``w``, ``resamples`` rows in all, ``chunk × n`` at most
    :data:`CHUNK_CELLS`: row ``r`` counts how often each of ``n`` documents was drawn in resample ``r``.

    The draw depends only on ``n``, ``resamples``, ``strata`` and the generator's state, so every table of ``n``
    rows resampled from the same seed is resampled by these same weights (its sums are ``w @ counts``).
    ``strata`` (sizes summing to ``n``) splits the rows into consecutive blocks, each resampled within itself
    (the stratified bootstrap: block ``s`` of ``nₛ`` rows draws ``nₛ`` of its own rows, so each row of ``w`` sums
    to ``nₛ`` over the block); empty: one block, all ``n`` rows.
    """
    sizes = strata or (n,)
    if sum(sizes) != n or min(sizes) < 1:
        raise ValueError(f"strata of sizes {sizes} do not split {n} rows")
    chunk = max(1, CHUNK_CELLS // max(n, 1))
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        yield np.hstack([_multiplicities(block, size, rng) for block in sizes]).astype(np.float64)


def _multiplicities(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``[size, n]`` integers: how often each of ``n`` rows was drawn in each of ``size`` resamples of ``n``."""
    drawn = rng.integers(0, n, size=(size, n), dtype=np.int64)
    drawn += np.arange(size)[:, None] * n
    return np.bincount(drawn.ravel(), minlength=size * n).reshape(size, n)


def leave_one_out_sums(counts: np.ndarray) -> np.ndarray:
    """``[n, …]``: the summed counts of all documents but the i-th, for every i (the jackknife)."""
    return counts.sum(axis=0, keepdims=True) - counts
