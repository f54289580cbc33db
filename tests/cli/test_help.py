"""Every command's help says what its options take: no emoji made of option text, no value for a flag, choices.

And ``score sandbox`` without ``-t`` scores every type its inputs hold, naming them in its titles.
"""

from __future__ import annotations

import json
import re

import pytest
import typer
from typer.testing import CliRunner

from nlpbench import formats, profiles
from nlpbench.cli import app
from nlpbench.cli.score import example_file


def commands(command=None, path=()):
    """(path, command) of every command and group of the CLI."""
    command = command or typer.main.get_command(app)
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from commands(sub, (*path, name))


@pytest.fixture(scope="module")
def helps():
    runner = CliRunner()
    return {
        " ".join(path): runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"}).stdout for path, _ in commands()
    }


def test_no_help_turns_option_text_into_an_emoji(helps):
    """Rich read ``submission:ID:`` as the emoji code ``:ID:`` (🆔)."""
    for path, text in helps.items():
        assert not re.search(r"[\U0001F000-\U0001FAFF\u2600-\u27BF]", text), path
    assert "With submission:ID, the stored result" in helps["compare"]


def test_flags_show_no_value(helps):
    """Typer shows <bool> beside a flag, which takes no value."""
    for path, text in helps.items():
        assert "<bool>" not in text, path
    assert re.search(r"--ci +Add bootstrap", helps["score sandbox"])


PROFILED = [
    ("score sandbox", "spans"),
    ("score coref", "coref"),
    ("score i2b2", "i2b2"),
    ("demo", "spans"),
    ("run", "spans"),
]


@pytest.mark.parametrize(("command", "family"), PROFILED)
def test_profile_options_list_their_choices(helps, command, family):
    assert f"<{'|'.join(profiles.names(family))}>" in helps[command]


def test_score_sandbox_without_a_type_scores_every_type_the_inputs_hold(cli):
    default = json.loads(cli("score", "sandbox", "--example", "-f", "json").stdout)
    assert default["inputs"]["annotation_type"] == ["date", "person_name", "location", "id", "contact"]
    every = json.loads(cli("score", "sandbox", "--example", "-t", "all", "-f", "json").stdout)
    assert default["scores"] == every["scores"]  # the example holds all five
    table = cli("score", "sandbox", "--example").stdout
    assert table.startswith("sandbox · profile standard · date, person_name, location, id, contact")
    assert "by label · date, person_name, location, id, contact" in table


def test_score_sandbox_without_a_type_keeps_the_types_held(cli, tmp_path):
    gold = tmp_path / "gold.json"
    documents = list(formats.get("sandbox").read(example_file("gold.json")))
    for document in documents:
        document.annotations = [a for a in document.annotations if a.label not in ("location", "id")]
    formats.get("sandbox").write(documents, gold)
    held = json.loads(cli("score", "sandbox", "-g", gold, "-p", gold, "-f", "json").stdout)
    assert held["inputs"]["annotation_type"] == ["date", "person_name", "contact"]
    assert {row["annotation_type"] for row in held["scores"] + held["per_document"]} == {
        "date", "person_name", "contact"}  # fmt: skip


def test_an_explicit_type_prints_what_it_printed(cli):
    """One type asked for: no annotation_type column and a title without types, as before."""
    table = cli("score", "sandbox", "--example", "-t", "location").stdout
    assert table.splitlines()[0].rstrip() == "sandbox · profile standard"
    assert "annotation type" not in table
    report = json.loads(cli("score", "sandbox", "--example", "-t", "location", "-f", "json").stdout)
    assert report["inputs"]["annotation_type"] == "location"
