"""Person names: titles, credentials, role cues, "Last, First", lexicon pairs, and repeats.

Evidence, strongest first:

1. a title before capitalised words (``Dr.``, ``Mrs.``, ``Nurse``) — 95;
2. a credential after them (``, MD``, ``RN``, ``PA-C``) — 93;
3. a role or relation cue before them (``seen by``, ``Attending:``,
   ``PCP``, ``daughter``, ``Patient:``) — 88;
4. ``Last, First`` with both parts in the Census name lists — 80;
5. a first name from the lists followed by a surname from the lists
   (``John A. Smith``) — 76, or by an unknown capitalised word — 64;
6. a word of a name found by 1–5 seen again elsewhere in the note — 78.

Titles (``Dr.``) and credentials (``MD``) are outside the span; a
possessive ``'s`` is too. Names that are also ordinary words (Will, Hope,
Brown), drug names and eponyms need 1–3. Negatives: an eponym before a
clinical head noun (``Parkinson's disease``, ``Foley catheter``) and a drug
name (``Allegra 180 mg``).
"""

from __future__ import annotations

import re
from functools import cache

from nlpbench.annotators.locations import SPECIALTIES, places
from nlpbench.annotators.rules import (
    Candidate,
    alternation,
    first_words,
    matches_at_words,
    preceding,
    without_possessive,
    word_tokens,
    words,
)

