"""Counts add up across documents, whatever the profile: scoring a corpus is summing its documents."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.formats.coref import write_conll2012, write_jsonl
from nlpbench.model import Cluster, CorefDocument
from nlpbench.tasks.coref import score_coref

FIELDS = ("recall_num", "recall_den", "precision_num", "precision_den")


@st.composite
def document_pairs(draw, name):
    """A key and a response document over the same 20 tokens: one-token mentions, partitioned at random."""
    sides = []
    for _ in range(2):
        tokens = draw(st.lists(st.integers(0, 19), unique=True, max_size=12))
        labels = draw(st.lists(st.integers(0, 4), min_size=len(tokens), max_size=len(tokens)))
        chains: dict[int, list] = {}
        for token, label in zip(tokens, labels, strict=True):
            chains.setdefault(label, []).append((token, token))
        sides.append(CorefDocument(name, tuple(Cluster(tuple(m), str(i)) for i, m in chains.items()), (("w",) * 20,)))
    return tuple(sides)


corpora = st.integers(1, 4).flatmap(lambda n: st.tuples(*(document_pairs(f"doc{i}") for i in range(n))))


def counted(rows):
    return {(r["metric"], r.get("label")): [r[f] for f in FIELDS] for r in rows if "recall_num" in r}


@settings(max_examples=40, deadline=None)
@given(corpora, st.sampled_from(["standard", "conll2012", "e2e"]))
def test_corpus_counts_are_the_sums_of_document_counts(tmp_path_factory, corpus, profile):
    folder = tmp_path_factory.mktemp("corpus")
    write = write_jsonl if profile == "e2e" else write_conll2012
    fmt = "jsonl" if profile == "e2e" else "conll2012"
    write([key for key, _ in corpus], folder / "key")
    write([response for _, response in corpus], folder / "response")
    whole = score_coref(folder / "key", folder / "response", profile=profile, key_format=fmt)
    totals: dict = {}
    for index, (key, response) in enumerate(corpus):
        write([key], folder / f"key{index}")
        write([response], folder / f"response{index}")
        alone = score_coref(folder / f"key{index}", folder / f"response{index}", profile=profile, key_format=fmt)
        in_corpus = [r for r in whole.per_document if r["document"] == key.id]
        assert [{k: v for k, v in r.items() if k != "document"} for r in in_corpus] == alone.scores
        for name, values in counted(alone.scores).items():
            totals[name] = [a + b for a, b in zip(totals.get(name, [0] * 4), values, strict=True)]
    whole_counts = counted(whole.scores)
    assert whole_counts.keys() == totals.keys()
    for name, values in totals.items():
        assert whole_counts[name] == pytest.approx(values), name
