"""``conll2012`` against scorch 0.2.0 (PyPI), on random documents.

scorch's command line adds every twinless response mention to the key as a
singleton and averages documents by weight, which v8.01 does not do; its
metric functions, called on the clusters its own CoNLL parser reads, are the
v8.01 definitions (scorch's tests check them against the reference suite).
So each seed writes a corpus of random key/response documents as CoNLL-2012,
nlpbench scores the files, and every document's MUC, B³, CEAFm, CEAFe and
BLANC are compared with scorch's functions on scorch's parse of the same
files. BLANC is compared where the key has two mentions or more: with fewer,
scorch scores a part that neither side has as 1, v8.01 as 0. Where key and
response share no mention, scorch's CEAF raises (it takes the harmonic mean of
numpy zeros) and CEAF must be 0.
"""

from __future__ import annotations

import random

import pytest

from nlpbench.formats.coref import write_conll2012
from nlpbench.model import Cluster, CorefDocument
from nlpbench.tasks.coref import score_coref

scores = pytest.importorskip("scorch.scores", reason="scorch is not installed")
scorch_conll = pytest.importorskip("scorch.conll", reason="scorch is not installed")

pytestmark = pytest.mark.reference

SENTENCE, SENTENCES = 8, 4
SCORCH = {"muc": scores.muc, "bcub": scores.b_cubed, "ceafm": scores.ceaf_m, "ceafe": scores.ceaf_e}


def random_mentions(rng: random.Random, count: int) -> list[tuple[int, int]]:
    """Distinct mentions inside sentences (scorch's parser reads sentence by sentence)."""
    mentions: set[tuple[int, int]] = set()
    while len(mentions) < count:
        sentence, start = rng.randrange(SENTENCES), rng.randrange(SENTENCE)
        end = min(start + rng.choice([0, 0, 0, 1, 2]), SENTENCE - 1)
        mentions.add((sentence * SENTENCE + start, sentence * SENTENCE + end))
    return sorted(mentions)


def writable(chains: list[list[tuple[int, int]]]) -> list[list[tuple[int, int]]]:
    """Move a mention that crosses another of its chain to a chain of its own, so that brackets can express it."""
    result = []
    for chain in chains:
        kept, moved = [], []
        for s, e in chain:
            crossing = any(s < s2 <= e < e2 or s2 < s <= e2 < e for s2, e2 in kept)
            (moved if crossing else kept).append((s, e))
        result.append(kept)
        result.extend([m] for m in moved)
    return [chain for chain in result if chain]


def partition(rng: random.Random, mentions: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    chains: dict[int, list[tuple[int, int]]] = {}
    for mention in mentions:
        chains.setdefault(rng.randrange(max(1, len(mentions) // 2)), []).append(mention)
    return writable(list(chains.values()))


def perturbed(rng: random.Random, key: list[list[tuple[int, int]]]) -> list[list[tuple[int, int]]]:
    """A response: key mentions dropped, spurious ones added, some moved to another or a new chain."""
    used = {m for chain in key for m in chain}
    spurious = [m for m in random_mentions(rng, rng.randrange(5)) if m not in used]
    chains = [[m for m in chain if rng.random() > 0.2] for chain in key] + [[] for _ in range(2)]
    for mention in spurious:
        rng.choice(chains).append(mention)
    for chain in chains:
        for mention in list(chain):
            if rng.random() < 0.2:
                chain.remove(mention)
                rng.choice(chains).append(mention)
    return writable([c for c in chains if c])


def document(name: str, chains: list[list[tuple[int, int]]]) -> CorefDocument:
    clusters = tuple(Cluster(tuple(chain), str(i)) for i, chain in enumerate(chains))
    return CorefDocument(f"({name}); part 000", clusters, (("w",) * SENTENCE,) * SENTENCES)


@pytest.mark.parametrize("seed", range(40))
def test_documents_score_as_scorch_scores_them(tmp_path, seed):
    rng = random.Random(seed)
    keys, responses = [], []
    for i in range(4):
        key = partition(rng, random_mentions(rng, rng.randrange(1, 14)))
        keys.append(document(f"d{i}", key))
        responses.append(document(f"d{i}", perturbed(rng, key)))
    write_conll2012(keys, tmp_path / "key.conll")
    write_conll2012(responses, tmp_path / "response.conll")
    report = score_coref(tmp_path / "key.conll", tmp_path / "response.conll", profile="conll2012")
    with open(tmp_path / "key.conll") as k, open(tmp_path / "response.conll") as r:
        parsed = list(zip(scorch_conll.parse_file(k), scorch_conll.parse_file(r), strict=True))
    for (name, key_entities), (_, response_entities) in parsed:
        key = [set(mentions) for mentions in key_entities.values()]
        response = [set(mentions) for mentions in response_entities.values()]
        ours = {
            r["metric"]: r
            for r in report.per_document
            if r["document"] == f"({name[:-4]}); part 000" and "label" not in r
        }
        assert ours, name
        shared = set().union(*key) & set().union(*response)
        expected = {m: f(key, response) for m, f in SCORCH.items() if shared or not m.startswith("ceaf")}
        if not shared:  # scorch's CEAF fails on a zero total (statistics.harmonic_mean of numpy zeros)
            expected |= {"ceafm": (0, 0, 0), "ceafe": (0, 0, 0)}
        if sum(map(len, key)) >= 2:
            expected["blanc"] = scores.blanc(key, response)
        for metric, (recall, precision, f1) in expected.items():
            row = ours[metric]
            got = (row["recall"], row["precision"], row["f1"])
            assert got == pytest.approx((recall, precision, f1), abs=1e-9), (seed, name, metric)
