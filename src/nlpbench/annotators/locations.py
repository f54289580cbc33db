"""Locations with their ``locationType``: hospitals, departments, streets, cities, states, ZIP codes, countries, rooms.

- hospitals: capitalised words before a head (``Hospital``, ``Medical
  Center``, ``Clinic``, ``Infirmary`` …), optionally ``of`` more words after;
  specialty words before ``Clinic``/``Unit``/``Department`` make a department,
  and so does ``Department of X``;
- streets: a house number, capitalised words, a USPS street suffix, and an
  apartment or suite; ``P.O. Box``;
- ``City, ST 12345``, ``City, State``, ``ST 12345``: city, state and ZIP;
  cities from the GeoNames list count alone when unambiguous or after
  ``in``/``from``/``to``; states and countries by name, ambiguous ones
  (Georgia, Jordan) only after such a cue;
- rooms and beds: the identifier after ``Room``, ``Rm``, ``Bed``;
- organisations: capitalised words before ``Inc``, ``LLC``, ``Corp`` …, or
  after ``works at``/``employed by``.
"""

from __future__ import annotations

import re
from functools import cache

from nlpbench.annotators.rules import Candidate, alternation, first_words, matches_at_words, preceding, words

STATES = {
    "Alabama": "AL", "Alaska": "AK", "Arizona": "AZ", "Arkansas": "AR", "California": "CA", "Colorado": "CO",
    "Connecticut": "CT", "Delaware": "DE", "District of Columbia": "DC", "Florida": "FL", "Georgia": "GA",
    "Hawaii": "HI", "Idaho": "ID", "Illinois": "IL", "Indiana": "IN", "Iowa": "IA", "Kansas": "KS",
    "Kentucky": "KY", "Louisiana": "LA", "Maine": "ME", "Maryland": "MD", "Massachusetts": "MA", "Michigan": "MI",
    "Minnesota": "MN", "Mississippi": "MS", "Missouri": "MO", "Montana": "MT", "Nebraska": "NE", "Nevada": "NV",
    "New Hampshire": "NH", "New Jersey": "NJ", "New Mexico": "NM", "New York": "NY", "North Carolina": "NC",
    "North Dakota": "ND", "Ohio": "OH", "Oklahoma": "OK", "Oregon": "OR", "Pennsylvania": "PA",
    "Rhode Island": "RI", "South Carolina": "SC", "South Dakota": "SD", "Tennessee": "TN", "Texas": "TX",
    "Utah": "UT", "Vermont": "VT", "Virginia": "VA", "Washington": "WA", "West Virginia": "WV", "Wisconsin": "WI",
    "Wyoming": "WY", "Puerto Rico": "PR", "Guam": "GU", "Virgin Islands": "VI",
}  # fmt: skip
#: State names that are also given names, surnames or words: they need a cue or a city before them.
_AMBIGUOUS_STATES = {"Georgia", "Washington", "Virginia", "Indiana", "Nevada", "Maine", "Montana", "Carolina"}
_AMBIGUOUS_COUNTRIES = {
    "Chad", "Jordan", "Turkey", "Georgia", "Guinea", "Niger", "Jersey", "Jamaica", "China", "Israel", "Cuba",
    "Wales", "Mali", "Oman", "Peru", "Iran", "Iraq", "Togo", "Panama",
}  # fmt: skip

