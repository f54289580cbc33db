"""Plots as inline SVG, drawn with matplotlib's SVG backend (no display, no files, no fonts fetched).

A plot goes into a page as it is (``|safe``), so what it holds is made safe
here, whatever its labels say:

- labels are bounded (:func:`nlpbench.web.board.bounded`) and never read as
  mathtext (``text.parse_math`` off: a ``$`` is a dollar sign, not a formula
  that fails to parse);
- the SVG is parsed and written again by ElementTree, which escapes every
  text and attribute; comments (where matplotlib copies each label's text)
  and metadata are dropped;
- matplotlib's ``style`` attributes and its one ``<style>`` rule become SVG
  presentation attributes, which the page's Content-Security-Policy does not
  govern, so that the site needs no ``'unsafe-inline'`` styles; ``xlink:href``
  becomes SVG 2's plain ``href``.

Ids are salted with a constant, so the same plot is the same SVG.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

import matplotlib
import matplotlib.dates as mdates
from matplotlib.figure import Figure

from nlpbench.web.board import bounded

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
#: The most characters of a label a plot shows.
LABEL = 40
_SETTINGS: dict[RcKeyType, Any] = {"text.parse_math": False, "svg.hashsalt": "nlpbench", "svg.fonttype": "path"}
_RULE = re.compile(r"\*\s*\{([^}]*)\}")


def _declarations(css: str) -> dict[str, str]:
    """``a: b; c: d`` as ``{"a": "b", "c": "d"}``."""
    pairs = (part.split(":", 1) for part in css.split(";") if ":" in part)
    return {name.strip(): value.strip() for name, value in pairs}


def inline(document: bytes) -> str:
    """matplotlib's SVG document as an ``<svg>`` element for a page: re-serialised, styles made attributes."""
    root = ElementTree.fromstring(document)  # comments are not kept
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag == f"{{{SVG}}}metadata":
                parent.remove(child)
            elif child.tag == f"{{{SVG}}}style":  # ``*{stroke-linejoin: round; …}``: inherited from the root
                for rule in _RULE.findall(child.text or ""):
                    for name, value in _declarations(rule).items():
                        root.set(name, value)
                parent.remove(child)
    for element in root.iter():
        element.tag = element.tag.removeprefix(f"{{{SVG}}}")  # one namespace: written once, on the root
        for name, value in _declarations(element.attrib.pop("style", "")).items():
            element.set(name, value)
        if f"{{{XLINK}}}href" in element.attrib:
            element.set("href", element.attrib.pop(f"{{{XLINK}}}href"))
    root.set("xmlns", SVG)
    return ElementTree.tostring(root, encoding="unicode")


def _svg(figure: Figure) -> str:
    out = io.BytesIO()
    figure.savefig(out, format="svg", bbox_inches="tight", metadata={"Date": None})
    return inline(out.getvalue())


def best_over_time(title: str, series: Mapping[str, Sequence[tuple[datetime, float]]]) -> str:
    """The best score so far of each column, as a step line over submission dates: a date axis (``2026-01-05``,
    ticks placed by matplotlib's date locator, in UTC), never times of day nor minutes and seconds."""
    with matplotlib.rc_context(_SETTINGS):
        figure = Figure(figsize=(6, 3))
        axes = figure.subplots()
        for name, points in series.items():
            axes.step(
                [moment for moment, _ in points],  # type: ignore[arg-type]  # matplotlib's stubs know arrays, not dates
                [value for _, value in points],
                where="post",
                marker="o",
                label=bounded(name, LABEL),
            )
        axes.set_ylim(0, 1.02)
        axes.set_ylabel("best score")
        axes.set_title(bounded(title, 2 * LABEL))
        axes.legend(loc="lower right", fontsize="small")
        locator = mdates.AutoDateLocator(minticks=3, maxticks=8, tz=UTC)
        locator.intervald[mdates.DAILY] = [1, 2, 7, 14]  # whole days at least: never hours
        axes.xaxis.set_major_locator(locator)
        axes.xaxis.set_major_formatter(mdates.DateFormatter("%Y-%m-%d", tz=UTC))
        axes.set_xlabel("submitted (UTC)")
        figure.autofmt_xdate()
        figure.draw_without_rendering()
        for label in axes.get_xticklabels():  # glyphs are paths: each tick's date kept as its group's id
            label.set_gid(f"tick-{label.get_text()}")
        return _svg(figure)


def spans_days(series: Mapping[str, Sequence[tuple[datetime, float]]]) -> bool:
    """Whether the points of ``series`` fall on more than one day (UTC): an over-time plot is drawn only then."""
    return len({moment.astimezone(UTC).date() for points in series.values() for moment, _ in points}) > 1


def accuracy_cost(
    title: str, axis: str, series: Mapping[str, Sequence[tuple[str, float, float, float | None, float | None]]]
) -> str:
    """Each column's ``(label, cost, value, low, high)`` points: the score (its interval a vertical whisker)
    against what the tool cost (``axis`` names it), one colour per column, each point labelled by its tool."""
    with matplotlib.rc_context(_SETTINGS):
        figure = Figure(figsize=(6, 3.5))
        axes = figure.subplots()
        for name, points in series.items():
            costs = [cost for _, cost, *_ in points]
            values = [value for _, _, value, *_ in points]
            whisker = [
                [value - low if low is not None else 0.0 for _, _, value, low, _ in points],
                [high - value if high is not None else 0.0 for _, _, value, _, high in points],
            ]
            axes.errorbar(costs, values, yerr=whisker, fmt="o", capsize=3, label=bounded(name, LABEL))
            for label, cost, value, *_ in points:
                axes.annotate(bounded(label, LABEL), (cost, value), xytext=(4, 4), textcoords="offset points",
                              fontsize="x-small")  # fmt: skip
        axes.set_ylim(0, 1.02)
        axes.set_xlim(left=0)
        axes.set_xlabel(axis)
        axes.set_ylabel("score (95 % interval)")
        axes.set_title(bounded(title, 2 * LABEL))
        axes.legend(loc="lower right", fontsize="small")
        axes.grid(alpha=0.3)
        return _svg(figure)
