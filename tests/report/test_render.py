"""The JSON rendering writes exactly what ``json.dumps(…, indent=2, ensure_ascii=False)`` writes."""

from __future__ import annotations

import json
import math
from enum import IntEnum, StrEnum

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.report import Report
from nlpbench.report.render import to_json
from nlpbench.tasks.codiesp import score_codiesp
from nlpbench.tasks.ner import score_ner
from nlpbench.tasks.timelines import score_timelines
from tests.tasks.timeline_cases import case, case_files


def dumped(value) -> str:
    """What to_json wrote before it wrote JSON itself."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def timelines_report(tmp_path, mode: str) -> Report:
    files = case_files(tmp_path, case("range_rescue_of_false_positives", mode))
    return score_timelines(files.gold, files.pred, files.all_ids, mode=mode, profile="chemotimelines2024")


def codiesp_report(tmp_path, track: str) -> Report:
    gold, pred, codes = tmp_path / "gold.tsv", tmp_path / "pred.tsv", tmp_path / "codes.tsv"
    codes.write_text("A01.0\tcólera\nB02.1\tdesc\nC03.2\tdesc\n", encoding="utf-8")
    if track == "X":
        gold.write_text("d1\tDIAGNOSTICO\ta01.0\tref\t0 4\nd2\tDIAGNOSTICO\tb02.1\tref\t3 9;12 15\n", encoding="utf-8")
        pred.write_text("d1\t0 4\tDIAGNOSTICO\ta01.0\nd2\t30 34\tDIAGNOSTICO\tc03.2\n", encoding="utf-8")
    else:
        gold.write_text("d1\ta01.0\nd1\tb02.1\nd2\tc03.2\n", encoding="utf-8")
        pred.write_text("d1\tb02.1\nd1\tzzz.9\nd2\tc03.2\nd3\ta01.0\n", encoding="utf-8")
    return score_codiesp(gold, pred, [codes], track=track)


def ner_report(tmp_path) -> Report:
    tokens, gold, pred = tmp_path / "tokens.jsonlines", tmp_path / "ner.csv", tmp_path / "tool.csv"
    sentences = {"20000000000002A": "fuel tank ( left ) empty", "20000000000003A": "über den Wolken"}
    tokens.write_text(
        "".join(
            json.dumps({"doc_key": f"faa/{i}_{doc}_0", "sentences": [text.split()]}, ensure_ascii=False) + "\n"
            for i, (doc, text) in enumerate(sentences.items())
        ),
        encoding="utf-8",
    )
    gold.write_text("id,sample,entities\n20000000000002A,s,FUEL TANK (LEFT)\n20000000000003A,s,ÜBER\n")
    pred.write_text("c5_id,entities,labels\n20000000000002A,fuel tank,VEH\n20000000000003A,wolken,LOC\n")
    return score_ner(gold, pred, gold_format="omin", tokens=tokens)


class Colour(StrEnum):
    red = "red"


class Size(IntEnum):
    large = 3


ODD = Report(
    "odd",
    "standard",
    {"text": 'ñandú "quoted" \\ back\nline\ttab \x00\x1f\u2028\u2029 😀 \ud800', "nested": {"empty": {}, "list": []}},
    [
        {"metric": "m", "small": 1e-05, "sum": 0.1 + 0.2, "big": 2**70, "neg": -0.0, "e": 1e16, "whole": 3.0},
        {"metric": "n", "nan": math.nan, "inf": math.inf, "-inf": -math.inf, "true": True, "none": None},
        {"metric": "enums", "colour": Colour.red, "size": Size.large, "tuple": (1, "a", None)},
        {7: "int", 2.5: "float", True: "bool", None: "none", Size.large: "enum", False: "false", math.inf: "inf"},
        {"metric": "nested", "rows": [{"a": 1}, [], {}, [[1, 2], {"b": [3.5, "c"]}]]},
    ],
    [{"document": "d😀", "metric": "m", "f1": 1 / 3}] * 3 + [{"},\n      {": '"},\n      {"', "{": "}"}],
    ["a warning with ünïcode"],
    errors=[{"metric": "fp", "text": "\u00e9\u0301"}],
)


@pytest.mark.parametrize(
    "build",
    [
        lambda tmp_path: timelines_report(tmp_path, "strict"),
        lambda tmp_path: timelines_report(tmp_path, "month"),
        lambda tmp_path: codiesp_report(tmp_path, "D"),
        lambda tmp_path: codiesp_report(tmp_path, "X"),
        ner_report,
        lambda tmp_path: ODD,
    ],
    ids=["timelines-strict", "timelines-month", "codiesp-D", "codiesp-X", "ner", "odd-values"],
)
def test_reports_of_several_tasks_render_as_json_dumps_renders_them(build, tmp_path):
    report = build(tmp_path)
    assert report.scores and report.per_document
    assert to_json(report) == dumped(report.as_dict())


keys = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none())
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80), st.floats(), st.text())
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple), st.dictionaries(keys, inner, max_size=4)
    ),
    max_leaves=25,
)


tricky_text = st.text(alphabet=st.sampled_from('{}[],:" \n\\aé😀'), max_size=8)
flat_rows = st.lists(st.dictionaries(tricky_text, st.one_of(scalars, tricky_text), min_size=1, max_size=4), max_size=5)


@settings(max_examples=300)
@given(flat_rows, flat_rows)
def test_rows_render_as_json_dumps_renders_them(scores, per_document):
    report = Report("t", "p", {}, scores, per_document)
    assert to_json(report) == dumped(report.as_dict())


@settings(max_examples=300)
@given(st.lists(st.dictionaries(st.text(max_size=5), values, max_size=5), max_size=4), values)
def test_any_json_value_renders_as_json_dumps_renders_it(rows, extra):
    report = Report("t", "p", {"extra": extra}, rows, rows[:2])
    assert to_json(report) == dumped(report.as_dict())


@pytest.mark.parametrize(
    "inputs",
    [
        {"value": object()},
        {"rows": [{"a": 1, "b": {1, 2}}]},
        {"deep": [{"x": [b"bytes"]}]},
        {"key": {(1, 2): "tuple key"}},
        {"flat": {(1, 2): 3}},
    ],
)
def test_what_json_cannot_hold_raises_what_json_dumps_raises(inputs):
    report = Report("t", "p", inputs)
    with pytest.raises(TypeError) as expected:
        dumped(report.as_dict())
    with pytest.raises(TypeError) as raised:
        to_json(report)
    assert str(raised.value) == str(expected.value)


def test_a_circular_reference_raises_what_json_dumps_raises():
    loop: list = [1]
    loop.append({"back": loop})
    report = Report("t", "p", {"loop": loop})
    with pytest.raises(ValueError, match=r"^Circular reference detected$"):
        dumped(report.as_dict())
    with pytest.raises(ValueError, match=r"^Circular reference detected$"):
        to_json(report)
