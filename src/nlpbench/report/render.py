"""Render a :class:`Report` as a terminal table, JSON, Markdown or HTML.

JSON is the contract (byte-identical for identical inputs); the other
renderings show the overall and sliced score rows and, when asked for, the
errors; Markdown and HTML also list the warnings, which the command line
prints on standard error. Per-document rows appear in JSON only.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.table import Table

from nlpbench.report.model import Report, Row

if TYPE_CHECKING:
    from jinja2 import Environment

_KEY_COLUMNS = ("metric", "label", "average")


def columns(rows: list[Row]) -> list[str]:
    """Every key of the rows, key columns first, the rest in order of first appearance."""
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row))
    keys = [k for k in _KEY_COLUMNS if k in seen]
    return keys + [k for k in seen if k not in _KEY_COLUMNS]


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if value == value else "nan"
    return str(value)


def to_json(report: Report) -> str:
    return json.dumps(report.as_dict(), indent=2, ensure_ascii=False) + "\n"


def to_markdown(report: Report) -> str:
    out = [f"## {report.task} — profile `{report.profile}`", ""]
    out += _markdown_table(report.scores)
    if report.errors:
        out += ["", "### Errors", "", *_markdown_table(report.errors)]
    if report.warnings:
        out += ["", "### Warnings", ""] + [f"- {w}" for w in report.warnings]
    return "\n".join(out) + "\n"


def _markdown_table(rows: list[Row]) -> list[str]:
    keys = columns(rows)
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(cell(row.get(k)) for k in keys) + " |" for row in rows]
    return lines


def to_table(report: Report, width: int | None = None) -> str:
    """The overall rows, then the rows sliced by label or averaged, then the errors, as plain tables."""
    console = Console(file=io.StringIO(), width=width or 120, force_terminal=False, color_system=None)
    overall = [row for row in report.scores if not any(row.get(k) is not None for k in ("label", "average"))]
    sliced = [row for row in report.scores if row not in overall]
    console.print(_rich_table(f"{report.task} · profile {report.profile}", overall))
    if sliced:
        console.print(_rich_table("by label", sliced))
    if report.errors:
        console.print(_rich_table("errors", report.errors))
    return console.file.getvalue()


def table_text(title: str, rows: list[Row], width: int = 120) -> str:
    """Rows as one plain terminal table."""
    console = Console(file=io.StringIO(), width=width, force_terminal=False, color_system=None)
    console.print(_rich_table(title, rows))
    return console.file.getvalue()


def _rich_table(title: str, rows: list[Row]) -> Table:
    """Columns of text read left to right, columns of numbers right-aligned."""
    keys = columns(rows)
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for key in keys:
        numeric = all(isinstance(row.get(key), int | float | None) for row in rows)
        table.add_column(key.replace("_", " "), justify="right" if numeric else "left")
    for row in rows:
        table.add_row(*(cell(row.get(k)) for k in keys))
    return table


@cache
def templates() -> Environment:
    """The Jinja2 environment of the report templates, made on first use."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    environment = Environment(
        loader=PackageLoader("nlpbench.report"), autoescape=select_autoescape(), keep_trailing_newline=True
    )
    environment.filters["cell"] = cell
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
