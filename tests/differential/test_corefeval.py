"""``e2e`` against corefeval (PyPI ``coreference-eval`` 0.0.2, the scorer trusted_ke used), on random corpora.

Each seed builds documents whose clusters have what corefeval treats in its
own way: singletons on both sides, one-index mentions ``[i]`` next to
``[i, i]``, a mention in two clusters of one side, a mention repeated within
a cluster. nlpbench reads them from e2e jsonlines; corefeval gets the same
lists. The summed counts of MUC, B³, CEAFe and LEA, and the CoNLL F1, must
agree.
"""

from __future__ import annotations

import json
import random

import pytest

from nlpbench.tasks.coref import score_coref

corefeval = pytest.importorskip("corefeval", reason="coreference-eval is not installed")

pytestmark = pytest.mark.reference

NAMES = {"muc": "muc", "bcub": "b_cubed", "ceafe": "ceafe", "lea": "lea"}


def random_clusters(rng: random.Random, pool: list[list[int]]) -> list[list[list[int]]]:
    clusters = []
    for _ in range(rng.randrange(5)):
        cluster = rng.sample(pool, rng.choice([1, 1, 2, 2, 3, 4]))
        if rng.random() < 0.1:
            cluster.append(cluster[0])  # a repeat within the cluster
        clusters.append(cluster)
    return clusters


def corpus(rng: random.Random) -> list[tuple[str, list, list]]:
    documents = []
    for index in range(rng.randrange(1, 6)):
        pool = [[s, s + rng.choice([0, 0, 1, 2])] for s in rng.sample(range(12), 8)]
        pool += [[s] for s in rng.sample(range(12), 2)]  # one-index mentions, distinct from [s, s]
        documents.append((f"doc{index}", random_clusters(rng, pool), random_clusters(rng, pool)))
    return documents


def jsonl(path, documents, side):
    path.write_text("".join(json.dumps({"doc_key": d[0], "clusters": d[side]}) + "\n" for d in documents))


@pytest.mark.parametrize("seed", range(60))
def test_counts_are_corefevals(tmp_path, seed):
    documents = corpus(random.Random(seed))
    jsonl(tmp_path / "key.jsonl", documents, 1)
    jsonl(tmp_path / "response.jsonl", documents, 2)
    report = score_coref(tmp_path / "key.jsonl", tmp_path / "response.jsonl", profile="e2e", key_format="jsonl")
    scorer = corefeval.Scorer()
    for _, gold, predicted in documents:
        scorer.update(corefeval.Document(predicted=predicted, truth=gold))
    reference = {metric.metric.__name__: metric for metric in scorer.all}
    rows = {row["metric"]: row for row in report.scores}
    for ours, theirs in NAMES.items():
        p_num, p_den, r_num, r_den = reference[theirs].get_counts()
        got = [rows[ours][f] for f in ("precision_num", "precision_den", "recall_num", "recall_den")]
        assert got == pytest.approx([p_num, p_den, r_num, r_den], abs=1e-9), (seed, ours)
        assert rows[ours]["f1"] == pytest.approx(reference[theirs].get_f1(), abs=1e-12)
    conll, _ = scorer.detailed_score("", "", verbose=False)
    assert rows["conll"]["f1"] == pytest.approx(float(conll), abs=1e-12)
