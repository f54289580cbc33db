"""The line-at-a-time fast path and ijson accept and refuse exactly what json.loads does."""

import io
import json
import re

import msgspec
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nlpbench.errors import InputError
from nlpbench.formats import jsonstream
from tests.formats.helpers import repeats_a_key

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
layouts = st.sampled_from(["line", "pretty", "compact"])
damage = st.sampled_from(["none", "none", "drop comma", "trailing comma", "garbage", "cut", "blank lines"])


def layout(items: list, style: str) -> str:
    if style == "compact":
        return json.dumps(items)
    if style == "pretty":
        return json.dumps(items, indent=2)
    return "[\n" + ",\n".join(json.dumps(item) for item in items) + "\n]\n"


def damaged(text: str, how: str) -> str:
    if how == "drop comma" and ",\n" in text:
        return text.replace(",\n", "\n", 1)
    if how == "trailing comma" and text.rstrip().endswith("]"):
        head = text.rstrip()[:-1].rstrip()
        return head + ",\n]\n"
    if how == "garbage":
        return text + "x"
    if how == "cut":
        return text[: len(text) * 2 // 3]
    if how == "blank lines":
        return text.replace("\n", "\n\n")
    return text


@settings(max_examples=300)
@given(st.lists(values, max_size=5), layouts, damage)
def test_same_items_or_same_refusal_as_json_loads(items, style, how):
    text = damaged(layout(items, style), how)
    try:
        expected = json.loads(text)
    except json.JSONDecodeError:
        expected = None
    stream = io.BytesIO(text.encode())
    if expected is None:
        with pytest.raises(InputError, match="malformed JSON"):
            list(jsonstream.items(stream, "f.json"))
    else:
        assert list(jsonstream.items(stream, "f.json")) == expected


def test_lines_that_stop_being_whole_items_continue_with_ijson():
    text = '[\n{"a": 1},\n{"b":\n 2},\n{"c": 3}\n]\n'
    assert list(jsonstream.items(io.BytesIO(text.encode()), "f.json")) == [{"a": 1}, {"b": 2}, {"c": 3}]


def reference_structure(text: bytes) -> tuple[int, int]:
    """The deepest nesting and the colons outside strings (every object's members) of a JSON text, a byte at a time."""
    depth = deepest = colons = 0
    inside = escaped = False
    for byte in text:
        if inside:
            if escaped:
                escaped = False
            elif byte == ord("\\"):
                escaped = True
            elif byte == ord('"'):
                inside = False
        elif byte == ord('"'):
            inside = True
        elif byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif byte in b"]}":
            depth -= 1
        elif byte == ord(":"):
            colons += 1
    return deepest, colons


json_texts = st.recursive(
    st.text(alphabet='ab"\\[]{},:', max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(alphabet='k"\\[{:', max_size=3), inner, max_size=3)
    ),
    max_leaves=40,
).map(lambda value: json.dumps(value).encode())


deep_texts = st.integers(jsonstream.MAX_DEPTH - 2, jsonstream.MAX_DEPTH + 2).flatmap(
    lambda depth: json_texts.map(lambda inner: b"[" * depth + inner + b"]" * depth)
)


@given(json_texts | deep_texts, st.lists(st.integers(1, 40), max_size=6))
@settings(max_examples=200, deadline=None)
def test_the_structure_scan_finds_depth_and_members_however_the_text_is_cut(text, cuts):
    deepest, colons = reference_structure(text)
    if deepest > jsonstream.MAX_DEPTH:
        with pytest.raises(InputError, match="nested deeper"):
            jsonstream.check(text)
    else:
        jsonstream.check(text)
        assert jsonstream.members(text) == colons
    structure, position = jsonstream._Structure(), 0
    for size in [*cuts, len(text)]:
        try:
            structure.feed(text[position : position + size])
        except ValueError:
            assert deepest > jsonstream.MAX_DEPTH
            return
        position += size
    assert deepest <= jsonstream.MAX_DEPTH and (structure.depth, structure.colons) == (0, colons)


