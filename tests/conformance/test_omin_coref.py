"""The OMIn coreference figures trusted_ke published, reproduced under the ``e2e`` profile.

Published figures: ``../shared/vectors/README.md`` (from nd-crane/trusted_ke @ 135462ae,
``evaluations/quantitative/README.md``), P/R/F1 per metric and the CoNLL F1, printed by
trusted_ke's ``cr_eval.py`` with Python's ``.2`` format (two significant digits). The gold
quirks that these figures depend on (the one-index mention ``[10]`` of 19790720021329A,
the mention ``[16, 16]`` on a full stop in 19980616023109I) are kept as they are.
"""

import json

import pytest

pytestmark = pytest.mark.vectors

TOOLS = {
    "s2e-coref/s2e-coref.csv": ".88/.74/.80 .87/.73/.79 .87/.72/.79 .79 .87/.73/.79",
    "asp/asp_t0.csv": ".70/.74/.72 .73/.77/.75 .77/.81/.79 .75 .69/.73/.71",
    "neuralcoref/neuralcoref_lg.csv": ".57/.42/.48 .59/.43/.50 .59/.46/.52 .50 .57/.41/.47",
    "coref_mt5/coref_mt5.csv": ".80/.21/.33 .85/.20/.32 .76/.21/.33 .33 .80/.19/.31",
}
#: The order of the published columns: MUC, B3, CEAFe, CoNLL, LEA.
COLUMNS = ("muc", "bcub", "ceafe", "conll", "lea")


def printed(value: float) -> float:
    """What trusted_ke prints, read back: two significant digits."""
    return float(format(value, ".2"))


def run(cli, vectors, tool, *options):
    omin = vectors / "omin"
    result = cli(
        "score", "coref", "--profile", "e2e", "--key-format", "omin-csv", "--format", "json",
        "--key", omin / "OMIn_dataset/gold_standard/processed/cr.csv", "--response", omin / "tool_results" / tool,
        *options,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_published_figures(cli, vectors, tool):
    rows = {row["metric"]: row for row in run(cli, vectors, tool)["scores"]}
    assert set(rows) == set(COLUMNS)
    for metric, figures in zip(COLUMNS, TOOLS[tool].split(), strict=True):
        fields = ("f1",) if metric == "conll" else ("precision", "recall", "f1")
        got = [printed(rows[metric][f]) for f in fields]
        assert got == [float(f) for f in figures.split("/")], f"{tool} {metric}"


def test_counts_and_what_is_left_out(cli, vectors):
    """The gold has 18 clusters (37 mentions); only the 100 gold documents of the 2,748 tool rows are scored."""
    report = run(cli, vectors, "asp/asp_t0.csv")
    rows = {row["metric"]: row for row in report["scores"]}
    assert (rows["muc"]["recall_den"], rows["bcub"]["recall_den"], rows["ceafe"]["recall_den"]) == (19, 37, 18)
    assert (rows["ceafe"]["precision_num"], rows["ceafe"]["precision_den"]) == (pytest.approx(14 + 2 / 3), 19)
    assert len({row["document"] for row in report["per_document"]}) == 100
    assert report["warnings"][0].startswith("response documents not in the key, not scored: 2648 (")
    assert any("mentions written with one index" in w and "[10] in 19790720021329A" in w for w in report["warnings"])


def test_the_one_index_mention_matters(cli, vectors):
    """Read as the span 10-10 (profile standard), gold [10] matches ASP's [10, 10], and MUC is no longer .70/.74/.72."""
    e2e = {row["metric"]: row for row in run(cli, vectors, "asp/asp_t0.csv")["scores"]}
    spans = {row["metric"]: row for row in run(cli, vectors, "asp/asp_t0.csv", "--profile", "standard")["scores"]}
    assert e2e["muc"]["recall_num"] == 14
    assert spans["muc"]["recall_num"] == 15


def test_neuralcoref_with_its_id_column_named(cli, vectors):
    """trusted_ke ran neuralcoref with ``-i c5``; naming the column gives what finding it by name gives."""
    found = run(cli, vectors, "neuralcoref/neuralcoref_lg.csv")
    named = run(cli, vectors, "neuralcoref/neuralcoref_lg.csv", "--id-column", "c5", "--clusters-column", "corefs")
    assert named["scores"] == found["scores"]
