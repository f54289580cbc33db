"""Timeline JSON, id files and the system TSV summariser (docker_output_to_timeline.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.errors import InputError, collected_warnings
from nlpbench.files import MemoryPath
from nlpbench.formats import timelines as timeline_format
from nlpbench.model import Timeline, TimelineTuple

COLUMNS = "DCT patient_id chemo_text chemo_annotation_id normed_timex timex_annotation_id tlink note_name tlink_inst"
HEADER = COLUMNS.replace(" ", "\t") + "\n"


def row(patient: str, note: str, chemo: str, n: int, timex: str, tlink: str) -> str:
    """One system output line; annotation ids are <n>@e@<note>@system as the baseline writes them."""
    return (
        f"2013-05-20\t{patient}\t{chemo}\t{n}@e@{note}@system\t{timex}\t{n + 1}@e@{note}@system\t{tlink}\t{note}\tx\n"
    )


def summarised(tmp_path, text: str) -> tuple[dict[str, list[list[str]]], list[str]]:
    """The timelines summarised from ``text`` as lists, and the warnings given on the way."""
    path = tmp_path / "system.tsv"
    path.write_text(text, encoding="utf-8")
    with collected_warnings() as warnings:
        timelines = {t.patient: [list(item) for item in t.tuples] for t in timeline_format.read_system_tsv(path)}
    return timelines, warnings


def test_json_round_trip_keeps_order_and_repeats(tmp_path):
    timelines = [
        Timeline("p2", (TimelineTuple("taxol", "contains-1", "2013-05-12"),) * 2),
        Timeline("p1", ()),
        Timeline("pé", (TimelineTuple("cisplatin", "begins-on", "2013-W05"),)),
    ]
    timeline_format.write(timelines, tmp_path / "t.json")
    assert list(timeline_format.read(tmp_path / "t.json")) == timelines
    assert json.loads((tmp_path / "t.json").read_text())["p1"] == []
    timeline_format.write([], tmp_path / "empty.json")
    assert list(timeline_format.read(tmp_path / "empty.json")) == []


@pytest.mark.parametrize(
    ("text", "record", "problem"),
    [
        ('{"p1": [["taxol", "contains-1"]]}', "patient p1, tuple 0", '["taxol", "contains-1"] is not [chemo, label'),
        ('{"p1": [], "p2": [["taxol", "contains-1", null]]}', "patient p2, tuple 0", "is not [chemo, label, date]"),
        ('{"p1": {"taxol": 1}}', "patient p1", "a timeline is a list of [chemo, label, date]"),
        ('[["taxol", "contains-1", "2013"]]', None, "a timeline file holds one JSON object"),
        ('{"p1": [', None, "malformed JSON"),
    ],
)
def test_json_errors_name_patient_and_tuple(text, record, problem, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError) as raised:
        list(timeline_format.read(path))
    assert (raised.value.path, raised.value.record) == (str(path), record)
    assert problem in raised.value.problem


JSON_ERRORS = [
    ('{"p1": [["taxol", "contains-1"]]}', "patient p1, tuple 0", '["taxol", "contains-1"] is not [chemo, label'),
    ('{"p1": [], "p2": [["taxol", "contains-1", null]]}', "patient p2, tuple 0", "is not [chemo, label, date]"),
    ('{"p1": {"taxol": 1}}', "patient p1", "a timeline is a list of [chemo, label, date]"),
    ('[["taxol", "contains-1", "2013"]]', None, "a timeline file holds one JSON object"),
    ('{"p1": [', None, "malformed JSON"),
    ('{"p1": [["taxol", "contains-1", "2013"]] x', None, "malformed JSON"),
    ('{"p1": [], "p2": ' + "[" * 130 + "]" * 130 + "}", None, "JSON nested deeper than 128 levels"),
    ('{"p1": ' + "[" * 130 + "]" * 130 + ', "p1": []}', None, "JSON nested deeper than 128 levels"),
    ('{"p1": ' + "[" * 130 + "]" * 130 + ', "p2": {"k": 1}}', None, "JSON nested deeper than 128 levels"),
]


@pytest.mark.parametrize(("text", "record", "problem"), JSON_ERRORS)
def test_patients_read_one_at_a_time_give_the_errors_of_the_whole_file(text, record, problem, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError) as whole:
        timeline_format.read_patients(path)
    with pytest.raises(InputError) as one_at_a_time:
        patients = timeline_format.PatientTimelines(path)
        for patient in patients:
            patients[patient]
    assert str(one_at_a_time.value) == str(whole.value)
    assert (one_at_a_time.value.record, problem in one_at_a_time.value.problem) == (record, True)


def test_patients_read_one_at_a_time_are_those_of_the_whole_file(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"p1": [], "p2": []}')
    patients = timeline_format.PatientTimelines(path)
    assert dict(patients) == timeline_format.read_patients(path) == {"p1": (), "p2": ()}
    assert (list(patients), len(patients), "p2" in patients, "p3" in patients) == (["p1", "p2"], 2, True, False)
    path.write_text('{"p1": [["taxol", "contains-1", "2013"], ["taxol", "contains-1", "2013"]], "p2": [[1]]}')
    patients = timeline_format.PatientTimelines(path)  # p2 is checked when it is looked up
    assert patients["p1"] == (TimelineTuple("taxol", "contains-1", "2013"),) * 2
    with pytest.raises(InputError, match="patient p2, tuple 0: "):
        patients["p2"]


def test_a_patient_written_twice_is_an_error_not_a_lost_timeline(tmp_path):
    path = tmp_path / "twice.json"
    path.write_text('{"p1": [], "p2": [], "p1": [["taxol", "contains-1", "2013"]]}')
    for read in (timeline_format.read_patients, timeline_format.PatientTimelines):
        with pytest.raises(InputError, match=r"twice.json: top level: an object repeats the key 'p1'$"):
            read(path)


def test_id_files_are_read_as_the_official_script_reads_them(tmp_path):
    path = tmp_path / "ids.txt"
    path.write_bytes(b"p1\n p2 \r\n\np3")
    assert timeline_format.read_ids(path) == ["p1", " p2 ", "", "p3"]


def test_the_summariser_on_mixed_system_output(tmp_path):
    # the research notes' case "ok", with the output docker_output_to_timeline.py wrote (pandas 2.3.3)
    text = HEADER + "".join(
        [
            row("ptA", "ptA_note1", "Taxol", 1, "2013-05-12", "contains-1"),
            row("ptA", "ptA_note2", "taxol", 5, "2013-05-12", "contains-1"),
            row("ptA", "ptA_note2", "taxol", 7, "2013-05-12", "begins-on"),
            row("ptA", "ptA_note1", "Chemotherapy", 3, "2013-05-12", "contains-1"),
            row("ptA", "ptA_note1", "chemo", 9, "2013-06-01", "contains-1"),
            row("ptA", "ptA_note1", "chemotherapy regimen", 11, "2013-06-01", "contains-1"),
            row("ptA", "ptA_note1", "cisplatin", 13, "2013-10-30T06:47", "contains-1"),
            row("ptA", "ptA_note1", "cisplatin", 15, "PRESENT_REF", "contains-1"),
            row("ptA", "ptA_note1", "cisplatin", 17, "2013-W05", "ends-on"),
            row("ptA", "ptA_note1", "cisplatin", 19, "2013-W05", "before"),
            row("ptA", "ptA_note1", "carboplatin", 21, "2013-07", "overlap"),
            row("ptA", "ptA_note1", "carboplatin", 23, "2013-08", "none"),
            row("ptA", "ptA_note1", "carboplatin", 25, "2013-09", "ends-on"),
            row("ptA", "ptA_note1", "carboplatin", 27, "2013-09", "begins-on"),
            "2014-01-01\tptB\tnone\tnone\tnone\tnone\tnone\tptB_note1\tnone\n",
            "2014-01-01\tptC\ttaxol\t1@e@ptC_n1@system\tnone\t2@e@ptC_n1@system\tcontains-1\tptC_n1\tx\n",
        ]
    )
    result, warnings = summarised(tmp_path, text)
    assert result == {
        "ptA": [
            ["taxol", "begins-on", "2013-05-12"],  # begins-on outranks contains-1 on the same day
            ["chemotherapy regimen", "contains-1", "2013-06-01"],  # specific: it suppresses "chemo"
            ["cisplatin", "contains-1", "2013-10-30"],
            ["cisplatin", "ends-on", "2013-w05"],
            ["carboplatin", "overlap", "2013-07"],  # an unranked label alone passes
            ["carboplatin", "ends-on", "2013-09"],  # a begins-on / ends-on tie keeps the first written
        ],
        "ptB": [],
        "ptC": [],
    }
    assert warnings == [
        f"{tmp_path / 'system.tsv'}: left out as the summariser does: 3 rows without a relation or date ('none'), "
        "1 rows whose date is no calendar value (PRESENT_REF, durations), 1 repeated tuples, "
        "2 generic mentions beside a specific chemo, 3 labels that lost a conflict on the same chemo and date"
    ]


def test_the_patient_comes_from_the_annotation_id_and_numbers_stay_text(tmp_path):
    text = (
        HEADER
        + row("123", "123_n1", "taxol", 1, "2013-05-12", "contains-1")
        + row("456", "456_n1", "x", 1, "none", "none")
    )
    assert summarised(tmp_path, text)[0] == {"123": [["taxol", "contains-1", "2013-05-12"]], "456": []}
    # pandas would read this all-numeric column as int and the script stop on it; nlpbench keeps the text
    assert summarised(tmp_path, HEADER + row("p", "p_n", "taxol", 1, "2013", "contains-1"))[0] == {
        "p": [["taxol", "contains-1", "2013"]]
    }


@pytest.mark.parametrize(
    ("rows", "record", "problem"),
    [
        (
            [
                row("ptA", "ptA_n", "Taxol", 1, "2013-05-12", "contains-1"),
                row("ptA", "ptA_n", "Taxol", 1, "2013-05-12", "overlap"),
            ],
            "patient ptA",
            "taxol on 2013-05-12 has the labels contains-1, overlap: the summariser settles such a conflict only among "
            "begins-on, ends-on, contains, contains-1, before and stops with KeyError on 'overlap'",
        ),
        (
            [
                row("ptA", "ptA_n", "Taxol", 1, "2013-05-12", "contains-1"),
                row("ptA", "ptA_n", "Taxol", 1, "2013-05-12", "CONTAINS-1"),
            ],
            "patient ptA",
            "stops with KeyError on 'CONTAINS-1'",
        ),
        ([row("ptA", "ptA_n", "Taxol", 1, "", "contains-1")], "line 2", "empty normed_timex cell"),
        ([row("ptA", "ptA_n", "", 1, "2013-05-12", "contains-1")], "line 2", "empty chemo_text cell"),
        (
            ["2013\tptA\ttaxol\tnoid\t2013-05-12\tx\tcontains-1\tn\tx\n"],
            "line 2",
            "chemo_annotation_id 'noid' names no note",
        ),
        (["2013\tptA\ttaxol\n"], "line 2", "3 fields, the header has 9"),
    ],
)
def test_summariser_errors_instead_of_crashes(rows, record, problem, tmp_path):
    path = tmp_path / "system.tsv"
    path.write_text(HEADER + "".join(rows))
    with pytest.raises(InputError) as raised:
        list(timeline_format.read_system_tsv(path))
    assert (raised.value.path, raised.value.record) == (str(path), record)
    assert problem in raised.value.problem


def test_an_empty_cell_in_a_row_the_summariser_drops_first_is_no_error(tmp_path):
    text = HEADER + "2013\tptA\tnone\tnone\t\tnone\tnone\tptA_n\tnone\n"
    assert summarised(tmp_path, text)[0] == {"ptA": []}


@pytest.mark.parametrize(("text", "problem"), [("", "empty file"), ("DCT\tpatient_id\n", "no column chemo_text")])
def test_summariser_needs_its_columns(text, problem, tmp_path):
    path = tmp_path / "system.tsv"
    path.write_text(text)
    with pytest.raises(InputError, match=problem):
        list(timeline_format.read_system_tsv(path))


def test_convert_writes_only_what_it_can(tmp_path):
    source = tmp_path / "system.tsv"
    source.write_text(HEADER + row("ptA", "ptA_n", "taxol", 1, "2013-05-12", "contains-1"))
    assert timeline_format.convert(source, tmp_path / "t.json", "timelines-tsv", "timelines") == (1, 1)
    with pytest.raises(InputError, match="nlpbench reads timelines-tsv but does not write it; write timelines"):
        timeline_format.convert(tmp_path / "t.json", tmp_path / "back.tsv", "timelines", "timelines-tsv")


_SPELLINGS = ["contains-1", "begins-on", "ends-on", "BEGINS-ON", "Ends-On", "CONTAINS-1", "overlap", "before", ""]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_SPELLINGS), max_size=5), min_size=1, max_size=6))
def test_unknown_labels_are_counted_and_the_first_named_as_each_tuple_tested_alone_finds_them(patients):
    """The spellings found to be labels pass each later timeline at once: the count and the first unknown label
    named are those of testing ``label.lower()`` of every tuple in the order the patients are looked up."""
    timelines = {f"p{n}": [["taxol", label, "2013-05-12"] for label in labels] for n, labels in enumerate(patients)}
    unknown = [
        (patient, number, label)
        for patient, tuples in timelines.items()
        for number, (_, label, _) in enumerate(tuples)
        if label.lower() not in ("contains-1", "begins-on", "ends-on")
    ]
    read = timeline_format.PatientTimelines(MemoryPath.file("pred.json", json.dumps(timelines)))
    with collected_warnings() as warnings:
        for patient in read:
            read[patient]
        read.report()
    if not unknown:
        assert warnings == []
        return
    patient, number, label = unknown[0]
    assert len(warnings) == 1
    assert f": {len(unknown)} tuples whose label is not" in warnings[0]
    assert warnings[0].endswith(f"(first: patient {patient}, tuple {number}: {label!r})")
