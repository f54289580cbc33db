"""The ``dateFormat`` grammar of nlpbench's date annotations, and a renderer for it.

A format spells the annotated text with tokens in place of the date's parts;
everything else is literal, letters in square brackets::

    YYYY  2069      YY  69        (an apostrophe before YY is literal: 'YY)
    MMMM  March     MMM  Mar      MM  03     M  3
    DD    03        D    3        Do  3rd
    dddd  Monday    ddd  Mon

So ``March 3rd, 2069`` is ``MMMM Do, YYYY``, ``3 Mar 69`` is ``D MMM YY``,
``spring of 2069`` is ``[spring of] YYYY`` and ``12/5/2069`` is
``MM/D/YYYY``: a number of two digits always takes the two-letter token,
because the text cannot tell whether it was padded. Case is not part of the
format (``MARCH`` is ``MMMM``).
"""

from __future__ import annotations

import re
from datetime import date

MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

_TOKEN = re.compile(r"\[[^\]]*\]|YYYY|YY|MMMM|MMM|MM|M|Do|DD|D|dddd|ddd")


def ordinal(day: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` … ``11th`` … ``21st``."""
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def render(value: date, fmt: str) -> tuple[str, str]:
    """The text of ``value`` written in ``fmt``, and the format as the text shows it.

    A one-letter number token (``M``, ``D``) that renders two digits comes back
    as its two-letter form, and ``MMM`` of May as ``MMMM``, so that the
    returned format is the one an annotator reading the text would give.
    """
    pieces: list[str] = []
    shown: list[str] = []
    position = 0
    for match in _TOKEN.finditer(fmt):
        pieces.append(fmt[position : match.start()])
        shown.append(fmt[position : match.start()])
        token = match.group()
        text = _token_text(value, token)
        pieces.append(text)
        if token in ("M", "D") and len(text) == 2:
            token *= 2
        elif token == "MMM" and text == MONTHS[value.month - 1]:
            token = "MMMM"  # May
        shown.append(token)
        position = match.end()
    pieces.append(fmt[position:])
    shown.append(fmt[position:])
    return "".join(pieces), "".join(shown)


def _token_text(value: date, token: str) -> str:
    if token.startswith("["):
        return token[1:-1]
    return {
        "YYYY": f"{value.year:04d}",
        "YY": f"{value.year % 100:02d}",
        "MMMM": MONTHS[value.month - 1],
        "MMM": MONTHS[value.month - 1][:3],
        "MM": f"{value.month:02d}",
        "M": str(value.month),
        "Do": ordinal(value.day),
        "DD": f"{value.day:02d}",
        "D": str(value.day),
        "dddd": WEEKDAYS[value.weekday()],
        "ddd": WEEKDAYS[value.weekday()][:3],
    }[token]


def literal(text: str) -> str:
    """Literal text in a format: each run of letters in square brackets."""
    return re.sub(r"[A-Za-z]+(?:\s+[A-Za-z]+)*", lambda m: f"[{m.group()}]", text)
