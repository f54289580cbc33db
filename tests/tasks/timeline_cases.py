"""The hand-built ChemoTimelines cases and their official results, and files to score them from.

``data/timelines_official_cases.json`` holds 142 runs of the official
``eval_timeline.py`` (BCHHealthNLP/chemoTimelinesEval at a7cf6f7, python-dateutil
2.8.2, Python 3.11) on 34 small cases, each in one mode on one run date (faked
with faketime where it is not 2026-11-21). ``expected`` is what the script
printed, and the per-patient counts it logged; crashes are ``{error,
raised_at}``. The month and year results depend on the run date, which the
tests pass as ``--reference-date``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA = Path(__file__).parent / "data" / "timelines_official_cases.json"


@cache
def official_cases() -> tuple[dict, ...]:
    return tuple(json.loads(DATA.read_text(encoding="utf-8")))


def case(name: str, mode: str, run_date: str = "2026-11-21") -> dict:
    """The one run of ``name`` in ``mode`` on ``run_date``."""
    for found in official_cases():
        if (found["name"], found["mode"], found["run_date"]) == (name, mode, run_date):
            return found
    raise LookupError(f"no official run of {name} in {mode} on {run_date}")


@dataclass(frozen=True)
class Files:
    gold: Path
    pred: Path
    all_ids: Path
    gold_ids: Path | None = None


def write_ids(path: Path, ids: list[str]) -> Path:
    """An id file as the official runs had them: one id per line, each line ending with a newline."""
    path.write_text("".join(f"{patient}\n" for patient in ids), encoding="utf-8")
    return path


def write_files(
    directory: Path, gold: dict, pred: dict, all_ids: list[str], gold_ids: list[str] | None = None
) -> Files:
    (directory / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    (directory / "pred.json").write_text(json.dumps(pred), encoding="utf-8")
    listed = write_ids(directory / "gold_ids.txt", gold_ids) if gold_ids is not None else None
    return Files(
        directory / "gold.json", directory / "pred.json", write_ids(directory / "all_ids.txt", all_ids), listed
    )


def case_files(directory: Path, found: dict) -> Files:
    return write_files(directory, found["gold"], found["pred"], found["all_ids"], found.get("gold_ids"))
