"""CodiEsp 2020 tab-separated files: ranked codes (D, P), code references (X), valid-code lists.

- CodiEsp-D and -P, gold and predictions: ``case<TAB>code``. A document's
  codes are the lines with its id, in file order, wherever they are in the
  file; in a prediction file that order is the ranking (rank 1 first).
- CodiEsp-X gold: ``case<TAB>label<TAB>code<TAB>reference text<TAB>s e[;s e…]``;
  a discontinuous reference lists its pieces separated by ``;``, sometimes out
  of text order.
- CodiEsp-X predictions: ``case<TAB>s e<TAB>label<TAB>code``, one span each.
- Valid-code lists: ``code<TAB>Spanish description<TAB>English description``;
  only the first column is read, lower-cased.

Files are UTF-8 (a byte-order mark is ignored); lines end in ``\\n`` or
``\\r\\n``; empty lines are skipped. There is no header (a header line would be
read as data, as the official scripts read it) and no quoting: lines are split
on tabs. Every line must have the layout's number of fields, and case ids and
codes must be non-empty and free of whitespace; offsets are non-negative
integers (a prediction's may be negative or inverted, see
:func:`read_predicted_references`). Anything else raises :class:`~nlpbench.errors.InputError` naming the
file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from nlpbench.errors import InputError
from nlpbench.model import CodeReference, RankedCodes

#: The files with this many fields per line, and their fields, for error messages.
LAYOUTS = {
    2: ("a CodiEsp-D/P file", "case, code"),
    4: ("a CodiEsp-X prediction file", "case, 's e', label, code"),
    5: ("a CodiEsp-X gold file", "case, label, code, reference, 's e[;s e]'"),
}

_GOLD_POSITION = re.compile(r"\d+ \d+(?:;\d+ \d+)*")
_PRED_POSITION = re.compile(r"(-?\d+) (-?\d+)")


def read_ranked_codes(path: Path | str) -> list[RankedCodes]:
    """Each document's codes in file order, documents in order of first appearance."""
    codes: dict[str, list[str]] = {}
    for _, (case, code) in _rows(path, 2, identifiers=(0, 1)):
        codes.setdefault(case, []).append(code)
    return [RankedCodes(case, tuple(listed)) for case, listed in codes.items()]


def read_references(path: Path | str) -> list[CodeReference]:
    """CodiEsp-X gold: one reference per line, fragments in the order the file lists them."""
    references = []
    for where, (case, label, code, text, position) in _rows(path, 5, identifiers=(0, 2)):
        if not _GOLD_POSITION.fullmatch(position):
            raise InputError(
                f"reference position {position!r} is not 'start end' or 'start end;start end…'", path, where
            )
        fragments = tuple(_pair(piece) for piece in position.split(";"))
        for start, end in fragments:
            if end < start:
                raise InputError(f"reference fragment '{start} {end}' ends before it starts", path, where)
        references.append(CodeReference(case, code, fragments, label, text))
    return references


def read_predicted_references(path: Path | str) -> list[CodeReference]:
    """CodiEsp-X predictions: one ``start end`` span per line.

    A span that ends before it starts or has a negative offset is kept as
    written: the official scorer accepts it and its containment test is
    arithmetic, so such a span can still match (the task warns about them).
    """
    references = []
    for where, (case, position, label, code) in _rows(path, 4, identifiers=(0, 3)):
        match = _PRED_POSITION.fullmatch(position)
        if match is None:
            if ";" in position:
                problem = (
                    f"discontinuous predicted span {position!r}: CodiEsp-X scores one 'start end' span per "
                    "prediction; give the first start and the last end"
                )
            else:
                problem = f"predicted span {position!r} is not two integer offsets 'start end'"
            raise InputError(problem, path, where)
        references.append(CodeReference(case, code, ((int(match[1]), int(match[2])),), label))
    return references


def read_valid_codes(path: Path | str) -> frozenset[str]:
    """The lower-cased codes of the first column of a valid-code list."""
    codes = set()
    for where, line in _lines(path):
        code = line.split("\t", 1)[0]
        _check_identifier(code, "code", path, where)
        codes.add(code.lower())
    return frozenset(codes)


def write_ranked_codes(documents: Iterable[RankedCodes], path: Path | str) -> None:
    _write(path, (f"{d.doc_id}\t{code}\n" for d in documents for code in d.codes))


def write_references(references: Iterable[CodeReference], path: Path | str) -> None:
    """Write CodiEsp-X gold lines, fragments in their listed order."""
    lines = (
        f"{r.doc_id}\t{r.label}\t{r.code}\t{r.text or ''}\t{';'.join(f'{s} {e}' for s, e in r.fragments)}\n"
        for r in references
    )
    _write(path, lines)


def write_predicted_references(references: Iterable[CodeReference], path: Path | str) -> None:
    """Write CodiEsp-X prediction lines; a reference of several fragments becomes the span covering them all."""
    lines = (f"{r.doc_id}\t{' '.join(map(str, r.covering_bounds))}\t{r.label}\t{r.code}\n" for r in references)
    _write(path, lines)


def _write(path: Path | str, lines: Iterable[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.writelines(lines)


def _lines(path: Path | str) -> Iterator[tuple[str, str]]:
    """``("line N", text)`` for each non-empty line; an empty file is an error."""
    empty = True
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            for number, raw in enumerate(handle, start=1):
                line = raw.rstrip("\n").rstrip("\r")
                if line:
                    empty = False
                    yield f"line {number}", line
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason} at byte {error.start})", path) from None
    if empty:
        raise InputError("empty file: there is nothing to score", path)


def _rows(path: Path | str, width: int, identifiers: tuple[int, ...]) -> Iterator[tuple[str, list[str]]]:
    """The tab-separated fields of each line, checked for their number and their ids and codes."""
    for where, line in _lines(path):
        fields = line.split("\t")
        if len(fields) != width:
            guess = f": is this {LAYOUTS[len(fields)][0]}?" if len(fields) in LAYOUTS else ""
            problem = f"expected {width} tab-separated fields ({LAYOUTS[width][1]}), found {len(fields)}{guess}"
            raise InputError(problem, path, where)
        for index in identifiers:
            _check_identifier(fields[index], "case id" if index == 0 else "code", path, where)
        yield where, fields


def _check_identifier(value: str, what: str, path: Path | str, where: str) -> None:
    if not value:
        raise InputError(f"empty {what}", path, where)
    if len(value.split()) != 1 or value != value.strip():
        raise InputError(f"{what} {value!r} contains whitespace", path, where)


def _pair(piece: str) -> tuple[int, int]:
    start, end = piece.split(" ")
    return int(start), int(end)
