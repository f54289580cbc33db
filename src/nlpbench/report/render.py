"""Render a :class:`Report` as a terminal table, JSON, Markdown or HTML.

JSON is the contract (byte-identical for identical inputs); the other
renderings show the overall and sliced score rows and, when asked for, the
errors; Markdown and HTML also list the warnings, which the command line
prints on standard error. Per-document rows appear in JSON only. A score
value a row holds as None (JSON null: a ratio over 0, which official scorers
print as nan) shows as ``nan``; a column a row does not have, and a label or
average of None, stay blank.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from nlpbench.report.model import Report, Row

if TYPE_CHECKING:
    from jinja2 import Environment
    from rich.console import Console
    from rich.table import Table

_KEY_COLUMNS = ("metric", "label", "average")


_INTERVAL_ENDS = ("_ci_low", "_ci_high")


def columns(rows: list[Row]) -> list[str]:
    """Every key of the rows, key columns first, the rest in order of first appearance.

    An interval's ends (``f1_ci_low``, ``f1_ci_high``) have no column of their
    own: :func:`score_cell` shows them in their value's cell.
    """
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row))
    keys = [k for k in _KEY_COLUMNS if k in seen]
    return keys + [k for k in seen if k not in _KEY_COLUMNS and not k.endswith(_INTERVAL_ENDS)]


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if value == value else "nan"
    return str(value)


def score_cell(row: Row, key: str) -> str:
    """A score row's cell: ``nan`` where the row holds None as a value (not as its label or average), blank where
    it has no such column; a value with an interval is followed by it, ``0.8571 [0.8, 1]``."""
    shown = "nan" if key not in _KEY_COLUMNS and key in row and row[key] is None else cell(row.get(key))
    if f"{key}_ci_low" in row:
        shown += f" [{cell(row[f'{key}_ci_low'])}, {cell(row[f'{key}_ci_high'])}]"
    return shown


def _plain_cell(row: Row, key: str) -> str:
    return cell(row.get(key))


def to_json(report: Report) -> str:
    """The report as ``json.dumps(report.as_dict(), indent=2, ensure_ascii=False)`` writes it, plus a line break."""
    return _IndentedJSON().dumps(report.as_dict()) + "\n"


#: The types whose JSON holds no separator; a container of only these is written in one call.
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def _flat(values: Iterable[Any]) -> bool:
    return _SCALAR_TYPES.issuperset(map(type, values))


def _is_row(value: Any) -> bool:
    """A non-empty dict of strings, numbers, booleans or None: what reports are made of."""
    return type(value) is dict and bool(value) and _flat(value.values())


class _IndentedJSON:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, byte for byte, a few times faster on report rows.

    With an indent, ``json.dumps`` runs the encoder written in Python (the C
    encoder writes no line breaks), which takes most of the time of a report
    with 10,000 per-document rows. Here the C encoder writes each dict or list
    whose values are all strings, numbers, booleans or None in one call, with
    the line break and indent of its level as the item separator, and a list
    of such dicts (a list of rows) in one call too; the levels above are
    walked here. The JSON of a string, number, boolean or None holds no line
    break, so the line breaks written are the separators. Keys, numbers
    (``repr``, ``NaN``, ``Infinity``) and strings are written by the functions
    ``json.dumps`` uses, and the same errors are raised (a value JSON cannot
    hold, a key of another type, a circular reference).
    """

    def __init__(self) -> None:
        self._scalar = json.JSONEncoder(ensure_ascii=False)
        self._encoders: dict[int, json.JSONEncoder] = {}
        self._open: set[int] = set()  # the containers being written, to stop on a circular reference

    def dumps(self, value: Any, level: int = 0) -> str:
        if isinstance(value, dict):
            return self._container(value, level, "{}")
        if isinstance(value, list | tuple):
            return self._container(value, level, "[]")
        return self._scalar.encode(value)  # a string, number, boolean or None; a TypeError for anything else

    def _container(self, value: dict | list | tuple, level: int, brackets: str) -> str:
        if not value:
            return brackets
        inner = "\n" + "  " * (level + 1)
        if _flat(value.values() if isinstance(value, dict) else value):
            body = self._encoder(level).encode(value)[1:-1]
        elif not isinstance(value, dict) and all(map(_is_row, value)):
            body = self._rows(value, level + 1)
        else:
            if id(value) in self._open:
                raise ValueError("Circular reference detected")
            self._open.add(id(value))
            if isinstance(value, dict):
                parts = [f"{self._key(key)}: {self.dumps(item, level + 1)}" for key, item in value.items()]
            else:
                parts = [self.dumps(item, level + 1) for item in value]
            body = ("," + inner).join(parts)
            self._open.discard(id(value))
        return brackets[0] + inner + body + "\n" + "  " * level + brackets[1]

    def _rows(self, rows: list | tuple, level: int) -> str:
        """Rows (see :func:`_is_row`) at ``level``, as a list writes them between its brackets."""
        outer, inner = "\n" + "  " * level, "\n" + "  " * (level + 1)
        text = self._encoder(level).encode(rows)  # [{"k": v,<inner>"k": v},<inner>{"k": v}]
        # The encoder separates the rows as it separates their items: "}," inner "{" is where one row ends and
        # the next begins, and nowhere else (an item ends in a string, number, boolean or None, never "}", and a
        # key begins with a quote). There the rows get their own line breaks and indents.
        body = text[2:-2].replace("}," + inner + "{", outer + "}," + outer + "{" + inner)
        return "{" + inner + body + outer + "}"

    def _encoder(self, level: int) -> json.JSONEncoder:
        """The C encoder writing items at ``level``: each on a line of its own."""
        encoder = self._encoders.get(level)
        if encoder is None:
            separator = ",\n" + "  " * (level + 1)
            encoder = self._encoders[level] = json.JSONEncoder(ensure_ascii=False, separators=(separator, ": "))
        return encoder

    def _key(self, key: Any) -> str:
        """A key as json.dumps writes it: a string, or a number, boolean or None as the string of its JSON."""
        if not isinstance(key, str):
            if not (isinstance(key, int | float) or key is None):
                raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")
            key = self._scalar.encode(key)
        return self._scalar.encode(key)


