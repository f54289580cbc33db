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

Files are UTF-8 (a byte-order mark is ignored); lines end in ``\\n``, ``\\r\\n``
or ``\\r``; empty lines are skipped, and a file of none but empty lines has no
records (scoring warns about it). There is no header (a header line would be
read as data, as the official scripts read it) and no quoting: lines are split
on tabs. Every line must have the layout's number of fields, case ids and
codes must be non-empty and free of whitespace, and offsets are integers
(non-negative in gold; see :func:`read_predicted_references` for predictions)
of at most 18 digits in gold and within 64 bits in predictions.
Anything else raises :class:`~nlpbench.errors.InputError` naming the file and
the first bad line.

Reading is one regular-expression pass over the whole file; only a file that
fails it is read again line by line, to name its first bad line. CodiEsp-X
predictions of :data:`SMALL` bytes or more, the large files, are read as
numpy columns instead (:func:`read_predictions`,
:mod:`nlpbench.formats.codiesp_columns`); this module does not load numpy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate, groupby
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from nlpbench import files
from nlpbench.errors import InputError, excerpt
from nlpbench.files import Input, written
from nlpbench.model import CodeReference, RankedCodes

if TYPE_CHECKING:  # numpy is loaded by large prediction files only
    from nlpbench.formats.codiesp_columns import ReferenceColumns

#: CodiEsp-X prediction files of this many bytes or more are read as numpy columns
#: (:mod:`nlpbench.formats.codiesp_columns`), smaller ones one object per line and matched in plain Python
#: (the same report either way). Scoring the first N lines of the benchmark's predictions (54 bytes a line)
#: against the 4,777 lines of the test gold, numpy loaded, CPU: 20 ms plain against 17 ms as columns at 250
#: lines, 35 against 17 ms at 2,000, 58 against 20 ms at 8,000 (about 5 µs a line plain, 0.5 µs as columns);
#: loading numpy costs 60 to 120 ms. Below this (about 2,400 such lines) a file costs a run that has numpy
#: loaded at most about 12 ms; a small run saves loading numpy. Bytes, not lines: counting the line ends of a
#: 13 MB file took 13 ms.
SMALL = 1 << 17

_TOKEN = re.compile(r"\S+")
_GOLD_POSITION = re.compile(r"\d+ \d+(?:;\d+ \d+)*")
_PRED_POSITION = re.compile(r"(-?\d+) (-?\d+)")
_LONG_NUMBER = re.compile(r"\d{19}")


@dataclass(frozen=True)
class Layout:
    """The fields of one kind of CodiEsp line."""

    kind: str  # what a file of such lines is, for error messages
    fields: tuple[str, ...]
    identifiers: tuple[int, ...]  # fields that are case ids or codes
    positions: dict[int, Callable[[str], str | None]]  # field → the problem with its value, or None
    line: re.Pattern[str]  # a whole valid line (or an empty one), one group per value (and per offset)
    code_group: int  # which of those groups is the code

    def problem(self, fields: list[str]) -> str | None:
        """What is wrong with one line's fields, or None."""
        if len(fields) != len(self.fields):
            guess = next((f": is this {other.kind}?" for other in LAYOUTS if len(other.fields) == len(fields)), "")
            expected = f"{len(self.fields)} tab-separated fields ({', '.join(self.fields)})"
            return f"expected {expected}, found {len(fields)}{guess}"
        for index in self.identifiers:
            what = "case id" if index == 0 else "code"
            if not fields[index]:
                return f"empty {what}"
            if not _TOKEN.fullmatch(fields[index]):
                return f"{what} {excerpt(fields[index])} contains whitespace"
        for index, check in self.positions.items():
            problem = check(fields[index])
            if problem:
                return problem
        return None


def _gold_position_problem(position: str) -> str | None:
    if not _GOLD_POSITION.fullmatch(position):
        return f"reference position {excerpt(position)} is not 'start end' or 'start end;start end…'"
    if _LONG_NUMBER.search(position):
        return f"reference position {excerpt(position)} has an offset of more than 18 digits"
    for piece in position.split(";"):
        start, end = map(int, piece.split(" "))
        if end < start:
            return f"reference fragment '{piece}' ends before it starts"
    return None


