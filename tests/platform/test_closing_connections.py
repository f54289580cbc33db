"""Through the queue, a tool whose server closes every kept-alive connection after one answer (as uWSGI's router
does for the NLP Sandbox's example tools) is validated — its ``/`` and ``/api/v1/ui`` pages too — annotated and
scored, with no retry allowed; on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from nlpbench.api.tool import create_app
from tests.platform.test_worker import run_worker, shown, submit
from tests.runner.closing import HANG_UPS, closing
from tests.toolkit import RegexPhi


@pytest.mark.parametrize("hang_up", HANG_UPS)
def test_a_submission_whose_tool_closes_its_connections_is_scored(nb, dataset, hang_up):
    # No retry, so a close that is not met fails the run; the time limit is generous, as a busy machine needs
    queued = nb("submissions", "queue", "default", "--retries", "0", "--timeout", "30", "--concurrency", "2")
    assert queued.exit_code == 0, queued.stderr
    with closing(create_app(RegexPhi()), hang_up) as server:
        submission = submit(nb, "--task", "phi", "--dataset", "notes", "--tool", server.url)
        run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    assert data["progress"] == {"done": len(dataset), "total": len(dataset)}
    assert sorted(data["results"][0]["scores"]) == ["contact", "date", "id", "location", "person_name"]
    assert server.counts.hung_up >= 1  # the close happened, and was met
