"""The organisers' view of the queue (:mod:`nlpbench.platform.admin`), as JSON and as a page; organisers only.

- ``GET /admin/queue`` (``queue`` optional) — the workers and the leases they hold, the submissions stuck
  past twice their time budget, and how many wait per queue;
- ``GET /admin/queue.html`` — the same as a page, each stuck submission with a *Re-queue* button: a form
  that posts to ``POST /submissions/{id}/requeue`` (:mod:`~nlpbench.api.platform.submissions`), which
  answers a form with a redirect back to the page.

The leaderboard site (:mod:`nlpbench.web`) is public and has no organisers, so the page lives here, under
the platform API's organiser key like every organiser's route: the page and its button need the key on each
request (``X-API-Key`` or ``Authorization: Bearer``), as a reverse proxy in front of the organisers' own
browsers can add it. A form on another site cannot make a browser send that header, so the button cannot
be forged from elsewhere; the page allows forms to post to this server only and runs no script.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse
from jinja2 import Environment
from starlette.exceptions import HTTPException

from nlpbench.api.platform.access import Stored, Who, errors
from nlpbench.errors import Kind
from nlpbench.platform import admin
from nlpbench.platform import queue as queues
from nlpbench.platform.keys import Caller

router = APIRouter(tags=["Queue administration"])
#: Headers of the page: no script, no style from elsewhere, forms to this server only, never in a frame.
PAGE_HEADERS = {
    "content-security-policy": "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
PAGE = Environment(autoescape=True).from_string(
    """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Queue administration</title></head>
<body>
<h1>Queue administration</h1>
<p>At {{ view.at }}. A submission is stuck once it has run {{ view.stuckFactor }} times its time budget.</p>
<h2>Stuck submissions</h2>
{% if view.stuck %}<table>
<thead><tr><th>submission</th><th>team</th><th>task</th><th>queue</th><th>status</th><th>worker</th>
<th>running since</th><th>seconds</th><th>budget (s)</th><th></th></tr></thead>
<tbody>{% for s in view.stuck %}<tr id="stuck-{{ s.submission }}"><td>{{ s.submission }}</td><td>{{ s.team }}</td>
<td>{{ s.task }}</td><td>{{ s.queue }}</td><td>{{ s.status }}</td><td>{{ s.worker }}</td><td>{{ s.runningSince }}</td>
<td>{{ s.runningSeconds }}</td><td>{{ s.budgetSeconds }}</td>
<td><form method="post" action="../submissions/{{ s.submission }}/requeue">
<button type="submit" name="requeue" value="{{ s.submission }}">Re-queue</button></form></td></tr>{% endfor %}</tbody>
</table>{% else %}<p>None.</p>{% endif %}
<h2>Workers and their leases</h2>
{% if view.workers %}<table>
<thead><tr><th>worker</th><th>submission</th><th>status</th><th>lease ends</th><th>lease</th></tr></thead>
<tbody>{% for w in view.workers %}{% for s in w.leases %}<tr><td>{{ w.name }}</td><td>{{ s.submission }}</td>
<td>{{ s.status }}</td><td>{{ s.leaseExpiresAt }}</td><td>{{ "expired" if s.leaseExpired else "held" }}</td></tr>
{% endfor %}{% endfor %}</tbody></table>{% else %}<p>No worker holds a submission.</p>{% endif %}
<h2>Waiting</h2>
{% if view.waiting %}<ul>{% for name, count in view.waiting.items() %}<li>{{ name }}: {{ count }}</li>{% endfor %}
</ul>{% else %}<p>Nothing waits.</p>{% endif %}
</body></html>
"""
)


def organiser(me: Caller) -> None:
    """403 unless the key is an organiser's."""
    if not me.organiser:
        raise HTTPException(403, "the queue's administration is the organisers'")


QueueName = Annotated[str | None, Query(pattern=f"^{queues.NAME_PATTERN}$")]


def _overview(store, queue: str | None) -> dict[str, Any]:
    with store.session(readonly=True) as session:
        return admin.overview(session, queues.now(), queue)


@router.get("/admin/queue", responses=errors(Kind.forbidden))
def overview(me: Who, store: Stored, queue: QueueName = None) -> dict[str, Any]:
    """Workers with their leases, stuck submissions and waiting counts (of ``queue``, if named)."""
    organiser(me)
    return _overview(store, queue)


@router.get("/admin/queue.html", response_class=HTMLResponse, responses=errors(Kind.forbidden))
def page(me: Who, store: Stored, queue: QueueName = None) -> HTMLResponse:
    """The same as a page, with a re-queue button for each stuck submission."""
    organiser(me)
    html = PAGE.render(view=_overview(store, queue))  # its forms post to ../submissions/ID/requeue
    return HTMLResponse(html, headers=PAGE_HEADERS)
