"""A result's intervals are stored with it by the worker, replaced by a rescore, shown by the site; old ones filled in.

On both backends: ``nlpbench worker --until-idle`` scores a tool's submission, and before any page is requested
``nlpbench submissions show --format json`` already lists the result's intervals (as stored rows).
"""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import delete, func, select

from nlpbench.platform.intervals import RESAMPLES
from nlpbench.platform.overall import OVERALL
from nlpbench.platform.scoring import result_report
from nlpbench.stats import bootstrap_interval
from nlpbench.stats.report import derivations
from nlpbench.store import open_store
from nlpbench.store.intervals import ResultInterval, of_result
from nlpbench.store.submissions import Result, Submission
from nlpbench.web.app import create_app
from tests.platform.conftest import NOTES
from tests.platform.test_worker import run_worker, shown, submit


def _stored_rows(db_url: str, submission: str) -> int:
    """How many interval rows the store holds for the submission's results, whatever their result."""
    opened = open_store(db_url)
    try:
        with opened.session(readonly=True) as session:
            query = (
                select(func.count())
                .select_from(ResultInterval)
                .join(Result, Result.id == ResultInterval.result_id)
                .where(Result.submission_id == int(submission))
            )
            return session.execute(query).scalar_one()
    finally:
        opened.close()


def test_the_worker_stores_a_results_intervals_and_a_rescore_replaces_them(nb, dataset, tool, db_url):
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", tool.url)
    run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    (result,) = data["results"]
    found = result["intervals"]
    assert {(i["metric"], i["field"]) for i in found} >= {("token", "precision"), ("token", "recall"), ("token", "f1")}
    (ranked,) = [i for i in found if i["ranked"]]
    assert (ranked["type"], ranked["metric"], ranked["field"]) == ("date", "token", "f1")
    (token_row,) = [r for r in result["scores"]["date"] if r["metric"] == "token" and "label" not in r]
    assert ranked["value"] == token_row["f1"]
    for interval in found:
        assert interval["low"] <= interval["estimate"] <= interval["high"], interval
        assert (interval["method"], interval["resamples"], interval["confidence"]) == ("bca", 2000, 0.95)
        assert interval["documents"] == NOTES
    assert _stored_rows(db_url, submission) == len(found)

    # rescoring under the same profile replaces the result and its intervals: the same values, no stale rows
    assert nb("rescore", submission, "--profile", "standard").exit_code == 0
    (again,) = shown(nb, submission)["results"]
    assert again["intervals"] == found
    assert _stored_rows(db_url, submission) == len(found)
    # under another profile, a second result with its own intervals
    assert nb("rescore", submission, "--profile", "nlpsandbox").exit_code == 0
    results = {r["profile"]: r for r in shown(nb, submission)["results"]}
    assert results["standard"]["intervals"] == found and results["nlpsandbox"]["intervals"]
    assert _stored_rows(db_url, submission) == len(found) + len(results["nlpsandbox"]["intervals"])

    # the site shows the stored intervals: the task table's ranked cell and the submission's rows
    store = open_store(db_url)
    try:
        with TestClient(create_app(store)) as client:
            (line,) = client.get("/tasks/date.json").json()
            assert (line["notes"], line["notes ci_low"], line["notes ci_high"]) == (
                ranked["value"],
                ranked["low"],
                ranked["high"],
            )
            shown_result = client.get(f"/results/{results['standard']['id']}.json").json()
            (row,) = [r for r in shown_result["rows"] if r["metric"] == "token" and "label" not in r]
            assert (row["f1_ci_low"], row["f1_ci_high"]) == (ranked["low"], ranked["high"])
    finally:
        store.close()


