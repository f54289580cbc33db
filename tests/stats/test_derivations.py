"""A value derived from the rows of its sources alone (what ranking reads) is the value of the whole report."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest

from nlpbench.formats.coref import write_conll2012
from nlpbench.model import Cluster, CorefDocument
from nlpbench.python_api import example as example_file
from nlpbench.report.model import Report
from nlpbench.stats.report import derivations, sources
from nlpbench.tasks.coref import score_coref
from nlpbench.tasks.sandbox import score_sandbox
from nlpbench.tasks.timelines import score_timelines
from tests.tasks.timeline_cases import case, case_files


def coref(folder: Path) -> Report:
    """Three documents of one-token mentions, the response splitting or merging the key's chains."""
    keys, responses = [], []
    for n in range(3):
        key = (Cluster(((0, 0), (3, 3), (5, 5)), "a"), Cluster(((1, 1), (7 + n, 7 + n)), "b"))
        response = (Cluster(((0, 0), (3, 3)), "a"), Cluster(((5, 5), (1, 1), (7, 7)), "b"))
        keys.append(CorefDocument(f"doc{n}", key, (("w",) * 12,)))
        responses.append(CorefDocument(f"doc{n}", response[: 1 + n % 2], (("w",) * 12,)))
    write_conll2012(keys, folder / "key")
    write_conll2012(responses, folder / "response")
    return score_coref(folder / "key", folder / "response", profile="conll2012")


def timelines(folder: Path) -> Report:
    files = case_files(folder, case("type_a_vs_type_b_mixture", "strict"))
    return score_timelines(
        files.gold, files.pred, files.all_ids, gold_ids=files.gold_ids, mode="strict", reference_date=date(2026, 11, 21)
    )


def sandbox(folder: Path) -> Report:
    return score_sandbox(example_file("gold.json"), example_file("pred.json"))


@pytest.mark.parametrize("scored", [coref, timelines, sandbox])
def test_each_value_from_its_sources_rows_is_the_whole_reports(scored, tmp_path):
    report = scored(tmp_path)
    whole = derivations(report)
    documents = tuple(dict.fromkeys(row["document"] for row in report.per_document))
    assert whole
    for derived in whole:
        kept = [row for row in report.per_document if row["metric"] in sources(derived.metric)]
        alone = Report(report.task, report.profile, {}, report.scores, kept)
        (found, *_) = derivations(alone, only=(derived.metric, derived.field), documents=documents)
        first = next(d for d in whole if (d.metric, d.field) == (derived.metric, derived.field))
        assert (found.metric, found.field, found.statistic, found.reported, found.group, found.documents) == (
            first.metric,
            first.field,
            first.statistic,
            first.reported,
            first.group,
            first.documents,
        )
        assert np.array_equal(found.counts, first.counts)
