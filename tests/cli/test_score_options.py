"""Every ``score`` subcommand takes the same output options, defined once (``nlpbench.cli.score.scored``)."""

import json

import click
import pytest
import typer

from nlpbench.cli import app
from tests.cli.test_score_ner import GOLD, PRED

SHARED = {"--format", "--output", "--per-document"}


def score_commands() -> dict[str, click.Command]:
    group = typer.main.get_command(app).commands["score"]
    return dict(group.commands)


@pytest.mark.parametrize("name", sorted(score_commands()))
def test_every_score_command_has_the_shared_output_options(name):
    options = {opt for param in score_commands()[name].params for opt in param.opts}
    assert options >= SHARED, name
    assert ("--errors" in options) == (name == "sandbox")  # where errors exist


def test_no_per_document_and_output_file_on_another_task(cli, tmp_path):
    (tmp_path / "gold.conll").write_text(GOLD)
    (tmp_path / "pred.conll").write_text(PRED)
    args = ("score", "ner", "-g", tmp_path / "gold.conll", "-p", tmp_path / "pred.conll", "-f", "json")
    kept = json.loads(cli(*args).stdout)
    assert kept["per_document"]
    result = cli(*args, "--no-per-document", "-o", tmp_path / "report.json")
    assert result.exit_code == 0 and result.stdout == ""
    written = json.loads((tmp_path / "report.json").read_text())
    assert written["per_document"] == [] and written["scores"] == kept["scores"]
