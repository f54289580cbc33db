"""A key repeated in any object of a JSON input is one line naming the file, the record and the key, exit 2.

JSON lets ``{"start": 0, "start": 5}`` through and keeps the last value, which
for an annotation silently changes what is scored. Every JSON reader refuses
it the same way, whatever the layout — a record a line (read by msgspec), a
record spread over lines or all on one line (read by ijson), a whole
document (bundles, a page, a tool response, BioC, timelines), JSON Lines —
through ``nlpbench validate`` and the ``score`` command that reads the format.
The note's text is in no message.
"""

from __future__ import annotations

import json

import pytest

from nlpbench import formats
from nlpbench.model import Annotation, Document, Span
from tests.cli.errors import one_line_error

SECRET = "Chloe Price"
DATE = '{"start": 0, "length": 4, "text": "2020"}'
REPEATED = '{"start": 0, "start": 5, "length": 4, "text": "2020"}'
ARRAYS = ("textPersonNameAnnotations", "textLocationAnnotations", "textIdAnnotations", "textContactAnnotations")


def record(note: str, dates: str = DATE, name: str = "name") -> str:
    others = ", ".join(f'"{array}": []' for array in ARRAYS)
    source = f'"annotationSource": {{"resourceSource": {{"{name}": "notes/{note}"}}}}'
    return f'{{{source}, "textDateAnnotations": [{dates}], {others}}}'


def record_list(layout: str, second: str) -> str:
    """Two records, the second one given, laid out as nlpbench writes them or otherwise."""
    first = record("n0")
    if layout == "a record a line":
        return f"[\n{first},\n{second}\n]\n"
    if layout == "a member a line":
        return "[\n" + f"{first},\n{second}".replace(", ", ",\n  ") + "\n]\n"
    return f"[{first},{second}]"  # all on one line


#: How each layout of a record list is varied: as written, with escapes, with a blank before each colon.
VARIANTS = {"": lambda text: text, ", escaped": lambda text: text.replace("/", "\\/"),
            ", spaced": lambda text: text.replace('": ', '" : ')}  # fmt: skip
#: Where a record repeats a key: (what is repeated, the record's arguments with and without the repeat, the key).
PLACES = {
    "in an annotation": ({"dates": REPEATED}, {}, "start"),
    "in the source": ({"name": 'name": "x", "name'}, {}, "name"),
}


def sandbox_cases() -> list[tuple]:
    """(case, file name, content with the repeated key, the same without, where, key) for every shape and layout."""
    cases = []
    for layout in ("a record a line", "a member a line", "one line"):
        for variant, vary in VARIANTS.items():
            for place, (repeating, plain, key) in PLACES.items():
                bad, good = (vary(record_list(layout, record("n1", **kwargs))) for kwargs in (repeating, plain))
                cases.append((f"records, {layout}{variant}, {place}", "records.json", bad, good, "record 1", key))
    page = f'{{"annotations": [{record("n0")}, {record("n1", "DATES")}]}}'
    response = f'{{"textDateAnnotations": [{DATE}, DATES]}}'
    for case, name, text, where in [
        ("page", "page.json", page, "annotations[1].textDateAnnotations[0]"),
        ("tool response", "n1.json", response, "textDateAnnotations[1]"),
        ("bundles", "bundles.json", bundles(), "patient_bundles[0].note_bundles[0].annotation.textDateAnnotations[0]"),
    ]:
        cases.append((case, name, text.replace("DATES", REPEATED), text.replace("DATES", DATE), where, "start"))
    return cases


def bundles() -> str:
    note = {"identifier": "n1", "text": f"2020 {SECRET}", "type": "loinc:LP29684-5", "patientId": "p1"}
    bundle = {"note": note, "annotation": {"textDateAnnotations": ["DATE"]}}
    text = json.dumps({"patient_bundles": [{"patient": {"identifier": "p1"}, "note_bundles": [bundle]}]})
    return text.replace('"DATE"', "DATES")


@pytest.mark.parametrize(
    ("name", "content", "clean", "where", "key"),
    [case[1:] for case in sandbox_cases()],
    ids=[case[0] for case in sandbox_cases()],
)
def test_sandbox_every_shape_and_layout(cli, tmp_path, name, content, clean, where, key):
    path = tmp_path / name
    path.write_text(content)
    expected = f"{path}: {where}: an object repeats the key {key!r}"
    assert one_line_error(cli("validate", "--format", "sandbox", path)) == expected
    # scoring another type: the repeated key is refused wherever it is in the record
    assert one_line_error(cli("score", "sandbox", "-g", path, "-p", path, "-t", "location")) == expected
    path.write_text(clean)  # the same file without the repeated key is read
    validated = cli("validate", "--format", "sandbox", path)
    assert validated.exit_code == 0, validated.stderr


