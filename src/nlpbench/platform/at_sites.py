"""Submissions to datasets that data sites hold: which kinds a site runs, and a run waiting at each site.

A site's notes never leave it, so a submission to its dataset brings its tool to
them: a command, run in the site's sandbox. A tool URL or an LLM endpoint would
send the notes out, and a prediction file would need them seen: each is refused
in one line. The runs themselves are :mod:`nlpbench.platform.sites`'.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from nlpbench.errors import InputError
from nlpbench.platform import tasks
from nlpbench.store.sites import Site, SiteDataset, SiteRun
from nlpbench.store.submissions import Submission

#: A run's first status: no site has taken it yet.
WAITING = "WAITING"
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
