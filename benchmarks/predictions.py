"""Prediction files the benchmarks score: the gold with a share of its annotations left out (``python
benchmarks/NAME.py`` puts this folder on the path, so each script imports it by name)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from nlpbench.model import Document


def thinned(documents: Iterable[Document], every: int) -> list[Document]:
    """The documents without the annotations whose index (within their note) is a multiple of ``every``: a tool
    that misses about one in ``every`` of the gold's annotations and invents none."""
    return [
        dataclasses.replace(d, annotations=[a for i, a in enumerate(d.annotations) if i % every]) for d in documents
    ]
