"""What organisers do to a submission after the fact: disqualify or hide it (with the reason kept), or run a
FAILED one again without spending its team's quota.

- *Disqualified* and *hidden* submissions leave every leaderboard — the site's task tables, their rank
  groups (ranked again in the same transaction) and a phase's — and their pages; the reason is kept in the
  store (``removal``, ``removal_reason``) and told to the submission's team and the organisers, with an event.
  A disqualification says the submission broke the rules; hiding says nothing against it (a duplicate, a
  test, a team's request).
- A *re-run* moves a FAILED submission back to RECEIVED, with the predictions it stored dropped, so that a
  worker runs it from the start. It is the same submission: its quota place (taken when it was made, see
  :mod:`nlpbench.platform.quotas`) is counted once, so the team spends nothing; no window, freeze or quota
  is checked, since it was made in time.
"""

from __future__ import annotations

from contextlib import suppress

from sqlalchemy import delete
from sqlalchemy.orm import Session

from nlpbench.errors import InputError
from nlpbench.platform import queue as queues
from nlpbench.platform import ranks, tasks
from nlpbench.platform.errors import Conflict
from nlpbench.platform.scoring import delete_results, predictions_store
from nlpbench.store import Store, repository
from nlpbench.store.submissions import FAILED, RECEIVED, DeidentifiedNote, NoteAccount, Submission

#: How a submission leaves the leaderboards.
REMOVALS = ("disqualified", "hidden")
#: The longest reason kept.
MAX_REASON = 500


def remove(store: Store, submission_id: int, removal: str, reason: str, *, by: str = "organiser") -> Submission:
    """Disqualify or hide the submission with ``reason`` (one line, kept); :class:`Conflict` when it already
    left the leaderboards."""
    if removal not in REMOVALS:
        raise InputError(f"a submission is {' or '.join(REMOVALS)}, not {removal[:20]!r}")
    reason = " ".join(reason.split())
    if not reason or len(reason) > MAX_REASON:
        raise InputError(f"say why, in at most {MAX_REASON} characters", record="reason")
    with store.session() as session:
        submission = queues.get(session, submission_id)
        if submission.removal is not None:
            raise Conflict(f"submission {submission_id} is {submission.removal} already")
        submission.removal, submission.removal_reason = removal, reason
        queues.move(session, submission, submission.status, f"{removal} by {by}: {reason}")
        session.flush()
        ranks.rank(session, submission.task)
        return submission


def rerun(store: Store, submission_id: int, *, by: str = "organiser") -> Submission:
    """Queue a FAILED submission again from the start (RECEIVED), its stored predictions, an LLM tool's accounts
    of its notes and a ``deid`` submission's steps dropped; it costs its team no quota. :class:`Conflict` for any
    other status."""
    with store.session() as session:
        submission = queues.get(session, submission_id)
        if submission.status != FAILED:
            raise Conflict(f"submission {submission_id} is {submission.status}: only a FAILED one runs again")
        restart(session, submission)
        queues.move(session, submission, RECEIVED, f"run again by {by}: it costs no quota")
        return submission


def restart(session: Session, submission: Submission) -> None:
    """Inside a writing transaction: drop what a run of the submission stored (its predictions, de-identified
    notes and results) and its counts and timestamps, so that the next worker runs it from the start."""
    if tasks.is_phi(submission.task):
        with suppress(repository.NotFound):  # it stopped before it stored a prediction
            repository.delete_annotation_store(session, submission.dataset, predictions_store(submission.id))
    session.execute(delete(DeidentifiedNote).where(DeidentifiedNote.submission_id == submission.id))
    # an LLM tool's accounts of the notes go with them: the new run accounts for every note again
    session.execute(delete(NoteAccount).where(NoteAccount.submission_id == submission.id))
    delete_results(session, submission)
    submission.attempts = submission.notes_done = submission.notes_total = 0
    submission.started_at = submission.finished_at = None
    submission.deid_steps = None  # a new run: the queue's steps when it is claimed again
