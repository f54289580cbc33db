"""The task page's forest plot and smallest detectable difference, through HTTP over the seeded store."""

from __future__ import annotations

import itertools
import re
import statistics
from types import SimpleNamespace

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from nlpbench.platform.ranks import TEST_RESAMPLES
from nlpbench.platform.scoring import result_report
from nlpbench.platform.standings import Cell
from nlpbench.stats import paired_bootstrap
from nlpbench.stats.statistics import statistic_for
from nlpbench.store.ranks import RankGroups
from nlpbench.store.submissions import Result, Submission
from nlpbench.web.app import Settings, create_app
from nlpbench.web.detectable import shown_ranks
from tests.web.seeding import PRIVATE, PUBLIC


def _forest(html: str) -> str:
    return re.search(r'<figure class="plot" id="forest">(<svg.*?</svg>)', html, re.S).group(1)


def test_the_forest_plot_draws_each_teams_best_with_interval_estimate_and_rank(client):
    rows = client.get(f"/tasks/date.json?sort={PRIVATE}").json()
    svg = _forest(client.get(f"/tasks/date?sort={PRIVATE}").text)
    assert "<script" not in svg and "style=" not in svg and "http://" not in svg.replace('xmlns="http://www.w3', "")
    drawn = re.findall(r'<g class="row" data-rank="(\d*)"><title>(.*?): ([0-9.]+) \[([0-9.]+), ([0-9.]+)\]', svg)
    expected = sorted((row for row in rows if row[PRIVATE] is not None), key=lambda row: -row[PRIVATE])
    assert len(drawn) == len(expected) == 4  # one row per team
    for (rank, label, value, low, high), row in zip(drawn, expected, strict=True):
        assert label == f"{row['tool']} · {row['team']}" and int(rank) == row[f"{PRIVATE} rank"]
        assert (value, low, high) == tuple(f"{row[PRIVATE + part]:.3f}" for part in ("", " ci_low", " ci_high"))
    assert svg.count('class="interval"') == 4 and svg.count('<circle class="estimate"') == 4
    assert "smallest detectable difference" in svg
    # another column is plotted when the table is sorted by it
    assert f"date · {PUBLIC}: token F1" in _forest(client.get(f"/tasks/date?sort={PUBLIC}").text)


def test_every_submission_on_request_and_baselines_marked(seeded):
    store, ids = seeded
    with TestClient(create_app(store, Settings(baselines=("delta",)))) as site:
        svg = _forest(site.get(f"/tasks/date?sort={PRIVATE}&rows=all").text)
        assert f"#{ids[f'alpha/date/{PRIVATE}']}:" in svg  # a row per submission, named by its id
        baseline = re.findall(r'<g class="row baseline"[^>]*><title>([^<]*)', svg)
        assert len(baseline) == 1 and "delta" in baseline[0] and "(baseline)" in baseline[0]
        assert '<path class="estimate"' in svg and 'stroke-dasharray="4 3"' in svg
        page = site.get(f"/tasks/date?sort={PRIVATE}").text
        assert 'rows=all">Every submission</a>' in page
    assert "(baseline)" not in client_free_svg(store)


def client_free_svg(store) -> str:
    """The forest plot of a site whose settings name no baseline."""
    with TestClient(create_app(store)) as site:
        return _forest(site.get(f"/tasks/date?sort={PRIVATE}").text)


def _counts(store, submission_id: int) -> tuple[np.ndarray, list[str]]:
    """The token ``tp, fp, fn`` of each document of the submission's date result, and the documents."""
    with store.session(readonly=True) as session:
        submission = session.get_one(Submission, submission_id)
        (result,) = session.scalars(select(Result).where(Result.submission_id == submission_id))
        rows = [r for r in result_report(session, submission, result, "date").per_document if r["metric"] == "token"]
    rows.sort(key=lambda row: row["document"])
    return np.array([[row["tp"], row["fp"], row["fn"]] for row in rows], dtype=np.float64), [
        r["document"] for r in rows
    ]


def test_the_smallest_detectable_difference_is_the_paired_bootstrap_at_the_datasets_size(seeded, client):
    """δ = the median half-width of the paired intervals of neighbouring tools, computed here directly."""
    store, _ = seeded
    rows = client.get("/tasks/date.json").json()
    page = client.get("/tasks/date").text
    for dataset in (PUBLIC, PRIVATE):
        held = sorted((row for row in rows if row[dataset] is not None), key=lambda row: -row[dataset])
        halves = []
        for better, worse in itertools.pairwise(held):
            (a, documents), (b, others) = (_counts(store, row[f"{dataset} submission"]) for row in (better, worse))
            assert documents == others
            test = paired_bootstrap(a, b, statistic_for("f1"), resamples=TEST_RESAMPLES)
            halves.append((test.high - test.low) / 2)
        delta = statistics.median(halves)
        assert f'<span class="delta">{dataset} {delta:.3f}</span>' in page
        with store.session(readonly=True) as session:
            stored = {
                row.column_key: row.detectable
                for row in session.scalars(select(RankGroups).where(RankGroups.task == "date"))
            }
            assert stored[dataset] == pytest.approx(delta, abs=1e-12)
        for better, worse in itertools.pairwise(held):
            if better[dataset] - worse[dataset] < delta:
                assert better[f"{dataset} rank"] == worse[f"{dataset} rank"], (better, worse)
    assert '<span class="delta">conll-demo —</span>' in client.get("/tasks/ner").text  # one tool: no pair


def _cell(value: float, low: float, high: float, rank: int, day: int) -> Cell:
    return Cell(SimpleNamespace(created_at=day), 0, "date", "token", "f1", value, low, high, rank)


def test_shown_ranks_tie_within_delta_and_keep_stored_ties():
    cells = [_cell(0.90, 0.85, 0.95, 1, 3), _cell(0.88, 0.83, 0.93, 2, 1), _cell(0.70, 0.65, 0.75, 3, 2)]
    delta = 0.05
    ranks = shown_ranks(cells, delta)
    assert [ranks[id(cell)] for cell in cells] == [1, 1, 2]  # 0.02 apart: tied though their groups differ
    assert [shown_ranks(cells, None)[id(cell)] for cell in cells] == [1, 2, 3]
    unranked = [_cell(0.9, 0.8, 1.0, None, 1), _cell(0.5, 0.4, 0.6, 1, 1)]
    assert set(shown_ranks(unranked, 0.1).values()) == {None}


def test_the_over_time_plot_has_a_date_axis_and_is_hidden_when_all_is_one_day(client):
    svg = re.search(r'<figure class="plot" id="best-over-time">(<svg.*?</svg>)', client.get("/tasks/date").text, re.S)
    ticks = re.findall(r'<g id="tick-([^"]*)"', svg.group(1))
    assert len(ticks) >= 2 and all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", tick) for tick in ticks), ticks
    assert min(ticks) >= "2026-01-05"  # the seeded submissions' days, not times of day
    assert 'id="best-over-time"' not in client.get("/tasks/ner").text  # its one submission: one day
