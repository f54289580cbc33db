"""The rank groups of a task's columns are stored by the worker with each result, so pages never compute them.

On both backends (PostgreSQL only where two workers must hold transactions at once): prediction files of
three teams, each keeping a different share of the gold dates, are submitted with ``nlpbench submit`` and
scored by ``nlpbench worker`` (or :class:`~nlpbench.platform.worker.Worker`); the leaderboard is read over
HTTP (FastAPI's test client), with no ``leaderboard refresh`` run unless the test says so.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from nlpbench.platform import ranks
from nlpbench.platform.pooling import strata
from nlpbench.platform.scoring import result_derivation, result_report
from nlpbench.platform.standings import Cell, shown_columns
from nlpbench.stats import paired_bootstrap, rank_groups
from nlpbench.stats.paired import PairedTest
from nlpbench.stats.report import Derivation, derivations
from nlpbench.store import Store, open_store
from nlpbench.store.ranks import RankGroups
from nlpbench.store.submissions import SCORED, Result, ResultDocument, Submission
from nlpbench.web.app import create_app
from tests.platform.test_worker import run_worker, shown

#: team → keep each gold date whose index modulo this is not 0 (1: keep none; 0: keep all).
TEAMS = {"team-a": 0, "team-b": 2, "team-c": 1}
#: The leaderboard's column of dataset ``notes`` in task ``date``, as the JSON twin names its rank.
RANK = "notes rank"
#: How long a test waits for the other thread before it fails.
WAIT = 60


def predictions(nb, folder: Path, drop: int) -> Path:
    """A prediction file of the ``notes`` dataset holding the gold dates that ``drop`` keeps (see :data:`TEAMS`)."""
    gold = folder / "gold.json"
    if not gold.exists():
        assert nb("dataset", "export", "notes", gold, "--format", "sandbox").exit_code == 0
    records = json.loads(gold.read_text())
    for record in records:
        dates = record.get("textDateAnnotations") or []
        record["textDateAnnotations"] = [d for i, d in enumerate(dates) if drop == 0 or i % drop]
    path = folder / f"drop-{drop}.json"
    path.write_text(json.dumps(records))
    return path


def submit(nb, folder: Path, team: str) -> str:
    result = nb(
        "submit",
        "--team",
        team,
        "--task",
        "date",
        "--dataset",
        "notes",
        "--predictions",
        predictions(nb, folder, TEAMS[team]),
    )
    assert result.exit_code == 0, result.stderr
    return result.stdout.strip()


def page_ranks(store: Store) -> dict[str, int | None]:
    """Each team's rank in column ``notes`` of the first page of task ``date`` a new server shows."""
    with TestClient(create_app(store)) as client:
        answer = client.get("/tasks/date.json")
        assert answer.status_code == 200 and client.get("/tasks/date").status_code == 200
        return {row["team"]: row[RANK] for row in answer.json()}


def stored_rows(store: Store) -> int:
    with store.session(readonly=True) as session:
        return session.execute(select(func.count()).select_from(RankGroups)).scalar_one()


