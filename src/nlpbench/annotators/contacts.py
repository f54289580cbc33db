"""Contacts: phone and fax numbers, e-mail addresses, URLs and IP addresses.

A North American number is ten digits in the usual groupings, with an
optional ``+1``/``1-`` and extension; a seven-digit local number or an
international one counts only after a cue (``tel``, ``phone``, ``pager``,
``fax``). A number is a ``fax`` when a fax cue is the nearest cue before it
on its line. E-mails and URLs stop before trailing punctuation; IPv4
addresses need every octet ≤ 255 and are not version numbers.
"""

from __future__ import annotations

import re

from nlpbench.annotators.rules import Candidate, preceding

_TEN_DIGITS = re.compile(
    r"(?<![\w+/.-])(?:(?:\+?1|001)[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-]?)\d{3}[\s.-]?\d{4}"
    r"(?:\s?(?:x|ext\.?|extension)\s?\d{1,6})?(?![\w/-]|\.\d)",
    re.IGNORECASE,
)
_CUED_NUMBER = re.compile(
    r"(?<![\w+/.-])(?:\+\d{1,3}[\s.-]?)?(?:\(?\d{2,4}\)?[\s.-]?){1,3}\d{3,4}(?:\s?(?:x|ext\.?)\s?\d{1,6})?"
    r"(?![\w/-]|\.\d)",
    re.IGNORECASE,
)
_PHONE_CUE = re.compile(
    r"\b(?:tel|telephone|phone|ph|cell|mobile|home|work|office|pager|beeper|pgr|call|contact|"
    r"reached at|callback|fax|facsimile)\b\.?\s*(?:number|no\.?|#)?\s*(?:is|at)?\s*[:#]?\s*$",
    re.IGNORECASE,
)
_FAX_CUE = re.compile(r"\b(?:fax|facsimile|f)\b\.?\s*(?:number|no\.?|#)?\s*[:#]?\s*$|\bfax\b[^0-9]{0,20}$", re.I)
_OTHER_CUE = re.compile(r"\b(?:tel|telephone|phone|ph|cell|mobile|pager|call)\b[^0-9]{0,20}$", re.IGNORECASE)
_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][\w.+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w@])")
_URL = re.compile(
    r"(?<![\w@.])(?:https?://|ftp://|www\.)[^\s<>\"']+"
    r"|(?<![\w@.-])(?:[a-z0-9-]+\.)+(?:com|org|net|edu|gov|io|us|info|health|example)(?:/[^\s<>\"']*)?(?![\w@])",
    re.IGNORECASE,
)
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d)")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}(?![\w:])", re.IGNORECASE)
_VERSION_CUE = re.compile(r"\b(?:v|version|ver)\.?\s*$", re.IGNORECASE)


def find(text: str) -> list[Candidate]:
    """Phone, fax, e-mail, URL and IP address candidates."""
    found: list[Candidate] = []
    for m in _TEN_DIGITS.finditer(text):
        candidate = _number(text, m.start(), m.end(), 90)
        if not m.group().isdigit() or candidate.confidence > 90:  # ten bare digits: an identifier unless cued
            found.append(candidate)
    for m in _CUED_NUMBER.finditer(text):
        digits = sum(ch.isdigit() for ch in m.group())
        if 7 <= digits <= 15 and _PHONE_CUE.search(preceding(text, m.start(), 30)):
            found.append(_number(text, m.start(), m.end(), 88))
    for m in _EMAIL.finditer(text):
        found.append(Candidate(m.start(), m.end(), "contact", 97, "email"))
    for m in _URL.finditer(text):
        end = m.start() + len(m.group().rstrip(".,;:)!?]"))
        found.append(Candidate(m.start(), end, "contact", 92 if "/" in m.group() or "www" in m.group() else 80, "url"))
    for m in _IPV4.finditer(text):
        octets_ok = all(int(part) <= 255 for part in m.group().split("."))
        if octets_ok and not _VERSION_CUE.search(preceding(text, m.start())):
            found.append(Candidate(m.start(), m.end(), "contact", 93, "ip_address"))
    for m in _IPV6.finditer(text):
        found.append(Candidate(m.start(), m.end(), "contact", 93, "ip_address"))
    return found


def _number(text: str, start: int, end: int, confidence: float) -> Candidate:
    """A phone number, or a fax when the nearest cue before it on its line is a fax cue."""
    before = preceding(text, start, 40)
    fax, other = _FAX_CUE.search(before), _OTHER_CUE.search(before)
    is_fax = fax is not None and (other is None or fax.start() > other.start())
    cued = fax is not None or other is not None
    return Candidate(start, end, "contact", confidence + (7 if cued else 0), "fax" if is_fax else "phone")
