"""Several PHI types scored in one pass (``nlpbench.tasks.sandbox.score_types``): each type's report is the one
scoring that type alone gives, every row and warning, on files that make the reader and the task warn per type."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlpbench.tasks.sandbox import ALL_TYPES, score_sandbox, score_types

ARRAYS = {
    "date": ("textDateAnnotations", "dateFormat", "MM/DD/YYYY"),
    "person_name": ("textPersonNameAnnotations", "nameFormat", ""),
    "location": ("textLocationAnnotations", "locationType", "city"),
    "id": ("textIdAnnotations", "idType", "ssn"),
    "contact": ("textContactAnnotations", "contactType", "phone"),
}


def _record(note: str, skip: tuple[str, ...] = (), **changed: list[dict]) -> dict:
    record: dict = {"annotationSource": {"resourceSource": {"name": f"dataset/notes/{note}"}}}
    for label, (array, attribute, subtype) in ARRAYS.items():
        if array in skip:
            continue
        start = 10 * list(ARRAYS).index(label)
        record[array] = changed.get(label, [{"start": start, "length": 4, "text": "abcd", attribute: subtype}])
    return record


@pytest.fixture
def sides(tmp_path: Path) -> tuple[Path, Path]:
    """Gold of three notes; predictions that hold, for several types each: annotations whose length is not
    their text's (location, contact), subtypes outside the schema (id), a note split over two records, a record
    without some arrays (date, id), a shared start (date), a miss and a note only in the gold."""
    gold = [_record("n1"), _record("n2"), _record("n3")]
    odd = [{"start": 20, "length": 5, "text": "abcd", "locationType": "city"}]
    pred = [
        _record(
            "n1",
            location=odd,
            contact=[{"start": 40, "length": 3, "text": "abcd", "contactType": "phone"}],
            id=[{"start": 30, "length": 4, "text": "abcd", "idType": "passport number"}],
            date=[
                {"start": 0, "length": 4, "text": "abcd", "dateFormat": "MM/DD/YYYY"},
                {"start": 0, "length": 3, "text": "abc", "dateFormat": "MM/DD/YYYY"},
            ],
        ),
        _record("n2", skip=("textDateAnnotations", "textIdAnnotations"), location=odd, person_name=[]),
        _record("n2", skip=tuple(array for array, _, _ in ARRAYS.values() if array != "textDateAnnotations")),
    ]
    paths = tmp_path / "gold.json", tmp_path / "pred.json"
    for path, records in zip(paths, (gold, pred), strict=True):
        path.write_text(json.dumps(records), encoding="utf-8")
    return paths


@pytest.mark.parametrize("profile", ["standard", "nlpsandbox"])
def test_each_type_of_one_pass_is_that_type_scored_alone(sides, profile):
    gold, pred = sides
    reports = score_types(gold, pred, ALL_TYPES, profile=profile)
    assert list(reports) == list(ALL_TYPES)
    for kind in ALL_TYPES:
        assert reports[kind].as_dict() == score_sandbox(gold, pred, kind, profile=profile).as_dict(), kind
    every = [warning for kind in ALL_TYPES for warning in reports[kind].warnings]
    assert sum("length is not that of their text" in warning for warning in every) == 2, every
    assert any("only in the gold" in warning for warning in every), every
    assert profile == "standard" or any("share a start" in warning for warning in every), every


def test_several_types_scored_together_count_their_oddities_together(sides):
    gold, pred = sides
    together = score_sandbox(gold, pred, ["location", "contact"]).warnings
    misfits = [warning for warning in together if "length is not that of their text" in warning]
    assert len(misfits) == 1 and "3 annotations" in misfits[0], together


class _Collected:
    """A :class:`~nlpbench.tasks.sandbox.DocumentRows` that keeps what it is handed, per type, in order."""

    def __init__(self) -> None:
        self.rows: dict[str, list[dict]] = {}

    def add(self, annotation_type: str, rows: list[dict]) -> None:
        self.rows.setdefault(annotation_type, []).extend(rows)

    def drop(self, annotation_type: str, metric: str) -> None:
        self.rows[annotation_type] = [row for row in self.rows[annotation_type] if row["metric"] != metric]


@pytest.mark.parametrize("profile", ["standard", "nlpsandbox"])
def test_rows_handed_on_as_scored_are_the_reports_rows(tmp_path, profile):
    """Rows handed to a sink batch by batch, less those of a metric the pass drops at its end (``nlpsandbox``: the
    address ``type`` when no prediction carries an ``addressType``), are the per-document rows the reports hold
    without one; the reports handed on hold none, and are otherwise the same."""
    address = {"start": 60, "length": 4, "text": "abcd"}
    gold = [{**_record(f"n{i}"), "textPhysicalAddressAnnotations": [{**address, "addressType": "city"}]}
            for i in range(40)]  # fmt: skip
    pred = [{**_record(f"n{i}"), "textPhysicalAddressAnnotations": [address]} for i in range(0, 40, 2)]
    paths = tmp_path / "gold.json", tmp_path / "pred.json"
    for path, records in zip(paths, (gold, pred), strict=True):
        path.write_text(json.dumps(records), encoding="utf-8")
    kinds = (*ALL_TYPES, "physical_address")
    kept = score_types(*paths, kinds, profile=profile)
    sink = _Collected()
    handed = score_types(*paths, kinds, profile=profile, rows=sink)
    for kind in kinds:
        assert sink.rows[kind] == kept[kind].per_document and handed[kind].per_document == [], kind
        assert {**handed[kind].as_dict(), "per_document": None} == {**kept[kind].as_dict(), "per_document": None}
    dropped = not any(row["metric"] == "type" for row in sink.rows["physical_address"])
    assert dropped == (profile == "nlpsandbox")
