"""docs/how-to/add-a-scoring-task.md, followed: its module added to the tasks package is scored everywhere."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

import nlpbench
from nlpbench import tasks
from nlpbench.profiles import base
from tests.cli.errors import one_line_error

HOW_TO = Path(__file__).parents[2] / "docs" / "how-to" / "add-a-scoring-task.md"
GOLD = "d1\tA\nd2\tB\nd3\tb\n"
PRED = "d1\tA\nd2\tA\nd3\tB\nd4\tC\n"


@pytest.fixture
def doclabels(tmp_path, monkeypatch):
    """The how-to's module, saved in a folder of the tasks package, the registries restored afterwards."""
    module = re.search(r"```python\n(.*?)```", HOW_TO.read_text(encoding="utf-8"), re.DOTALL)[1]
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / "doclabels.py").write_text(module, encoding="utf-8")
    monkeypatch.setattr(tasks, "__path__", [*tasks.__path__, str(tmp_path / "package")])
    monkeypatch.setattr(tasks.REGISTRY, "_items", dict(tasks.REGISTRY._items))
    monkeypatch.setattr(base.REGISTRY, "_items", dict(base.REGISTRY._items))
    (tmp_path / "gold.tsv").write_text(GOLD, encoding="utf-8")
    (tmp_path / "pred.tsv").write_text(PRED, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    yield
    sys.modules.pop("nlpbench.tasks.doclabels", None)


def test_the_new_task_is_listed_with_its_profiles(cli, doclabels):
    assert "doclabels" in nlpbench.tasks()
    assert nlpbench.profiles("doclabels") == ["lenient", "standard"]
    assert "doclabels" in cli("score", "--help").stdout


def test_cli_and_python_api_score_it_alike(cli, doclabels):
    report = nlpbench.score("doclabels", "gold.tsv", "pred.tsv", profile="lenient")
    arguments = ["score", "doclabels", "--gold", "gold.tsv", "--pred", "pred.tsv", "--profile", "lenient"]
    printed = cli(*arguments, "-f", "json")
    assert printed.exit_code == 0, printed.stderr
    assert report.to_json() == printed.stdout
    assert str(report) == cli(*arguments).stdout
    scores = json.loads(printed.stdout)["scores"]
    assert {(row.get("label"), row["tp"], row["fp"], row["fn"]) for row in scores} == {
        (None, 2, 1, 1), ("a", 1, 1, 0), ("b", 1, 0, 1)}  # fmt: skip
    assert report.score("labels")["f1"] == 2 / 3  # the accuracy: d1 and d3 right, d2 wrong
    assert report.warnings == ["1 predicted documents are not in the gold: not scored"]
    standard = nlpbench.score("doclabels", "gold.tsv", "pred.tsv")
    assert standard.score("labels")["tp"] == 1  # "b" is not "B" as written


def test_compare_and_bad_input_go_through_the_registry(cli, doclabels):
    compared = cli("compare", "pred.tsv", "gold.tsv", "-T", "doclabels", "-g", "gold.tsv", "--trials", "100",
                   "-f", "json")  # fmt: skip
    assert compared.exit_code == 0, compared.stderr
    assert json.loads(compared.stdout)["task"] == "compare doclabels"
    Path("bad.tsv").write_text("d1 A\n", encoding="utf-8")
    result = cli("score", "doclabels", "--gold", "gold.tsv", "--pred", "bad.tsv")
    assert one_line_error(result) == "bad.tsv: line 1: expected DOCUMENT<TAB>LABEL"