_NAME = r"(?:(?:Mc|Mac|O'|O’|D'|D’)?[A-Z][a-z]+(?:[-'’][A-Z]?[a-z]+)*|[A-Z]{2,}(?:[-'’][A-Z]{2,})*)"
_PART = rf"(?:{_NAME}|[A-Z]\.)"
_PARTICLE = r"(?:van|von|de|del|della|da|di|du|le|la|bin|ibn|al)"
#: A name after a cue: "Last, First M." or up to four parts joined by single spaces (more is a column gap).
_SEQ = rf"(?:{_NAME}, ?{_NAME}(?: {_PART})?(?![\w-])|{_PART}(?: (?:{_PARTICLE} )?{_PART}){{0,3}})"
_TOKEN = re.compile(rf"{_NAME}|[A-Z]\.|{_PARTICLE}\b")
_TITLE = re.compile(
    r"\b(?P<title>Dr|Drs|DR|Mr|MR|Mrs|MRS|Ms|MS|Miss|MISS|Mx|Prof|PROF|Professor|Doctor|Nurse|Sister|Rev|Fr)"
    rf"(?:\.[ \t]*|[ \t]+)(?P<seq>{_SEQ})"
)
_CREDENTIAL = re.compile(
    r",?[ \t]+(?P<cred>M\.D\.|MD|D\.O\.|DO|R\.N\.|RN|NP|PA-C|PA|Ph\.D\.|PhD|MBBS|FACS|FACP|DNP|CNM|CRNA|LPN|"
    r"PharmD|MSW|LCSW|LICSW|DDS|DMD|APRN|FNP|FNP-BC|ANP|MPH|RPh|CNS|PsyD|PT|DPT|OTR|RD|CCC-SLP)(?![\w-])"
)
_ROLE_CUES = [
    "seen by",
    "seen with",
    "evaluated by",
    "examined by",
    "discussed with",
    "spoke with",
    "spoke to",
    "d/w",
    "referred by",
    "referring physician",
    "referring provider",
    "attending physician",
    "attending",
    "resident",
    "intern",
    "fellow",
    "pcp",
    "primary care physician",
    "primary care provider",
    "primary care",
    "surgeon",
    "dictated by",
    "signed by",
    "electronically signed by",
    "cosigned by",
    "co-signed by",
    "reviewed by",
    "transcribed by",
    "cc",
    "c.c.",
    "provider",
    "physician",
    "nurse",
    "patient name",
    "patient",
    "pt name",
    "pt",
    "name",
    "emergency contact",
    "contact",
    "nok",
    "next of kin",
    "daughter",
    "son",
    "wife",
    "husband",
    "niece",
    "nephew",
    "grandson",
    "granddaughter",
    "aunt",
    "uncle",
    "cousin",
    "re",
    "mother",
    "father",
    "sister",
    "brother",
    "friend",
    "partner",
    "spouse",
    "caregiver",
    "guardian",
    "accompanied by",
    "consultant",
    "consulting physician",
    "oncologist",
    "cardiologist",
    "radiologist",
    "pathologist",
    "therapist",
    "interpreted by",
    "read by",
    "performed by",
    "ordered by",
    "requested by",
    "dear",
    "to",
    "from",
    "by",
    "with",
]
_ROLE = re.compile(
    rf"\b(?P<cue>(?i:{alternation(_ROLE_CUES)}))"
    rf"\b[ \t]*[:\-]?[ \t]*(?P<seq>{_SEQ})"
)
#: Cues after which the first word must be a listed name (``by Tuesday``, ``Patient Active Problem List``).
_ROLE_STARTS = first_words(_ROLE_CUES)
_WEAK_CUES = {
    "by", "with", "to", "from", "dear", "pt", "pt name", "name", "patient", "patient name", "contact", "cc",
    "provider", "physician", "nurse", "resident", "fellow", "intern", "c.c.", "re",
}  # fmt: skip
_LAST_FIRST = re.compile(rf"\b(?P<last>{_NAME}), ?(?P<first>{_NAME})(?: (?P<middle>[A-Z]\.?|{_NAME}))?\b(?! and\b| &)")
_CAP_RUN = re.compile(rf"{_PART}(?:[ \t]+{_PART})+")
_EPONYM_HEADS = (
    "disease", "syndrome", "sign", "signs", "test", "maneuver", "manoeuvre", "reflex", "phenomenon", "palsy",
    "lymphoma", "sarcoma", "tumor", "tumour", "score", "scale", "criteria", "classification", "procedure",
    "operation", "fracture", "ulcer", "esophagus", "node", "nodes", "catheter", "tube", "monitor", "position",
    "triad", "law", "cyst", "disorder", "anomaly", "ratio", "stain", "repair", "fundoplication", "pouch",
    "diverticulum", "ring", "solution", "exam", "examination", "grade", "stage", "angle", "approach", "incision",
    "point", "line", "body", "bodies", "cell", "cells", "space", "duct", "gland", "bag", "drain", "forceps",
    "clamp", "retractor", "dementia", "thyroiditis", "ileitis", "encephalopathy", "aneurysm", "block",
    "ultrasound", "study", "studies", "coma", "chorea", "deformity", "contracture", "neuroma", "tear", "lesion",
    "malformation", "type", "tremor", "type",
)  # fmt: skip
_HEADS = frozenset(_EPONYM_HEADS)
_DOSE_AFTER = re.compile(
    r"\s*(?:\d|(?:XR|XL|ER|SR|CR|HCT|ODT)\b|\(|(?:tablet|tab|capsule|cap|po|iv|im|sq|sc|daily|bid|tid|qid|prn|qhs)\b)",
    re.IGNORECASE,
)
_STREET_BEFORE = re.compile(r"\d+\s+(?:[A-Z][a-z]+\.?\s+){1,3}$")


#: Words that begin place names far more often than people's names ("North James", "Lake Jessica").
_PLACE_PREFIXES = frozenset({"north", "south", "east", "west", "lake", "port", "new", "fort", "mount", "saint"})


@cache
def _lexicons() -> dict[str, frozenset[str]]:
    place_words = frozenset(w.lower() for s in SPECIALTIES for w in s.split())
    return {
        "first": words("first_names"),
        "last": words("last_names"),
        "ambiguous": words("ambiguous_names"),
        "stop": words("capitalised_words") | place_words | _PLACE_PREFIXES,
        "drugs": words("drugs"),
        "eponyms": words("eponyms"),
    }