@contextmanager
def opened(db_url: str) -> Iterator[Store]:
    store = open_store(db_url)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def counted_tests(monkeypatch) -> Iterator[list[threading.Thread]]:
    """The threads of each paired bootstrap test run inside the block (what ranking a column costs)."""
    calls: list[threading.Thread] = []
    test = ranks.paired_bootstrap

    def counting(*args, **kwargs):
        calls.append(threading.current_thread())
        return test(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(ranks, "paired_bootstrap", counting)
        yield calls


def rebuilt(store: Store) -> dict[str, int | None]:
    """The ranks a page shows once every stored group is deleted and ``refresh`` has computed them all again."""
    with store.session() as session:
        session.execute(delete(RankGroups))
    assert all(rank is None for rank in page_ranks(store).values())
    assert ranks.refresh(store).columns == 1  # both picks show the same cells: one column, one set of results
    return page_ranks(store)


def test_the_first_page_after_the_worker_scores_shows_the_rank_groups_and_computes_none(
    nb, dataset, db_url, tmp_path, monkeypatch
):
    """No refresh: the worker stored the groups in the transaction that made the last submission SCORED, and
    they are those ``refresh`` computes from scratch (the page's output is what it was)."""
    for team in TEAMS:
        submit(nb, tmp_path, team)
    with counted_tests(monkeypatch) as tests:
        run_worker(nb)
    assert tests, "the worker ranked the column"
    with opened(db_url) as store:
        with counted_tests(monkeypatch) as tests:
            found = page_ranks(store)
        assert tests == []  # the page read the stored groups
        assert found["team-a"] == 1 and all(rank is not None for rank in found.values()), found
        assert stored_rows(store) == 1  # the groups of the column's first and second set of results are gone
        assert rebuilt(store) == found


def test_a_rescore_stores_the_groups_of_the_new_result(nb, dataset, db_url, tmp_path):
    submissions = {team: submit(nb, tmp_path, team) for team in TEAMS}
    run_worker(nb)
    with opened(db_url) as store:
        before = page_ranks(store)
        (old,) = shown(nb, submissions["team-b"])["results"]
        assert nb("rescore", submissions["team-b"], "--profile", "standard").exit_code == 0
        (new,) = shown(nb, submissions["team-b"])["results"]
        assert new["id"] != old["id"]  # a new result: the column compares other results now
        assert page_ranks(store) == before and stored_rows(store) == 1
        with store.session(readonly=True) as session:
            (row,) = session.scalars(select(RankGroups))
        assert str(new["id"]) in row.ranks and str(old["id"]) not in row.ranks


def test_two_workers_scoring_the_same_task_at_once_store_the_groups_of_both_results(
    nb, dataset, db_url, tmp_path, monkeypatch
):
    """Each worker has stored its result, uncommitted, before either ranks: the task's lock makes the second
    wait for the first's commit and rank both results (without it, each ranks its own and the page none)."""
    if not db_url.startswith("postgresql"):
        pytest.skip("SQLite lets one writing transaction at a time: two workers never hold results at once")
    from nlpbench.platform import worker as workers

    for team in ("team-a", "team-b"):
        submit(nb, tmp_path, team)
    both_stored = threading.Barrier(2, timeout=WAIT)
    store_result = workers.store_result

    def storing(*args, **kwargs):
        result = store_result(*args, **kwargs)
        both_stored.wait()
        return result

    monkeypatch.setattr(workers, "store_result", storing)
    ended: dict[int, str] = {}
    stores = [open_store(db_url), open_store(db_url)]

    def work(n: int) -> None:
        on_status = lambda submission, status: ended.__setitem__(submission, status)  # noqa: E731
        workers.Worker(stores[n], name=f"worker-{n}", poll=0.05, lease=30, on_status=on_status).run(until_idle=True)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(2)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT * 2)
    finally:
        for store in stores:
            store.close()
    assert not both_stored.broken and sorted(ended.values()) == [SCORED, SCORED], ended
    with opened(db_url) as store:
        found = page_ranks(store)
        assert found["team-a"] == 1 and found["team-b"] is not None, found
        assert stored_rows(store) == 1


def test_a_refresh_computing_while_a_worker_stores_a_result_keeps_the_workers_groups(
    nb, dataset, db_url, tmp_path, monkeypatch
):
    """``refresh`` ranks the column's two older results in its snapshot; meanwhile the worker stores a third
    and the groups of all three. What ``refresh`` then writes leaves those, and nothing of its own."""
    for team in ("team-a", "team-b"):
        submit(nb, tmp_path, team)
    run_worker(nb)
    with opened(db_url) as store:
        with store.session() as session:  # as results stored before the worker ranked them
            session.execute(delete(RankGroups))
        submit(nb, tmp_path, "team-c")
        computing, scored = threading.Event(), threading.Event()
        test = ranks.paired_bootstrap

        def held_in_refresh(*args, **kwargs):
            if threading.current_thread().name == "refresh" and not scored.is_set():
                computing.set()
                assert scored.wait(WAIT)
            return test(*args, **kwargs)

        monkeypatch.setattr(ranks, "paired_bootstrap", held_in_refresh)
        failed: list[BaseException] = []

        def refresh() -> None:
            try:
                ranks.refresh(store)
            except BaseException as error:
                failed.append(error)

        thread = threading.Thread(target=refresh, name="refresh")
        thread.start()
        try:
            assert computing.wait(WAIT)
            run_worker(nb)
        finally:
            scored.set()
            thread.join(WAIT)
        assert failed == []
        with store.session(readonly=True) as session:
            assert session.scalars(select(Submission.status).where(Submission.team == "team-c")).one() == SCORED
        found = page_ranks(store)
        assert set(found) == set(TEAMS) and all(rank is not None for rank in found.values()), found
        assert stored_rows(store) == 1


