"""Dates: numeric, with month names, weekdays, seasons, holidays and years in context.

Every date gets its ``dateFormat`` in the grammar of
:mod:`~nlpbench.annotators.dateformat`. Numbers are dates only when they can
be (month 1–12, a day that exists in that month, a year from 1800 to 2199)
and are not part of something longer: digits, slashes or hyphens on either
side (phone numbers, identifiers, ratios) rule a match out, and so does a
unit after it (``5/325 mg``, ``1/2 tablet``, ``2069 mg``). Dates without a
year (``3/4``) and bare years need a cue word before them (``on``, ``since``,
``in``). Blood pressures, strengths and pain scores are negatives.
"""

from __future__ import annotations

import re

from nlpbench.annotators.dateformat import literal
from nlpbench.annotators.rules import UNIT, Candidate, following, matches_at_words, preceding

_MONTH = (
    r"(?P<mon>Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)(?:\.(?!\d))?"
)
_WEEKDAY_WORD = (
    r"Mon(?:day)?|Tue(?:s(?:day)?)?|Wed(?:nesday)?|Thu(?:r(?:s(?:day)?)?)?|Fri(?:day)?|Sat(?:urday)?|Sun(?:day)?"
)
_WEEKDAY = rf"(?:(?P<wd>{_WEEKDAY_WORD})\.?,?\s+)?"
_YEAR4 = r"(?:1[89]|2[01])\d\d"
_DAY = r"(?P<day>[0-3]?\d(?:st|nd|rd|th)?)"
_END = r"(?![\w/]|[.-]\d)"
_START = r"(?<![\w/.$#-])"

_MONTH_FIRST = re.compile(
    rf"\b{_WEEKDAY}{_MONTH}(?:\s+|-|\s*/\s*){_DAY}(?:(?:,\s*|\s+|-|/)(?P<year>{_YEAR4})|(?:-|/|,\s*)(?P<year2>'?\d\d))?\b",
    re.IGNORECASE,
)
_DAY_FIRST = re.compile(
    rf"\b{_WEEKDAY}{_DAY}(?:\s+of\s+|\s+|-|/){_MONTH}(?:(?:,\s*|\s+|-|/|\.)(?P<year>{_YEAR4}|'?\d\d))?\b",
    re.IGNORECASE,
)
_MONTH_YEAR = re.compile(rf"\b{_MONTH}(?:\s+of\s+|,?\s+|-|/)(?P<year>{_YEAR4}|'\d\d)\b", re.IGNORECASE)
_MONTH_ALONE = re.compile(rf"\b{_MONTH}(?![\w'])", re.IGNORECASE)
_WEEKDAY_ALONE = re.compile(rf"\b(?P<wd>{_WEEKDAY_WORD})\b(?!')", re.IGNORECASE)
_NUMERIC = re.compile(rf"{_START}(?P<a>\d{{1,2}})(?P<s>[/.-])(?P<b>\d{{1,2}})(?P=s)(?P<year>\d{{4}}|\d\d){_END}")
_ISO = re.compile(rf"{_START}(?P<year>{_YEAR4})(?P<s>[-/.])(?P<m>\d{{1,2}})(?P=s)(?P<d>\d{{1,2}}){_END}")
_MONTH_SLASH_YEAR = re.compile(rf"{_START}(?P<m>\d{{1,2}})[/-](?P<year>{_YEAR4}){_END}")
_MONTH_SLASH_DAY = re.compile(rf"{_START}(?P<m>\d{{1,2}})/(?P<d>\d{{1,2}}){_END}")
_YEAR = re.compile(rf"{_START}(?P<apo>')?(?P<year>{_YEAR4}|(?<=')\d\d)(?![\w/]|[.,-]\d)")
_SEASON = re.compile(
    rf"\b(?P<season>spring|summer|fall|autumn|winter)(?:\s+of\s+|\s+|\s*(?='))(?P<year>{_YEAR4}|'\d\d)\b", re.IGNORECASE
)
_HOLIDAY = re.compile(
    r"\b(?:Christmas(?: Eve| Day)?|Thanksgiving(?: Day)?|Easter(?: Sunday)?|New Year'?s(?: Day| Eve)?|Memorial Day|"
    rf"Labor Day|Independence Day|Veterans'? Day|Halloween|Fourth of July)(?:,?\s+(?P<year>{_YEAR4}))?\b"
)

