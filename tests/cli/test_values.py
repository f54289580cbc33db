"""Option values converted without pydantic (:mod:`nlpbench.cli.values`) are Typer's own, value for value and
message for message, on every option of every command."""

from __future__ import annotations

import enum
import itertools
from datetime import datetime
from pathlib import Path
from typing import Any, get_args, get_origin

import pytest
import typer
from typer._coercion import build_runtime_param
from typer.core import TyperGroup, _TyperParameter

from nlpbench.cli import build_app
from nlpbench.cli.options import new_spelling
from nlpbench.cli.values import UNSURE, plain

TEXTS = ["x", "", " a ", "é", "-", "a//b", "x\x00"]
NUMBERS = ["0", "7", "-3", "007", "-0", "+1", " 1", "1 ", "1_0", "1.0", ".5", "5.", "0.95", "0.4999", "1e3", "nan",
           "inf", "abc", "", "١", "0x10", "99999999999999999999999", "65536", "100", "0.999", "1.5"]  # fmt: skip
DATES = ["2026-11-29", "2024-02-29", "2023-02-29", "2026-13-01", "2026-1-5", "20261129", "2026-11-29T08:30",
         " 2026-11-29", "2026-11-29 ", "٢٠٢٦-١١-٢٩", "0001-01-01", "9999-12-31", "2026-11"]  # fmt: skip


ROOT = typer.main.get_command(build_app())


def every_parameter() -> list[tuple[str, _TyperParameter]]:
    """Each parameter of each command of the whole app, ``score``'s generated ones too, by command path."""
    found: list[tuple[str, _TyperParameter]] = []

    def walk(command: Any, path: str) -> None:
        found.extend((path, p) for p in command.params if isinstance(p, _TyperParameter))
        if isinstance(command, TyperGroup):
            context = typer.Context(command)
            for name in command.list_commands(context):
                walk(command.get_command(context, name), f"{path} {name}")

    walk(ROOT, "nlpbench")
    return found


PARAMETERS = every_parameter()


def candidates(annotation: Any, default: Any, here: Path) -> list[Any]:
    """Values to convert for an option of type ``annotation``: typed ones, its default, and wrong ones."""
    one = get_args(annotation)[0] if get_origin(annotation) is list else annotation
    values: list[Any] = [*TEXTS, *NUMBERS, str(here), str(here / "file.txt"), str(here / "missing"), Path("x")]
    if one is datetime:
        values += [*DATES, datetime(2026, 11, 29), datetime(2026, 11, 29, 8, 30)]
    if isinstance(one, type) and issubclass(one, enum.Enum):
        values += [m for m in one] + [str(m.value) for m in one] + [str(m.value).upper() for m in one]
        values += [m.name for m in one]
    if default is not None:
        values.append(default)
    if get_origin(annotation) is list:
        values += [list(pair) for pair in itertools.combinations(values[:6] + values[-4:], 2)] + [[]]
    return values


def context() -> Any:
    """A context under the root command, which reads old spellings of names (``--out``) as their new ones."""
    return typer.Context(ROOT, token_normalize_func=new_spelling)


def shape(value: Any) -> tuple[type, list[type]]:
    """The type of ``value`` and of its items: equal values of other types (``1`` and ``1.0``) differ."""
    return type(value), [type(item) for item in value] if isinstance(value, list | tuple) else []


def typers_own(parameter: _TyperParameter, value: Any, context: Any) -> tuple[str, Any]:
    """What Typer's own (pydantic) conversion makes of ``value``: ('value', result) or ('error', message)."""
    try:
        return "value", build_runtime_param(parameter.type_descriptor)._coerce_value(value, parameter, context)
    except typer.BadParameter as error:
        return "error", error.format_message()


@pytest.mark.parametrize(("path", "parameter"), PARAMETERS, ids=[f"{p} {q.name}" for p, q in PARAMETERS])
def test_every_option_converts_as_typer_does(path, parameter, tmp_path):
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    descriptor = parameter.type_descriptor
    if descriptor.file_annotation is not None:
        pytest.skip("files are opened by Typer itself")
    for value in candidates(descriptor.annotation, parameter.default, tmp_path):
        mine = plain(descriptor.annotation, descriptor.parameter_info, value, parameter, context())
        if mine is UNSURE:
            continue  # Typer's own conversion runs, as it did before
        theirs = typers_own(parameter, value, context())
        assert theirs == ("value", mine), (value, mine, theirs)
        assert shape(theirs[1]) == shape(mine), (value, mine, theirs)


def test_the_common_values_are_plain(tmp_path):
    """What a score command is given (paths, names, numbers, a format) and its defaults need no pydantic."""
    by_name = {(path, p.name): p for path, p in PARAMETERS}
    given = {
        ("nlpbench score sandbox", "gold"): str(tmp_path),
        ("nlpbench score sandbox", "relax"): "3",
        ("nlpbench score sandbox", "fmt"): "json",
        ("nlpbench score sandbox", "confidence"): "0.9",
        ("nlpbench score timelines", "mode"): "day",
        ("nlpbench score timelines", "all_ids"): str(tmp_path),
        ("nlpbench score timelines", "reference_date"): "2026-11-29",
        ("nlpbench score codiesp", "valid_codes"): (str(tmp_path), str(tmp_path)),
        ("nlpbench score codiesp", "k"): ("5", "10"),
        ("nlpbench score codiesp", "track"): "d",
        ("nlpbench score sandbox", "annotation_types"): ("date", "all"),
    }
    for (path, name), value in given.items():
        parameter = by_name[path, name]
        info, annotation = parameter.type_descriptor.parameter_info, parameter.type_descriptor.annotation
        assert plain(annotation, info, value, parameter, context()) is not UNSURE, (path, name, value)
        if parameter.default is not None:
            assert plain(annotation, info, parameter.default, parameter, context()) is not UNSURE, (path, name)


WRONG = [["--relax", "-1"], ["--relax", "two"], ["--relax", "1.5"], ["-f", "yaml"], ["--confidence", "1"],
         ["--confidence", "x"], ["--resamples", "99"], ["-t", "dates"], ["-o", "a\x00b"]]  # fmt: skip


@pytest.mark.parametrize("wrong", WRONG, ids=" ".join)
def test_a_wrong_value_gets_typers_own_message(cli, monkeypatch, wrong):
    """Typer's own conversion still says what is wrong (out of range, not a number, not a choice), word for word
    and box for box, as it did with every value converted by pydantic."""
    mine = cli("score", "sandbox", "--example", *wrong)
    monkeypatch.setattr(_TyperParameter, "get_runtime_param", _TyperParameter.get_runtime_param.__wrapped__)
    theirs = cli("score", "sandbox", "--example", *wrong)
    assert mine.exit_code == theirs.exit_code == 2
    assert mine.stderr == theirs.stderr and "Invalid value" in mine.stderr


def test_a_date_in_no_format_gets_typers_own_message(cli, monkeypatch):
    """``--reference-date`` read by strptime as Typer's validator reads it; a date it cannot read gets Typer's
    message, word for word."""
    wrong = ("score", "timelines", "-g", "g.json", "-p", "g.json", "--all-ids", "ids.txt", "--mode", "day",
             "--reference-date", "29/11/2026")  # fmt: skip
    mine = cli(*wrong)
    monkeypatch.setattr(_TyperParameter, "get_runtime_param", _TyperParameter.get_runtime_param.__wrapped__)
    theirs = cli(*wrong)
    assert mine.exit_code == theirs.exit_code == 2
    assert mine.stderr == theirs.stderr and "29/11/2026" in mine.stderr
