import json
import warnings
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench import formats
from nlpbench.errors import InputError, InputWarning
from nlpbench.formats import jsonstream, sandbox
from nlpbench.formats.sandbox import BY_ARRAY, _record_type
from nlpbench.model import PHI_TYPES
from tests.formats.helpers import note, repeats_a_key, spans_and_types

SANDBOX = formats.get("sandbox")


def write_json(tmp_path, data, name="in.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def record(name, **arrays):
    return {"name": "x", "annotationSource": {"resourceSource": {"name": name}}, **arrays}


DATE = {"start": 3, "length": 10, "text": "12/26/2020", "confidence": 95.5, "dateFormat": "MM/DD/YYYY"}
BUNDLE = {"note": {"identifier": "n", "text": "On 12/26/2020."}, "annotation": {"textDateAnnotations": [DATE]}}


def test_records_take_the_note_id_from_the_resource_name(tmp_path):
    path = write_json(tmp_path, [record("dataset/d/fhirStores/f/fhir/Note/n-7", textDateAnnotations=[DATE])])
    (doc,) = SANDBOX.read(path)
    assert doc.id == "n-7"
    (annotation,) = doc.annotations
    assert (annotation.start, annotation.end, annotation.label) == (3, 13, "date")
    assert annotation.attributes == {"dateFormat": "MM/DD/YYYY"}
    assert annotation.confidence == 95.5


def test_a_tool_response_is_one_note_named_after_the_file(tmp_path):
    path = write_json(tmp_path, {"textDateAnnotations": [DATE]}, "note-9.json")
    (doc,) = SANDBOX.read(path)
    assert doc.id == "note-9" and len(doc.annotations) == 1


@pytest.mark.parametrize("one_line", [True, False])
@pytest.mark.parametrize("container", [list, lambda records: {"annotations": records}])
def test_a_notes_records_are_merged_in_reading_order(tmp_path, one_line, container):
    """Records of one note (any dataset path, anywhere in the file) become one document, annotations in order."""
    later = {**DATE, "length": 5, "text": "12/26"}
    records = [
        record("ds1/Note/n", textDateAnnotations=[DATE]),
        record("ds1/Note/m", textDateAnnotations=[]),
        record("ds2/Note/n", textDateAnnotations=[later], textIdAnnotations=[]),
        record("n"),
    ]
    data = container(records)
    path = tmp_path / "split.json"
    if one_line or isinstance(data, dict):
        path.write_text(json.dumps(data))
    else:
        path.write_text("[\n" + ",\n".join(map(json.dumps, records)) + "\n]\n")
    with pytest.warns(InputWarning, match="1 notes split over several annotation records, merged") as caught:
        docs = list(SANDBOX.read(path, labels={"date", "id"}))
    assert len(caught) == 1
    assert [doc.id for doc in docs] == ["m", "n"]
    assert [(a.start, a.end) for a in docs[1].annotations] == [(3, 13), (3, 8)]
    assert docs[1].metadata["absentArrays"] == ("textIdAnnotations", "textDateAnnotations")
    assert docs[1].metadata.get("container") == (None if isinstance(data, list) else "page")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[{]", "malformed JSON"),
        ("", "empty file"),
        ('"text"', "expected a list or an object"),
        (json.dumps([{"name": "x"}]), "record 0: missing required field 'annotationSource.resourceSource.name'"),
        (json.dumps([record("n", textDateAnnotations=[{"start": 1, "text": "a"}])]), "missing required field 'length'"),
        (json.dumps([record("n", textDateAnnotations=[{**DATE, "start": -3}])]), "negative offset"),
        (json.dumps([record("n", textDateAnnotations=[{**DATE, "start": "3"}])]), "start '3' is not an integer"),
        (json.dumps([record("n", textFooAnnotations=[])]), "unknown annotation type 'textFooAnnotations'"),
        (json.dumps([record("n", textDateAnnotations=[{**DATE, "confidence": 140}])]), "confidence 140"),
        (
            json.dumps({"patient_bundles": [{"patient": {"identifier": "p"}, "note_bundles": [BUNDLE, BUNDLE]}]}),
            "note n: a second note bundle for this note",
        ),
        (json.dumps({"hello": 1}), "not NLP Sandbox JSON"),
    ],
)
def test_bad_input_is_one_clear_error(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as caught:
        list(SANDBOX.read(path))
    assert str(caught.value).startswith(str(path))
    assert "\n" not in str(caught.value)


def test_odd_annotations_are_read_and_reported_once(tmp_path):
    odd = {"start": 0, "length": 4, "text": "Seattle", "locationType": "planet", "confidence": 50}
    path = write_json(tmp_path, [record("n", textLocationAnnotations=[odd, odd | {"start": 9}])])
    with pytest.warns(InputWarning) as caught:
        (doc,) = SANDBOX.read(path)
    messages = [str(w.message) for w in caught]
    assert any("2 annotations whose length is not that of their text" in m for m in messages)
    assert any("2 locationType values outside the 1.2.0 schema" in m for m in messages)
    assert len(doc.annotations) == 2


def test_bundle_spans_are_checked_against_the_note_text(tmp_path):
    bundle = {
        "patient_bundles": [
            {
                "patient": {"identifier": "p1"},
                "note_bundles": [
                    {
                        "note": {"identifier": "n1", "text": "On 12/26/2020.", "type": "", "patientId": "p1"},
                        "annotation": record("n1", textDateAnnotations=[{**DATE, "start": 2}]),
                    }
                ],
            }
        ]
    }
    with pytest.raises(
        InputError,
        match="its text \\(10 characters\\) differs from the note's \\(10 characters\\)",
    ):
        list(SANDBOX.read(write_json(tmp_path, bundle)))


@pytest.mark.parametrize("name", ["sandbox", "sandbox-bundles"])
def test_round_trip_keeps_spans_and_types(tmp_path, name):
    original = note()
    path = tmp_path / "out.json"
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)  # nothing is left out
        formats.get(name).write([original], path)
    (again,) = SANDBOX.read(path)
    assert again.id == original.id
    assert spans_and_types(again) == spans_and_types(original)
    assert (again.text is not None) == (name == "sandbox-bundles")