def read_whole(session: Session, cell: Cell) -> Derivation:
    """The cell's derivation as ranking once found it: the result's whole report read, every derivation computed."""
    result, submission = session.get_one(Result, cell.result_id), session.get_one(Submission, cell.submission.id)
    report = result_report(session, submission, result, cell.annotation_type)
    return next(d for d in derivations(report) if (d.metric, d.field) == (cell.metric, cell.field))


def ranked_whole(session: Session, cells: list[Cell], *, by_site: bool = False) -> ranks.Ranked:
    """A column's groups and detectable difference as ranking once computed them: each result read whole
    (:func:`read_whole`), each paired test drawing its own resamples (``by_site``: within each site's run of
    documents, :func:`nlpbench.platform.pooling.strata`)."""
    tables = {cell.result_id: read_whole(session, cell) for cell in cells}
    scores = {cell.result_id: cell.value for cell in cells}

    def test(a: int, b: int) -> PairedTest:
        first, second = tables[a], tables[b]
        position = {document: i for i, document in enumerate(second.documents)}
        aligned = second.counts[[position[d] for d in first.documents]]
        blocks = strata(first.documents) if by_site else ()
        return paired_bootstrap(first.counts, aligned, first.statistic, resamples=ranks.TEST_RESAMPLES, strata=blocks)

    return ranks.Ranked(rank_groups(scores, lambda a, b: test(a, b).p_value), ranks.smallest_difference(scores, test))


def test_the_stored_groups_are_those_of_each_result_read_whole_and_each_test_drawn_alone(nb, dataset, db_url, tmp_path):
    """Ranking reads only the rows of the value it ranks, derives each result's value once for every column and
    draws one set of resample weights for all the tests of the column: the stored groups and detectable difference
    are, bit for bit, those of reading every result whole and drawing each test's resamples anew."""
    for team in TEAMS:
        submit(nb, tmp_path, team)
    run_worker(nb)
    with opened(db_url) as store, store.session(readonly=True) as session:
        (row,) = session.scalars(ranks.stored("date"))
        (cells,) = shown_columns(session, "date").values()  # both picks show the same cells
        expected = ranked_whole(session, cells)
        assert row.ranks == {str(result): group for result, group in expected.groups.items()}
        assert row.detectable == expected.detectable and expected.detectable is not None
        for cell in cells:
            result, submission = (
                session.get_one(Result, cell.result_id),
                session.get_one(Submission, cell.submission.id),
            )
            found = result_derivation(session, submission, result, cell.annotation_type, cell.metric, cell.field)
            whole = read_whole(session, cell)
            assert found is not None and (found.metric, found.field, found.statistic) == (
                whole.metric,
                whole.field,
                whole.statistic,
            )
            assert found.documents == whole.documents and np.array_equal(found.counts, whole.counts)
            assert found.reported == whole.reported and found.group == whole.group


def test_results_pooled_from_data_sites_are_ranked_by_tests_within_each_site(nb, dataset, db_url, tmp_path):
    """A result pooled from data sites has its interval resampled within each site; the paired tests that rank it
    resample the same way: the stored groups and detectable difference are those of stratified tests, which differ
    from those of the pooled documents resampled as one sample."""
    for team in TEAMS:
        submit(nb, tmp_path, team)
    run_worker(nb)
    with opened(db_url) as store, store.session() as session:
        results = list(session.scalars(select(Result)))
        order = select(ResultDocument.document).where(ResultDocument.result_id == results[0].id)
        documents = list(dict.fromkeys(session.scalars(order.order_by(ResultDocument.id))))
        site = {document: "alpha" if 2 * i < len(documents) else "beta" for i, document in enumerate(documents)}
        for result in results:  # as sites' counts are pooled: each document named by its site, the sites named
            for row in session.scalars(select(ResultDocument).where(ResultDocument.result_id == result.id)):
                row.document = f"{site[row.document]}/{row.document}"
            result.reproducibility = {**result.reproducibility, "sites": {"alpha": {}, "beta": {}}}
        session.execute(delete(RankGroups))
        ranks.rank(session, "date")
        (row,) = session.scalars(ranks.stored("date"))
        (cells,) = shown_columns(session, "date").values()
        assert strata(read_whole(session, cells[0]).documents) == (
            len(documents) // 2,
            len(documents) - len(documents) // 2,
        )
        stratified, plain = ranked_whole(session, cells, by_site=True), ranked_whole(session, cells)
    assert row.ranks == {str(result): group for result, group in stratified.groups.items()}
    assert row.detectable == stratified.detectable != plain.detectable
