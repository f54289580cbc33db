"""The table rendering lays out a table itself only as Rich would print it, byte for byte, and lets Rich do the rest.

Each test renders the same rows twice: with :func:`nlpbench.report.render.to_table` (or ``table_text``)
and with Rich alone, the ``SIMPLE_HEAD`` table on a plain console that the renderer printed before it laid
tables out itself, and compares the two strings.
"""

from __future__ import annotations

import io
import math
from typing import cast

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nlpbench.python_api import example as example_file
from nlpbench.python_api import score
from nlpbench.report import Report
from nlpbench.report.render import (
    _numeric,
    _plain_cell,
    _plain_console,
    _rich_table,
    _simple_table,
    columns,
    score_cell,
    table_text,
    tables,
    to_table,
)


def outcome(render, *args):
    """What ``render(*args)`` returns, or the type and message of what it raises (both renderings must
    return alike, or raise alike)."""
    try:
        return render(*args)
    except Exception as error:  # any error, compared
        return type(error), str(error)


def rich_text(title: str, rows: list[dict], shown=_plain_cell, width: int = 120) -> str:
    """The table as Rich alone prints it."""
    keys = columns(rows)
    header = [key.replace("_", " ") for key in keys]
    cells = [[shown(row, key) for key in keys] for row in rows]
    console = _plain_console(width)
    console.print(_rich_table(title, header, [_numeric(rows, key) for key in keys], cells))
    return cast(io.StringIO, console.file).getvalue()


def laid_out_here(title: str, rows: list[dict], shown=_plain_cell, width: int = 120) -> bool:
    """Whether the renderer lays this table out itself rather than asking Rich."""
    keys = columns(rows)
    cells = [[shown(row, key) for key in keys] for row in rows]
    header = [key.replace("_", " ") for key in keys]
    return _simple_table(title, header, [_numeric(rows, key) for key in keys], cells, width) is not None


def rich_report(report: Report, width: int = 120) -> str:
    """``to_table`` as it was: every table printed by Rich."""
    return "".join(rich_text(title, rows, shown, width) for title, rows, shown in tables(report))


#: Texts Rich prints as they are, and texts it does not: wide and combining characters, emoji and joiners,
#: what Rich would read as markup, escaped brackets or emoji codes, tabs, line breaks, control characters,
#: trailing blanks.
WORDS = ["date", "person_name", "(none)", "—", "", "x", "über", "漢字", "名前_長い", "e\u0301", "😀", "👩\u200d💻"]
WORDS += ["\u2764\ufe0f", "[b]bold[/b]", "[0.8, 1]", "\\[x", "a[/]", ":smile:", "a:b", "tab\there", "two\nlines"]
WORDS += ["trailing ", " leading", "\x1b[31m", "\x7f", "\u00ad", "a b  c", "·", "ｆｕｌｌ", "\u200b"]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join) | st.text(max_size=12)
values = (
    st.none() | st.integers(-(10**6), 10**12) | st.floats(allow_infinity=True, allow_nan=True) | st.just("—") | texts
)
keys = st.sampled_from(["metric", "label", "average", "annotation_type", "tp", "f1", "f1_ci_low", "f1_ci_high", "név"])
rows = st.lists(st.dictionaries(keys, values, max_size=6), max_size=8)
widths = st.integers(10, 200)


@settings(max_examples=400, deadline=None)
@given(title=texts, rows=rows, width=widths)
@example(title="by label", rows=[{"metric": "token", "tp": 3, "f1": 0.5}], width=120)
@example(title="t", rows=[{"metric": "漢字", "label": "", "tp": None}], width=40)
@example(title="a long title that does not fit on one line", rows=[{"metric": "x"}], width=120)
@example(title="t", rows=[{"metric": "x" * 200}], width=120)
@example(title="t", rows=[], width=120)
@example(title="t", rows=[{}], width=120)
def test_any_table_prints_as_rich_prints_it(title, rows, width):
    assert outcome(table_text, title, rows, width) == outcome(rich_text, title, rows, _plain_cell, width)


@settings(max_examples=200, deadline=None)
@given(rows=rows, subject=st.none() | texts, width=widths, errors=st.none() | rows)
def test_any_report_prints_as_rich_prints_it(rows, subject, width, errors):
    report = Report("sandbox", "standard", {}, rows, errors=errors, subject=subject)
    assert outcome(to_table, report, width) == outcome(rich_report, report, width)


def test_a_report_with_intervals_prints_as_rich_prints_it():
    from nlpbench.stats.report import with_intervals
    from nlpbench.tasks.sandbox import score_sandbox

    report = with_intervals(score_sandbox(example_file("gold.json"), example_file("pred.json"), errors=3), resamples=50)
    assert any("f1_ci_low" in row for row in report.scores)
    assert to_table(report) == rich_report(report)


@pytest.mark.parametrize("width", [120, 80, 60])
def test_the_example_prints_as_rich_prints_it_and_is_laid_out_here_when_it_fits(width):
    report = score("sandbox", example_file("gold.json"), example_file("pred.json"))
    assert to_table(report, width) == rich_report(report, width)
    assert laid_out_here("sandbox", report.scores, score_cell, width) is (width == 120)


@pytest.mark.parametrize(
    ("rows", "here"),
    [
        ([{"metric": "token", "label": "über 漢字 😀", "tp": 3, "f1": 0.5, "recall": math.nan}], True),
        ([{"metric": "", "label": None, "tp": None}], True),
        ([{"metric": "[bold]x[/bold]"}], True),  # what Rich would read as markup is data here
        ([{"metric": "\\[x]"}], True),  # an escaped bracket
        ([{"metric": ":thumbs_up:"}], True),  # an emoji code
        ([{"metric": "a\tb"}], False),  # a tab
        ([{"metric": "x "}], False),  # a trailing blank
        ([{"metric": "x" * 130}], False),  # wider than the console
    ],
)
def test_what_rich_would_change_is_left_to_rich(rows, here):
    assert laid_out_here("title", rows) is here
    assert table_text("title", rows) == rich_text("title", rows)


@pytest.mark.parametrize("label", ["a[/]", "[b]x", "[bold]x[/bold]", "\\[x]", ":smile:", "[link=http://x]y[/link]"])
@pytest.mark.parametrize("width", [120, 12])
def test_a_label_that_looks_like_rich_markup_prints_as_it_is(label, width):
    """A label is data: Rich would raise on a closing tag that closes nothing and hide ``[b]``."""
    printed = table_text("by label", [{"label": label, "tp": 1}], width)
    assert label in printed.replace("\n", "") or width == 12
    assert "".join(printed.split()).count(label.replace(" ", "")) == 1 or width == 12