def find(text: str) -> list[Candidate]:
    """Person-name candidates and the eponym and drug negatives."""
    found = _negatives(text)
    strong: list[Candidate] = []
    for m in _TITLE.finditer(text):
        if m.group("title") in ("Dr", "DR") and _STREET_BEFORE.search(preceding(text, m.start(), 40)):
            continue  # "12 Elm Dr. Boston": a street, not a doctor
        span = _accept(text, m.start("seq"), m.group("seq"), first_strict=False)
        if span:
            strong.append(Candidate(*span, "person_name", 95, claim=(m.start(), span[1])))
    for m in _CREDENTIAL.finditer(text):
        if re.match(r"\s+\d{5}", text[m.end() :]):
            continue  # "Baltimore, MD 21201"
        span = _before(text, m.start())
        if span:
            strong.append(Candidate(*span, "person_name", 93, claim=(span[0], m.end())))
    for m in matches_at_words(_ROLE, text, _ROLE_STARTS):
        weak = m.group("cue").lower() in _WEAK_CUES
        span = _accept(text, m.start("seq"), m.group("seq"), first_strict=weak)
        if span:
            strong.append(Candidate(*span, "person_name", 80 if weak else 88))
    for m in _LAST_FIRST.finditer(text):
        if _is_last(m.group("last")) and _is_first(m.group("first")):
            end = m.end("middle") if m.group("middle") and _namelike(m.group("middle")) else m.end("first")
            strong.append(Candidate(m.start(), end, "person_name", 80))
    strong.extend(_pairs(text))
    found.extend(strong)
    found.extend(_repeats(text, strong))
    return found


def _negatives(text: str) -> list[Candidate]:
    lex = _lexicons()
    heads = _HEADS
    found = []
    tokens = word_tokens(text)
    for index, (start, end, word) in enumerate(tokens):
        lower = word.lower()
        if lower in lex["drugs"]:
            dosed = bool(_DOSE_AFTER.match(text, end))
            found.append(Candidate(start, end, None, 97 if dosed else 85))
        stem = without_possessive(lower).rstrip("'’")
        if stem in lex["eponyms"]:
            # "Parkinson's disease", "Guillain-Barre syndrome", "Foley catheter": up to two more words to a head
            for ahead in tokens[index + 1 : index + 3]:
                if ahead[2].lower() in heads:
                    found.append(Candidate(start, ahead[1], None, 97))
                    break
    return found


def _clean(token: str) -> str:
    return re.sub(r"['’]s$", "", token).lower()


def _is_first(token: str) -> bool:
    lex = _lexicons()
    word = _clean(token)
    return word in lex["first"] and word not in lex["ambiguous"] and word not in lex["stop"]


def _is_last(token: str) -> bool:
    """A listed surname that is not also a word; each part of a double-barrelled name counts."""
    lex = _lexicons()
    parts = _clean(token).split("-")
    return all(p in lex["last"] and p not in lex["ambiguous"] and p not in lex["stop"] for p in parts)


def _known(token: str) -> bool:
    lex = _lexicons()
    word = _clean(token)
    return word in lex["first"] or word in lex["last"]


def _namelike(token: str) -> bool:
    """Could be part of a name next to stronger evidence: an initial, a listed name, or an unknown capitalised word."""
    if re.fullmatch(r"[A-Z]\.?", token):
        return True
    lex = _lexicons()
    word = _clean(token)
    if token.isupper() and len(token) <= 4 and not _known(token):
        return False  # an abbreviation: MRN, DOB, ICU
    return word not in lex["stop"] and word not in lex["drugs"] and (_known(token) or word not in lex["ambiguous"])


def _accept(text: str, start: int, seq: str, *, first_strict: bool) -> tuple[int, int] | None:
    """The name at the front of ``seq`` (found at ``start``): name-like tokens until the first that is not.

    With ``first_strict`` the first word must be a listed first name, or a listed surname that is not a place.
    """
    end = None
    tokens = list(_TOKEN.finditer(seq))
    for index, token in enumerate(tokens):
        word = token.group()
        if re.fullmatch(_PARTICLE, word):
            continue
        comma_form = "," in seq
        if (
            index == 0
            and first_strict
            and not comma_form
            and not (_is_first(word) or (_is_last(word) and not _is_place(word)))
        ):
            return None
        if not _namelike(word) or (index == 0 and len(tokens) == 1 and word.endswith(".")):
            break
        given_before = all(_is_first(t.group()) for t in tokens[:index])
        ordinary = _clean(word) in _lexicons()["ambiguous"]
        unknown = not _known(word) and not (given_before and index == 1)
        if index > 0 and word.isupper() and len(word) > 1 and (ordinary or unknown):
            break  # capitals going on past a name: "DR. PORTER FOUND", "MRS. PATRICIA KOWALSKI ARRIVED"
        end = start + token.end() - (2 if re.search(r"['’]s$", word) else 0)
    if end is None or (first_strict and _is_place(text[start:end])):
        return None  # "closer to Ann Arbor"
    return start, end