JSONL_NER = (
    '{"id": "d0", "text": "Chloe Price", "entities": [{"start": 0, "end": 5, "label": "PER"}]}\n'
    '{"id": "d1", "text": "Chloe Price", "entities": [{"start": 0, "end": 5, "end": 11, "label": "PER"}]}\n'
)
JSONL_LINKS = '{"id": "d1", "entities": [{"mention": "LANDING", "qid": "Q1", "qid": "Q2"}]}\n'
JSONL_COREF = '{"doc_key": "d1", "sentences": [["a", "b"]], "clusters": [[[0, 0], [1, 1]]], "clusters": []}\n'
JSONL_TRIPLES = (
    '{"id": "d1", "triples": [{"head": "John", "head_type": "PER", "label": "x", "label": "y", "tail": "P"}]}\n'
)


@pytest.mark.parametrize(
    ("name", "content", "commands", "where", "key"),
    [
        ("ner.jsonl", JSONL_NER, [("validate", "--format", "jsonl", "{path}"),
                                  ("score", "ner", "-g", "{path}", "-p", "{path}", "--gold-format", "jsonl"),
                                  ("score", "relations", "-g", "{path}", "-p", "{path}", "--gold-format", "jsonl")],
         "line 2", "end"),
        ("ner.jsonl", JSONL_NER.replace('": ', '" : ').replace("Price", "Pr\\u0069ce"),
         [("score", "ner", "-g", "{path}", "-p", "{path}", "--gold-format", "jsonl")], "line 2", "end"),
        ("links.jsonl", JSONL_LINKS, [("score", "linking", "-g", "{path}", "-p", "{path}", "--gold-format", "jsonl")],
         "line 1", "qid"),
        ("triples.jsonl", JSONL_TRIPLES,
         [("score", "relations", "-g", "{path}", "-p", "{path}", "--gold-format", "jsonl-triples")], "line 1", "label"),
        ("coref.jsonl", JSONL_COREF,
         [("score", "coref", "-k", "{path}", "-r", "{path}", "--key-format", "jsonl")], "line 1", "clusters"),
        ("ontology.json", '{"total": 2, "nodes": {"Q1": {"count": 2, "count": 1}}}',
         [("score", "linking", "-g", "{links}", "-p", "{links}", "--gold-format", "jsonl", "--ontology", "{path}")],
         "nodes.Q1", "count"),
        ("timelines.json", '{"p1": [["taxol", "contains-1", "2013-01-02"]], "p1": []}',
         [("validate", "--format", "timelines", "{path}"),
          ("score", "timelines", "-g", "{path}", "-p", "{path}", "--all-ids", "{ids}", "--mode", "strict")],
         "top level", "p1"),
    ],
    ids=["jsonl", "jsonl-spaced-escaped", "jsonl-links", "jsonl-triples", "coref-jsonl", "ontology", "timelines"],
)  # fmt: skip
def test_json_lines_timelines_and_ontology(cli, tmp_path, name, content, commands, where, key):
    path, ids, links = tmp_path / name, tmp_path / "ids.txt", tmp_path / "plain-links.jsonl"
    path.write_text(content)
    ids.write_text("p1\n")
    links.write_text(JSONL_LINKS.replace(', "qid": "Q2"', ""))
    for command in commands:
        args = [str(arg).format(path=path, ids=ids, links=links) for arg in command]
        assert one_line_error(cli(*args)) == f"{path}: {where}: an object repeats the key {key!r}"


def test_bioc_json(cli, tmp_path):
    path = tmp_path / "collection.json"
    document = Document("d1", f"2020 {SECRET}", [Annotation("d1", Span(5, 16), "PER", SECRET)])
    formats.get("bioc").write([document], path)
    text = path.read_text()
    assert text.count('"length": 11') == 1
    path.write_text(text.replace('"length": 11', '"length": 11, "length": 5'))
    expected = f"{path}: documents[0].passages[0].annotations[0].locations[0]: an object repeats the key 'length'"
    assert one_line_error(cli("validate", "--format", "bioc", path)) == expected
    assert one_line_error(cli("score", "ner", "-g", path, "-p", path, "--gold-format", "bioc")) == expected


def test_no_message_quotes_the_note(cli, tmp_path):
    """A repeated key whose values are note text: the key is named, the text is not."""
    path = tmp_path / "records.json"
    path.write_text(record_list("a record a line", record("n1", DATE.replace('"2020"', f'"2020", "text": "{SECRET}"'))))
    message = one_line_error(cli("validate", "--format", "sandbox", path))
    assert message == f"{path}: record 1: an object repeats the key 'text'" and SECRET not in message
