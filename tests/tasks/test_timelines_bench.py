"""The timelines benchmark tells agreement from disagreement: every number eval_timeline.py prints is compared
with nlpbench's, bit for bit, and one that differs by the last bit is named (``benchmarks/timelines_bench.py``)."""

from __future__ import annotations

import importlib
import math
from datetime import date
from pathlib import Path

import pytest

from nlpbench.report import render
from nlpbench.tasks.timelines import score_timelines

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    """The benchmark script as a module (it imports its neighbour ``machine`` by name, as when it is run)."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("timelines_bench")


#: The line before the official score (or the advice to run in strict mode), its trailing blank included.
ARITHMETIC = (
    "Official Score: Arithmetic mean of two types of Macro F1, type A and B, in 'strict' setting will be used for "
    "the leaderboard. "
)


def printed(numbers: dict[tuple[str, str], float], strict: bool = True) -> str:
    """What eval_timeline.py (BCHHealthNLP/chemoTimelinesEval a7cf6f7) prints, with ``numbers``: the official
    score in strict mode only."""
    n = numbers.__getitem__
    official = (
        f"Official Score:  {n(('official', 'f1'))}"
        if strict
        else "To see the official score, please run with the --strict flag"
    )
    return f"""Evaluation code for ChemoTimelines Shared Task. Version: v20240305
Reading from files...
predicted output: 40, gold annotation: 40, all ids: 40

Micro average metrics
Micro precision: {n(("micro", "precision"))}
Micro recall: {n(("micro", "recall"))}
Micro f1: {n(("micro", "f1"))}

Macro average metrics
Type A evaluation: including the notes with no true relations
[Type A] Macro precision: {n(("type_a", "precision"))}
[Type A] Macro recall: {n(("type_a", "recall"))}
[Type A] Macro f1:  {n(("type_a", "f1"))}

Type B evaluation: excluding the notes with no true relations
[Type B] Macro precision: {n(("type_b", "precision"))}
[Type B] Macro recall: {n(("type_b", "recall"))}
[Type B] Macro f1:  {n(("type_b", "f1"))}

{ARITHMETIC}
{official}
Evaluation completed!
"""


def test_every_printed_number_is_compared_and_one_bit_off_is_named(bench, tmp_path):
    gold, pred, ids = bench.write_inputs(tmp_path, 40, 7)
    report = score_timelines(gold, pred, ids, profile="chemotimelines2024", reference_date=date(2026, 11, 21))
    mine = bench.nlpbench_numbers(render(report, "json"))
    official = bench.official_numbers(printed(mine))
    assert len(official) == 10 and all(official[name] == mine[name] for name in official)
    assert bench.disagreements(official, mine) == []
    relaxed = bench.official_numbers(printed(mine, strict=False))  # nlpbench's official row has no counterpart
    assert (len(relaxed), len(mine), bench.disagreements(relaxed, mine)) == (9, 10, [])
    for name in official:
        off = {**official, name: math.nextafter(official[name], 1.0)}
        assert bench.disagreements(bench.official_numbers(printed(off)), mine) == [
            f"{name[0]} {name[1]}: official {off[name]!r}, nlpbench {mine[name]!r}"
        ]
    missing = {name: value for name, value in mine.items() if name != ("type_b", "recall")}
    assert bench.disagreements(official, missing) == [
        f"type_b recall: official {official['type_b', 'recall']!r}, nlpbench has none"
    ]
    assert bench.disagreements(bench.official_numbers("Traceback (most recent call last):\n"), mine) == [
        "the official script printed no score"
    ]
