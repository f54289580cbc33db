"""What the site's routers share: the store and settings of the app, pages, exports and checked ids.

Every router reads ``app.state``: ``store`` (the store it serves), ``settings`` (:class:`~nlpbench.web.app.Settings`),
``pages`` (the Jinja2 templates) and ``drawn`` (each task's best-over-time plot, for the results it was
drawn from).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from nlpbench.store import Store

FORMATS = ("csv", "json")
#: The largest id a page looks up: PostgreSQL's ``integer``; anything beyond is a 404 without a query.
MAX_ID = 2**31 - 1
#: What a CSV cell may not start with, lest a spreadsheet run it as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


async def store(request: Request) -> Store:
    """The store the site shows."""
    return request.app.state.store


#: A route's parameter for the store.
Stored = Annotated[Store, Depends(store)]


def page(request: Request, name: str, code: int = 200, **context: Any) -> HTMLResponse:
    """The template ``name`` rendered with the site's settings and ``context``."""
    state = request.app.state
    return state.pages.TemplateResponse(request, name, {"settings": state.settings, **context}, status_code=code)


def neutralised(cell: Any) -> Any:
    """A CSV cell that a spreadsheet will not run as a formula: a string starting with one of
    :data:`FORMULA_STARTS` gets a leading ``'``; anything else is returned as it is."""
    return f"'{cell}" if isinstance(cell, str) and cell.startswith(FORMULA_STARTS) else cell


def export(fmt: str, rows: list[dict[str, Any]], name: str, columns: Sequence[str] = ()) -> Response:
    """``rows`` as JSON, or as CSV (cells :func:`neutralised`) named ``name``; another format is a 404.

    The CSV's header is ``columns``, then any other key of ``rows`` in the order met: a table without
    rows still has its header row.
    """
    if fmt == "json":
        return JSONResponse(rows)
    if fmt != "csv":
        raise HTTPException(404, f"no export format {fmt}; known: {', '.join(FORMATS)}")
    out = io.StringIO()
    columns = list(dict.fromkeys([*columns, *(key for row in rows for key in row)]))
    writer = csv.DictWriter(out, [neutralised(column) for column in columns], lineterminator="\n")
    writer.writeheader()
    writer.writerows({neutralised(k): neutralised(v) for k, v in row.items()} for row in rows)
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:80]  # a header: nothing of a path but plain characters
    headers = {"content-disposition": f'inline; filename="{safe}.csv"'}
    return Response(out.getvalue(), media_type="text/csv; charset=utf-8", headers=headers)


def checked_id(value: int, what: str) -> int:
    """``value`` when it can be an id (1 to :data:`MAX_ID`); a 404 naming ``what`` else."""
    if not 1 <= value <= MAX_ID:
        raise HTTPException(404, f"no {what} {value}")
    return value