_HOSPITAL_HEADS = (
    "Hospital", "Hospitals", "Medical Center", "Medical Centre", "Med Ctr", "Health Center", "Health Centre",
    "Health System", "Healthcare", "Health Care", "Clinic", "Clinics", "Infirmary", "Hospice", "Nursing Home",
    "Nursing Facility", "Rehabilitation Center", "Rehabilitation Hospital", "Rehab Center", "Cancer Center",
    "Cancer Institute", "Surgery Center", "Surgical Center", "Urgent Care", "Dialysis Center", "Medical Group",
    "Care Center", "Living Center", "Sanatorium", "Health", "Medical Associates", "Family Practice",
)  # fmt: skip
SPECIALTIES = (
    "Cardiology", "Oncology", "Hematology", "Neurology", "Neurosurgery", "Surgery", "Surgical", "Medicine",
    "Internal Medicine", "Family Medicine", "Radiology", "Pathology", "Emergency", "Pediatrics", "Pediatric",
    "Orthopedics", "Orthopaedics", "Orthopedic", "Psychiatry", "Dermatology", "Gastroenterology", "Nephrology",
    "Urology", "Obstetrics", "Gynecology", "Endocrinology", "Rheumatology", "Pulmonary", "Pulmonology",
    "Infectious Disease", "Infectious Diseases", "Intensive Care", "Critical Care", "Cardiac", "Cardiothoracic",
    "Vascular", "Transplant", "Anesthesia", "Anesthesiology", "Physical Therapy", "Rehabilitation", "Geriatrics",
    "Palliative Care", "Ophthalmology", "Otolaryngology", "ENT", "Allergy", "Immunology", "Medical", "Neonatal",
    "Labor and Delivery", "Coronary Care", "Trauma", "Burn", "Sleep", "Wound Care", "Dialysis", "Hepatology",
    "Thoracic", "Plastic Surgery", "Breast", "Spine", "Pain", "Heart", "Stroke", "Memory", "Primary Care",
)  # fmt: skip
_CAP = r"(?:[A-Z][a-z]+(?:['’-][A-Za-z]+)*|[A-Z]{2,}(?:['’-][A-Z]+)*|[A-Z]\.)"
_CONNECT = r"(?:[ \t]+(?:of|and|the|for|&|OF|AND|THE)\b)*\s+"
_HOSPITAL_HEAD = re.compile(rf"\b(?i:{alternation(_HOSPITAL_HEADS).replace(chr(92) + ' ', chr(92) + 's+')})\b")
_HOSPITAL_BODY = re.compile(rf"(?:(?:St\.?|Saint|ST\.?|SAINT)\s+)?(?:{_CAP}(?:'s)?{_CONNECT}){{1,5}}$")
_HOSPITAL_OF = re.compile(rf"[ \t]+(?:of|for|OF|FOR)[ \t]+(?:(?:the|THE)[ \t]+)?{_CAP}(?:{_CONNECT}{_CAP}){{0,3}}")
_DEPARTMENT = re.compile(
    rf"\b(?:Department|Dept\.?|Division|DEPARTMENT|DIVISION)[ \t]+(?:of|OF)[ \t]+(?:(?:the|THE)[ \t]+)?{_CAP}"
    rf"(?:(?:[ \t]+|[ \t]+(?:and|AND)[ \t]+|[ \t]*&[ \t]*){_CAP}){{0,3}}"
    rf"|\b(?=[A-Z])(?i:(?:{alternation(SPECIALTIES)})(?:[ \t]+(?:{alternation(SPECIALTIES)}))?[ \t]+"
    r"(?:Department|Dept\.?|Unit|Service|Clinic|Ward|Floor|Division|Center|Institute))\b",
)
_SUFFIX = alternation(words("street_suffixes"))
_STREET = re.compile(
    rf"(?<![\w#-])\d{{1,6}}[A-Z]?(?:-\d+)?[ \t]+(?:(?:[NSEW]|North|South|East|West|N\.|S\.|E\.|W\.)[ \t]+)?"
    rf"(?:(?:\d+(?:st|nd|rd|th)|{_CAP})[ \t]+){{1,4}}(?i:{_SUFFIX})\b\.?"
    rf"(?:\s+(?:[NSEW]|NE|NW|SE|SW)\b\.?)?"
    r"(?:,?\s+(?i:Apt\.?|Apartment|Suite|Ste\.?|Unit|Fl\.?|Floor|Bldg\.?|Building|#)\s*#?\s*[A-Z0-9-]{1,6}\b)?"
    r"|\b(?i:P\.?\s?O\.?\s+Box|Post Office Box)\s+\d{1,6}\b",
)
_STATE_ABBR = alternation(STATES.values())
_STATE_NAME = alternation(STATES)
_STATE = re.compile(rf"\b(?:{_STATE_NAME}|{_STATE_ABBR})\b")
_CITY_BEFORE = re.compile(rf"(?P<city>{_CAP}(?:[ -]{_CAP}){{0,3}})(?P<comma>,)?[ \t]*\n?[ \t]*$")
_ZIP_AFTER = re.compile(r",?\s+(?P<zip>\d{5}(?:-\d{4})?)(?![\w-])")
_ZIP_CUE = re.compile(
    r"\b(?:zip|zip code|postal code|zipcode)\b[^\n\d]{0,25}?(?P<zip>(?<![\w-])\d{5}(?:-\d{4})?)(?![\w-])", re.I
)
_COUNTY = re.compile(rf"{_CAP}(?: {_CAP})?[ \t]+(?:County|Parish|Borough|COUNTY|PARISH)\b")
_ROOM = re.compile(
    r"\b(?:Room|Rm\.?|Bed|Bay|Cubicle|ROOM|RM\.?|BED|room|rm\.?|bed)\s*(?:#|no\.?|number)?\s*"
    r"(?P<room>[A-Z]?\d{1,4}[A-Za-z]?(?:-[A-Z0-9]{1,4})?)(?![\w-])"
)
_ORGANIZATION_HEAD = re.compile(
    r"\b(?:Inc\.?|LLC|L\.L\.C\.|Corp\.?|Corporation|Company|Co\.|Ltd|Associates|Partners|PLC|LLP|"
    r"Industries|Enterprises|Holdings|Systems|Solutions|Technologies|and Sons)(?![\w])"
)
_ORGANIZATION_BODY = re.compile(rf"(?:{_CAP}(?:,?\s+(?:and|&)\s+|-|,?\s+)){{1,4}}$")
_EMPLOYER = re.compile(
    r"\b(?i:works|worked|working|employed|retired)\b[^.\n]{0,40}?[ \t](?i:at|for|by|from)[ \t]+(?:the[ \t]+)?"
    rf"(?P<org>{_CAP}(?:(?:,? (?:and|AND|&) |, | |-){_CAP}){{0,3}})"
)
_HOSPITAL_STARTS = first_words(_HOSPITAL_HEADS)
_ZIP_STARTS = frozenset({"zip", "zipcode", "postal"})
_ROOM_STARTS = frozenset({"room", "rm", "bed", "bay", "cubicle"})
_STATE_STARTS = first_words(STATES) | frozenset(abbreviation.lower() for abbreviation in STATES.values())
_DEPARTMENT_STARTS = first_words(("department", "dept", "division", *SPECIALTIES))
_EMPLOYER_STARTS = frozenset({"works", "worked", "working", "employed", "retired"})
_PLACE_CUE = re.compile(
    r"\b(?:in|from|to|near|at|of|visiting|visited|outside|around|lives in|resides in|born in|moved to|"
    r"native of|emigrated from|immigrated from|traveled to|travelled to|returned from|trip to|home in)\s+$",
    re.IGNORECASE,
)
_CAP_WORD = r"(?:St\.|[A-Z][a-z]+(?:['-][A-Za-z]+)*|[A-Z]{2,}(?:['-][A-Z]+)*)"
_CAP_RUN = re.compile(rf"\b{_CAP_WORD}(?: {_CAP_WORD})*")


