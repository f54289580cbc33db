"""A task's table: one line per tool, a column per dataset and metric, with intervals, ranks and a plot; a column
per data site when a dataset is held by sites (each site's own value beside the pooled one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse
from sqlalchemy import select

from nlpbench.platform import accounts, at_sites, tasks
from nlpbench.platform.accounts import STAGES
from nlpbench.platform.overall import OVERALL
from nlpbench.platform.standings import Cell
from nlpbench.store import Store
from nlpbench.store.submissions import Result
from nlpbench.toolapi.cost import PERCENTILES
from nlpbench.web import board, detectable, forest, plots
from nlpbench.web.render import Stored, export, page

router = APIRouter()


def table(request: Request, store: Store, task: str, pick: str | None) -> tuple[board.Table, Facts]:
    """The task's table (each tool's best or latest submission, by ``pick`` or the site's setting), the
    reproducibility fields of the results it shows and the usage of its LLM tools' submissions."""
    if not tasks.known(task):
        raise HTTPException(404, f"no task {board.bounded(task)}")
    pick = pick or request.app.state.settings.pick
    if pick not in board.PICKS:
        raise HTTPException(404, f"no setting pick={board.bounded(pick)}; known: {', '.join(board.PICKS)}")
    with store.session(readonly=True) as session:
        found = board.task_table(session, task, pick)
        differences = detectable.apply(found)
        shown = [line.shown.result_id for line in found.lines]
        query = select(Result.id, Result.reproducibility).where(Result.id.in_(shown))
        made = {result_id: reproducibility for result_id, reproducibility in session.execute(query)}
        used = accounts.usages(session, {cell.submission.id for line in found.lines for cell in line.cells.values()})
        sited = at_sites.site_columns(session, [line.shown.submission.id for line in found.lines])
    return found, Facts(
        made, used, differences, {submission: _headline(columns) for submission, columns in sited.items()}
    )


def _headline(columns: list[at_sites.SiteColumn]) -> dict[str, at_sites.SiteColumn]:
    """Each site's value a table shows: of the overall type where the task has several, else of its one type."""
    types = {column.annotation_type for column in columns}
    wanted = OVERALL if OVERALL in types else min(types)
    return {column.site: column for column in columns if column.annotation_type == wanted}


@dataclass
class Facts:
    """What a table's lines show beside their scores: the reproducibility fields of each shown result (by
    its id), the usage of each LLM tool's submission the table shows a cell of (by its id), each
    column's smallest detectable difference (:mod:`nlpbench.web.detectable`) and its values at data sites."""

    made: dict[int, dict[str, Any]]
    used: dict[int, accounts.Usage]
    differences: dict[str, float | None]
    #: Each shown submission's value at each data site that returned one (by submission id, then site name).
    sites: dict[int, dict[str, at_sites.SiteColumn]]

    @property
    def site_names(self) -> list[str]:
        """The sites of the table's columns, by name."""
        return sorted({site for columns in self.sites.values() for site in columns})

    @property
    def totals_sites(self) -> list[str]:
        """The sites that sent their totals only, by name."""
        return sorted({c.site for columns in self.sites.values() for c in columns.values() if c.totals_only})


#: A score column's own columns in an export: the score, its interval, its rank group and its submission.
CELL_PARTS = ("", " ci_low", " ci_high", " rank", " submission")
#: The columns after the scores: what the shown submission's tool said of itself, and when it was submitted.
FACT_COLUMNS = ("version", "license", "url", "apiVersion", "digest", "submitted")
#: The columns of a PHI or ``deid`` task's table, after the scores, of what the shown submission's LLM tool said of its
#: notes (:mod:`nlpbench.platform.accounts`): its mentions by how they were placed, tokens, latency per note
#: and cost (empty for a tool that is no LLM, or a model the queue's price table does not price).
LLM_COLUMNS = (
    *STAGES,
    "tokens in",
    "tokens out",
    *(f"latency p{p} ms" for p in PERCENTILES),
    "cost USD",
)


#: A data site's own columns in an export: its value of the shown submission and that value's interval.
SITE_PARTS = ("", " ci_low", " ci_high")