#: Words right before a date without a year, a bare month or a bare year that make it a date.
_CUE = re.compile(
    r"(?:\b(?:on|since|from|until|till|through|thru|to|by|of|in|during|dated|date|dos|seen|admitted|discharged|"
    r"started|starting|began|beginning|last|next|this|early|late|mid|around|circa|before|after|approximately|"
    r"approx\.?|dx|diagnosed|born|year|until|and|or|between|effective|as of)|[(:])\s*$",
    re.IGNORECASE,
)
_NEGATIVES = (
    # blood pressure 128/76
    re.compile(r"\b(?:BP|B/P|blood pressure)\s*:?\s*(?:of\s+)?\d{2,3}/\d{2,3}", re.IGNORECASE),
    # ratios and doses with a unit: 5/325 mg, 1/2 tablet, 0.5-1 mg
    re.compile(r"(?<![\w/])\d+(?:\.\d+)?(?:[/-]\d+(?:\.\d+)?)+" + UNIT.pattern),
)
_MONTH_WORDS = frozenset(
    [
        "jan",
        "january",
        "feb",
        "february",
        "mar",
        "march",
        "apr",
        "april",
        "may",
        "jun",
        "june",
        "jul",
        "july",
        "aug",
        "august",
        "sep",
        "sept",
        "september",
        "oct",
        "october",
        "nov",
        "november",
        "dec",
        "december",
    ]
)
_WEEKDAY_WORDS = frozenset(
    [
        "mon",
        "monday",
        "tue",
        "tues",
        "tuesday",
        "wed",
        "wednesday",
        "thu",
        "thur",
        "thurs",
        "thursday",
        "fri",
        "friday",
        "sat",
        "saturday",
        "sun",
        "sunday",
    ]
)
_SEASON_WORDS = frozenset({"spring", "summer", "fall", "autumn", "winter"})
_HOLIDAY_WORDS = frozenset({"christmas", "thanksgiving", "easter", "new", "memorial", "labor", "independence",
                            "veterans", "veteran's", "halloween", "fourth"})  # fmt: skip
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_FULL_MONTHS = {
    "january", "february", "march", "april", "may", "june", "july",
    "august", "september", "october", "november", "december",
}  # fmt: skip
_AMBIGUOUS = {"may", "march", "mar", "jan", "jun", "aug", "sat", "sun", "wed"}


def find(text: str) -> list[Candidate]:
    """Date candidates and the negatives that keep numbers in doses, pressures and scores from being dates."""
    found: list[Candidate] = [Candidate(m.start(), m.end(), None, 96) for p in _NEGATIVES for m in p.finditer(text)]
    month_first = matches_at_words(_MONTH_FIRST, text, _MONTH_WORDS | _WEEKDAY_WORDS)
    for matches, confidence in ((month_first, 94), (_DAY_FIRST.finditer(text), 94)):
        for m in matches:
            if _day_ok(m.group("day"), _month_number(m.group("mon"))) and _not_quantity(text, m.end()):
                year = m.groupdict().get("year") or m.groupdict().get("year2")
                if year is None and not _capitalised(m.group("mon")):
                    continue
                found.append(_date(m, text, confidence - (8 if year is None else 0)))
    for m in matches_at_words(_MONTH_YEAR, text, _MONTH_WORDS):
        if _not_quantity(text, m.end()) and (_capitalised(m.group("mon")) or m.group("year")[0] != "'"):
            found.append(_date(m, text, 90))
    found.extend(_months_alone(text))
    found.extend(_weekdays_alone(text))
    found.extend(_numeric(text))
    found.extend(_years(text))
    for m in matches_at_words(_SEASON, text, _SEASON_WORDS):
        found.append(_date(m, text, 88))
    for m in matches_at_words(_HOLIDAY, text, _HOLIDAY_WORDS):
        found.append(_date(m, text, 80))
    return found


def _date(m: re.Match, text: str, confidence: float) -> Candidate:
    return Candidate(m.start(), m.end(), "date", confidence, _format(m))


def _format(m: re.Match) -> str:
    """The dateFormat of a match: its token groups replaced by tokens, the rest literal."""
    groups = [
        (m.start(name), m.end(name), _token(name, value))
        for name, value in m.groupdict().items()
        if value is not None and name in _TOKEN_GROUPS
    ]
    out, position = [], m.start()
    for start, end, token in sorted(groups):
        out.append(literal(m.string[position:start]))
        out.append(token)
        position = end
    out.append(literal(m.string[position : m.end()]))
    return "".join(out)


_TOKEN_GROUPS = {"mon", "day", "year", "year2", "wd"}


def _token(name: str, value: str) -> str:
    if name == "mon":
        return "MMMM" if value.lower() in _FULL_MONTHS else "MMM"
    if name == "wd":
        return "dddd" if value.lower().endswith("day") else "ddd"
    if name in ("year", "year2"):
        digits = value.lstrip("'")
        return ("'" if value.startswith("'") else "") + ("YYYY" if len(digits) == 4 else "YY")
    return "D" * len(value) if value.isdigit() else "Do"


def _month_number(name: str) -> int:
    return [m[:3] for m in ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")].index(
        name[:3].lower()
    ) + 1


def _day_ok(day: str, month: int) -> bool:
    number = int(day.lower().rstrip("stndrh"))
    return 1 <= number <= _MONTH_DAYS[month - 1]