def test_tool_response_round_trip(tmp_path):
    path = tmp_path / "n1.json"
    formats.get("sandbox-response").write([note()], path)
    data = json.loads(path.read_text())
    assert set(data) == {
        "textDateAnnotations", "textPersonNameAnnotations", "textLocationAnnotations",
        "textIdAnnotations", "textContactAnnotations",
    }  # fmt: skip
    (again,) = SANDBOX.read(path)
    assert spans_and_types(again) == spans_and_types(note())


def test_writing_types_without_an_array_warns(tmp_path):
    doc = note()
    doc.annotations.append(doc.annotations[0].__class__("n1", doc.annotations[0].span, "profession", "x"))
    with pytest.warns(InputWarning, match="no NLP Sandbox array for 1 profession annotations: left out"):
        formats.get("sandbox").write([doc], tmp_path / "out.json")


def one_per_line(tmp_path, records, name="lines.json"):
    path = tmp_path / name
    path.write_text("[\n" + ",\n".join(map(json.dumps, records)) + "\n]\n")
    return path


def test_reading_for_scoring_gives_what_the_general_path_gives(tmp_path):
    """Reading for scoring decodes a line's record in one go, and a record it cannot (another key, a value of
    another type) the general way: the same annotations, metadata and warnings as reading annotation objects."""
    location = {"start": 0, "length": 6, "text": "Boston", "confidence": 90, "locationType": "city"}
    records = [
        record("ds/Note/a", textDateAnnotations=[DATE], textLocationAnnotations=[location]),
        record("b", textDateAnnotations=[DATE | {"length": 4}], annotationSetName="x"),
        record("c", textLocationAnnotations=[location | {"locationType": 7}, location | {"locationType": "moon"}]),
        record("ds/Note/a", textDateAnnotations=[DATE | {"start": 20}], textLocationAnnotations=[]),
        record("d", textDateAnnotations=[DATE]),
    ]
    path = one_per_line(tmp_path, records)
    read = {}
    for columns in (True, False):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            docs = list(SANDBOX.read(path, labels={"date", "location"}, columns=columns))
        read[columns] = (docs, sorted(str(w.message) for w in caught))
    (fast, fast_warnings), (general, general_warnings) = read[True], read[False]
    assert fast_warnings == general_warnings and len(fast_warnings) == 3
    assert [d.id for d in fast] == [d.id for d in general] == ["b", "c", "a", "d"]
    for by_columns, by_objects in zip(fast, general, strict=True):
        assert by_columns.metadata == by_objects.metadata
        for label, attribute in (("date", "dateFormat"), ("location", "locationType")):
            found = by_columns.columns.get(label)
            objects = found.annotations(by_columns.id, label, attribute) if found else []
            assert objects == [a for a in by_objects.annotations if a.label == label]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (record("n", textDateAnnotations=[{**DATE, "confidence": 140}]), "record 1, textDateAnnotations"),
        (record("n", textDateAnnotations=[{**DATE, "start": True}]), "start True is not an integer"),
        (record("n", textDateAnnotations=None), "textDateAnnotations must be a list"),
        (record("n", textFooAnnotations=[]), "unknown annotation type 'textFooAnnotations'"),
        ({"annotationSource": {"resourceSource": {"name": 3}}}, "record 1: annotationSource.resourceSource.name must"),
    ],
)
def test_reading_for_scoring_refuses_what_the_general_path_refuses(tmp_path, line, message):
    path = one_per_line(tmp_path, [record("m", textDateAnnotations=[DATE]), line])
    with pytest.raises(InputError, match=message):
        list(SANDBOX.read(path, labels={"date"}, columns=True))


