import pytest

from nlpbench import formats
from nlpbench.errors import InputError, InputWarning
from tests.formats.helpers import note, spans_and_types

I2B2 = formats.get("i2b2")

XML = """<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2>
<TEXT><![CDATA[Record date: 2069-04-07
Dr. Xzavian Tavares, Ward 5B, MRN 8832-11, age 54, nurse.
]]></TEXT>
<TAGS>
<DATE id="P0" start="13" end="23" text="2069-04-07" TYPE="DATE" comment="" />
<NAME id="P1" start="28" end="43" text="Xzavian Tavares" TYPE="DOCTOR" comment="" />
<LOCATION id="P2" start="50" end="52" text="5B" TYPE="ROOM" comment="" />
<ID id="P3" start="58" end="65" text="8832-11" TYPE="MEDICALRECORD" comment="" />
<AGE id="P4" start="71" end="73" text="54" TYPE="AGE" comment="" />
<PROFESSION id="P5" start="75" end="80" text="nurse" TYPE="PROFESSION" comment="" />
</TAGS>
</deIdi2b2>
"""


def test_categories_map_to_sandbox_types(tmp_path):
    path = tmp_path / "110-01.xml"
    path.write_text(XML)
    (doc,) = I2B2.read(path)
    assert doc.id == "110-01"
    got = [(a.label, a.attributes, a.text) for a in doc.annotations]
    assert got == [
        ("date", {}, "2069-04-07"),
        ("person_name", {"personType": "doctor"}, "Xzavian Tavares"),
        ("location", {"locationType": "room"}, "5B"),
        ("id", {"idType": "medical_record"}, "8832-11"),
        ("age", {}, "54"),
        ("profession", {}, "nurse"),
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("</TAGS>", ""), "malformed XML at line"),
        (('start="13"', 'start="14"'), "P0 \\(date\\) at 14-23: its text \\(10 characters\\) differs"),
        (('TYPE="ROOM"', 'TYPE="CAVE"'), "tag 2 <LOCATION>: unknown TYPE 'CAVE'"),
        (("<AGE ", "<HAIR "), "unknown category 'HAIR'"),
        (('end="65"', 'end="5x"'), "bad offsets"),
        (('end="65"', 'end="500"'), "ends beyond the text"),
    ],
)
def test_bad_xml_is_one_clear_error(tmp_path, change, message):
    path = tmp_path / "bad.xml"
    path.write_text(XML.replace(*change))
    with pytest.raises(InputError, match=message):
        list(I2B2.read(path))


def test_round_trip_through_a_directory(tmp_path):
    I2B2.write([note("a"), note("b")], tmp_path / "xml")
    again = list(I2B2.read(tmp_path / "xml"))
    assert [d.id for d in again] == ["a", "b"]
    assert spans_and_types(again[0]) == spans_and_types(note("a"))
    assert again[0].text == note().text


def test_cdata_end_marker_inside_the_text_survives(tmp_path):
    doc = note()
    doc.text = doc.text.replace("Call", "]]>!!")
    I2B2.write([doc], tmp_path)
    assert next(I2B2.read(tmp_path)).text == doc.text


def test_types_without_a_category_are_left_out_with_a_warning(tmp_path):
    doc = note()
    doc.annotations.append(doc.annotations[0].__class__("n1", doc.annotations[0].span, "covid_symptom"))
    with pytest.warns(InputWarning, match="1 annotations labelled 'covid_symptom' have no i2b2 category: left out"):
        I2B2.write([doc], tmp_path)
