"""The bootstrap weights counted a resample at a time are those of one count over the whole draw, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from nlpbench.stats import resample
from nlpbench.stats.resample import bootstrap_weights


def whole_draw_weights(n: int, resamples: int, seed: int, strata: tuple[int, ...], chunk: int) -> list[np.ndarray]:
    """The weights as counted before: each chunk's draw offset by its resample and counted by one ``bincount``
    over all of it, the strata's counts laid side by side."""
    rng = np.random.default_rng(seed)
    found = []
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        blocks = []
        for block in strata or (n,):
            drawn = rng.integers(0, block, size=(size, block), dtype=np.int64)
            drawn += np.arange(size)[:, None] * block
            blocks.append(np.bincount(drawn.ravel(), minlength=size * block).reshape(size, block))
        found.append(np.hstack(blocks).astype(np.float64))
    return found


@pytest.mark.parametrize(("n", "strata"), [(1, ()), (7, ()), (1001, ()), (10, (3, 7)), (500, (1, 250, 249))])
def test_weights_are_those_of_one_count_over_the_whole_draw(
    monkeypatch: pytest.MonkeyPatch, n: int, strata: tuple[int, ...]
) -> None:
    monkeypatch.setattr(resample, "CHUNK_CELLS", 3000)  # several chunks, the last shorter
    chunk = max(1, 3000 // n)
    expected = whole_draw_weights(n, 37, 5, strata, chunk)
    drawn = list(bootstrap_weights(n, 37, np.random.default_rng(5), strata))
    assert len(drawn) == len(expected)
    for got, want in zip(drawn, expected, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want)
