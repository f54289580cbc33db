"""Plots as inline SVG, drawn with matplotlib's SVG backend (no display, no files, no fonts fetched)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from datetime import datetime

from matplotlib.figure import Figure


def _svg(figure: Figure) -> str:
    out = io.StringIO()
    figure.savefig(out, format="svg", bbox_inches="tight")
    text = out.getvalue()
    return text[text.index("<svg") :]  # inline: without the XML declaration and doctype


def whiskers(title: str, points: Sequence[tuple[str, float, float | None, float | None]]) -> str:
    """Each ``(label, value, low, high)`` as a dot with its interval as a whisker, labels down the side."""
    figure = Figure(figsize=(6, 0.35 * len(points) + 1.0))
    axes = figure.subplots()
    for y, (_, value, low, high) in enumerate(points):
        if low is not None and high is not None:
            axes.errorbar(value, y, xerr=[[value - low], [high - value]], fmt="o", color="#1f4e79", capsize=3)
        else:
            axes.plot(value, y, "o", color="#888888")
    axes.set_yticks(range(len(points)), [label for label, *_ in points])
    axes.invert_yaxis()
    axes.set_xlim(0, 1.02)
    axes.set_xlabel("score (95 % interval)")
    axes.set_title(title)
    axes.grid(axis="x", alpha=0.3)
    return _svg(figure)


def best_over_time(title: str, series: Mapping[str, Sequence[tuple[datetime, float]]]) -> str:
    """The best score so far of each column, as a step line over submission dates."""
    figure = Figure(figsize=(6, 3))
    axes = figure.subplots()
    for name, points in series.items():
        axes.step(
            [moment for moment, _ in points], [value for _, value in points], where="post", marker="o", label=name
        )
    axes.set_ylim(0, 1.02)
    axes.set_ylabel("best score")
    axes.set_title(title)
    axes.legend(loc="lower right", fontsize="small")
    figure.autofmt_xdate()
    return _svg(figure)