@pytest.mark.parametrize("labels", [{"date"}, set(PHI_TYPES)])
def test_reading_for_scoring_refuses_a_record_too_deep_and_only_such_a_record(tmp_path, labels):
    """A record proven by its rows (``jsonstream._no_key_repeated``) nests no deeper than their type, whatever its
    texts hold, and skips the depth count; any other record line is still checked for depth before it is read."""
    brackets = {**DATE, "start": 0, "length": 300, "text": "[{" * 150}
    path = one_per_line(
        tmp_path, [record("a", textDateAnnotations=[DATE]), record("b", textDateAnnotations=[brackets])]
    )
    (_, doc) = SANDBOX.read(path, labels=labels, columns=True)
    assert doc.columns["date"].rows[0].text == "[{" * 150
    deep = record("c", textDateAnnotations=[DATE]) | {"name": json.loads("[" * 130 + "]" * 130)}
    path = one_per_line(tmp_path, [record("a", textDateAnnotations=[DATE]), deep])
    with pytest.raises(InputError, match="record 1: JSON nested deeper than 128 levels"):
        list(SANDBOX.read(path, labels=labels, columns=True))


def _decoded_counts(path):
    """Each record's note, counted from the records json.loads reads: what ``count_notes`` must give."""
    from collections import Counter

    return Counter(
        r["annotationSource"]["resourceSource"]["name"].rsplit("/", 1)[-1] for r in json.loads(path.read_text())
    )


def test_counting_more_lines_than_a_block_counts_every_note(tmp_path):
    # 10,000 lines: the notes counted without decoding are added in blocks of 4,096, among lines decoded
    records = [record(f"d/Note/n{i % 3001}") for i in range(10_000)]
    records[5000] = {"annotationSource": {"resourceSource": {"name": "d/Note/n7", "x": 1}}}  # decoded
    path = one_per_line(tmp_path, records)
    assert sandbox.count_notes(path) == _decoded_counts(path)


@pytest.mark.parametrize(
    "lines",
    [
        # as nlpbench writes them, with escapes, non-ASCII written both ways, and no record name
        [
            json.dumps(record("d/Note/a")),
            json.dumps(record("d/Note/b", textDateAnnotations=[{**DATE, "text": 'é\n"'}])),
        ],
        [json.dumps(record("d/Note/ü"), ensure_ascii=False), json.dumps(record("d/Note/ü"))],
        [json.dumps({"annotationSource": {"resourceSource": {"name": "d/Note/a"}}}), json.dumps(record("d/Note/a"))],
        # two records on one line: the second names its note too
        [json.dumps(record("d/Note/a")) + ", " + json.dumps(record("d/Note/b")), json.dumps(record("d/Note/b"))],
        # the second record's key written with an escape
        [
            json.dumps(record("d/Note/a")) + ', {"\\u0061nnotationSource": {"resourceSource": {"name": "b"}}}',
            json.dumps(record("d/Note/b")),
        ],
        # a resource name with an escape, another key in the source, another key order
        [json.dumps(record('d/Note/"q"')), json.dumps(record("d/Note/q"))],
        [json.dumps({"name": "x", "annotationSource": {"resourceSource": {"name": "d/Note/a"}, "k": 1}})],
        [json.dumps({"textDateAnnotations": [], "annotationSource": {"resourceSource": {"name": "d/Note/a"}}})],
    ],
)
def test_counting_a_notes_records_a_line_at_a_time_agrees_with_decoding_them(tmp_path, lines):
    """``count_notes`` reads most lines' starts only; a second record on a line, escapes or another layout
    must not change what it counts."""
    from nlpbench.formats.sandbox import count_notes

    path = tmp_path / "records.json"
    path.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    expected = _decoded_counts(path)
    assert count_notes(path) == expected
    path.write_text("\ufeff[\n" + ",\n\n".join(lines) + "\n]\n", encoding="utf-8")  # a byte order mark, blank lines
    assert count_notes(path) == expected


