import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlpbench import formats
from nlpbench.errors import InputError
from nlpbench.files import MAX_LINE
from nlpbench.formats import jsonl
from nlpbench.model import Document, EntityColumns, TokenDocument
from tests.formats.helpers import note


def write(tmp_path, *records, name="in.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_text_entities_and_relations(tmp_path):
    path = write(
        tmp_path,
        {
            "id": "d1",
            "text": "John lives in Paris.",
            "entities": [{"start": 0, "end": 4, "label": "PER"}, {"id": "p", "start": 14, "end": 19, "label": "LOC"}],
            "relations": [{"head": 0, "tail": "p", "label": "lives_in"}],
        },
    )
    (doc,) = formats.get("jsonl").read(path)
    assert [(a.id, doc.text[a.start : a.end], a.label) for a in doc.annotations] == [
        ("0", "John", "PER"),
        ("p", "Paris", "LOC"),
    ]
    assert [(r.label, r.head, r.tail) for r in doc.relations] == [("lives_in", "0", "p")]
    assert "tokens" not in doc.metadata


def test_tokens_become_text_with_token_offsets(tmp_path):
    path = write(
        tmp_path,
        {"id": "d", "tokens": ["Dr.", "Lee", "saw", "him"], "entities": [{"start": 0, "end": 2, "label": "PER"}]},
    )
    (doc,) = formats.get("jsonl").read(path)
    assert doc.text == "Dr. Lee saw him"
    assert doc.metadata["tokens"][:2] == [(0, 3), (4, 7)]
    assert doc.annotations[0].span.covered_text(doc.text) == "Dr. Lee"


def test_round_trip_keeps_tokens_or_text(tmp_path):
    original = note()
    target = tmp_path / "out.jsonl"
    formats.get("jsonl").write([original], target)
    (back,) = formats.get("jsonl").read(target)
    assert [(a.span, a.label) for a in back.annotations] == [(a.span, a.label) for a in original.annotations]
    tokens = write(
        tmp_path,
        {"id": "d", "tokens": ["a", "b", "c"], "entities": [{"start": 1, "end": 3, "label": "X"}]},
        name="t.jsonl",
    )
    formats.get("jsonl").write(formats.get("jsonl").read(tokens), target)
    assert json.loads(target.read_text()) == {
        "id": "d",
        "tokens": ["a", "b", "c"],
        "entities": [{"start": 1, "end": 3, "label": "X"}],
    }


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"text": "x"}, "line 1: each line must be an object with a string id"),
        ({"id": "d", "text": "x", "tokens": ["x"]}, "give either text or tokens"),
        (
            {"id": "d", "text": "abc", "entities": [{"start": 2, "end": 5, "label": "X"}]},
            "entity 0 at 2-5 is empty or outside",
        ),
        (
            {"id": "d", "text": "abc", "entities": [{"start": 0, "end": 1}]},
            "entity 0 needs integer start and end and a label",
        ),
        (
            {"id": "d", "text": "abc", "entities": [{"start": 0, "end": 1, "label": "X", "text": "b"}]},
            "its text \\(1 characters\\) differs",
        ),
        (
            {"id": "d", "text": "abc", "entities": [], "relations": [{"head": 0, "tail": 1, "label": "r"}]},
            "relation 0: head 0 is no entity",
        ),
        ({"id": "d", "text": "abc"}, "no 'entities' \\(write 'entities': \\[\\] for a document without any\\)"),
        ({"id": "d", "text": "abc", "entities": {}}, "entities must be a list, not an object"),
    ],
)
def test_bad_records_name_file_line_and_problem(tmp_path, record, message):
    path = write(tmp_path, record)
    with pytest.raises(InputError, match=message) as caught:
        list(formats.get("jsonl").read(path))
    assert str(caught.value).startswith(f"{path}: line 1: ")