def refused_byte_by_byte(text: bytes) -> bool:
    """Whether :func:`jsonstream.check` refused ``text`` before it settled whole files by their balanced
    brackets: the counts, then the scan a byte at a time."""
    if text.count(b"[") + text.count(b"{") <= jsonstream.MAX_DEPTH:
        return False
    if jsonstream.edges_plain(text):
        outside = b"".join(text.split(b'"')[::2])
        if outside.count(b"[") + outside.count(b"{") <= jsonstream.MAX_DEPTH:
            return False
    try:
        jsonstream._Structure().feed(text)
    except ValueError:
        return True
    return False


#: Many brackets, nested about as deep as the limit: whole files of records, valid or cut anywhere.
wide_texts = st.builds(
    lambda depth, width, inner, cut: (b"[" * depth + b",".join([inner] * width) + b"]" * depth)[: cut or None],
    st.integers(0, jsonstream.MAX_DEPTH + 2),
    st.integers(1, 200),
    json_texts,
    st.integers(-3, 0),
)
unbalanced_texts = st.binary(min_size=100, max_size=600).map(
    lambda text: text.translate(bytes(b'[]{}"\\ab,:'[b % 10] for b in range(256)))
)


@given(wide_texts | unbalanced_texts | deep_texts)
@settings(max_examples=300, deadline=None)
def test_a_text_with_many_brackets_is_refused_exactly_when_the_byte_scan_refuses_it(text):
    if refused_byte_by_byte(text):
        with pytest.raises(InputError, match="nested deeper"):
            jsonstream.check(text)
    else:
        jsonstream.check(text)


@given(json_texts | wide_texts | unbalanced_texts)
@settings(max_examples=300, deadline=None)
def test_the_brackets_outside_strings_found_in_two_passes_are_those_between_the_quote_pairs(text):
    """:func:`jsonstream._brackets_outside` gives the brackets of the parts between quote pairs, or None."""
    assume(jsonstream.edges_plain(text))
    found = jsonstream._brackets_outside(text)
    outside = b"".join(text.split(b'"')[::2]).translate(None, bytes(b for b in range(256) if b not in b"[]{}"))
    assert found in (None, outside)
    between = text.split(b'"')[1::2]
    assert (found is None) == (text.count(b'"') % 2 == 1 or any(b in part for part in between for b in b"[]{}"))


def test_a_timeline_file_has_its_brackets_outside_strings_found_without_cutting_it():
    text = b'{"p1": [["taxol", "contains-1", "2013-05-12T06:47"]], "p2": []}'
    assert jsonstream._brackets_outside(text) == b"{[[]][]}"
    assert jsonstream._brackets_outside(b'{"p1": [["ta[xol", "contains-1", "2013"]]}') is None


def test_nesting_past_the_limit_is_refused_before_parsing(tmp_path):
    path = tmp_path / "deep.json"
    ok = "[" * (jsonstream.MAX_DEPTH - 1) + "]" * (jsonstream.MAX_DEPTH - 1)  # inside the file's own list
    path.write_text(f"[{ok}]")
    with open(path, "rb") as handle:
        assert len(list(jsonstream.items(handle, path))) == 1
    path.write_text(f"[[{ok}]]")  # one level more
    with open(path, "rb") as handle, pytest.raises(InputError, match="record 0: JSON nested deeper than 128 levels"):
        list(jsonstream.items(handle, path))


_strings = st.text(alphabet='k:"\\ {\u00e9', max_size=3).map(lambda s: json.dumps(s, ensure_ascii=False))
#: keys written plainly and as escapes: "\u0061" is "a", "\u003a" is ":", "a\u0022b" is 'a"b'
_keys = st.sampled_from(['"a"', '"b"', '":"', r'"\u0061"', r'"\u003a"', r'"a\"b"', r'"a\u0022b"', r'"\\"'])
repeating_texts = st.recursive(
    _strings | st.sampled_from(["1", "null", "[]", '":"', r'"\u003a"', r'"x\ny"', r'"\\"', r'"\""']),
    lambda inner: (
        st.lists(inner, max_size=3).map(lambda items: "[" + ", ".join(items) + "]")
        | st.lists(st.tuples(_keys, st.sampled_from([":", " : "]), inner),
                   max_size=4).map(lambda members: "{" + ", ".join(k + c + v for k, c, v in members) + "}")
    ),
    max_leaves=12,
).map(str.encode)  # fmt: skip