def _capitalised(word: str) -> bool:
    return word[:1].isupper()


def _not_quantity(text: str, end: int) -> bool:
    return not UNIT.match(text, end)


def _cued(text: str, start: int) -> bool:
    return bool(_CUE.search(preceding(text, start, 24)))


def _months_alone(text: str) -> list[Candidate]:
    """A capitalised month name on its own; May, March and abbreviations need a cue before them."""
    found = []
    for m in matches_at_words(_MONTH_ALONE, text, _MONTH_WORDS):
        word = m.group("mon").lower()
        if not _capitalised(m.group("mon")):
            continue
        cued = _cued(text, m.start())
        if word in _FULL_MONTHS and word not in ("may", "march"):
            found.append(_date(m, text, 80 if cued else 72))
        elif cued:
            found.append(_date(m, text, 70))
    return found


def _weekdays_alone(text: str) -> list[Candidate]:
    found = []
    for m in matches_at_words(_WEEKDAY_ALONE, text, _WEEKDAY_WORDS):
        word = m.group("wd")
        full = word.lower().endswith("day")
        if full and (_capitalised(word) or _cued(text, m.start())):
            found.append(_date(m, text, 84))
        elif not full and _capitalised(word) and word.lower() not in _AMBIGUOUS and _cued(text, m.start()):
            found.append(_date(m, text, 66))
    return found


_VERSION = re.compile(r"\b(?:v|version|ver|release)\.?\s*$", re.IGNORECASE)


def _numeric(text: str) -> list[Candidate]:
    found = []
    for m in _NUMERIC.finditer(text):
        if _VERSION.search(preceding(text, m.start(), 12)):
            continue
        a, b, sep = int(m.group("a")), int(m.group("b")), m.group("s")
        month_first = 1 <= a <= 12 and 1 <= b <= _MONTH_DAYS[a - 1]
        day_first = 1 <= b <= 12 and 1 <= a <= _MONTH_DAYS[b - 1]
        if sep == "." and day_first:
            tokens = ("D", "M")
        elif month_first:
            tokens = ("M", "D")
        elif day_first:
            tokens = ("D", "M")
        else:
            continue
        year = m.group("year")
        if len(year) == 4 and not 1800 <= int(year) <= 2199:
            continue
        fmt = tokens[0] * len(m.group("a")) + sep + tokens[1] * len(m.group("b")) + sep + "Y" * len(year)
        found.append(Candidate(m.start(), m.end(), "date", 93 if len(year) == 4 else 86, fmt))
    for m in _ISO.finditer(text):
        month, day = int(m.group("m")), int(m.group("d"))
        if 1 <= month <= 12 and 1 <= day <= _MONTH_DAYS[month - 1]:
            sep = m.group("s")
            fmt = f"YYYY{sep}{'M' * len(m.group('m'))}{sep}{'D' * len(m.group('d'))}"
            found.append(Candidate(m.start(), m.end(), "date", 94, fmt))
    for m in _MONTH_SLASH_YEAR.finditer(text):
        if 1 <= int(m.group("m")) <= 12 and _not_quantity(text, m.end()):
            sep = text[m.end("m")]
            found.append(Candidate(m.start(), m.end(), "date", 84, f"{'M' * len(m.group('m'))}{sep}YYYY"))
    for m in _MONTH_SLASH_DAY.finditer(text):
        month, day = int(m.group("m")), int(m.group("d"))
        valid = 1 <= month <= 12 and 1 <= day <= _MONTH_DAYS[month - 1]
        if valid and _not_quantity(text, m.end()) and _cued(text, m.start()):
            fmt = f"{'M' * len(m.group('m'))}/{'D' * len(m.group('d'))}"
            found.append(Candidate(m.start(), m.end(), "date", 72, fmt))
    return found


def _years(text: str) -> list[Candidate]:
    found = []
    for m in _YEAR.finditer(text):
        year = m.group("year")
        if (len(year) == 4 and not 1900 <= int(year) <= 2099) or not _not_quantity(text, m.end()):
            continue
        before = preceding(text, m.start(), 24)
        after = following(text, m.end(), 2)
        if _cued(text, m.start()):
            confidence = 74
        elif len(year) == 4 and _line_year(before, after):
            confidence = 60  # a year at the end or the start of a line: "Appendectomy 2065", "2065: CABG"
        else:
            continue
        fmt = ("'" if m.group("apo") else "") + ("YYYY" if len(year) == 4 else "YY")
        found.append(Candidate(m.start(), m.end(), "date", confidence, fmt))
    return found


def _line_year(before: str, after: str) -> bool:
    """A year that starts its line before a colon, or ends its line after a word."""
    at_start = before.strip() == "" and after[:1] == ":"
    at_end = bool(re.search(r"[A-Za-z)]\s+$", before)) and after.strip() == ""
    return at_start or at_end
