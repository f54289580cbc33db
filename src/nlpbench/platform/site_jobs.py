"""A data site's jobs as its organiser sees them (``nlpbench site jobs``, ``site approve``): the store alone, so that
these commands do not load the site's runner (its worker, the sandbox, the tool client).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from nlpbench.errors import InputError
from nlpbench.platform.errors import Conflict, NotFound
from nlpbench.store import Store
from nlpbench.store.sites import SiteJob
from nlpbench.store.submissions import Submission

#: A job's states at the site: its local submission runs; it ended and waits for approval; approved; sent.
RUNNING, HELD, APPROVED, SENT = "running", "held", "approved", "sent"


def approve(store: Store, run: int, central: str | None = None) -> int:
    """Let run ``run``'s held result go to the centre at the next look; the local submission's id."""
    with store.session() as session:
        query = select(SiteJob).where(SiteJob.run_id == run)
        if central is not None:
            query = query.where(SiteJob.central == central)
        found = list(session.scalars(query))
        if not found:
            raise NotFound(f"no run {run} at this site")
        if len(found) > 1:
            raise InputError(f"run {run} of several centres here: name the centre (--central)")
        if found[0].state != HELD:
            raise Conflict(f"run {run} is {found[0].state}: only a held run is approved")
        found[0].state = APPROVED
        return found[0].submission_id


def jobs(store: Store) -> list[dict[str, Any]]:
    """The centre's runs taken here: the centre, the run, the local submission and its status, the job's state."""
    with store.session(readonly=True) as session:
        query = (
            select(SiteJob, Submission.status)
            .join(Submission, Submission.id == SiteJob.submission_id)
            .order_by(SiteJob.id)
        )
        return [
            {"central": j.central, "run": j.run_id, "submission": j.submission_id, "status": s, "state": j.state}
            for j, s in session.execute(query)
        ]
