"""The line-at-a-time fast path and ijson accept and refuse exactly what json.loads does."""

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.errors import InputError
from nlpbench.formats import jsonstream

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
