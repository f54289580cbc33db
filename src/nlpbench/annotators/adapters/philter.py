"""philter-lite (BSD-3-Clause, UCSF's Philter) as an NLP Sandbox PHI annotator.

philter-lite runs its ``philter_delta.toml`` pipeline: "safe" patterns that
protect text and PHI patterns (regular expressions, name sets, context rules)
whose hits become PHI. Two things are changed so that it runs offline and its
output is typed:

- **Part-of-speech tags without NLTK data.** philter calls ``nltk.pos_tag``,
  whose tagger model is downloaded from the internet and is on no package
  registry. Its tags are used only to send ``NNP`` tokens through the first
  and last name sets and to keep ``CD`` numbers, so :func:`pos_tags` tags a
  token ``CD`` when it is all digits, ``NNP`` when it starts with a capital and
  ``NN`` otherwise (lower-case names such as ``holmes`` in a signature are then
  missed). It replaces ``philter_lite.philter._get_pos`` for the whole process,
  always, so that results never depend on whether NLTK data happen to exist.
- **Types.** In ``philter_delta.toml`` only date filters carry a PHI type; each
  PHI filter gets one from its keyword, by :data:`KEYWORD_TYPES`:

  ============================================  ======================  ==========
  philter keyword                               NLP Sandbox             confidence
  ============================================  ======================  ==========
  ``dates.*``                                   date                    90
  ``contact.email``, ``contact.url``            contact email, url      95
  other ``contact.*`` (phone, pager, call #)    contact phone           90
  ``mrn_id.account_#``                          id account              80
  ``mrn_id.model_*``, ``mrn_id.lot_#``          id device               80
  other ``mrn_id.*``                            id id_number            75
  ``addresses.hospital*``, ``organizations.*``  location hospital       80
  ``addresses.pharmacy_#``                      location organization   75
  ``addresses.*`` (room, box, desk, floor)      location room           75
  ``addresses.*`` (state)                       location state          75
  ``addresses.*`` (city, county, lives in)      location city           75
  ``addresses.at_address_noindicator``          location other          60
  other ``addresses.*``                         location street         80
  ``ucsf_regex.*`` (San Francisco places)       location city           70
  ``salutations.*``                             person_name             85
  ``regex_context.*`` (names, initials)         person_name             80
  ``firstnames``, ``lastnames`` sets            person_name             70
  ``age.*``                                     (no NLP Sandbox type)   —
  ============================================  ======================  ==========

  The confidences rank the evidence (a pattern with context over a bare
  lexicon hit); philter itself gives none, so they are not calibrated.
"""

import re
import tomllib
from importlib import resources

from nlpbench.annotators import Annotator, ToolInfo
from nlpbench.annotators.adapters import Found, annotations, semver
from nlpbench.model import Annotation, Document

#: (keyword pattern, label, subtype, confidence); the first pattern that matches a filter's keyword wins.
KEYWORD_TYPES: tuple[tuple[str, str, str | None, float], ...] = (
    (r"dates\.", "date", None, 90),
    (r"contact\.email$", "contact", "email", 95),
    (r"contact\.url$", "contact", "url", 95),
    (r"contact\.", "contact", "phone", 90),
    (r"mrn_id\.account", "id", "account", 80),
    (r"mrn_id\.(model|lot)", "id", "device", 80),
    (r"mrn_id\.", "id", "id_number", 75),
    (r"(addresses\.hospital|organizations\.)", "location", "hospital", 80),
    (r"addresses\.pharmacy", "location", "organization", 75),
    (r"addresses\.(box|room|floor_box|desk|waiting_room)", "location", "room", 75),
    (r"addresses\.(to_state|state_indicator)", "location", "state", 75),
    (r"addresses\.(city|county|lives_in|in_city)", "location", "city", 75),
    (r"addresses\.at_address_noindicator", "location", "other", 60),
    (r"addresses\.", "location", "street", 80),
    (r"ucsf_regex\.", "location", "city", 70),
    (r"salutations\.", "person_name", None, 85),
    (r"regex_context\.", "person_name", None, 80),
    (r"(firstnames|lastnames)$", "person_name", None, 70),
)
#: PHI filters whose hits have no NLP Sandbox type.
UNTYPED = re.compile(r"age\.")
CONFIG = "philter_delta.toml"


def pos_tags(text: str) -> list[tuple[str, str]]:
    """philter's tokens of ``text`` with a tag from their shape: ``CD``, ``NNP`` or ``NN``."""
    from philter_lite import philter

    return [(token, _shape_tag(token)) for token in philter._get_clean(text)]


def _shape_tag(token: str) -> str:
    if token.isdigit():
        return "CD"
    return "NNP" if token[:1].isupper() else "NN"


def phi_type(keyword: str) -> str | None:
    """The ``label|subtype|confidence`` code of a PHI filter, or None when it has no NLP Sandbox type."""
    if UNTYPED.match(keyword):
        return None
    for pattern, label, subtype, confidence in KEYWORD_TYPES:
        if re.match(pattern, keyword):
            return f"{label}|{subtype or ''}|{confidence}"
    raise ValueError(f"philter filter keyword {keyword!r} has no NLP Sandbox type in KEYWORD_TYPES")


class PhilterAdapter(Annotator):
    """philter-lite's ``philter_delta`` pipeline, typed and run without NLTK data."""

    types = ("date", "person_name", "location", "id", "contact")

    def __init__(self) -> None:
        import philter_lite
        from philter_lite import philter

        philter._get_pos = pos_tags
        self._detect = philter_lite.detect_phi
        self.info = ToolInfo(
            name="philter-lite",
            version=semver("philter-lite"),
            description=(
                "philter-lite (UCSF Philter) behind the NLP Sandbox API: its philter_delta rules, "
                "typed from each filter's keyword, part-of-speech tags from token shape (no NLTK data)."
            ),
            license="bsd-3-clause",
            repository="pypi:philter-lite",
            url="https://pypi.org/project/philter-lite/",
        )
        self._filters, self._types = self._load_filters(philter_lite.filter_from_dict)

    @staticmethod
    def _load_filters(filter_from_dict) -> tuple[list, list[str]]:
        config_file = resources.files("philter_lite") / "configs" / CONFIG
        with config_file.open("rb") as handle:
            config = tomllib.load(handle)
        filters, types = [], set()
        for entry in config["filters"]:
            if entry["exclude"]:
                code = phi_type(entry.get("keyword", entry["title"]))
                entry = {**entry, "phi_type": code or "UNTYPED"}
                types.add(code or "UNTYPED")
            filters.append(filter_from_dict(entry))
        return filters, sorted(types)

    def annotate(self, note: Document) -> list[Annotation]:
        _, _, tracker = self._detect(note.text or "", patterns=self._filters, phi_type_list=self._types)
        found = []
        for entry in tracker.phi:
            if entry.phi_type in ("UNTYPED", "OTHER"):
                continue
            label, subtype, confidence = entry.phi_type.split("|")
            found.append(Found(entry.start, entry.stop, label, subtype or None, float(confidence)))
        return annotations(note, found)
