import pytest

from nlpbench import formats
from nlpbench.errors import InputError, InputWarning
from nlpbench.model import Link, Relation
from tests.formats.helpers import note, spans_and_types

BRAT = formats.get("brat")
TEXT = "Pain in left and right knee.\nSeen by Dr. Lee\n"
ANN = (
    "T1\tProblem 0 4;8 12\tPain left\n"
    "T2\tPerson 41 44\tLee\n"
    "A1\tNegated T1\n"
    "A2\tpersonType T2 doctor\n"
    "N1\tReference T2 Wikidata:Q42\tLee\n"
    "R1\tTreats Arg1:T2 Arg2:T1\n"
    "#1\tAnnotatorNotes T1\tchecked\n"
    "E1\tEvent:T1\n"
)


def write_pair(tmp_path, ann=ANN, text=TEXT):
    (tmp_path / "doc.txt").write_text(text)
    (tmp_path / "doc.ann").write_text(ann)
    return tmp_path / "doc.ann"


def test_reads_fragments_attributes_normalisations_relations(tmp_path):
    with pytest.warns(InputWarning, match="skipped 1 '#' lines, 1 'E' lines"):
        (doc,) = BRAT.read(write_pair(tmp_path))
    problem, person = doc.annotations
    assert problem.span.parts == ((0, 4), (8, 12))
    assert problem.attributes == {"Negated": True}
    assert person.attributes == {"personType": "doctor"}
    assert doc.links == [Link("T2", "Wikidata", "Q42", "Lee", id="N1")]
    assert doc.relations == [Relation("Treats", "T2", "T1", id="R1")]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "T3\tPerson 37 41\tLee",
            "T3 \\(Person\\) at 37-41: its text \\(3 characters\\) differs from the note's",
        ),
        ("T3\tPerson 37\tLee", "line 1: bad offsets '37'"),
        ("T3\tPerson 40 37\tLee", "bad offsets"),
        ("A1\tNegated T9", "attribute of unknown annotation 'T9'"),
        ("R1\tTreats T2 T1", "an R line needs"),
        ("T3 Person 37 40 Lee", "a T line needs"),
    ],
)
def test_bad_lines_are_one_clear_error(tmp_path, line, message):
    with pytest.raises(InputError, match=message):
        list(BRAT.read(write_pair(tmp_path, ann=line + "\n")))


def test_round_trip_keeps_everything(tmp_path):
    original = note()
    original.links = [Link(None, "UMLS", "C0000001")]
    original.annotations = [a.__class__(a.doc_id, a.span, a.label, a.text, a.attributes, id=f"T{i}")
                            for i, a in enumerate(original.annotations, start=1)]  # fmt: skip
    original.links = [Link("T2", "UMLS", "C0000001", "Marcus Lee")]
    original.relations = [Relation("works_at", "T2", "T3")]
    BRAT.write([original], tmp_path)
    (again,) = BRAT.read(tmp_path)
    assert spans_and_types(again) == spans_and_types(original)
    assert [(r.label, r.head, r.tail) for r in again.relations] == [("works_at", "T2", "T3")]
    assert [(lk.target, lk.identifier) for lk in again.links] == [("T2", "C0000001")]


def test_annotation_across_a_line_break_round_trips(tmp_path):
    doc = note()
    start = doc.text.index("98101")
    doc.annotations = [doc.annotations[0].__class__("n1", doc.annotations[0].span.__class__(start, start + 11), "x")]
    BRAT.write([doc], tmp_path)
    (again,) = BRAT.read(tmp_path)
    assert again.annotations[0].text == "98101.\nCall"
