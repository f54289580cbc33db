"""A submission's completion, posted to the webhook its queue's organisers configured.

A webhook belongs to a queue (``nlpbench submissions queue NAME --webhook URL --webhook-secret SECRET``): every
submission runs in a queue, a challenge's phases each name theirs, and the queue is what a worker reads
before it runs one — a challenge's organisers give its phases' queues the webhook.

When a worker ends a submission (SCORED, INVALID, FAILED, CANCELLED — cancelled while it ran, or failed at
its claim for having stopped too many workers), after the move is committed, it posts
:func:`payload` as JSON: the submission's id, team, task, dataset, queue, challenge and phase, status, its
primary scores with their intervals when SCORED, and its timestamps — never a reason (a failure's line
may quote what a tool said), a log, a note or a span. The body is signed with the queue's secret:
``X-Nlpbench-Signature: sha256=HEX``, the HMAC-SHA256 of the exact body bytes; ``X-Nlpbench-Delivery`` names
the delivery (the same on each retry), so that a receiver drops a duplicate. A submission cancelled while it
waited (RECEIVED) has no worker to end it: whoever cancelled it posts it the same way, once the cancel is
committed — the platform API (``POST /submissions/{id}/cancel``) or ``nlpbench submissions cancel``
(:func:`nlpbench.platform.queue.cancel` names it in ``waited``).

Delivery runs on a thread of its own (:func:`deliver_later`), at most :data:`IN_FLIGHT` at once per
worker: the worker goes on with its next submission and nothing a receiver does fails a run. A delivery is
tried at most :data:`ATTEMPTS` times, waiting :data:`FIRST_WAIT` seconds and then twice as long each time,
within :data:`DEADLINE` seconds in all, each request within :data:`TIMEOUT`; a 2xx ends it. Redirects are
not followed. A failed attempt is logged by the submission's id, the attempt and the status (or the error's
type), never a body.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
import uuid
from typing import Any

import httpx
from sqlalchemy import select
from sqlalchemy.orm import Session

from nlpbench.platform.views import moment
from nlpbench.store import Store, intervals
from nlpbench.store.challenges import Challenge, Phase
from nlpbench.store.submissions import FINAL, SCORED, Queue, Result, Submission

log = logging.getLogger(__name__)

#: The most attempts of one delivery, the wait before the second (doubled after each), the time for all of them,
#: and for one request, in seconds.
ATTEMPTS = 5
FIRST_WAIT = 1.0
DEADLINE = 120.0
TIMEOUT = 10.0
#: The most deliveries one worker has in flight; a completion past them is logged and not sent.
IN_FLIGHT = 16
SIGNATURE = "X-Nlpbench-Signature"
DELIVERY = "X-Nlpbench-Delivery"


def signature(secret: str, body: bytes) -> str:
    """``sha256=`` and the hexadecimal HMAC-SHA256 of ``body`` under ``secret``: what a receiver recomputes."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def payload(session: Session, submission: Submission) -> dict[str, Any]:
    """What a webhook is told of an ended submission: who, what, its status, its primary scores (SCORED) and its
    timestamps. Nothing a tool or a note said: no reason, log, warning, note or span."""
    phase = session.get(Phase, submission.phase_id) if submission.phase_id is not None else None
    challenge = session.get(Challenge, phase.challenge_id) if phase is not None else None
    return {
        "event": "submission.completed",
        "submission": submission.id,
        "team": submission.team,
        "task": submission.task,
        "dataset": submission.dataset,
        "datasetVersion": submission.dataset_version,
        "queue": submission.queue,
        "challenge": challenge.name if challenge is not None else None,
        "phase": phase.name if phase is not None else None,
        "status": submission.status,
        "scores": _scores(session, submission) if submission.status == SCORED else [],
        "createdAt": moment(submission.created_at),
        "startedAt": moment(submission.started_at),
        "finishedAt": moment(submission.finished_at),
    }


