import pytest

from nlpbench import formats
from nlpbench.errors import InputError
from nlpbench.model import Annotation, Link, Relation, Span
from tests.formats.helpers import note, spans_and_types

BIOC = formats.get("bioc")


@pytest.mark.parametrize("suffix", [".xml", ".json"])
def test_round_trip_keeps_spans_types_links_relations(tmp_path, suffix):
    original = note()
    original.annotations.append(Annotation("n1", Span(0, 15, ((0, 4), (5, 15))), "event", confidence=87.5, id="E9"))
    original.annotations[1] = Annotation("n1", original.annotations[1].span, "person_name",
                                         attributes={"personType": "doctor"}, id="P1")  # fmt: skip
    original.links = [Link("P1", "Wikidata", "Q42")]
    original.relations = [Relation("said", "P1", "E9")]
    path = tmp_path / f"c{suffix}"
    BIOC.write([original, note("n2")], path)
    first, second = BIOC.read(path)
    assert (first.id, second.id) == ("n1", "n2")
    assert spans_and_types(first) == spans_and_types(original)
    assert first.text == original.text
    assert [a.confidence for a in first.annotations if a.id == "E9"] == [87.5]
    assert first.links == [Link("P1", "Wikidata", "Q42")]
    assert [(r.label, r.head, r.tail) for r in first.relations] == [("said", "P1", "E9")]


def test_output_does_not_depend_on_the_day(tmp_path):
    BIOC.write([note()], tmp_path / "c.xml")
    assert "<date></date>" in (tmp_path / "c.xml").read_text() or "<date/>" in (tmp_path / "c.xml").read_text()


def test_passages_are_placed_at_their_offsets(tmp_path):
    path = tmp_path / "p.xml"
    path.write_text(
        "<?xml version='1.0' encoding='utf-8'?><collection><source/><date/><key/><document><id>d</id>"
        "<passage><offset>0</offset><text>Title</text></passage>"
        "<passage><offset>6</offset><text>Seen in Boston.</text>"
        "<annotation id='A'><infon key='type'>location</infon><location offset='14' length='6'/>"
        "<text>Boston</text></annotation></passage></document></collection>"
    )
    (doc,) = BIOC.read(path)
    assert doc.text == "Title Seen in Boston."
    assert doc.annotations[0].span == Span(14, 20)


def test_annotation_without_type_is_an_error(tmp_path):
    path = tmp_path / "p.xml"
    path.write_text(
        "<?xml version='1.0' encoding='utf-8'?><collection><source/><date/><key/><document><id>d</id>"
        "<passage><offset>0</offset><text>Boston</text><annotation id='A'>"
        "<location offset='0' length='6'/><text>Boston</text></annotation></passage></document></collection>"
    )
    with pytest.raises(InputError, match="annotation A: annotation without a 'type' infon"):
        list(BIOC.read(path))


def test_malformed_file_is_an_error(tmp_path):
    path = tmp_path / "p.xml"
    path.write_text("<collection><document>")
    with pytest.raises(InputError, match="malformed BioC"):
        list(BIOC.read(path))
