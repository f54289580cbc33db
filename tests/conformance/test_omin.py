"""Every OMIn figure the trusted_ke study published, reproduced from ../shared/vectors/omin.

The published values have two significant digits (trusted_ke prints with
``.2``), and so does the ``trusted-ke`` profile: each value must equal the
printed one. The counts behind them are checked too, so that a value cannot
land on the right rounding by accident.
"""

from __future__ import annotations

import pytest

from nlpbench.tasks.linking import score_linking
from nlpbench.tasks.ner import score_ner

pytestmark = pytest.mark.vectors

GOLD = "omin/OMIn_dataset/gold_standard/processed"
TOOLS = "omin/tool_results"
TOKENS = "omin/coref/s2e-coref/data/test.english.jsonlines"

# file, label set, published weak (partial) P/R/F1, published strong (exact) P/R/F1,
# and the counts: COR, PAR (= exact INC), MIS, SPU, POSSIBLE, ACTUAL
NER = [
    ("pl-marker/pl-marker_ace05_bert_NER_jun17.csv", "ace05",
     ".78/.27/.40", ".68/.24/.35", (120, 35, 355, 22, 510, 177)),
    ("nltk/nltk_ner_uppercased.csv", "ace05_nltk",
     ".43/.37/.40", ".29/.25/.27", (132, 133, 265, 193, 530, 458)),
    ("flair/flair_ontonotes_ner.csv", "ontonotes",
     ".68/.16/.25", ".59/.14/.22", (70, 20, 421, 28, 511, 118)),
    ("pl-marker/pl-marker_ace05_albert_NER_jun17.csv", "ace05",
     ".79/.14/.24", ".70/.12/.21", (62, 17, 430, 10, 509, 89)),
    ("stanza/stanza_ontonotes_electra-large_ner.csv", "ontonotes",
     ".73/.10/.18", ".66/.094/.16", (48, 10, 452, 15, 510, 73)),
    ("flair/flair_conll03_ner.csv", "conll03",
     ".77/.064/.12", ".64/.053/.098", (27, 11, 472, 4, 510, 42)),
]  # fmt: skip

# file, QID column, published strong / weak / flex P/R/F1, and TP/FP/FN of each
NEL = [
    ("blink/blink.csv", "bi_qid", (".64/.068/.12", ".57/.08/.14", ".64/.052/.096"),
     ((21, 12, 286), (24, 18, 277), (23, 13, 421))),
    ("refined/refined_wiki_with_numbers_wikidata.csv", "qids", (".72/.058/.11", ".57/.056/.10", ".76/.049/.092"),
     ((18, 7, 294), (17, 13, 289), (22, 7, 428))),
    ("genre/genre_independent.csv", "qids", (".12/.0032/.0063", ".059/.0033/.0063", ".20/.0045/.0087"),
     ((1, 7, 311), (1, 16, 302), (2, 8, 447))),
]  # fmt: skip


def published(figures: str) -> tuple[float, float, float]:
    return tuple(float(value) for value in figures.split("/"))


def values(row: dict) -> tuple[float, float, float]:
    return row["precision"], row["recall"], row["f1"]


@pytest.mark.parametrize(("tool", "labels", "weak", "strong", "counts"), NER, ids=[row[0].split("/")[1] for row in NER])
def test_ner_weak_and_strong(vectors, tool, labels, weak, strong, counts):
    report = score_ner(
        vectors / GOLD / "ner.csv",
        vectors / TOOLS / tool,
        profile="trusted-ke",
        gold_format="omin",
        labels=labels,
        tokens=vectors / TOKENS,
    )
    partial, exact = report.score("partial"), report.score("exact")
    assert values(partial) == published(weak)
    assert values(exact) == published(strong)
    cor, par, mis, spu, possible, actual = counts
    assert (partial["cor"], partial["par"], partial["mis"], partial["spu"]) == (cor, par, mis, spu)
    assert (exact["cor"], exact["inc"]) == (cor, par)
    assert (partial["possible"], partial["actual"]) == (possible, actual)


def test_ner_token_source_fixes_are_reported(vectors):
    report = score_ner(
        vectors / GOLD / "ner.csv",
        vectors / TOOLS / NER[0][0],
        profile="trusted-ke",
        gold_format="omin",
        labels="ace05",
        tokens=vectors / TOKENS,
    )
    assert report.inputs["token_source_fixes"] == [
        "19860530030499A: token_restorations turned token 7 NEW into KNEW",
        "19860706034879A: token_restorations turned token 13 ILOT into PILOT",
        "19920405008919A: token_restorations turned token 8 USTY into GUSTY",
        "19980620030289I: token_override replaced its tokens (25 tokens)",
    ]
    assert not any("gold mentions are not in the tokens" in w for w in report.warnings)


@pytest.mark.parametrize(("tool", "qid_column", "figures", "counts"), NEL, ids=[row[0].split("/")[0] for row in NEL])
def test_nel_strong_weak_flex(vectors, tool, qid_column, figures, counts):
    report = score_linking(
        vectors / GOLD / "nel.csv", vectors / TOOLS / tool, profile="trusted-ke", qid_column=qid_column
    )
    for mode, figure, (tp, fp, fn) in zip(("strong", "weak", "flex"), figures, counts, strict=True):
        row = report.score(mode)
        assert values(row) == published(figure), mode
        assert (row["tp"], row["fp"], row["fn"]) == (tp, fp, fn), mode