_TAIL = re.compile(rf"(?:{_PART} ){{0,3}}{_PART}$|{_NAME}, ?{_NAME}(?: [A-Z]\.?)?$")


def _before(text: str, end: int) -> tuple[int, int] | None:
    """The name that ends at ``end`` (a credential follows): name-like tokens going left, on the same line."""
    line = preceding(text, end, 60)
    m = _TAIL.search(line)
    if m is None:
        return None
    start = None
    for token in reversed(list(re.finditer(_PART, m.group()))):
        if not _namelike(token.group()):
            break
        start = end - len(line) + m.start() + token.start()
    return None if start is None else (start, end)


def _is_place(token: str) -> bool:
    return _clean(token) in places()[0]


def _pairs(text: str) -> list[Candidate]:
    """First name + (initial) + surname from the lists, or first name + an unknown capitalised word."""
    found = []
    lex = _lexicons()
    for run in _CAP_RUN.finditer(text):
        tokens = list(re.finditer(_PART, run.group()))
        i = 0
        while i < len(tokens) - 1:
            first = tokens[i].group()
            if not _is_first(first):
                i += 1
                continue
            j = i + 1
            while j < len(tokens) - 1 and _middle(tokens[j].group()):
                j += 1
            last = tokens[j].group()
            confidence = None
            if _is_last(last):
                confidence = 76
            elif _known(last) and _clean(last) in lex["last"] and _clean(last) not in lex["stop"] and last[0].isupper():
                confidence = 70  # a surname that is also a word: "Sarah Brown", "Wendy W. Brown"
            elif not _known(last) and _clean(last) not in lex["stop"] and _clean(last) not in lex["drugs"]:
                confidence = 64 if _clean(last) not in lex["ambiguous"] else None
            if confidence is not None and last.isupper() == first.isupper():
                end = run.start() + tokens[j].end() - (2 if re.search(r"['’]s$", last) else 0)
                found.append(Candidate(run.start() + tokens[i].start(), end, "person_name", confidence))
                i = j + 1
            else:
                i += 1
    return found


def _middle(token: str) -> bool:
    return bool(re.fullmatch(r"[A-Z]\.?", token)) or _is_first(token)


def _repeats(text: str, strong: list[Candidate]) -> list[Candidate]:
    """Other occurrences of the words of names found with good evidence (not before an eponym's head noun)."""
    lex = _lexicons()
    seen = set()
    for candidate in strong:
        if candidate.confidence >= 76:
            for token in _TOKEN.finditer(text, candidate.start, candidate.end):
                word = re.sub(r"['’]s$", "", token.group())
                if len(word) > 2 and word.lower() not in lex["stop"] and not word.endswith("."):
                    seen.add(word.lower())
    found: list[Candidate] = []
    covered = bytearray(len(text) + 1)
    for candidate in strong:
        covered[candidate.start : candidate.end] = b"\x01" * (candidate.end - candidate.start)
    tokens = word_tokens(text)
    for index, (start, _, word) in enumerate(tokens):
        if covered[start]:
            continue
        plain = without_possessive(word)
        if plain.lower() in seen and word[0].isupper() and (plain.istitle() or plain.isupper() or "-" in plain):
            after = tokens[index + 1][2].lower() if index + 1 < len(tokens) else ""
            if not (plain != word and after in _HEADS):
                if found and text[found[-1].end : start] == " ":  # "Ulrich Kraushaar" seen again: one name
                    start = found.pop().start
                found.append(Candidate(start, start + len(plain), "person_name", 78))
    return found
