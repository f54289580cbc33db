import pytest

from nlpbench import formats
from nlpbench.errors import InputError, InputWarning
from nlpbench.model import Annotation, Document, Span

IOB2 = """-DOCSTART- O

Patient B-PER
John I-PER
Smith I-PER
went O
to O
Boston B-LOC
General I-LOC
. O

Seen B-PER
Lee B-PER
"""

IOB1 = IOB2.replace("B-PER\nJohn", "O\nJohn").replace("John I-PER", "John I-PER").replace("Patient B-PER", "Patient O")


def read(tmp_path, content):
    path = tmp_path / "in.conll"
    path.write_text(content)
    return list(formats.get("conll").read(path))


def entities(doc):
    return [(doc.text[a.start : a.end], a.label) for a in doc.annotations]


def test_iob2(tmp_path):
    (doc,) = read(tmp_path, IOB2)
    assert doc.id == "1"
    assert doc.text == "Patient John Smith went to Boston General .\nSeen Lee"
    assert entities(doc) == [("Patient John Smith", "PER"), ("Boston General", "LOC"), ("Seen", "PER"), ("Lee", "PER")]
    assert doc.metadata["tokens"][:2] == [(0, 7), (8, 12)]


def test_iob1_continues_with_i_and_splits_with_b(tmp_path):
    content = "John I-PER\nSmith I-PER\nMary B-PER\nsaw O\nBob I-PER\n"
    (doc,) = read(tmp_path, content)
    assert entities(doc) == [("John Smith", "PER"), ("Mary", "PER"), ("Bob", "PER")]


def test_bioes(tmp_path):
    content = "John B-PER\nSmith E-PER\nin O\nBoston S-LOC\nMA S-LOC\n"
    (doc,) = read(tmp_path, content)
    assert entities(doc) == [("John Smith", "PER"), ("Boston", "LOC"), ("MA", "LOC")]


def test_documents_are_numbered(tmp_path):
    docs = read(tmp_path, "-DOCSTART- O\n\na O\n\n-DOCSTART- O\n\nb B-X\n")
    assert [d.id for d in docs] == ["1", "2"]


@pytest.mark.parametrize(("content", "message"), [("John\n", "line 1: a token line needs"), ("a X-PER\n", "bad tag")])
def test_bad_lines(tmp_path, content, message):
    with pytest.raises(InputError, match=message):
        read(tmp_path, content)


@pytest.mark.parametrize("name", ["conll", "conll-iob1", "conll-bioes"])
def test_round_trip_in_each_scheme(tmp_path, name):
    (doc,) = read(tmp_path, IOB2)
    formats.get(name).write([doc], tmp_path / "out.conll")
    (again,) = formats.get("conll").read(tmp_path / "out.conll")
    assert again.text == doc.text
    assert entities(again) == entities(doc)


def test_writing_cuts_tokens_at_annotation_boundaries(tmp_path):
    doc = Document("d", "Dr.Smith, MD")
    doc.annotations = [Annotation("d", Span(3, 8), "PER")]
    formats.get("conll").write([doc], tmp_path / "o.conll")
    assert "Dr. O\nSmith B-PER\n, O\nMD O" in (tmp_path / "o.conll").read_text()


def test_overlapping_annotations_cannot_be_written(tmp_path):
    doc = Document("d", "New York City")
    doc.annotations = [Annotation("d", Span(0, 13), "LOC"), Annotation("d", Span(0, 8), "LOC")]
    with pytest.warns(InputWarning, match="1 overlapping annotations"):
        formats.get("conll").write([doc], tmp_path / "o.conll")