@given(repeating_texts)
@settings(max_examples=300, deadline=None)
def test_a_repeated_key_is_found_at_any_depth_and_only_then(text):
    """Escaped keys (``"\\u0061"`` is ``"a"``), colons inside strings and blanks before colons included."""
    if repeats_a_key(text):
        with pytest.raises(InputError, match="an object repeats the key "):
            jsonstream.decode(text, "f.json")
    else:
        assert jsonstream.decode(text, "f.json") == json.loads(text)


def test_the_path_of_a_deep_repeat_is_named_by_its_end():
    # 120 objects deep, each key 40 characters: the message names the path's last 160 characters, not 5 kB
    key = "k" * 40
    text = ("{" + f'"{key}":') * 120 + '{"start": 1, "start": 2}' + "}" * 120
    with pytest.raises(InputError) as caught:
        jsonstream.decode(text.encode(), "f.json")
    message = str(caught.value)
    assert message.startswith("f.json: …") and message.endswith(f".{key}.{key}: an object repeats the key 'start'")
    assert len(message) < 250


ESCAPED = [
    # (text, the key an object repeats, or None)
    (rb'{"a\"b": 1, "c": "x\"y"}', None),
    (rb'{"a\"b": 1, "a\"b": 2}', 'a"b'),
    (rb'{"a\\": 1, "a\\\\": 2, "b": "\\"}', None),
    (rb'{"a\\": 1, "a\u005c": 2}', "a\\"),
    (rb'{"\u0022": 1, "\"": 2}', '"'),
    (rb'{"a": 1, "\u0061": 2}', "a"),
    (rb'{"a": "x:y\nz", "b": "\u003a", "a": 3}', "a"),
    (rb'{"a": "\u003a\u003A", "b": "line\none\ttab"}', None),
    (rb'{"t": "she said \"stop\": twice", "t2": "\\\"", "t": 0}', "t"),
    (rb'[{"k": "\u00e9\n"}, {"k": 1, "k\u00e9": 2, "l": {"m": 1, "m": 2}}]', "m"),
    ('{"é": 1, "\\u00e9": 2}'.encode(), "é"),
    ('{"é": "ü\\n", "e": 2}'.encode(), None),
]


@pytest.mark.parametrize(("text", "repeated"), ESCAPED)
def test_escapes_in_keys_and_strings_are_read_as_json_reads_them(text, repeated, tmp_path):
    """Quotes, backslashes and colons written as escapes, and a key written two ways (``"a"`` and ``"\\u0061"``),
    whole text and one record a line."""
    assert repeats_a_key(text) == (repeated is not None)
    lines = tmp_path / "lines.json"
    lines.write_bytes(b'[\n{"first": "\\n"},\n' + text + b"\n]\n")
    if repeated is None:
        assert jsonstream.decode(text, "f.json") == json.loads(text)
        with open(lines, "rb") as handle:
            assert list(jsonstream.items(handle, lines))[1] == json.loads(text)
        return
    with pytest.raises(InputError, match=f"an object repeats the key {re.escape(repr(repeated))}"):
        jsonstream.decode(text, "f.json")
    with open(lines, "rb") as handle, pytest.raises(InputError, match="record 1: an object repeats the key "):
        list(jsonstream.items(handle, lines))


#: Timeline files: a top-level object of arrays of strings, its keys written plainly and as escapes
#: ("\u0070" is "p", "\u003a" is ":"), colons, braces, escapes and non-ASCII in keys and strings.
_timeline_keys = st.sampled_from(['"p"', '"q"', r'"\u0070"', r'"p:"', r'"p\u003a"', r'"{"', '"é"', r'"\u00e9"'])
_timeline_strings = st.sampled_from(['"taxol"', '"2013-05-12T06:47"', r'"\u003a"', '"{"', r'"a\"b"', '"ü"', r'"\n"'])
_timelines = st.lists(st.lists(_timeline_strings, max_size=3), max_size=3).map(
    lambda tuples: "[" + ", ".join("[" + ", ".join(item) + "]" for item in tuples) + "]"
)
#: now and then a patient that is an object, repeating a key or not (not a timeline, but read as one first)
_patients = _timelines | st.sampled_from(['{"k": [], "k": []}', '{"k": [], "\\u006b": 1}', '{"k": []}'])
timeline_texts = st.lists(st.tuples(_timeline_keys, _patients), max_size=4).map(
    lambda members: ("{" + ", ".join(f"{key}: {value}" for key, value in members) + "}").encode()
)


