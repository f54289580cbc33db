"""Submissions to datasets that data sites hold: which kinds a site runs, and a run waiting at each site.

A site's notes never leave it, so a submission to its dataset brings its tool to
them: a command, run in the site's sandbox. A tool URL or an LLM endpoint would
send the notes out, and a prediction file would need them seen: each is refused
in one line. The runs themselves are :mod:`nlpbench.platform.sites`'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from nlpbench.errors import InputError
from nlpbench.platform import tasks
from nlpbench.store.sites import Site, SiteDataset, SiteRun
from nlpbench.store.submissions import Submission

#: A run's statuses: no site has taken it yet, its site runs it, finished there and waiting for the site's
#: approval, returned its counts (or ``FAILED`` there, or ``CANCELLED``: ended unrun).
WAITING, RUNNING, HELD, RETURNED = "WAITING", "RUNNING", "HELD", "RETURNED"
#: The submission kinds a site runs: the tool comes to the notes.
SITE_KINDS = ("command",)


def holding(session: Session, dataset: str) -> list[Site]:
    """The sites that hold ``dataset``, by name."""
    query = select(Site).join(SiteDataset, SiteDataset.site_id == Site.id).where(SiteDataset.dataset == dataset)
    return list(session.scalars(query.order_by(Site.name)))


def check_submission(session: Session, task: str, dataset: str, kind: str) -> bool:
    """Whether sites hold ``dataset``; refused in one line for a kind a site does not run or a task not on notes."""
    if not holding(session, dataset):
        return False
    if not tasks.on_dataset(task):
        raise InputError(f"dataset {dataset} is held by data sites: task {task} is not run on notes", record="--task")
    if kind not in SITE_KINDS:
        raise InputError(
            f"dataset {dataset} is held by data sites, whose notes never leave them: a {kind} submission cannot be "
            f"run there; submit a command (--command)",
            record="--dataset",
        )
    return True


def open_runs(session: Session, submission: Submission) -> int:
    """A ``WAITING`` run of ``submission`` at each site holding its dataset; how many."""
    sites = holding(session, submission.dataset)
    for site in sites:
        session.add(SiteRun(submission_id=submission.id, site_id=site.id, status=WAITING, reason="waiting"))
    session.flush()
    return len(sites)


@dataclass(frozen=True)
class SiteColumn:
    """A site's primary value of one annotation type for one submission, with its interval."""

    site: str
    annotation_type: str
    value: float
    low: float | None
    high: float | None
    documents: int
    #: The site sent its totals only: no interval of its own, and none of the pooled interval's width.
    totals_only: bool = False


def site_columns(session: Session, submission_ids: list[int]) -> dict[int, list[SiteColumn]]:
    """Each submission's per-site primary values (of each annotation type, and overall), by site name; only the
    runs returned."""
    query = (
        select(SiteRun.submission_id, Site.name, SiteRun.intervals, SiteRun.reproducibility)
        .join(Site, Site.id == SiteRun.site_id)
        .where(SiteRun.submission_id.in_(submission_ids), SiteRun.status == RETURNED)
        .order_by(Site.name)
    )
    found: dict[int, list[SiteColumn]] = {}
    for submission_id, site, values, made in session.execute(query):
        totals = bool((made or {}).get("totalsOnly"))
        for value in values or []:
            column = SiteColumn(
                site, value["annotationType"], value["value"], value["low"], value["high"], value["documents"], totals
            )
            found.setdefault(submission_id, []).append(column)
    return found


def runs_of(session: Session, submission_id: int) -> list[dict[str, Any]]:
    """A submission's run at each site, by site name: its status, progress and (once returned) the site's own
    primary value of each annotation type with its interval, and whether it sent its totals only (pooled as one
    document, :data:`nlpbench.platform.pooling.TOTALS`) — what its page shows, all of nlpbench's making."""
    query = (
        select(Site.name, SiteRun)
        .join(Site, Site.id == SiteRun.site_id)
        .where(SiteRun.submission_id == submission_id)
        .order_by(Site.name)
    )
    return [
        {
            "site": site,
            "status": run.status,
            "notesDone": run.notes_done,
            "notesTotal": run.notes_total,
            "values": run.intervals or [],
            "totalsOnly": bool((run.reproducibility or {}).get("totalsOnly")),
        }
        for site, run in session.execute(query)
    ]
