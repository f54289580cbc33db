"""Shift a date written in a note by a number of days and write it back the way it was written.

A date span is split into numbers (``03``, ``3rd``), words (month and weekday
names, ``of``, ``the``) and separators. Numbers and words get a role — year,
month, day, weekday — from the month word when there is one, else from their
width and order: ``YYYY-MM-DD`` when the first number has four digits, else
``DD.MM.YYYY`` when the annotation's ``dateFormat`` puts ``D`` before ``M`` or
the first number cannot be a month, else the American ``MM/DD/YYYY``. The
shifted date is rendered token by token in the original style: separators,
zero padding, two- or four-digit years, month names full or abbreviated, upper,
lower or title case, ordinal suffixes, weekdays recomputed.

Partial dates shift a reference day and keep their precision: month and day
(no year) shift within the leap year 2000; month and year shift the 15th;
a year alone shifts 1 July; a month name alone shifts the 15th; a weekday
alone moves ``offset mod 7`` days. Two-digit years are read as 20YY (only the
last two digits are written back, so the century matters only for 29 February).
A span with any other word (``yesterday``, ``Christmas``, ``spring``) is not a
date this module can shift: :func:`shift_date` returns ``None``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from nlpbench.errors import Kind, NlpbenchError

MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH_WORDS = {name: i + 1 for i, name in enumerate(MONTHS)} | {name[:3]: i + 1 for i, name in enumerate(MONTHS)}
_MONTH_WORDS["sept"] = 9
_WEEKDAY_WORDS = {name: i for i, name in enumerate(WEEKDAYS)} | {name[:3]: i for i, name in enumerate(WEEKDAYS)}
_WEEKDAY_WORDS |= {"tues": 1, "weds": 2, "thur": 3, "thurs": 3}
_FILLERS = {"of", "the", "on"}
_TOKEN = re.compile(r"(?P<num>\d+)(?P<ord>st|nd|rd|th)?(?![A-Za-z])|(?P<word>[A-Za-z]+)|(?P<sep>[^\dA-Za-z]+)", re.I)
REFERENCE_LEAP_YEAR = 2000


class DateOutOfRange(NlpbenchError, ValueError):
    """The shifted date falls outside the years 1 to 9999."""

    kind = Kind.input


@dataclass
class _Token:
    text: str
    kind: str  # num, word, sep
    suffix: str = ""  # ordinal suffix of a number
    role: str = ""  # year, month, day, weekday, or "" for text kept as it is
    padded: bool = False  # a day or month number written with two digits

    @property
    def value(self) -> int:
        return int(self.text)


def shift_date(text: str, offset_days: int, date_format: str | None = None) -> str | None:
    """``text`` moved by ``offset_days`` in its own format; ``None`` when it is not a date read here.

    Raises :class:`DateOutOfRange` when the result is outside the years 1–9999; its
    message does not quote ``text`` (a date of a note is PHI).
    """
    read = _read(text, date_format)
    if read is None:
        return None
    tokens, parts, year, month, day = read
    _set_padding(tokens, date_format)
    if month is None and (day is not None or (year is None and "weekday" not in parts)):
        return None
    try:
        if month is None:
            reference = dt.date(year, 7, 1) if year is not None else None
        else:
            reference = dt.date(REFERENCE_LEAP_YEAR if year is None else year, month, 15 if day is None else day)
    except ValueError:
        return None  # 31 April, 29 February of a common year: not a date
    if reference is None:  # a weekday alone
        weekday = _WEEKDAY_WORDS[parts["weekday"].text.lower()]
        return _render(tokens, None, (weekday + offset_days) % 7)
    try:
        shifted = reference + dt.timedelta(days=offset_days)
    except OverflowError:
        raise DateOutOfRange(f"shifted by {offset_days} days, the date is outside the years 1–9999") from None
    weekday = shifted.weekday()
    if "weekday" in parts and (year is None or day is None):
        weekday = (_WEEKDAY_WORDS[parts["weekday"].text.lower()] + offset_days) % 7
    return _render(tokens, shifted, weekday)


def date_of(text: str, date_format: str | None = None) -> dt.date | None:
    """The calendar day ``text`` writes when it gives a year, a month and a day (read as :func:`shift_date`
    reads them: ``dateFormat`` decides day-first numbers); ``None`` for a partial date or text that is no date.
    A two-digit year is 20YY, as :func:`shift_date` reads it."""
    read = _read(text, date_format)
    if read is None:
        return None
    _, _, year, month, day = read
    if year is None or month is None or day is None:
        return None
    try:
        return dt.date(year, month, day)
    except ValueError:  # no such day (30 February): not a date
        return None


_Read = tuple[list[_Token], dict[str, _Token], int | None, int | None, int | None]


def _read(text: str, date_format: str | None) -> _Read | None:
    """``text``'s tokens with their roles, the tokens by role, and its year, month and day (each None when
    it does not give it); None when it is not a date read here."""
    tokens = _tokenize(text)
    if tokens is None or not _assign_roles(tokens, _day_first(date_format)):
        return None
    parts = {t.role: t for t in tokens if t.role}
    day = parts["day"].value if "day" in parts else None
    return tokens, parts, _year(parts.get("year")), _month(parts.get("month")), day


def _set_padding(tokens: list[_Token], date_format: str | None) -> None:
    """Whether each numeric day and month is written with two digits.

    ``DD``/``MM`` in ``dateFormat`` pad and ``D``/``M`` do not. Without them a
    number beside a month name is padded when it starts with 0 (``Aug 09``),
    and a number in an all-numeric date when it was written with two digits.
    """
    runs = {match[0][0]: len(match[0]) for match in re.finditer(r"D+|M+", (date_format or "").upper())}
    month_named = any(t.role == "month" and t.kind == "word" for t in tokens)
    for token in tokens:
        if token.kind == "num" and token.role in ("day", "month"):
            width = runs.get(token.role[0].upper())
            if width in (1, 2):
                token.padded = width == 2
            else:
                token.padded = token.text.startswith("0") if month_named else len(token.text) == 2


def _day_first(date_format: str | None) -> bool:
    upper = (date_format or "").upper()
    return "D" in upper and "M" in upper and upper.index("D") < upper.index("M")


def _tokenize(text: str) -> list[_Token] | None:
    tokens = []
    for match in _TOKEN.finditer(text):
        if match["num"] is not None:
            tokens.append(_Token(match["num"], "num", match["ord"] or ""))
        elif match["word"] is not None:
            word = match["word"].lower()
            if word not in _MONTH_WORDS and word not in _WEEKDAY_WORDS and word not in _FILLERS:
                return None
            tokens.append(_Token(match["word"], "word"))
        else:
            tokens.append(_Token(match["sep"], "sep"))
    return tokens


def _assign_roles(tokens: list[_Token], day_first: bool) -> bool:
    """Give each number and name a role; False when the tokens do not make one date."""
    for token in tokens:
        if token.kind == "word" and token.text.lower() not in _FILLERS:
            role = "month" if token.text.lower() in _MONTH_WORDS else "weekday"
            if any(t.role == role for t in tokens):
                return False
            token.role = role
    numbers = [t for t in tokens if t.kind == "num"]
    if any(t.role == "month" for t in tokens):
        return _roles_beside_month_name(tokens, numbers)
    return _numeric_roles(tokens, numbers, day_first)


def _roles_beside_month_name(tokens: list[_Token], numbers: list[_Token]) -> bool:
    for token in numbers:
        if len(token.text) == 4 and not token.suffix:
            token.role = "year"
        elif token.suffix:
            token.role = "day"
    for index, token in enumerate(tokens):
        if token.kind != "num" or token.role:
            continue
        after_apostrophe = index > 0 and tokens[index - 1].text.endswith(("'", "’"))
        if not after_apostrophe and _free(tokens, "day") and 1 <= token.value <= 31 and len(token.text) <= 2:
            token.role = "day"
        elif _free(tokens, "year") and len(token.text) == 2:
            token.role = "year"
        else:
            return False
    return True


def _numeric_roles(tokens: list[_Token], numbers: list[_Token], day_first: bool) -> bool:
    if any(t.suffix for t in numbers):
        return False
    widths = [len(t.text) for t in numbers]
    roles: tuple[str, ...]
    if len(numbers) == 3:
        if widths[0] == 4:
            roles = ("year", "month", "day")
        elif day_first or (numbers[0].value > 12 >= numbers[1].value):
            roles = ("day", "month", "year")
        else:
            roles = ("month", "day", "year")
    elif len(numbers) == 2:
        if widths[1] == 4:
            roles = ("month", "year")
        elif widths[0] == 4:
            roles = ("year", "month")
        elif day_first or numbers[0].value > 12:
            roles = ("day", "month")
        else:
            roles = ("month", "day")
    elif len(numbers) == 1 and widths[0] == 4:
        roles = ("year",)
    else:  # no number: a weekday alone is a date
        return not numbers and any(t.role == "weekday" for t in tokens)
    for token, role in zip(numbers, roles, strict=True):
        if role == "year" and len(token.text) not in (2, 4):
            return False
        if role != "year" and (len(token.text) > 2 or not 1 <= token.value <= (12 if role == "month" else 31)):
            return False
        token.role = role
    return True


def _free(tokens: list[_Token], role: str) -> bool:
    return all(t.role != role for t in tokens)


def _year(token: _Token | None) -> int | None:
    if token is None:
        return None
    return 2000 + token.value if len(token.text) == 2 else token.value


def _month(token: _Token | None) -> int | None:
    if token is None:
        return None
    return _MONTH_WORDS[token.text.lower()] if token.kind == "word" else token.value


def _render(tokens: list[_Token], date: dt.date | None, weekday: int) -> str:
    out = []
    for token in tokens:
        if token.role == "year":
            assert date is not None  # only a weekday alone renders without a date
            out.append(f"{date.year % 100:02d}" if len(token.text) == 2 else f"{date.year:04d}")
        elif token.role in ("month", "day") and token.kind == "num":
            assert date is not None
            value = date.month if token.role == "month" else date.day
            out.append(f"{value:02d}" if token.padded else str(value))
            if token.suffix:
                out.append(_same_case(_ordinal(value), token.suffix))
        elif token.role == "month":
            assert date is not None
            out.append(_name_like(token.text, MONTHS[date.month - 1]))
        elif token.role == "weekday":
            out.append(_name_like(token.text, WEEKDAYS[weekday]))
        else:
            out.append(token.text)
    return "".join(out)


def _ordinal(value: int) -> str:
    if 10 <= value % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(value % 10, "th")


def _name_like(original: str, name: str) -> str:
    """``name`` (a full month or weekday name) abbreviated and cased as ``original`` is."""
    lower = original.lower()
    if lower not in MONTHS and lower not in WEEKDAYS:
        name = "sept" if name == "september" and lower == "sept" else name[:3]
    return _same_case(name, original)


def _same_case(word: str, model: str) -> str:
    if model.isupper() and len(model) > 1:
        return word.upper()
    if model[:1].isupper():
        return word.capitalize()
    return word.lower()
