"""Profiles of the i2b2 2014 de-identification task (``nlpbench score i2b2``).

- ``standard``: the same evaluations (token, strict, relaxed, HIPAA, binary,
  per category) with one-to-one matching, every gold note scored, the HIPAA
  list as published and unrounded values.
- ``i2b2-2014``: ``evaluate.py phi SYSTEM GOLD`` of kotfic/i2b2_evaluation_scripts
  (commit acbfd4e, "Adding type specific PHI evaluations", run with Python
  2.7), the script the 2014 i2b2/UTHealth corpus is published with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nlpbench.profiles.base import Profile, quirk, register

#: The categories of PHI tags; ``PHI`` is a generic tag the script also reads.
CATEGORIES = ("NAME", "PROFESSION", "LOCATION", "AGE", "DATE", "CONTACT", "ID", "OTHER")

#: The per-category evaluations in the order the script prints them (Python 2.7's order of its tag dict).
SCRIPT_CATEGORY_ORDER = ("CONTACT", "NAME", "DATE", "AGE", "PROFESSION", "ID", "OTHER", "LOCATION")

#: The TYPE values of the i2b2 2014 guidelines.
TYPES = frozenset(
    {"PATIENT", "DOCTOR", "USERNAME", "PROFESSION", "ROOM", "DEPARTMENT", "HOSPITAL", "ORGANIZATION", "STREET"}
    | {"CITY", "STATE", "COUNTRY", "ZIP", "OTHER", "LOCATION-OTHER", "AGE", "DATE", "PHONE", "FAX", "EMAIL"}
    | {"URL", "IPADDR", "SSN", "MEDICALRECORD", "HEALTHPLAN", "ACCOUNT", "LICENSE", "VEHICLE", "DEVICE"}
    | {"BIOID", "IDNUM"}
)

#: The TYPEs each of evaluate.py's tag classes takes (any case), by element name; it prints a WARNING about any
#: other. OTHER's list is the string 'OTHER', so any part of it ('OTH', '') passes its ``in`` test.
SCRIPT_TYPES: dict[str, frozenset[str] | str] = {
    "PHI": TYPES,
    "NAME": frozenset({"PATIENT", "DOCTOR", "USERNAME"}),
    "PROFESSION": frozenset({"PROFESSION"}),
    "LOCATION": frozenset(
        {"ROOM", "DEPARTMENT", "HOSPITAL", "ORGANIZATION", "STREET", "CITY", "STATE", "COUNTRY", "ZIP"}
        | {"LOCATION-OTHER"}
    ),
    "AGE": frozenset({"AGE"}),
    "DATE": frozenset({"DATE"}),
    "CONTACT": frozenset({"PHONE", "FAX", "EMAIL", "URL", "IPADDR"}),
    "ID": frozenset(
        {"SSN", "MEDICALRECORD", "HEALTHPLAN", "ACCOUNT", "LICENSE", "VEHICLE", "DEVICE", "BIOID", "IDNUM"}
    ),
    "OTHER": "OTHER",
}

#: HIPAA PHI as the track's README lists it: (category, TYPE pattern).
HIPAA = (
    ("NAME", "PATIENT"),
    ("LOCATION", "CITY"),
    ("LOCATION", "STREET"),
    ("LOCATION", "ZIP"),
    ("LOCATION", "ORGANIZATION"),
    ("DATE", ".*"),
    ("CONTACT", "PHONE"),
    ("CONTACT", "FAX"),
    ("CONTACT", "EMAIL"),
    ("ID", "SSN"),
    ("ID", "MEDICALRECORD"),
    ("ID", "HEALTHPLAN"),
    ("ID", "ACCOUNT"),
    ("ID", "LICENSE"),
    ("ID", "VEHICLE"),
    ("ID", "DEVICE"),
    ("ID", "BIOID"),
    ("ID", "IDNUM"),
    ("AGE", ".*"),
)

#: Attribute values of the script's cardiac-risk tags. A --filter word among them makes a predicate
#: that asks a PHI tag for a cardiac-risk attribute it never has: it selects nothing.
CARDIAC_RISK_VALUES = frozenset(
    {"present", "not present", "current", "past", "ever", "never", "unknown"}
    | {"before dct", "during dct", "after dct", "continuing", "mention", "a1c", "glucose", "event", "test"}
    | {"symptom", "high bp", "high chol.", "high ldl", "high-ldl", "high-chol", "bmi", "waist circum."}
    | {"ace inhibitor", "amylin", "anti diabetes", "arb", "aspirin", "beta blocker", "calcium channel blocker"}
    | {"diuretic", "dpp4 inhibitors", "ezetimibe", "fibrate", "glp1 agonists", "meglitinides", "insulin"}
    | {"metformin", "niacin", "nitrate", "obesity", "statin", "sulfonylureas", "thiazolidinedione"}
    | {"thienopyridine", ""}
)


@dataclass(frozen=True)
class I2b2Profile(Profile):
    """How ``score i2b2`` reads, matches, selects, averages and prints."""

    sets: bool = quirk(
        False,
        "evaluate.py puts each note's tags into Python sets: a tag repeated on one side counts once. Its "
        "relaxed equality is not transitive: the set drops a tag whose end is within 2 of one kept before, "
        "TP is gold ∩ system walked from the smaller set and FP, FN are set differences, so TP + FP need not "
        "equal the system's tags. standard matches one to one (a largest matching for relaxed ends).",
    )
    offsets_as_strings: bool = quirk(
        False,
        "evaluate.py compares start and end as the strings written in the file ('07' is not '7'), except the "
        "relaxed end, which it compares as a number.",
    )
    unchecked_offsets: bool = quirk(
        False,
        "evaluate.py never checks offsets against the text: a tag past its end (or ending before it starts) is "
        "scored, and tokenised from what the slice holds; standard rejects it (exit 2).",
    )
    token_type_as_written: bool = quirk(
        False,
        "evaluate.py keys tokens by TYPE as written, tags by TYPE upper-cased: TYPE='patient' matches "
        "'PATIENT' as a tag but not as tokens.",
    )
    empty_token: bool = quirk(
        False,
        "evaluate.py's tokenizer gives a tag whose text has no ASCII letter or digit (an empty tag, '--') "
        "one empty token where its text ends, which then counts as a token.",
    )
    hipaa: tuple[tuple[str, str], ...] = quirk(
        HIPAA,
        "The HIPAA PHI (category, TYPE regex). evaluate.py writes 'IDNUM ' with a trailing space, so ID/IDNUM "
        "is never HIPAA in the script although its README lists it.",
    )
    hipaa_prefix_case_sensitive: bool = quirk(
        False,
        "evaluate.py matches HIPAA TYPEs with re.match on TYPE as written: case-sensitive ('patient' is not "
        "HIPAA) and by prefix ('CITYX' is).",
    )
    only_common_notes: bool = quirk(
        False,
        "evaluate.py scores only notes that both directories have: a note the system left out (or an extra "
        "one) changes nothing, not even the note count. standard scores every gold note, warning about a "
        "missing system file, and warns about (and skips) system notes without gold.",
    )
    macro_zero_for_empty: bool = quirk(
        False,
        "evaluate.py's macro average counts a note with no system tags as precision 0 and one with no gold "
        "tags as recall 0; standard leaves such a note out of that mean.",
    )
    macro_f1_nan: bool = quirk(
        False,
        "evaluate.py's macro F1 of two zero means is numpy 0/0: it prints nan (null here); standard gives 0.",
    )
    digits: tuple[int, int] | None = quirk(
        None,
        "evaluate.py prints values with '{:.4}' and standard deviations with '{:.2}' (4 and 2 significant "
        "digits); F1 is computed from the unrounded precision and recall.",
    )
    filter_scope: str = quirk(
        "all",
        "Where --filter applies. evaluate.py ('script'): to the token, strict and relaxed evaluations only; "
        "the HIPAA, binary and per-category ones replace it with their own selection but keep --invert (so "
        "HIPAA becomes non-HIPAA) and --conjunctive, and --invert and --conjunctive do nothing without "
        "--filter. standard ('all'): every evaluation scores the selected tags, HIPAA and categories within "
        "them.",
    )
    filter_words: str = quirk(
        "categories-and-types",
        "What a --filter word selects. evaluate.py ('script'): a category name as written (NAME, DATE, …); a "
        "cardiac-risk attribute value selects nothing; any other word selects everything (with a WARNING "
        "line). standard ('categories-and-types'): a category or a TYPE, any case; another word is an error.",
    )
    gold_reads_every_file: bool = quirk(
        False,
        "evaluate.py parses every file of the gold directory (a README there makes it fail) but only "
        "system files whose names end in 'xml'; standard reads *.xml on both sides.",
    )
    binary_keeps_phi_type: bool = quirk(
        False,
        "evaluate.py's binary (PHI or not) evaluations key tags by offsets only, except generic <PHI> tags, "
        "whose key keeps the category and TYPE.",
    )
    print_order: tuple[str, ...] = quirk(
        CATEGORIES,
        "The order of the per-category evaluations; evaluate.py prints them in Python 2's order of its tag dict.",
    )
    note_order: str = quirk(
        "sorted",
        "The order notes are scored in, and their macro means and SDs summed in. evaluate.py ('python27-set'): "
        "list(set(system ids) & set(gold ids)) under Python 2.7, an order set by each id's hash, the tables' "
        "growth and the order the file system lists the files (nlpbench.profiles.py27); numpy sums in that "
        "order, so another order can change the last printed digit (0.4938 against 0.4937 over 4 notes). "
        "standard ('sorted'): by note id.",
    )
    script_stops: bool = quirk(
        False,
        "evaluate.py stops with a traceback on some files it reads: one without <TAGS> (AttributeError), and "
        "one with a PHI tag it prints a WARNING about (a TYPE its category does not list, offsets that are "
        "not integers, no start, end or TYPE) when that line would hold non-ASCII text, the value or the tag's "
        "id (UnicodeEncodeError under Python 2). nlpbench scores the file and warns, naming it and the tag, "
        "that the script stops there.",
    )

    def is_hipaa(self, category: str, tag_type: str) -> bool:
        """Whether a tag is HIPAA PHI under this profile."""
        if self.hipaa_prefix_case_sensitive:
            return any(re.match(c, category) and re.match(t, tag_type) for c, t in self.hipaa)
        return any(category == c and re.fullmatch(t, tag_type.upper()) for c, t in self.hipaa)


STANDARD = register(
    I2b2Profile(
        task="i2b2",
        name="standard",
        summary="The i2b2 2014 evaluations done right: one-to-one matching, every gold note, unrounded.",
        reference="i2b2 2014 de-identification track definitions (Stubbs, Kotfila & Uzuner 2015)",
    )
)

I2B2_2014 = register(
    I2b2Profile(
        task="i2b2",
        name="i2b2-2014",
        summary="kotfic/i2b2_evaluation_scripts evaluate.py phi exactly (sets, rounding, selections).",
        reference="kotfic/i2b2_evaluation_scripts acbfd4e evaluate.py phi, Python 2.7",
        sets=True,
        offsets_as_strings=True,
        unchecked_offsets=True,
        token_type_as_written=True,
        empty_token=True,
        hipaa=tuple((c, "IDNUM " if t == "IDNUM" else t) for c, t in HIPAA),
        hipaa_prefix_case_sensitive=True,
        only_common_notes=True,
        macro_zero_for_empty=True,
        macro_f1_nan=True,
        digits=(4, 2),
        filter_scope="script",
        filter_words="script",
        gold_reads_every_file=True,
        binary_keeps_phi_type=True,
        print_order=SCRIPT_CATEGORY_ORDER,
        note_order="python27-set",
        script_stops=True,
    )
)