def row_columns(task: str, columns: list[str], sites: list[str]) -> list[str]:
    """The columns of :func:`line_row` for ``task``'s table of score ``columns`` and data ``sites``, in order: the
    export's header."""
    llm = LLM_COLUMNS if tasks.on_dataset(task) else ()
    scores = [f"{key}{part}" for key in columns for part in CELL_PARTS]
    return ["team", "tool", *scores, *(f"site {s}{part}" for s in sites for part in SITE_PARTS), *llm, *FACT_COLUMNS]


def line_row(line: board.Line, task: str, columns: list[str], facts: Facts) -> dict[str, Any]:
    shown = line.shown.submission
    tool = board.tool_facts(shown) or {}
    made = facts.made.get(line.shown.result_id, {})
    row: dict[str, Any] = {"team": line.team, "tool": line.tool}
    for key in columns:
        cell = line.cells.get(key)
        values = (cell.value, cell.low, cell.high, cell.rank, cell.submission.id) if cell else (None,) * 5
        row |= {f"{key}{part}": value for part, value in zip(CELL_PARTS, values, strict=True)}
    at_sites_shown = facts.sites.get(shown.id, {})
    for site in facts.site_names:
        value = at_sites_shown.get(site)
        shown_values = (value.value, value.low, value.high) if value else (None,) * 3
        row |= {f"site {site}{part}": v for part, v in zip(SITE_PARTS, shown_values, strict=True)}
    if tasks.on_dataset(task):  # a tool's task: its tool may be an LLM (an annotator or a de-identifier)
        row |= dict.fromkeys(LLM_COLUMNS) | _llm_values(facts.used.get(shown.id))
    digest = made.get("image") or made.get("commandSha256") or made.get("predictionsSha256")
    facts_shown = (
        tool.get("version"),
        tool.get("license"),
        tool.get("url") or board.shown_url(shown.tool_url),
        tool.get("apiVersion"),
        board.bounded(digest, board.LONG),
        shown.created_at.isoformat(),
    )
    return row | dict(zip(FACT_COLUMNS, facts_shown, strict=True))


def _llm_values(used: accounts.Usage | None) -> dict[str, Any]:
    """The :data:`LLM_COLUMNS` of a submission's usage; none for a submission without one."""
    if used is None:
        return {}
    latency = {f"latency p{p} ms": ms for p, ms in used.latency_ms.items()}
    return {**used.grounding, "tokens in": used.tokens_in, "tokens out": used.tokens_out, **latency,
            "cost USD": used.cost}  # fmt: skip


@router.get("/tasks/{task}.{fmt}")
def task_export(
    request: Request,
    task: str,
    fmt: str,
    store: Stored,
    sort: str | None = None,
    order: str = "desc",
    pick: str | None = None,
):
    found, facts = table(request, store, task, pick)
    lines = board.sorted_lines(found, sort or _default_sort(found), order != "asc")
    rows = [line_row(line, task, found.columns, facts) for line in lines]
    return export(fmt, rows, task, row_columns(task, found.columns, facts.site_names))


@router.get("/tasks/{task}", response_class=HTMLResponse)
def task_page(
    request: Request,
    task: str,
    store: Stored,
    sort: str | None = None,
    order: str = "desc",
    pick: str | None = None,
    rows: str = "teams",
):
    found, facts = table(request, store, task, pick)
    every = rows == "all"
    sort = sort if sort in (*found.columns, "team", "tool", "date") else _default_sort(found)
    order = "asc" if order == "asc" else "desc"
    lines = board.sorted_lines(found, sort, order == "desc")
    series = board.best_over_time(found)
    series = series if plots.spans_days(series) else {}  # every point on one day: no plot
    source = tuple((key, tuple(points)) for key, points in series.items())
    drawn = request.app.state.drawn
    if series and drawn.get(task, (None,))[0] != source:
        drawn[task] = (source, plots.best_over_time(f"{task}: best score over time", series))
    plot = drawn[task][1] if series else None
    costs = cost_series(found, facts)
    if costs is not None and drawn.get((task, "cost"), (None,))[0] != costs:
        axis, points = costs
        drawn[(task, "cost")] = (costs, plots.accuracy_cost(f"{task}: {_metric_name(task)} against cost", axis, points))
    cost_plot = drawn[(task, "cost")][1] if costs is not None else None
    shown_rows = [line_row(line, task, found.columns, facts) for line in lines]
    plotted = sort if sort in found.columns else _default_sort(found)
    forest_plot = None
    if plotted in found.columns:
        baselines = request.app.state.settings.baselines
        forest_points = forest_rows(found, plotted, baselines, every=every)
        title = f"{task} · {plotted}: {_metric_name(task)}" + (" (every submission)" if every else "")
        forest_plot = forest.forest(title, forest_points, facts.differences.get(plotted))
    llm = LLM_COLUMNS if facts.used else ()  # shown on the page when a line's tool is an LLM
    return page(
        request, "task.html", table=found, lines=lines, rows=shown_rows, sort=sort, order=order, plot=plot,
        metric=_metric_name(task), llm=llm, cost_plot=cost_plot, cost_axis=costs[0] if costs else None,
        forest_plot=forest_plot, plotted=plotted, every=every, differences=facts.differences,
        max_rows=forest.MAX_ROWS, site_names=facts.site_names, totals_sites=facts.totals_sites,
    )  # fmt: skip