def to_markdown(report: Report) -> str:
    out = [f"## {report.task} — profile `{report.profile}`{f' — {report.subject}' if report.subject else ''}", ""]
    out += _markdown_table(report.scores, score_cell)
    if report.errors:
        out += ["", "### Errors", "", *_markdown_table(report.errors)]
    if report.warnings:
        out += ["", "### Warnings", ""] + [f"- {w}" for w in report.warnings]
    return "\n".join(out) + "\n"


def _markdown_table(rows: list[Row], shown: Callable[[Row, str], str] = _plain_cell) -> list[str]:
    keys = columns(rows)
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(shown(row, k) for k in keys) + " |" for row in rows]
    return lines


def to_table(report: Report, width: int | None = None) -> str:
    """The overall rows, then the rows sliced by label or averaged, then the errors, as plain tables."""
    return "".join(_table(title, rows, shown, width or 120) for title, rows, shown in tables(report))


def tables(report: Report) -> list[tuple[str, list[Row], Callable[[Row, str], str]]]:
    """The tables :func:`to_table` prints, each as its title, its rows and how a row's cell is shown: the overall
    rows, then the rows sliced by label or averaged (if any), then the errors (if any)."""
    overall = [row for row in report.scores if not any(row.get(k) is not None for k in ("label", "average"))]
    sliced = [row for row in report.scores if row not in overall]
    title = f"{report.task} · profile {report.profile}" + (f" · {report.subject}" if report.subject else "")
    if "ci" in report.inputs:
        settings = report.inputs["ci"]
        title += f" · {settings['confidence']:.0%} {settings['method']} intervals, {settings['resamples']:,} resamples"
    found: list[tuple[str, list[Row], Callable[[Row, str], str]]] = [(title, overall, score_cell)]
    if sliced:
        found.append((f"by label · {report.subject}" if report.subject else "by label", sliced, score_cell))
    if report.errors:
        found.append(("errors", report.errors, _plain_cell))
    return found


def table_text(title: str, rows: list[Row], width: int = 120) -> str:
    """Rows as one plain terminal table."""
    return _table(title, rows, _plain_cell, width)