def test_results_stored_before_intervals_get_the_same_intervals_from_leaderboard_refresh(nb, dataset, tool, db_url):
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", tool.url)
    run_worker(nb)
    (result,) = shown(nb, submission)["results"]
    store = open_store(db_url)
    try:
        with store.session() as session:  # as a store written before intervals were stored with results
            session.execute(delete(ResultInterval))
        assert shown(nb, submission)["results"][0]["intervals"] == []
        with TestClient(create_app(store)) as client:  # the site shows the result without, and never writes
            assert client.get("/tasks/date").status_code == 200
        assert shown(nb, submission)["results"][0]["intervals"] == []
    finally:
        store.close()
    assert nb("leaderboard", "refresh").exit_code == 0
    # computed from the stored per-document rows: the same as the worker computed from the scores it stored
    assert shown(nb, submission)["results"][0]["intervals"] == result["intervals"]


def test_db_upgrade_computes_the_intervals_of_results_stored_without_them(nb, dataset, tool, db_url):
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", tool.url)
    run_worker(nb)
    (result,) = shown(nb, submission)["results"]
    upgraded = nb("db", "upgrade")
    assert upgraded.exit_code == 0 and "intervals" not in upgraded.stdout  # nothing missing: nothing said
    store = open_store(db_url)
    try:
        with store.session() as session:
            session.execute(delete(ResultInterval))
    finally:
        store.close()
    upgraded = nb("db", "upgrade")
    assert upgraded.exit_code == 0, upgraded.stderr
    said = upgraded.stdout.splitlines()[-1]
    assert said.endswith(": intervals of results stored without them: 1 computed and stored")
    assert shown(nb, submission)["results"][0]["intervals"] == result["intervals"]


def test_stored_intervals_are_bit_for_bit_those_of_each_value_resampled_alone(nb, dataset, tool, db_url):
    """One draw of the resamples serves every value of a result: each bound is what its own draw gave."""
    submission = submit(nb, "--task", "phi", "--dataset", "notes", "--tool", tool.url)
    run_worker(nb)
    assert nb("rescore", submission, "--profile", "nlpsandbox").exit_code == 0
    store = open_store(db_url)
    try:
        with store.session(readonly=True) as session:
            chosen = session.get_one(Submission, int(submission))
            for result in session.scalars(select(Result).where(Result.submission_id == chosen.id)):
                expected: dict[str, list[tuple]] = {}  # by type: PostgreSQL's JSONB keeps no key order
                for kind in [*result.scores, OVERALL]:  # the overall value (micro over types) too
                    report = result_report(session, chosen, result, kind)
                    for derived in derivations(report):
                        alone = bootstrap_interval(derived.counts, derived.statistic, resamples=RESAMPLES)
                        value = (derived.metric, derived.field, alone.estimate, alone.low, alone.high)
                        expected.setdefault(kind, []).append(value)
                found: dict[str, list[tuple]] = {}
                for i in of_result(session, result.id):
                    if i.method != "none":
                        found.setdefault(i.annotation_type, []).append((i.metric, i.field, i.estimate, i.low, i.high))
                assert len(result.scores) == 5 and len(found) == 6 and found == expected
    finally:
        store.close()


def test_results_stored_before_overall_values_get_them_from_leaderboard_refresh(nb, dataset, tool, db_url):
    submission = submit(nb, "--task", "phi", "--dataset", "notes", "--tool", tool.url)
    run_worker(nb)
    (result,) = shown(nb, submission)["results"]
    (overall,) = [i for i in result["intervals"] if i["type"] == OVERALL and i["ranked"]]
    assert (overall["metric"], overall["field"], overall["documents"]) == ("token", "f1", NOTES)
    store = open_store(db_url)
    try:
        with store.session() as session:  # as a store written before overall values were
            session.execute(delete(ResultInterval).where(ResultInterval.annotation_type == OVERALL))
        assert all(i["type"] != OVERALL for i in shown(nb, submission)["results"][0]["intervals"])
    finally:
        store.close()
    assert nb("leaderboard", "refresh").exit_code == 0
    again = shown(nb, submission)["results"][0]["intervals"]
    assert sorted(again, key=str) == sorted(result["intervals"], key=str)  # the same values, bit for bit
