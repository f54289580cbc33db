"""A PHI task of several types has an overall column (micro over types): through HTTP and the page, checked
against the per-type per-document counts summed directly and bootstrapped alone."""

from __future__ import annotations

import re

import numpy as np
import pytest

from nlpbench.platform.intervals import CONFIDENCE, RESAMPLES
from nlpbench.platform.scoring import result_report
from nlpbench.stats import bootstrap_interval
from nlpbench.stats.statistics import statistic_for
from nlpbench.store.submissions import Result, Submission
from tests.web.seeding import PRIVATE, PUBLIC, TEAMS


def _summed_tokens(store, submission_id: int) -> np.ndarray:
    """Each document's token ``tp, fp, fn`` summed over the result's types, one row per document."""
    with store.session(readonly=True) as session:
        submission = session.get_one(Submission, submission_id)
        (result,) = session.query(Result).filter(Result.submission_id == submission_id)
        assert len(result.scores) == 5
        by_document: dict[str, list[int]] = {}
        for kind in result.scores:
            for row in result_report(session, submission, result, kind).per_document:
                if row["metric"] == "token" and row.get("label") is None:
                    held = by_document.setdefault(row["document"], [0, 0, 0])
                    for i, name in enumerate(("tp", "fp", "fn")):
                        held[i] += row[name]
    return np.array(list(by_document.values()), dtype=np.float64)


@pytest.mark.parametrize("dataset", [PUBLIC, PRIVATE])
def test_the_overall_column_is_micro_over_types_with_the_same_bootstrap(seeded, client, dataset):
    store, ids = seeded
    key = f"{dataset}/overall"
    rows = {row["team"]: row for row in client.get("/tasks/phi.json").json()}
    assert set(rows) == set(TEAMS)
    for team in TEAMS:
        counts = _summed_tokens(store, ids[f"{team}/phi/{dataset}"])
        tp, fp, fn = counts.sum(axis=0)
        alone = bootstrap_interval(counts, statistic_for("f1"), resamples=RESAMPLES, confidence=CONFIDENCE)
        row = rows[team]
        assert row[key] == pytest.approx(2 * tp / (2 * tp + fp + fn))
        assert (row[f"{key} ci_low"], row[f"{key} ci_high"]) == (alone.low, alone.high)  # bit for bit
        assert row[f"{key} rank"] is not None  # stored rank groups, as every column's
        assert row[f"{key} submission"] == ids[f"{team}/phi/{dataset}"]


def test_the_page_shows_the_overall_column_first_and_plots_it(client):
    page = client.get("/tasks/phi").text
    heads = re.findall(r'<th[^>]*><a href="\?sort=([^&]*)&', page)
    assert heads[2:4] == [f"{PRIVATE}/overall", f"{PRIVATE}/contact"]  # each dataset's overall before its types
    assert f"{PUBLIC}/overall" in heads
    assert f"phi · {PRIVATE}/overall: token F1" in page  # the default sort, plotted
    plotted = client.get(f"/tasks/phi?sort={PUBLIC}/overall&rows=all").text
    forest = re.search(r'<figure class="plot" id="forest">(<svg.*?</svg>)', plotted, re.S).group(1)
    assert f"phi · {PUBLIC}/overall: token F1 (every submission)" in forest
    assert forest.count('class="interval"') == len(TEAMS)