@given(timeline_texts)
@settings(max_examples=300, deadline=None)
def test_a_repeated_patient_is_found_when_the_patients_are_kept_undecoded(text):
    """Decoded into ``dict[str, msgspec.Raw]`` (a timeline file read a patient at a time), a text is refused
    exactly when a key is repeated, with the message the plain decode gives."""
    if repeats_a_key(text):
        with pytest.raises(InputError) as plain:
            jsonstream.decode(text, "f.json")
        with pytest.raises(InputError) as undecoded:
            jsonstream.decode(text, "f.json", type=dict[str, msgspec.Raw])
        assert str(undecoded.value) == str(plain.value)
    else:
        kept = jsonstream.decode(text, "f.json", type=dict[str, msgspec.Raw])
        assert {key: msgspec.json.decode(value) for key, value in kept.items()} == json.loads(text)


_deep_patients = _patients | st.just("[" * 130 + "]" * 130)
deep_timeline_texts = st.lists(st.tuples(_timeline_keys, _deep_patients), max_size=4).map(
    lambda members: ("{" + ", ".join(f"{key}: {value}" for key, value in members) + "}").encode()
)


@given(deep_timeline_texts | timeline_texts.map(lambda text: b"\xef\xbb\xbf" + text))
@settings(max_examples=300, deadline=None)
def test_the_members_kept_undecoded_are_those_of_decode_their_depth_checked_now_or_later(text):
    """:func:`jsonstream.raw_members` gives what :func:`jsonstream.decode` gives, and any error it gives but
    for the depth of a plain object of arrays, which :func:`jsonstream.check` of the text it returns gives."""
    try:
        expected, refused = jsonstream.decode(text, "f.json", type=dict[str, msgspec.Raw]), None
    except InputError as error:
        expected, refused = None, str(error)
    try:
        members, unchecked = jsonstream.raw_members(text, "f.json")
    except InputError as error:
        assert str(error) == refused
        return
    if unchecked is not None:
        assert text.endswith(unchecked) and b"{" not in unchecked[unchecked.index(b"{") + 1 :]
        try:
            jsonstream.check(unchecked, "f.json")
        except InputError as error:
            assert str(error) == refused == "f.json: JSON nested deeper than 128 levels"
            return
    assert refused is None and expected is not None
    assert {key: bytes(value) for key, value in members.items()} == {key: bytes(v) for key, v in expected.items()}


def test_a_byte_that_is_not_utf8_in_a_patient_kept_undecoded_is_refused_at_once():
    text = b'{"p1": [["tax\xffol", "contains-1", "2013"]], "p2": []}'
    with pytest.raises(InputError) as plain:
        jsonstream.decode(text, "f.json")
    with pytest.raises(InputError) as undecoded:
        jsonstream.decode(text, "f.json", type=dict[str, msgspec.Raw])
    assert str(undecoded.value) == str(plain.value) == "f.json: not UTF-8 text (invalid start byte)"


@pytest.mark.parametrize("text", [rb'"a\nb"', rb'"\u0022"', rb'"a\\"', rb'"\\\"["'])
def test_a_text_with_escapes_but_no_escaped_quote_or_backslash_has_plain_edges(text):
    """:func:`edges_plain` agrees with following the text a byte at a time."""
    expected = b'\\"' not in text and b"\\\\" not in text
    assert jsonstream.edges_plain(text) is expected
    depth = 130
    deep = b"[" * depth + text + b"]" * depth
    with pytest.raises(InputError, match="nested deeper"):
        jsonstream.check(deep)
    shallow = b"[" * 10 + text + b"]" * 10
    jsonstream.check(shallow)
    assert (
        jsonstream.members(b'{"k": ' + shallow + b', "j": "a:b"}')
        == reference_structure(b'{"k": ' + shallow + b', "j": "a:b"}')[1]
    )
