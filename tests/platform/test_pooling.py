"""Pooling sites' counts: the pooled scores are those of one run over every site's notes; the interval is
resampled within each site."""

from __future__ import annotations

import numpy as np
import pytest

from nlpbench.platform.pooling import TOTALS, pooled, strata
from nlpbench.python_api import example, read, score
from nlpbench.report.model import overall_rows
from nlpbench.stats import statistic_for
from nlpbench.stats.bootstrap import bootstrap_intervals
from nlpbench.stats.resample import bootstrap_weights


@pytest.mark.parametrize("totals_only", [False, True], ids=["per-document", "b-totals-only"])
@pytest.mark.parametrize("annotation_type", ["date", "person_name", "location"])
def test_the_pooled_scores_of_two_sites_are_the_scores_of_their_notes_scored_together(annotation_type, totals_only):
    gold, pred = read("sandbox", example("gold.json")), read("sandbox", example("pred.json"))
    half = len(gold) // 2
    sites = {"a": (gold[:half], pred[:half]), "b": (gold[half:], pred[half:])}
    by_site = {
        site: {annotation_type: score("sandbox", g, p, annotation_type=annotation_type)}
        for site, (g, p) in sites.items()
    }
    if totals_only:
        by_site["b"][annotation_type].per_document = []
    together = score("sandbox", gold, pred, annotation_type=annotation_type)
    found = pooled("sandbox", "standard", by_site)[annotation_type]
    documents = {row["document"] for row in found.per_document}
    assert {document.split("/")[0] for document in documents} == {"a", "b"}
    if totals_only:  # b is one document: its totals
        assert {d for d in documents if d.startswith("b/")} == {f"b/{TOTALS}"}
    else:
        assert len(found.per_document) == len(together.per_document)
    for ours, theirs in zip(found.scores, overall_rows(together), strict=True):
        assert ours["metric"] == theirs["metric"]
        for field in ("tp", "fp", "fn"):
            assert ours[field] == theirs[field]
        for field in ("precision", "recall", "f1"):
            assert ours[field] == pytest.approx(theirs[field], abs=1e-12)


def test_strata_are_the_runs_of_each_sites_documents():
    assert strata(["a/d1", "a/d2", "b/d1", "c/d1", "c/d2", "c/d3"]) == (2, 1, 3)
    assert strata(["d1", "d2"]) == (2,)  # no site named: one


def test_each_stratum_of_a_resample_draws_as_many_documents_as_it_holds():
    for weights in bootstrap_weights(8, 500, np.random.default_rng(0), (3, 5)):
        assert (weights[:, :3].sum(axis=1) == 3).all() and (weights[:, 3:].sum(axis=1) == 5).all()
    one = np.vstack(list(bootstrap_weights(8, 50, np.random.default_rng(4), (8,))))
    plain = np.vstack(list(bootstrap_weights(8, 50, np.random.default_rng(4))))
    assert np.array_equal(one, plain)  # one stratum is the plain bootstrap, draw for draw
    with pytest.raises(ValueError, match="do not split 8 rows"):
        next(bootstrap_weights(8, 5, np.random.default_rng(0), (3, 4)))


def test_a_stratified_interval_has_no_width_from_the_sites_sizes_varying():
    """Site a's documents are all found, site b's all missed: every stratified resample keeps 50 of each (recall
    exactly ½), while the plain bootstrap varies how many of each it draws."""
    counts = np.array([[1, 0, 0]] * 50 + [[0, 0, 1]] * 50, dtype=float)
    recall = statistic_for("recall")
    plain, stratified = bootstrap_intervals(
        [(counts, recall), (counts, recall)], resamples=2000, separately=True, strata=[(100,), (50, 50)]
    )
    assert plain.low < 0.5 < plain.high
    assert stratified.low == stratified.high == stratified.estimate == 0.5