def test_bad_json_and_repeated_ids(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "text": "", "entities": []}\n{"id": \n')
    with pytest.raises(InputError, match="line 2: malformed JSON"):
        list(formats.get("jsonl").read(path))
    path = write(tmp_path, {"id": "a", "text": "", "entities": []}, {"id": "a", "text": "", "entities": []})
    with pytest.raises(InputError, match="line 2: document 'a' appears twice"):
        list(formats.get("jsonl").read(path))


def test_triples_and_links(tmp_path):
    path = write(
        tmp_path,
        {"id": "d", "triples": [{"head": "Aircraft", "label": "struck", "tail": "Tree", "tail_type": "Obstacle"}]},
    )
    (triple,) = jsonl.read_triples(path)
    assert (triple.head.text, triple.label, triple.tail.text, triple.head.label, triple.tail.label) == (
        "Aircraft", "struck", "Tree", None, "Obstacle",
    )  # fmt: skip
    gold = write(
        tmp_path,
        {
            "id": "d",
            "entities": [
                {"mention": "FORCED LANDING", "qid": "Q1", "alternatives": [{"mention": "LANDING", "qid": None}]}
            ],
        },
        name="gold.jsonl",
    )
    (entity,) = jsonl.read_gold_links(gold)
    assert entity.choices == (("FORCED LANDING", "Q1"), ("LANDING", None))
    pred = write(tmp_path, {"id": "d", "entities": [{"mention": "LANDING", "qid": None}]}, name="pred.jsonl")
    with pytest.raises(InputError, match="entity 0 needs a mention and a qid"):
        list(jsonl.read_predicted_links(pred))


def test_a_key_written_twice_is_an_error_not_a_lost_list(tmp_path):
    path = tmp_path / "twice.jsonl"
    path.write_text('{"id": "d", "text": "abc", "entities": [{"start": 0, "end": 1, "label": "X"}], "entities": []}\n')
    with pytest.raises(InputError, match=r"line 1: an object repeats the key 'entities'$"):
        list(formats.get("jsonl").read(path))


def outcome(read, path):
    """What a reader makes of a file: its documents (in full) or its error's message."""
    try:
        return [d.document() if isinstance(d, TokenDocument) else d for d in read(path)]
    except InputError as error:
        return str(error)


def member(draw, key, values):
    return f"{json.dumps(key)}: {json.dumps(draw(st.sampled_from(values)))}"


@st.composite
def entity_text(draw):
    odd = draw(st.integers(0, 4)) == 0
    members = [member(draw, "start", [0, 1, 2] + ([-1, True, 1.0, 10**30] if odd else []))]
    members.append(member(draw, "end", [1, 2, 3, 4, 0]))
    members.append(member(draw, "label", ["PER", "LOC"] + (["", None] if odd else [])))
    for key, values in (("id", ["0", "1", "e", None]), ("text", ["a", "a b", None]), ("attributes", [{}, []])):
        if draw(st.integers(0, 9)) == 0:
            members.append(member(draw, key, values))
    if draw(st.integers(0, 19)) == 0:
        members.append(members[draw(st.integers(0, len(members) - 1))])  # a key written twice
    return "{" + ", ".join(draw(st.permutations(members))) + "}"


@st.composite
def tokens_line(draw):
    """A line of tokens, valid or damaged in one of the ways read refuses, written as text (keys may repeat)."""
    good, bad = st.sampled_from(["a", "b", "c:d", "é", "x\\y"]), st.sampled_from([" ", "\u00a0", "x y", "", 3])
    tokens = draw(st.lists(good, max_size=4) if draw(st.integers(0, 4)) else st.lists(good | bad, max_size=4))
    doc_id = draw(st.sampled_from(["d", "e", "f"]) if draw(st.integers(0, 9)) else st.sampled_from(["", 1]))
    members = [f'"id": {json.dumps(doc_id)}', f'"tokens": {json.dumps(tokens)}']
    if draw(st.integers(0, 9)):
        members.append(f'"entities": [{", ".join(draw(st.lists(entity_text(), max_size=3)))}]')
    for key, values in (("relations", [[], [{"head": 0, "tail": 0, "label": "r"}]]), ("text", ["a"])):
        if draw(st.integers(0, 9)) == 0:
            members.append(member(draw, key, values))
    if draw(st.integers(0, 19)) == 0:
        members.append(members[draw(st.integers(0, len(members) - 1))])
    return "{" + ", ".join(draw(st.permutations(members))) + "}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(tokens_line(), min_size=1, max_size=3))
def test_read_entities_reads_and_refuses_what_read_does(tmp_path, lines):
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert outcome(jsonl.read_entities, path) == outcome(formats.get("jsonl").read, path)


def test_read_entities_gives_lines_of_tokens_as_columns(tmp_path):
    path = write(
        tmp_path,
        {"id": "t", "tokens": ["Dr.", "Lee", "saw", "him"], "entities": [{"label": "PER", "end": 2, "start": 0}]},
        {"id": "x", "text": "Dr. Lee", "entities": [{"start": 0, "end": 7, "label": "PER"}]},
        {"id": "r", "tokens": ["a"], "entities": [], "relations": []},
    )
    tokens, text, with_relations = jsonl.read_entities(path)
    assert isinstance(tokens, TokenDocument) and tokens.entities == EntityColumns([0], [2], ["PER"])
    assert tokens.document() == next(iter(formats.get("jsonl").read(path)))
    assert isinstance(text, Document) and isinstance(with_relations, Document)


TOKENS_LINE = '{"id": "d", "tokens": ["a", "b"], "entities": [{"start": 0, "end": 1, "label": "X"%s}]%s}'


@pytest.mark.parametrize(
    "data",
    [
        (TOKENS_LINE % ("", "")).encode(),
        b"\xef\xbb\xbf" + (TOKENS_LINE % ("", "")).encode(),  # a byte order mark
        (TOKENS_LINE % (', "attributes": ' + "[" * 200 + "]" * 200, "")).encode(),  # too deep
        (TOKENS_LINE % ("", ', "relations": ' + "[" * 200 + "]" * 200)).encode(),
        (TOKENS_LINE % (', "label": "Y"', "")).encode(),  # a key written twice, in an entity
        (TOKENS_LINE % ("", ', "id": "e"')).encode(),
        (TOKENS_LINE % ("", "")).replace('"a"', '"\\u003a"').encode(),  # a colon as an escape
        (TOKENS_LINE % ("", ', "id": "e"')).replace('"a"', '"\\u003a"').encode(),
        (TOKENS_LINE % ("", "")).replace('"a"', '"\\ud800"').encode(),  # a lone surrogate
        (TOKENS_LINE % ("", "")).encode().replace(b'"a"', b'"\xff"'),  # not UTF-8
        (TOKENS_LINE % ("", "")).replace('"a"', '"' + "a" * MAX_LINE + '"').encode(),  # a line too long
    ],
    ids=[
        "plain",
        "bom",
        "deep-entity",
        "deep-line",
        "repeated-in-entity",
        "repeated-id",
        "escaped-colon",
        "escaped-colon-and-repeat",
        "lone-surrogate",
        "not-utf8",
        "too-long",
    ],
)
def test_read_entities_keeps_every_bound_of_read(tmp_path, data):
    path = tmp_path / "in.jsonl"
    path.write_bytes(data + b"\n")
    assert outcome(jsonl.read_entities, path) == outcome(formats.get("jsonl").read, path)
