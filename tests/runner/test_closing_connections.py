"""A tool whose server closes every kept-alive connection after one answer, without ``Connection: close``.

The NLP Sandbox's example tools do so under uWSGI (unbit/uwsgi#2133). With no
retries allowed (``--retries 0``), every request must still be answered: a
request a connection was closed under is resent at once on a new connection,
and from the first such close on the client asks for a connection per request,
so the server hangs up on at most as many requests as the client held idle
connections. The annotations are those the same tool gives over a well-behaved
server.
"""

from __future__ import annotations

import pytest

from nlpbench.api.tool import create_app
from tests.cli.test_annotate_faults import TEXTS, names, notes_file
from tests.cli.test_run_faults import rows
from tests.runner.closing import HANG_UPS, closing
from tests.toolkit import DatesOnly, RegexPhi, served

CONCURRENCY = 2
NO_RETRY = ("--retries", "0", "--concurrency", str(CONCURRENCY), "--timeout", "5")


@pytest.mark.parametrize("hang_up", HANG_UPS)
def test_annotate_gets_every_answer_without_a_retry(cli, tmp_path, hang_up):
    notes = notes_file(tmp_path, TEXTS * 3)
    with served(create_app(RegexPhi())) as url:
        assert cli("annotate", "--tool", url, "--notes", notes, "--out", tmp_path / "kept.json").exit_code == 0
    with closing(create_app(RegexPhi()), hang_up) as server:
        result = cli("annotate", "--tool", server.url, "--notes", notes, "--out", tmp_path / "closed.json", *NO_RETRY)
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "closed.json").read_bytes() == (tmp_path / "kept.json").read_bytes()
    counts = server.counts
    assert 1 <= counts.hung_up <= CONCURRENCY  # then no connection was reused
    assert counts.asked_to_close >= counts.answered - 1 - CONCURRENCY  # every request after the first close asked
    assert counts.answered > 5 * len(TEXTS) * 3  # validation, then every note for every type


@pytest.mark.parametrize("hang_up", HANG_UPS)
def test_run_scores_a_tool_that_closes_its_connections(cli, tmp_path, hang_up):
    notes = notes_file(tmp_path)
    with closing(create_app(RegexPhi()), hang_up) as phi, closing(create_app(DatesOnly()), hang_up) as dates:
        result = cli(
            "run", "--notes", notes, "--notes-format", "sandbox-bundles", "--out", tmp_path / "out",
            "--tool", f"phi={phi.url}", "--tool", f"dates={dates.url}", *NO_RETRY,
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    table = rows(result.stdout)
    assert sorted(table) == ["dates", "phi"] and "—" not in table["phi"]  # neither failed; phi serves every type
    assert phi.counts.hung_up >= 1 and dates.counts.hung_up >= 1
    for name in ("phi", "dates"):
        assert names(tmp_path / "out" / f"{name}.json") == [f"note-{i}" for i in range(len(TEXTS))]


def test_a_request_on_a_new_connection_that_fails_is_not_resent(cli, tmp_path):
    """Only a connection an earlier request used is redialled: a tool that hangs up on a first request fails
    as before, in one attempt, naming the error and not what the tool sent."""
    notes = notes_file(tmp_path)
    with closing(create_app(RegexPhi()), "reset") as server:
        server.answers_per_connection = 0
        result = cli("annotate", "--tool", server.url, "--notes", notes, "--out", tmp_path / "o.json", *NO_RETRY)
    assert result.exit_code == 2
    assert result.stderr.strip().endswith("GET /healthCheck: the connection broke off (ReadError) (1 attempt)")
    assert server.counts.hung_up == 1 and server.counts.answered == 0