def _pred_position_problem(position: str) -> str | None:
    if _PRED_POSITION.fullmatch(position):
        return None
    if ";" in position:
        return (
            f"discontinuous predicted span {excerpt(position)}: CodiEsp-X scores one 'start end' span per prediction; "
            "give the first start and the last end"
        )
    return f"predicted span {excerpt(position)} is not two integer offsets 'start end'"


_ID, _ANY = r"(\S+)", r"([^\t\n]*)"
CODES = Layout("a CodiEsp-D/P file", ("case", "code"), (0, 1), {}, re.compile(rf"^(?:{_ID}\t{_ID})?$", re.M), 1)
GOLD_REFERENCES = Layout(
    "a CodiEsp-X gold file",
    ("case", "label", "code", "reference", "'s e[;s e]'"),
    (0, 2),
    {4: _gold_position_problem},
    re.compile(rf"^(?:{_ID}\t{_ANY}\t{_ID}\t{_ANY}\t(\d+ \d+(?:;\d+ \d+)*))?$", re.M),
    2,
)
PREDICTED_REFERENCES = Layout(
    "a CodiEsp-X prediction file",
    ("case", "'s e'", "label", "code"),
    (0, 3),
    {1: _pred_position_problem},
    re.compile(rf"^(?:{_ID}\t(-?\d+) (-?\d+)\t{_ANY}\t{_ID})?$", re.M),
    4,
)
LAYOUTS = (CODES, PREDICTED_REFERENCES, GOLD_REFERENCES)


def read_ranked_codes(path: Input) -> list[RankedCodes]:
    """Each document's codes in file order, documents in order of first appearance."""
    codes: dict[str, list[str]] = {}
    for case, run in groupby(_records(path, CODES), key=itemgetter(0)):  # runs of lines of one document
        codes.setdefault(case, []).extend(map(itemgetter(1), run))
    return [RankedCodes(case, tuple(listed)) for case, listed in codes.items()]


def read_references(path: Input) -> list[CodeReference]:
    """CodiEsp-X gold: one reference per line, fragments in the order the file lists them."""
    return references_of(gold_records(path))


def references_of(gold: GoldRecords) -> list[CodeReference]:
    """The references of :func:`read_references` from gold lines already read."""
    starts, ends, first = gold.starts, gold.ends, gold.first
    return [
        CodeReference(case, code, tuple(zip(starts[a:b], ends[a:b], strict=True)), label, text)
        for (case, label, code, text, _), a, b in zip(gold.records, first[:-1], first[1:], strict=True)
    ]


@dataclass(frozen=True)
class GoldRecords:
    """The fields of each CodiEsp-X gold line (``records``); the ``starts`` and ``ends`` of all their fragments,
    line after line; and where each line's fragments begin among them (``first``, one more entry: where they
    end)."""

    records: list[tuple[str, ...]]
    starts: list[int]
    ends: list[int]
    first: list[int]


def gold_records(path: Input) -> GoldRecords:
    """The lines of a CodiEsp-X gold file, checked: offsets of at most 18 digits, no fragment ending before it
    starts."""
    records = _records(path, GOLD_REFERENCES)
    positions = " ".join(record[4] for record in records)
    if _LONG_NUMBER.search(positions):
        _raise_first_problem(_text(path), path, GOLD_REFERENCES)
    offsets = list(map(int, positions.replace(";", " ").split()))
    starts, ends = offsets[0::2], offsets[1::2]
    if any(map(int.__gt__, starts, ends)):
        _raise_first_problem(_text(path), path, GOLD_REFERENCES)
    first = list(accumulate((record[4].count(";") + 1 for record in records), initial=0))
    return GoldRecords(records, starts, ends, first)


def read_predicted_references(path: Input) -> list[CodeReference]:
    """CodiEsp-X predictions: one ``start end`` span per line.

    A span that ends before it starts or has a negative offset is kept as
    written: the official scorer accepts it and its containment test is
    arithmetic, so such a span can still match (the task warns about them).
    """
    return [
        CodeReference(case, code, ((int(start), int(end)),), label)
        for case, start, end, label, code in _records(path, PREDICTED_REFERENCES)
    ]


