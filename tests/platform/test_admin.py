"""The organisers' view of the queue and the re-queueing of a stuck submission, through HTTP (the JSON, the page
and its button's form) and the command line, on SQLite and PostgreSQL.

A stuck submission is made as one is in life: a worker claims it and keeps renewing its lease (here, a claim
with an hour's lease that nobody runs), and it has run past twice its time budget. Re-queueing it takes it
from that worker (whose renewals and fenced writes then fail), costs its team no quota, and the next worker
runs it to the end.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from sqlalchemy import update

from nlpbench.platform import queue as queues
from nlpbench.platform.errors import Lost
from nlpbench.store.submissions import Submission
from tests.platform.arena import problem

STUCK = "stuck-worker"


def stuck(arena, tmp_path, *, hours: float = 5.0) -> int:
    """A submission of team-a claimed by :data:`STUCK` with an hour's lease, running for ``hours`` (the queue's
    time budget is two hours: past twice it after four)."""
    text = json.dumps(arena.exported("open", tmp_path))
    submission = arena.submitted(dataset="open", predictions=text, predictionsName="p.json")
    assert queues.claim(arena.store, "default", STUCK, 3600) == submission
    with arena.store.session() as session:
        since = queues.now() - timedelta(hours=hours)
        session.execute(update(Submission).where(Submission.id == submission).values(updated_at=since))
    return submission


def test_a_stuck_submission_is_shown_and_requeued_without_quota(arena, tmp_path):
    arena.queue("--quota", "2", "--time-budget", "120")
    fresh = stuck(arena, tmp_path, hours=1)
    problem(arena.call("GET", "/admin/queue"), 403, "the organisers'")
    problem(arena.call("GET", "/admin/queue.html", "other"), 403, "the organisers'")
    view = arena.call("GET", "/admin/queue", "organiser").json()
    (worker,) = view["workers"]
    assert worker["name"] == STUCK
    assert [(lease["submission"], lease["leaseExpired"], lease["stuck"]) for lease in worker["leases"]] == [
        (fresh, False, False)
    ]
    assert view["stuck"] == []
    early = problem(arena.call("POST", f"/submissions/{fresh}/requeue", "organiser"), 409, "is not stuck: it has run ")
    assert re.fullmatch(rf"submission {fresh} is not stuck: it has run 360\d s of its 2 × 7200 s", early), early

    with arena.store.session() as session:  # now five hours: past twice the two hours
        since = queues.now() - timedelta(hours=5)
        session.execute(update(Submission).where(Submission.id == fresh).values(updated_at=since))
    view = arena.call("GET", "/admin/queue", "organiser").json()
    assert [(s["submission"], s["worker"], s["budgetSeconds"]) for s in view["stuck"]] == [(fresh, STUCK, 7200.0)]
    page = arena.call("GET", "/admin/queue.html", "organiser")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "form-action 'self'" in page.headers["content-security-policy"]
    assert f'<form method="post" action="../submissions/{fresh}/requeue">' in page.text
    assert STUCK in page.text

    problem(arena.call("POST", f"/submissions/{fresh}/requeue"), 403, "the organisers' to do")
    pressed = arena.call(  # the page's button: a form post, sent back to the page
        "POST", f"/submissions/{fresh}/requeue", "organiser", data={"requeue": str(fresh)}, follow_redirects=False
    )
    assert pressed.status_code == 303, pressed.text
    assert pressed.headers["location"] == "../../admin/queue.html"
    assert not queues.renew(arena.store, fresh, STUCK, 60)  # the stuck worker has lost it
    with pytest.raises(Lost), arena.store.session() as session:
        queues.hold(session, fresh, STUCK, 60, notes_done=1)
    shown = arena.shown(fresh, "organiser")
    assert shown["status"] == "RECEIVED"
    assert shown["reason"] == f"re-queued by organiser, taken from {STUCK}: it costs no quota"
    after = arena.call("GET", "/admin/queue", "organiser").json()
    assert (after["workers"], after["stuck"], after["waiting"]) == ([], [], {"default": 1})
    arena.work()
    assert arena.shown(fresh)["status"] == "SCORED"
    problem(arena.call("POST", f"/submissions/{fresh}/requeue", "organiser"), 409, "only a running one is re-queued")
    problem(arena.call("POST", "/submissions/99999/requeue", "organiser"), 404, "no submission 99999")
    # the quota of 2: the re-queued submission took one place when it was made, and only that one
    text = json.dumps(arena.exported("open", tmp_path))
    arena.submitted(dataset="open", predictions=text, predictionsName="p.json")
    problem(arena.submit(dataset="open", predictions=text, predictionsName="p.json"), 429)


def test_the_command_line_lists_workers_and_requeues(arena, tmp_path):
    submission = stuck(arena, tmp_path)
    listed = arena.nb("submissions", "workers")
    assert listed.exit_code == 0, listed.stderr
    (line,) = listed.stdout.splitlines()
    assert line.startswith(f"{STUCK:<24} {submission:>6}  VALIDATING lease held ") and line.endswith("STUCK")
    as_json = json.loads(arena.nb("submissions", "workers", "--format", "json").stdout)
    assert [s["submission"] for s in as_json["stuck"]] == [submission]
    done = arena.nb("submissions", "requeue", str(submission))
    assert done.stdout == (
        f"submission {submission}: RECEIVED — re-queued by organiser (command line), taken from {STUCK}: "
        "it costs no quota\n"
    )
    assert arena.nb("submissions", "workers").stdout == "no worker holds a submission\n"
    again = arena.nb("submissions", "requeue", str(submission))
    assert again.exit_code == 2 and again.stderr.strip().endswith(
        f"submission {submission} is RECEIVED: only a running one is re-queued"
    )
    arena.work()
    assert arena.shown(submission)["status"] == "SCORED"