def forest_rows(found: board.Table, key: str, baselines: tuple[str, ...], every: bool = False) -> list[forest.Row]:
    """The forest plot's rows of column ``key``, best first: each team's best cell (its tool named), or with
    ``every`` each scored submission's cell (at most :data:`nlpbench.web.forest.MAX_ROWS`, the best). A
    submission's rank is its shown rank when the table shows it, none otherwise."""
    if every:
        ranks = {line.cells[key].result_id: line.cells[key].rank for line in found.lines if key in line.cells}
        cells = [(board.tool_name(cell.submission), cell.submission.team, cell, ranks.get(cell.result_id))
                 for column, cell in found.history if column == key]  # fmt: skip
        cells = [(f"{tool} · {team} · #{cell.submission.id}", team, cell, rank) for tool, team, cell, rank in cells]
    else:
        best: dict[str, tuple[board.Line, Cell]] = {}
        for line in found.lines:
            cell = line.cells.get(key)
            if cell is not None and (line.team not in best or cell.value > best[line.team][1].value):
                best[line.team] = (line, cell)
        cells = [(f"{line.tool} · {team}", team, cell, cell.rank) for team, (line, cell) in best.items()]
    cells.sort(key=lambda held: (-held[2].value, held[3] if held[3] is not None else 0, held[1], held[0]))
    return [
        forest.Row(label, cell.value, cell.low, cell.high, rank, baseline=team in baselines)
        for label, team, cell, rank in cells[: forest.MAX_ROWS]
    ]


#: A point of the accuracy-against-cost plot: the tool, its cost, its value and interval.
CostPoint = tuple[str, float, float, float | None, float | None]


def cost_series(found: board.Table, facts: Facts) -> tuple[str, dict[str, tuple[CostPoint, ...]]] | None:
    """The accuracy-against-cost plot's axis and points: per column, each LLM tool's cell at its
    submission's cost in US dollars — or, when no cell's submission is priced, at its tokens (in and out).
    None when no cell is an LLM tool's."""
    cells = [(key, line, cell) for line in found.lines for key, cell in line.cells.items()]
    used = [(key, line, cell, facts.used[cell.submission.id]) for key, line, cell in cells
            if cell.submission.id in facts.used]  # fmt: skip
    if not used:
        return None
    priced = any(u.cost is not None for *_, u in used)
    series: dict[str, list[CostPoint]] = {}
    for key, line, cell, u in used:
        spent = u.cost if priced else u.tokens
        if spent is not None:
            series.setdefault(key, []).append((f"{line.team}/{line.tool}", spent, cell.value, cell.low, cell.high))
    axis = "cost (US dollars, organisers' prices)" if priced else "tokens (in and out; no price table names the model)"
    return axis, {key: tuple(points) for key, points in sorted(series.items())}


def _default_sort(found: board.Table) -> str:
    return found.columns[0] if found.columns else "team"


def _metric_name(task: str) -> str:
    if tasks.is_phi(task):
        return "token F1"
    named = {
        "timelines": "official score",
        "coref": "CoNLL F1",
        "codiesp": "MAP (D, P) or F1 (X)",
        "deid": "HIPAA-token recall",
    }
    return named.get(task, "F1")
