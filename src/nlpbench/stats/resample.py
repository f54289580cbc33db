"""Resampling documents as weights on the rows of a count table.

A bootstrap resample of ``n`` documents is a vector of multiplicities ``w``
(how often each document was drawn, summing to ``n``); the resample's summed
counts are ``w @ counts``. Drawing the indices, counting them with
``np.bincount`` and multiplying by the table a chunk of resamples at a time
keeps memory at ``chunk × n`` integers whatever the number of resamples.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

CHUNK_CELLS = 4_000_000  # indices drawn at once: 32 MB of int64
#: The most weights (resamples × documents, 8 bytes each) a :class:`Draws` keeps: 128 MB.
HELD_CELLS = 16_000_000


def bootstrap_sums(counts: np.ndarray, resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Yield ``[chunk, k]`` arrays of summed counts, ``resamples`` rows in all, each a bootstrap resample.

    ``counts`` is ``[n, k]`` (or ``[n, m, k]`` for ``m`` systems resampled
    together, yielding ``[chunk, m, k]``: paired resamples draw the same
    documents for every system).
    """
    return weighted_sums(counts, bootstrap_weights(counts.shape[0], resamples, rng))


def weighted_sums(counts: np.ndarray, weights: Iterable[np.ndarray]) -> Iterator[np.ndarray]:
    """Yield ``w @ counts`` for each ``[chunk, n]`` array ``w`` of ``weights``, shaped as :func:`bootstrap_sums`."""
    n = counts.shape[0]
    flat = counts.reshape(n, -1).astype(np.float64, copy=False)
    for chunk in weights:
        yield (chunk @ flat).reshape((len(chunk), *counts.shape[1:]))


class Draws:
    """Bootstrap weights drawn once and reused: many tests over the same ``n`` documents with the same seed.

    :func:`bootstrap_weights` of ``n`` rows, ``resamples``, a generator seeded ``seed`` and ``strata`` depends on
    nothing else, so every paired test of a leaderboard column (seed 0, the column's documents) resamples with the same
    weights ``w``; :meth:`weights` draws them the first time and hands back the same arrays after, the numbers
    of each test unchanged bit for bit. Up to :data:`HELD_CELLS` weights are kept; beyond it, each call draws
    them again. A value passed to whoever shares it, never module state.
    """

    def __init__(self, limit: int = HELD_CELLS) -> None:
        self._held: dict[tuple[int, int, int, tuple[int, ...]], list[np.ndarray]] = {}
        self._cells = 0
        self._limit = limit

    def weights(self, n: int, resamples: int, seed: int, strata: tuple[int, ...] = ()) -> list[np.ndarray]:
        """The ``[chunk, n]`` weights of :func:`bootstrap_weights` (``n``, ``resamples``, a generator seeded
        ``seed``, ``strata``), drawn once."""
        key = (n, resamples, seed, strata)
        if key in self._held:
            return self._held[key]
        drawn = list(bootstrap_weights(n, resamples, np.random.default_rng(seed), strata))
        if self._cells + n * resamples <= self._limit:
            self._held[key] = drawn
            self._cells += n * resamples
        return drawn


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
        weights = np.empty((size, n))
        at = 0
        for block in sizes:
            _multiplicities(block, size, rng, weights[:, at : at + block])
            at += block
        yield weights


def _multiplicities(n: int, size: int, rng: np.random.Generator, out: np.ndarray) -> None:
    """Write into ``out`` (``[size, n]`` floats) how often each of ``n`` rows was drawn in each of ``size``
    resamples of ``n``: one draw of ``size × n`` indices (the generator's stream as a single call draws it), counted
    a resample at a time into ``out``, so that no second ``size × n`` array of integers is made beside the draw."""
    drawn = rng.integers(0, n, size=(size, n), dtype=np.int64)
    for row, indices in zip(out, drawn, strict=True):
        row[:] = np.bincount(indices, minlength=n)


def leave_one_out_sums(counts: np.ndarray) -> np.ndarray:
    """``[n, …]``: the summed counts of all documents but the i-th, for every i (the jackknife)."""
    return counts.sum(axis=0, keepdims=True) - counts