@cache
def places() -> tuple[frozenset[str], frozenset[str]]:
    """(cities, countries), lower-cased."""
    return words("cities_us") | words("cities_world"), words("countries")


@cache
def _ambiguous() -> frozenset[str]:
    """Place names that are also people's names or ordinary words."""
    return words("first_names") | words("ambiguous_names") | words("capitalised_words") | words("last_names")


def find(text: str) -> list[Candidate]:
    """Location candidates, each with its ``locationType``."""
    found: list[Candidate] = []
    for m in matches_at_words(_HOSPITAL_HEAD, text, _HOSPITAL_STARTS):
        found.extend(_hospital(text, m))
    for m in matches_at_words(_DEPARTMENT, text, _DEPARTMENT_STARTS):
        found.append(Candidate(m.start(), m.end(), "location", 88, "department"))
    for m in _STREET.finditer(text):
        found.append(Candidate(m.start(), m.end(), "location", 92, "street"))
    found.extend(_city_state_zip(text))
    for m in matches_at_words(_ZIP_CUE, text, _ZIP_STARTS):
        found.append(Candidate(m.start("zip"), m.end("zip"), "location", 92, "zip"))
    for m in _COUNTY.finditer(text):
        start = _after_last_stop(text, m.start(), m.end())
        if m.end() - start > 7:
            found.append(Candidate(start, m.end(), "location", 85, "other"))
    for m in matches_at_words(_ROOM, text, _ROOM_STARTS):
        found.append(Candidate(m.start("room"), m.end("room"), "location", 86, "room", (m.start(), m.end())))
    for head in _ORGANIZATION_HEAD.finditer(text):
        body = _ORGANIZATION_BODY.search(text, max(0, head.start() - 60), head.start())
        if body is None:
            continue
        start, end = _trimmed(text, body.start(), head.end())
        if end > start:
            found.append(Candidate(start, end, "location", 80, "organization"))
    for m in matches_at_words(_EMPLOYER, text, _EMPLOYER_STARTS):
        found.append(Candidate(m.start("org"), m.end("org"), "location", 70, "organization"))
    found.extend(_lexicon_places(text))
    return found


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """Drop leading words that start sentences and headings (``Transferred``, ``The``)."""
    stop = words("capitalised_words")
    for m in re.finditer(r"\S+\s+", text[start:end]):
        if m.group().strip().strip(".,:").lower() not in stop:
            break
        start += len(m.group())
    return start, end