def _table(title: str, rows: list[Row], shown: Callable[[Row, str], str], width: int) -> str:
    """One table as Rich prints it (:func:`_rich_table` on a plain console ``width`` cells wide): laid out here
    when :func:`_simple_table` can, by Rich otherwise."""
    keys = columns(rows)
    header = [key.replace("_", " ") for key in keys]
    right = [_numeric(rows, key) for key in keys]
    cells = [[shown(row, key) for key in keys] for row in rows]
    simple = _simple_table(title, header, right, cells, width)
    if simple is not None:
        return simple
    console = _plain_console(width)
    console.print(_rich_table(title, header, right, cells))
    return cast(io.StringIO, console.file).getvalue()  # the file _plain_console gave it


def _numeric(rows: list[Row], key: str) -> bool:
    """Whether a column holds numbers (or blanks, or dashes) only: it is right-aligned."""
    return all(isinstance(row.get(key), int | float | None) or row.get(key) == "—" for row in rows)


#: Characters one cell wide that Rich prints as they are (printable ASCII, and the middle dot of the titles).
_NARROW = frozenset(map(chr, range(0x20, 0x7F))) | {"·"}


def _cells(text: str) -> int | None:
    """The cells ``text`` takes on a terminal, as Rich counts them; None when Rich would print something else
    than ``text`` itself on one line (a control character, trailing white space)."""
    if text != text.rstrip():
        return None
    if _NARROW.issuperset(text):
        return len(text)
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text):
        return None
    from rich.cells import cell_len

    return cell_len(text)


def _simple_table(title: str, header: list[str], right: list[bool], cells: list[list[str]], width: int) -> str | None:
    """The table exactly as Rich prints a :data:`rich.box.SIMPLE_HEAD` table with a left-justified title,
    padding 1 and edges, when it fits in ``width`` cells with its title on one line and every text prints as
    it is; None otherwise (Rich then wraps, crops or interprets, and renders the table itself)."""
    if not header or not cells or not title:
        return None
    sizes = [[_cells(text) for text in line] for line in (header, *cells)]
    title_size = _cells(title)
    if title_size is None or any(size is None for line in sizes for size in line):
        return None
    widths = [max(cast(int, line[i]) for line in sizes) for i in range(len(header))]
    total = sum(widths) + 3 * len(widths) + 1  # a cell's padding on both sides, a separator between, two edges
    if total > width or title_size > total:
        return None

    def line(texts: list[str], line_sizes: list[int | None]) -> str:
        padded = (
            " " * (w - cast(int, n)) + text if r else text + " " * (w - cast(int, n))
            for text, n, w, r in zip(texts, line_sizes, widths, right, strict=True)
        )
        return "  " + "   ".join(padded) + "  \n"

    out = [title + " " * (total - title_size) + "\n", " " * total + "\n", line(header, sizes[0])]
    out.append(" " + "─".join("─" * (w + 2) for w in widths) + " \n")
    out += [line(texts, line_sizes) for texts, line_sizes in zip(cells, sizes[1:], strict=True)]
    out.append(" " * total + "\n")
    return "".join(out)


def _plain_console(width: int) -> Console:
    """A Rich console that writes plain text into a string (Rich is loaded here: JSON output never needs it)."""
    from rich.console import Console

    return Console(file=io.StringIO(), width=width, force_terminal=False, color_system=None)


def _rich_table(title: str, header: list[str], right: list[bool], cells: list[list[str]]) -> Table:
    """Columns of text read left to right, columns of numbers right-aligned. Every text is shown as it is:
    a label such as ``[/]`` or ``:smile:`` is data, never Rich markup or an emoji code."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title), box=box.SIMPLE_HEAD, title_justify="left")
    for name, numeric in zip(header, right, strict=True):
        table.add_column(Text(name), justify="right" if numeric else "left")
    for texts in cells:
        table.add_row(*map(Text, texts))
    return table


@cache
def templates() -> Environment:
    """The Jinja2 environment of the report templates, made on first use."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    environment = Environment(
        loader=PackageLoader("nlpbench.report"), autoescape=select_autoescape(), keep_trailing_newline=True
    )
    environment.filters["cell"] = cell
    environment.filters["score_cell"] = score_cell
    return environment


def to_html(report: Report) -> str:
    return (
        templates()
        .get_template("report.html")
        .render(report=report, columns=columns, error_columns=columns(report.errors or []))
    )


FORMATS: dict[str, Callable[[Report], str]] = {
    "table": to_table,
    "json": to_json,
    "markdown": to_markdown,
    "html": to_html,
}


def render(report: Report, fmt: str) -> str:
    return FORMATS[fmt](report)