def read_predicted_spans(path: Input) -> list[CodeReference]:
    """The predictions of :func:`read_predicted_references`, each offset within 64-bit integers (as the columns
    hold them): a larger one is an :class:`InputError` naming its line."""
    references = read_predicted_references(path)
    number = next((n for n, r in enumerate(references) if not all(-(2**63) <= x < 2**63 for x in r.fragments[0])), None)
    if number is not None:
        line = [n for n, text in enumerate(_text(path).split("\n"), start=1) if text][number]
        raise InputError("predicted span has an offset beyond 64-bit integers", path, f"line {line}")
    return references


def read_predictions(path: Input) -> list[CodeReference] | ReferenceColumns:
    """CodiEsp-X predictions as scoring reads them: a file of fewer than :data:`SMALL` bytes one reference per
    line (:func:`read_predicted_spans`), a larger one as numpy columns of the same lines
    (:func:`~nlpbench.formats.codiesp_columns.predicted_columns`)."""
    data = normalized_bytes(path)
    if len(data) < SMALL:
        return read_predicted_spans(path)
    from nlpbench.formats.codiesp_columns import predicted_columns  # numpy: loaded for large files only

    return predicted_columns(data, path)


def read_valid_codes(path: Input) -> frozenset[str]:
    """The lower-cased codes of the first column of a valid-code list."""
    codes = set()
    for number, line in enumerate(_text(path).split("\n"), start=1):
        if line:
            code = line.split("\t", 1)[0]
            if not _TOKEN.fullmatch(code):
                problem = f"code {excerpt(code)} contains whitespace" if code else "empty code"
                raise InputError(problem, path, f"line {number}")
            codes.add(code.lower())
    if not codes:
        raise InputError("empty file: a valid-code list needs at least one code", path)
    return frozenset(codes)


def read_assigned_codes(path: Input) -> set[str]:
    """The lower-cased codes a CodiEsp file assigns, in any of the three layouts (told by its first line)."""
    first = next((line for line in _text(path).split("\n") if line), "")
    layout = next((layout for layout in LAYOUTS if len(layout.fields) == first.count("\t") + 1), CODES)
    return {values[layout.code_group].lower() for values in _records(path, layout)}


def write_valid_codes(codes: Iterable[str], path: Path | str) -> None:
    """A valid-code list of these codes, one per line, with empty descriptions."""
    _write(path, (f"{code}\t\t\n" for code in codes))


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
    with written(path, newline="") as handle:
        handle.writelines(lines)


def _text(path: Input) -> str:
    """The file as text, a byte-order mark skipped, lines ended by ``\\n``; lines longer than
    :data:`~nlpbench.files.MAX_LINE` and bytes that are not UTF-8 are an :class:`InputError`."""
    text = files.check_lines(files.read_text(path), path)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def normalized_bytes(path: Input) -> bytes:
    """The file's bytes without a byte-order mark, lines ended by ``\\n``; checked as :func:`_text` checks."""
    data = files.check_lines(files.read_bytes(path), path)
    if not data.isascii():
        files.decoded(data, path)  # raises the reader's one-line error
    data = data.removeprefix(b"\xef\xbb\xbf")
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data


def _records(path: Input, layout: Layout) -> list[tuple[str, ...]]:
    """The values of every non-empty line (none for an empty file); the first bad line raises."""
    text = _text(path)
    matches = layout.line.findall(text)
    if len(matches) != text.count("\n") + 1:  # some line is neither valid nor empty
        _raise_first_problem(text, path, layout)
    return [values for values in matches if values[0]]


def _raise_first_problem(text: str, path: Input, layout: Layout) -> NoReturn:
    """Read line by line to name the first bad line and what is wrong with it."""
    for number, line in enumerate(text.split("\n"), start=1):
        problem = line and layout.problem(line.split("\t"))
        if problem:
            raise InputError(problem, path, f"line {number}")
    raise InputError(f"not {layout.kind}", path)