_BREAKS = frozenset({"at", "from", "to", "in", "on", "with", "by", "near", "into", "for"})


#: Words of hospital names that are ordinary words elsewhere: they do not end the name's beginning.
_HOSPITAL_WORDS = frozenset(
    [
        "general",
        "medical",
        "memorial",
        "community",
        "regional",
        "university",
        "county",
        "children's",
        "state",
        "veterans",
        "affairs",
        "family",
        "cancer",
        "care",
        "health",
        "heart",
        "women's",
        "mercy",
        "saints",
        "saint",
        "st",
    ]
)


def _after_last_stop(text: str, start: int, end: int) -> int:
    """Where the name before a head begins: after the last ordinary word (``SECOND OPINION AT``, ``Transferred``)."""
    stop = words("capitalised_words")
    begin = start
    for m in re.finditer(r"[A-Za-z'’.-]+", text[start:end]):
        word = m.group().lower().strip(".")
        if (word in stop or word in _BREAKS) and word not in _HOSPITAL_WORDS:
            begin = start + m.end()
    while begin < end and text[begin].isspace():
        begin += 1
    return begin


def _hospital(text: str, head: re.Match) -> list[Candidate]:
    """Capitalised words before a hospital head, and ``of …`` after it."""
    window = max(0, head.start() - 80)
    body = _HOSPITAL_BODY.search(text, window, head.start())
    after = _HOSPITAL_OF.match(text, head.end())
    end = after.end() if after else head.end()
    if body is None and after is None:
        return []  # "the Hospital", "Clinic" alone
    start = _after_last_stop(text, body.start(), head.start()) if body else head.start()
    before = re.findall(r"[A-Za-z]+", text[start : head.start()])
    if not before and after is None:
        return []
    specialty = set(SPECIALTIES)
    if before and all(w in specialty or w.title() in specialty or w == "and" for w in before):
        return [Candidate(start, end, "location", 86, "department")]
    return [Candidate(start, end, "location", 90, "hospital")]


def _city_state_zip(text: str) -> list[Candidate]:
    """``City, ST 12345``, ``City, State``, ``City ST 12345`` and ``ST 12345``."""
    found = []
    suffixes = words("street_suffixes")
    for state in matches_at_words(_STATE, text, _STATE_STARTS):
        zip_code = _ZIP_AFTER.match(text, state.end())
        city = _CITY_BEFORE.search(text, max(0, state.start() - 60), state.start())
        if city and not (city.group("comma") or zip_code):
            city = None
        if city is None and zip_code is None:
            continue
        if city is not None:
            start, end = _trimmed(text, city.start("city"), city.end("city"))
            tail = text[start:end].split()
            # "12 Elm St Boston MA": the city starts after the street suffix
            for index, word in enumerate(tail[:-1]):
                if index and word.strip(".,").lower() in suffixes:
                    start = text.index(tail[index + 1], start)
            if end > start:
                found.append(Candidate(start, end, "location", 88, "city"))
        found.append(Candidate(state.start(), state.end(), "location", 92, "state"))
        if zip_code:
            found.append(Candidate(zip_code.start("zip"), zip_code.end("zip"), "location", 95, "zip"))
    return found


def _lexicon_places(text: str) -> list[Candidate]:
    """Cities, states and countries by name, longest first within each run of capitalised words."""
    cities, countries = places()
    ambiguous = _ambiguous()
    states = {name.lower(): name for name in STATES}
    found = []
    for run in _CAP_RUN.finditer(text):
        tokens = list(re.finditer(r"\S+", run.group()))
        i = 0
        while i < len(tokens):
            for j in range(min(len(tokens), i + 3), i, -1):
                start, end = run.start() + tokens[i].start(), run.start() + tokens[j - 1].end()
                name = text[start:end]
                subtype = _place_type(name.lower(), cities, countries, states)
                if subtype is None:
                    continue
                cued = bool(_PLACE_CUE.search(preceding(text, start, 24)))
                unsure = (
                    name in _AMBIGUOUS_STATES
                    or name in _AMBIGUOUS_COUNTRIES
                    or (j - i == 1 and name.lower() in ambiguous)
                )
                if not unsure or cued:
                    base = {"state": 72, "country": 72, "city": 64}[subtype]
                    found.append(Candidate(start, end, "location", base + (12 if cued else 0), subtype))
                i = j - 1
                break
            i += 1
    return found


def _place_type(name: str, cities, countries, states) -> str | None:
    if name in states:
        return "state"
    if name in countries:
        return "country"
    if name in cities:
        return "city"
    return None
