"""Options mean the same everywhere: one meaning per short flag, choices shown, a port of its own per service.

Walks every command's parameters as Typer built them (issue 21 §5).
"""

from __future__ import annotations

import re
import socket
from collections import defaultdict

import pytest
import typer
from typer._click.core import Context
from typer.core import TyperOption

from nlpbench.cli import app
from nlpbench.cli.options import DATANODE_PORT, LEADERBOARD_PORT, PLATFORM_PORT, TOOL_PORT
from tests.cli.errors import one_line_error

#: The one meaning of each short flag, across all commands.
SHORT_FLAGS = {
    "-a": "--annotator",
    "-c": "--valid-codes",
    "-d": "--dataset",
    "-f": "--format",
    "-g": "--gold",
    "-k": "--key",
    "-l": "--labels",
    "-m": "--metric",
    "-n": "--notes",
    "-o": "--output",
    "-p": "--pred",
    "-q": "--queue",
    "-r": "--response",
    "-s": "--seed",
    "-t": "--annotation-type",
    "-T": "--task",
    "-w": "--workers",
    "-y": "--yes",
}
#: Options that take one of a few names: their help lists the names.
ENUM_LIKE = {
    "--annotation-type",
    "--ci-method",
    "--executor",
    "--format",
    "--from",
    "--gold-format",
    "--key-format",
    "--log-level",
    "--mode",
    "--pick",
    "--pred-format",
    "--profile",
    "--response-format",
    "--sandbox",
    "--scope",
    "--status",
    "--test",
    "--to",
    "--track",
    "--window",
}
SERVICES = {
    "serve": TOOL_PORT,
    "datanode serve": DATANODE_PORT,
    "submissions serve": PLATFORM_PORT,
    "leaderboard serve": LEADERBOARD_PORT,
}


def options():
    """(command path, option, its help metavar) of every option of every command."""

    def walk(command, path):
        context = Context(command)
        if hasattr(command, "commands"):  # a group: its commands as it lists them (generated ones too)
            for name in command.list_commands(context):
                yield from walk(command.get_command(context, name), (*path, name))
            return
        for param in command.params:
            if isinstance(param, TyperOption):
                yield " ".join(path), param, param.display_type_rich(context)

    return list(walk(typer.main.get_command(app), ()))


def test_each_short_flag_has_one_meaning_in_every_command():
    meanings = defaultdict(set)
    for _, option, _ in options():
        shorts = [name for name in option.opts if re.fullmatch(r"-[A-Za-z]", name)]
        longs = [name for name in option.opts if name.startswith("--")]
        for short in shorts:
            meanings[short].add(longs[0])
    assert {short: sorted(longs) for short, longs in meanings.items()} == {
        short: [long] for short, long in SHORT_FLAGS.items()
    }


def test_an_option_has_the_same_short_flag_wherever_it_has_one():
    given = defaultdict(set)
    for _, option, _ in options():
        given[option.opts[0]].update(name for name in option.opts if re.fullmatch(r"-[A-Za-z]", name))
    assert {name: shorts for name, shorts in given.items() if len(shorts) > 1} == {}


def test_options_that_take_one_of_a_few_names_list_them():
    for command, option, shown in options():
        if ENUM_LIKE & set(option.opts):
            names = re.fullmatch(r"<(list\[)?([\w.%-]+(\|[\w.%-]+)*)\]?>", shown or "")
            # one name is a choice too (the deid task has one profile); a type's name is not
            assert names and names[2] not in ("str", "text", "path", "integer", "float"), (command, option.opts, shown)


def test_a_score_command_lists_its_task_formats_first_for_each_side():
    from nlpbench import tasks

    tasks.load_all()
    seen = set()
    for command, option, shown in options():
        task = command.removeprefix("score ")
        if command.startswith("score ") and option.name.endswith("_format"):  # --gold-format, --key-format…
            spec = tasks.get(task)
            listed = tuple(shown.strip("<>").split("|"))
            assert listed[: len(spec.formats)] == spec.formats, (command, option.opts)
            seen.add(task)
    assert {"sandbox", "ner", "linking", "relations", "coref", "deid"} <= seen


def test_flags_show_as_flags():
    for command, option, shown in options():
        if option.is_flag:
            assert shown is None, (command, option.opts, shown)


def test_no_two_services_share_a_default_port():
    ports = {command: option.default for command, option, _ in options() if "--port" in option.opts}
    assert {command: ports[command] for command in SERVICES} == SERVICES
    assert len(set(SERVICES.values())) == len(SERVICES)
    assert ports["demo"] == 0  # any free port


def test_out_is_an_old_spelling_of_output_hidden_from_help(cli, tmp_path):
    assert "--out " not in cli("run", "--help").stdout and "--output" in cli("run", "--help").stdout
    missing = tmp_path / "none.json"
    for spelling in ("--out", "--output", "-o"):
        result = cli("run", "--notes", missing, "--tool", "a=http://127.0.0.1:9", spelling, tmp_path / "run")
        assert one_line_error(result).startswith(f"{missing}: "), spelling


@pytest.mark.parametrize("service", SERVICES)
def test_a_service_on_a_busy_port_is_one_line_before_anything_else(cli, tmp_path, service):
    db = f"sqlite:///{tmp_path / 'store.db'}"
    assert cli("db", "upgrade", "--db", db).exit_code == 0
    given = ("--annotator", "date") if service == "serve" else ("--db", db)
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        result = cli(*service.split(), *given, "--port", port)
    assert one_line_error(result) == f"cannot listen on 127.0.0.1:{port}: Address already in use"
