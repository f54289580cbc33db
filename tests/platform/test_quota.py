"""Quotas: N submissions per team, task and queue per window, counted atomically, invalid ones given back."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest

from nlpbench.platform import queue as queues
from nlpbench.store import repository
from nlpbench.store.submissions import CANCELLED, FAILED, INVALID, SCORED, Submission
from tests.platform.test_worker import run_worker, shown


def test_windows_reset_at_midnight_monday_and_the_first_utc():
    moment = datetime(2026, 11, 25, 13, 5, tzinfo=UTC)  # a Wednesday
    assert queues.window_start(moment, "day") == datetime(2026, 11, 25, tzinfo=UTC)
    assert queues.window_start(moment, "week") == datetime(2026, 11, 23, tzinfo=UTC)
    assert queues.window_start(moment, "month") == datetime(2026, 11, 1, tzinfo=UTC)
    monday = datetime(2026, 11, 23, 0, 0, tzinfo=UTC)
    assert queues.window_start(monday, "week") == monday


@pytest.fixture
def with_dataset(store):
    with store.session() as session:
        repository.create_dataset(session, "notes")
    queues.configure_queue(store, "default", quota=2, quota_window="week")
    return store


def request(team: str = "team-a", task: str = "date") -> queues.Request:
    return queues.Request(team=team, task=task, dataset="notes", tool_url="http://127.0.0.1:9")


def test_twenty_concurrent_submits_against_a_quota_of_two_accept_exactly_two(with_dataset):
    def attempt(_: int) -> str:
        try:
            return str(queues.submit(with_dataset, request()))
        except queues.QuotaExceeded as error:
            return str(error)

    with ThreadPoolExecutor(max_workers=20) as pool:
        outcomes = list(pool.map(attempt, range(20)))
    accepted = [o for o in outcomes if o.isdigit()]
    assert len(accepted) == 2, outcomes
    refused = {o for o in outcomes if not o.isdigit()}
    assert len(refused) == 1
    assert refused.pop().startswith("team team-a has used its 2 submissions of date in queue default this week")
    # other teams and other tasks have their own quota
    assert queues.submit(with_dataset, request(team="team-b"))
    assert queues.submit(with_dataset, request(task="phi"))


def test_invalid_submissions_and_the_last_window_do_not_count(with_dataset):
    last_week = datetime(2020, 1, 1, tzinfo=UTC)
    queues.submit(with_dataset, request(), moment=last_week)
    queues.submit(with_dataset, request(), moment=last_week)
    first = queues.submit(with_dataset, request())
    queues.submit(with_dataset, request())
    with pytest.raises(queues.QuotaExceeded):
        queues.submit(with_dataset, request())
    with with_dataset.session() as session:
        session.get(Submission, first).status = INVALID
    assert queues.submit(with_dataset, request())


@pytest.mark.parametrize(
    ("status", "validated", "counts"),
    [
        (INVALID, False, False),
        (FAILED, False, False),  # a command tool that exits at its start, a submission that stopped its workers
        (CANCELLED, False, False),
        (FAILED, True, True),  # failed while annotating: it was run
        (CANCELLED, True, True),
        (SCORED, True, True),
    ],
)
def test_only_a_submission_that_got_past_validation_keeps_its_place(with_dataset, status, validated, counts):
    first = queues.submit(with_dataset, request())
    queues.submit(with_dataset, request())
    with with_dataset.session() as session:
        row = session.get(Submission, first)
        row.status, row.validated_at = status, queues.now() if validated else None
    if counts:
        with pytest.raises(queues.QuotaExceeded):
            queues.submit(with_dataset, request())
    else:
        assert queues.submit(with_dataset, request())


def test_the_quota_through_the_command_line(nb, dataset, tool):
    assert "2 per team and task per week" in nb("submissions", "queue", "default", "--quota", "2").stdout
    for _ in range(2):
        assert nb("submit", "--team", "t", "--task", "date", "--dataset", "notes", "--tool", tool.url).exit_code == 0
    third = nb("submit", "--team", "t", "--task", "date", "--dataset", "notes", "--tool", tool.url)
    assert third.exit_code == 2
    assert third.stderr.startswith("nlpbench: error: team t has used its 2 submissions of date in queue default")
    assert "no quota" in nb("submissions", "queue", "default", "--quota", "0").stdout


def test_a_command_that_exits_at_its_start_fails_without_using_a_place(nb, dataset, bubblewrap):
    assert nb("submissions", "queue", "default", "--quota", "1").exit_code == 0
    submit = ("submit", "--team", "t", "--task", "date", "--dataset", "notes", "--command")
    first = nb(*submit, "exit 3")
    assert first.exit_code == 0, first.stderr
    run_worker(nb)
    data = shown(nb, first.stdout.strip())
    assert data["status"] == "FAILED" and data["validatedAt"] is None
    assert data["reason"].startswith("the tool did not start: the tool ended before it answered GET /api/v1/health")
    assert nb(*submit, "exit 3").exit_code == 0  # the place is still the team's
    assert nb(*submit, "exit 3").exit_code == 2  # and then used
