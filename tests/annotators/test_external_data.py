"""The benchmark's readers of data nlpbench did not generate: offsets recovered, every span valid, scored."""

import pytest
from benchmarks.annotators_bench import deidgate_notes, i2b2_notes, score


def test_deidgate_snippets_get_valid_offsets_and_are_scored(tmp_path):
    pytest.importorskip("deidgate")
    documents = deidgate_notes()
    assert len(documents) == 15
    assert all(d.span_problem() is None for d in documents)
    rows = score(documents, ["contact", "id"], tmp_path)
    for row in rows:
        expected = sum(len(d.of_label(row["type"])) for d in documents)
        assert row["gold"] == expected > 0
        assert 0 <= row["token_f1"] <= 1


def test_philter_lite_i2b2_notes_are_read_from_the_installed_package(tmp_path):
    pytest.importorskip("philter_lite")
    documents = i2b2_notes()
    assert len(documents) == 5
    assert {a.label for d in documents for a in d.annotations} <= {"date", "person_name", "location", "id", "contact"}
    rows = score(documents, ["date"], tmp_path)
    assert rows[0]["gold"] == sum(len(d.of_label("date")) for d in documents)
