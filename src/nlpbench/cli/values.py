"""Option values without pydantic: the plain cases of Typer's conversion, done the way it does them.

Typer 0.29 converts every option's value (a default, or what was typed) through a pydantic
``TypeAdapter`` built for that option when the command parses its arguments, even for an option
left unset (None, which it then returns without the adapter): importing pydantic and building the
adapters of a ``score`` command took about 0.1 s of CPU, a third to a half of a one-note score.
Most values need none of it, and :func:`install` has Typer leave None as it is, without an
adapter, and convert these itself:

- ``str``: a ``str`` as it is;
- ``int`` and ``float``: a number of their type, or plain decimal digits (``-?[0-9]+``, and a
  fraction ``.[0-9]+`` for a float) read by ``int`` or ``float`` as pydantic reads them, within the
  option's ``min`` and ``max``;
- an enumeration: Typer's own choice rule (:func:`typer._param_types.coerce_cli_choice`, the function
  its adapter calls);
- a path (``Path``): ``Path(text)``, as pydantic makes it, then Typer's own checks
  (:func:`typer._param_types.coerce_cli_path`, the function its adapter calls);
- a ``datetime`` with ``formats``: the first of ``datetime.strptime(text, format)`` that reads the
  text, as the validator Typer gives pydantic does (``--reference-date`` of ``score timelines``
  loaded pydantic for it, about 0.1 s of its command's CPU);
- a list of any of these, item by item.

Any other value or annotation (``bool`` that is not a flag, dates without ``formats`` or in none of
them, a value out of range or not plainly a number, a path that fails a check, a custom parser) goes
to Typer's own conversion, built then: every error message is Typer's, word for word, and so is every value
(``tests/cli/test_values.py`` compares both on every option of every command).

A Typer without this conversion (before 0.29, or a later one that changed it) is left as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

import typer

#: What :func:`plain` returns for a value it leaves to Typer.
UNSURE: Any = object()

#: What pydantic turns into a validation error (and Typer into its message) when its validator raises it.
_REFUSALS = (ValueError, AssertionError)
_INT = re.compile(r"-?[0-9]+", re.ASCII)
_FLOAT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?", re.ASCII)


def install() -> None:
    """Have Typer convert plain values (see the module) without building a pydantic adapter. Idempotent."""
    try:
        from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
        from typer.core import _TyperParameter
    except ImportError:  # a Typer that converts values otherwise: nothing to spare
        return
    typers = getattr(_TyperParameter, "get_runtime_param", None)
    if typers is None or [f.name for f in fields(RuntimeParam)] != ["parameter_info", "annotation"]:
        return  # not the Typer this was written for: its own conversion, as it is
    if hasattr(typers, "__wrapped__"):  # installed already
        return

    @dataclass(frozen=True)
    class PlainRuntimeParam(RuntimeParam):
        """Typer's conversion of one parameter, its plain values (:func:`plain`) done without pydantic."""

        descriptor: TypeDescriptor

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            found = plain(self.annotation, self.parameter_info, value, param, ctx)
            if found is not UNSURE:
                return found
            return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)

    def get_runtime_param(self: Any) -> Any:
        """Typer's conversion of this parameter, made on first use: :class:`PlainRuntimeParam` but for files."""
        if self._runtime_param is None:
            descriptor = self.type_descriptor
            if descriptor.file_annotation is None:
                self._runtime_param = PlainRuntimeParam(descriptor.parameter_info, descriptor.annotation, descriptor)
            else:
                self._runtime_param = build_runtime_param(descriptor)
        return self._runtime_param

    get_runtime_param.__wrapped__ = typers  # type: ignore[attr-defined]  # Typer's own, for tests to compare
    _TyperParameter.get_runtime_param = get_runtime_param  # type: ignore[method-assign]


def plain(annotation: Any, info: Any, value: Any, param: Any, ctx: Any) -> Any:
    """``value`` (not None) converted as Typer converts it for an option of type ``annotation`` (Typer's
    ``ParameterInfo`` ``info``), or :data:`UNSURE` when it or its kind is not one of the module's, or the
    option has a parser of its own or clamps its numbers to the range."""
    if info.parser is not None or getattr(info, "clamp", False):
        return UNSURE
    if get_origin(annotation) is list:
        (one,) = get_args(annotation)
        done = [plain(one, info, item, param, ctx) for item in (value if isinstance(value, list | tuple) else [value])]
        return UNSURE if any(item is UNSURE for item in done) else done
    if annotation is str:
        return value if type(value) is str else UNSURE
    if annotation is int or annotation is float:
        number = _number(annotation, value)
        return number if number is not UNSURE and _in_range(number, info) else UNSURE
    if annotation is datetime:
        return _moment(info.formats, value)
    if annotation is Path:
        if info.path_type is not None or not (type(value) is str or isinstance(value, Path)):
            return UNSURE
        from typer._param_types import coerce_cli_path

        try:
            return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
        except (typer.BadParameter, *_REFUSALS):  # a message naming the value as typed: Typer's own says it
            return UNSURE
    if not (isinstance(annotation, type) and issubclass(annotation, Enum)):
        return UNSURE
    from typer._param_types import coerce_cli_choice

    try:
        return coerce_cli_choice(value, choices=list(annotation), case_sensitive=info.case_sensitive, ctx=ctx)
    except _REFUSALS:  # not one of the choices: Typer's own conversion says which they are
        return UNSURE


def _number(kind: type, value: Any) -> Any:
    """``value`` as an ``int`` or ``float`` (``kind``) when it is one, or plain decimal digits; else :data:`UNSURE`."""
    if type(value) is kind:
        return value
    if type(value) is str and (_INT if kind is int else _FLOAT).fullmatch(value):
        return kind(value)
    return UNSURE


def _moment(formats: list[str] | None, value: Any) -> Any:
    """``value`` read by the first of ``formats`` that reads it (a ``datetime`` as it is), as Typer's validator
    reads it; :data:`UNSURE` without formats (pydantic's own reading), for a value no format reads (Typer's
    message) or for anything but text."""
    if formats is None:
        return UNSURE
    if type(value) is datetime:
        return value
    if type(value) is not str:
        return UNSURE
    for form in formats:
        try:
            return datetime.strptime(value, form)
        except ValueError:  # not in this format: the next one's turn, then Typer's own message
            continue
    return UNSURE


def _in_range(number: float, info: Any) -> bool:
    """Whether ``number`` is within the option's ``min`` and ``max`` (a NaN is not, unless neither is set)."""
    return (info.min is None or number >= info.min) and (info.max is None or number <= info.max)