def _scores(session: Session, submission: Submission) -> list[dict[str, Any]]:
    """Each result's primary value per annotation type, with its interval."""
    shown = []
    for result in session.scalars(select(Result).where(Result.submission_id == submission.id).order_by(Result.id)):
        for row in intervals.of_result(session, result.id):
            if row.ranked:
                shown.append({
                    "profile": result.profile,
                    "type": row.annotation_type,
                    "metric": row.metric,
                    "field": row.field,
                    "value": row.value,
                    "low": row.low,
                    "high": row.high,
                    "confidence": row.confidence,
                })  # fmt: skip
    return shown


def pending(store: Store, submission_id: int) -> tuple[str, str | None, bytes] | None:
    """The webhook URL, secret and body to post for the submission, once it has ended and its queue has a
    webhook; None else."""
    with store.session(readonly=True) as session:
        submission = session.get(Submission, submission_id)
        if submission is None or submission.status not in FINAL:
            return None
        queue = session.scalars(select(Queue).where(Queue.name == submission.queue)).first()
        if queue is None or queue.webhook_url is None:
            return None
        body = json.dumps(payload(session, submission), separators=(",", ":")).encode("utf-8")
        return queue.webhook_url, queue.webhook_secret, body


def deliver(url: str, secret: str | None, body: bytes, submission_id: int, *, wait: float = FIRST_WAIT) -> bool:
    """Post ``body`` until a 2xx, within :data:`ATTEMPTS` and :data:`DEADLINE`; whether it was delivered."""
    headers = {"content-type": "application/json", DELIVERY: str(uuid.uuid4())}
    if secret is not None:
        headers[SIGNATURE] = signature(secret, body)
    ends = time.monotonic() + DEADLINE
    with httpx.Client(timeout=TIMEOUT, follow_redirects=False, trust_env=False) as client:
        for attempt in range(1, ATTEMPTS + 1):
            try:
                status = client.post(url, content=body, headers=headers).status_code
            except httpx.HTTPError as error:
                said = type(error).__name__
            else:
                if 200 <= status < 300:
                    return True
                said = f"status {status}"
            log.warning("webhook of submission %d: attempt %d of %d failed (%s)", submission_id, attempt, ATTEMPTS,
                        said)  # fmt: skip
            if attempt == ATTEMPTS or time.monotonic() + wait > ends:
                break
            time.sleep(wait)
            wait *= 2
    log.error("webhook of submission %d: not delivered", submission_id)
    return False


def slots() -> threading.BoundedSemaphore:
    """The deliveries one worker may have in flight at once (:data:`IN_FLIGHT`)."""
    return threading.BoundedSemaphore(IN_FLIGHT)


def deliver_later(store: Store, submission_id: int, in_flight: threading.BoundedSemaphore) -> threading.Thread | None:
    """Deliver the submission's completion on a thread of its own, holding one of ``in_flight`` (:func:`slots`);
    the thread, or None when there is nothing to post or every slot is taken (logged: a receiver that fails for
    long does not pile threads up). The process waits for the thread at exit, at most :data:`DEADLINE` and
    one :data:`TIMEOUT`. Never raises."""
    try:
        found = pending(store, submission_id)
    except Exception as error:  # the store failing: the run it follows has ended all the same
        log.error("webhook of submission %d: not read (%s)", submission_id, type(error).__name__)
        return None
    if found is None:
        return None
    if not in_flight.acquire(blocking=False):
        log.error("webhook of submission %d: not sent, %d deliveries in flight already", submission_id, IN_FLIGHT)
        return None
    thread = threading.Thread(
        target=_quietly, args=(*found, submission_id, in_flight), name=f"webhook-{submission_id}"
    )  # fmt: skip
    thread.start()
    return thread


def _quietly(url: str, secret: str | None, body: bytes, submission_id: int, slot: threading.BoundedSemaphore) -> None:
    try:
        deliver(url, secret, body, submission_id)
    except Exception as error:  # nothing a receiver does reaches the worker
        log.error("webhook of submission %d: %s", submission_id, type(error).__name__)
    finally:
        slot.release()