#: an annotation member as written: a field of the row, another attribute, or one written twice or as an escape
_MEMBERS = st.sampled_from(
    [
        '"start": 1', '"length": 4', '"text": "a:b"', '"text": "x\\u003ay"', '"confidence": null', '"confidence": 50',
        '"locationType": "city"', '"locationType": "ci\\"ty"', '"confidence": 140', '"locationType": 7',
        '"length": 2', '"noteId": "n"', '"st\\u0061rt": 2', '"text": "é\\n"',
    ]
)  # fmt: skip
_ROW = ['"start": 0', '"length": 3', '"text": "abc"']
#: mostly annotations a row decodes, some with one member more, now and then any members
_ANNOTATIONS = st.lists(
    st.integers(0, 5)
    .flatmap(
        lambda kind: (
            st.just(_ROW)
            if kind > 1
            else _MEMBERS.map(lambda more: [*_ROW, more])
            if kind
            else st.lists(_MEMBERS, max_size=6)
        )
    )
    .map(lambda members: "{" + ", ".join(members) + "}"),
    max_size=3,
).map(lambda items: "[" + ", ".join(items) + "]")
#: mostly sources as written, one with a member the record type does not read, now and then a repeat
_SOURCES = st.sampled_from(
    [
        *['{"resourceSource": {"name": "d/Note/a"}}'] * 4,
        '{"resourceSource": {"name": "d/Note/a"}, "k": {"x": 1, "y": 2}}',
        '{"resourceSource": {"name": "d/Note/a", "name": "b"}}',
        '{"resourceSource": {"name": "d/Note/a"}, "k": {"x": 1, "x": 2}}',
        '{"resourceSource": {"name": "d/Note/a"}, "resourceSource": {"name": "b"}}',
    ]
)


@given(
    _SOURCES,
    st.sampled_from(
        [
            *["", '"name": "x", ', '"name": "x:y", ', '"name": "\\u00e9", ', '"name": "x", "name": "y", '],
            *['"name": "x\\u003ay", ', '"name": "\\ud800", ', '"name": "\\u00e9:", '],
        ]
    ),
    st.dictionaries(st.sampled_from(sorted(BY_ARRAY)), _ANNOTATIONS).map(lambda arrays: list(arrays.items()))
    | st.lists(st.tuples(st.sampled_from(sorted(BY_ARRAY)), _ANNOTATIONS), max_size=6),
)
@settings(max_examples=300, deadline=None)
def test_a_record_is_refused_exactly_when_it_repeats_a_key(tmp_path_factory, source, name, arrays):
    """A record whose every array decodes into rows is checked for repeated keys from them, not decoded a second
    time (``jsonstream._no_key_repeated``), whatever types are read: refused with the message of the plain check
    exactly when it repeats a key at any depth, read as the plain check reads it otherwise, warnings included."""
    members = [f'"annotationSource": {source}', *(f'"{array}": {items}' for array, items in arrays)]
    line = "{" + name + ", ".join(members) + "}"
    path = tmp_path_factory.getbasetemp() / "repeats.json"
    path.write_text(f"[\n{line}\n]\n", encoding="utf-8")
    for labels in (set(PHI_TYPES), {"location"}, {"date", "id"}):
        outcome = {}
        for check in ("fast", "plain", "read labels only"):
            # the last as before: the record decoded with only the read labels' arrays as rows, the keys checked plainly
            only = (
                (lambda _, wanted=frozenset(labels): _record_type(wanted)) if check.startswith("read") else _record_type
            )
            with (
                warnings.catch_warnings(record=True) as caught,
                mock.patch.object(jsonstream, "_no_key_repeated", _FAST[check]),
                mock.patch.object(sandbox, "_record_type", only),
            ):
                warnings.simplefilter("always")
                try:
                    docs = list(SANDBOX.read(path, labels=labels, columns=True))
                    read = [(d.id, d.metadata, {k: c.rows for k, c in d.columns.items()}) for d in docs]
                except InputError as error:
                    read = str(error)
            outcome[check] = (read, [str(w.message) for w in caught])
        assert outcome["fast"] == outcome["plain"] == outcome["read labels only"]
        if repeats_a_key(line):
            assert "an object repeats the key" in outcome["fast"][0]
        else:
            assert "an object repeats the key" not in str(outcome["fast"][0])


_FAST = {"fast": jsonstream._no_key_repeated, "plain": lambda text, item: False}
_FAST["read labels only"] = _FAST["plain"]
