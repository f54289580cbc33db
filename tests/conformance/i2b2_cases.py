"""Generated i2b2 2014 XML cases for the ``i2b2-2014`` conformance vectors.

``cases()`` returns each case as ``{"name", "args", "files": {"system/NAME" |
"gold/NAME": XML}}``: hand-written adversarial ones (overlaps, duplicates,
relaxed ends, missing and extra files, empty tags, CRLF and unicode text,
every category and TYPE, odd attributes, several systems, the --filter,
--invert and --conjunctive selections) and seeded random ones.

``python tests/conformance/i2b2_cases.py record PYTHON EVALUATE_PY`` writes
each case into a temporary directory, runs ``PYTHON EVALUATE_PY phi [ARGS]
system/ gold/`` there and stores what it printed in
``i2b2_official_cases.json`` (see its ``how``).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.sax.saxutils import quoteattr

VECTORS = Path(__file__).with_name("i2b2_official_cases.json")

TYPES = {
    "NAME": ["PATIENT", "DOCTOR", "USERNAME"],
    "PROFESSION": ["PROFESSION"],
    "LOCATION": [
        "ROOM",
        "DEPARTMENT",
        "HOSPITAL",
        "ORGANIZATION",
        "STREET",
        "CITY",
        "STATE",
        "COUNTRY",
        "ZIP",
        "LOCATION-OTHER",
    ],
    "AGE": ["AGE"],
    "DATE": ["DATE"],
    "CONTACT": ["PHONE", "FAX", "EMAIL", "URL", "IPADDR"],
    "ID": ["SSN", "MEDICALRECORD", "HEALTHPLAN", "ACCOUNT", "LICENSE", "VEHICLE", "DEVICE", "BIOID", "IDNUM"],
    "OTHER": ["OTHER"],
}

TEXT = (
    "Record date: 2067-05-03\nPatient Jane Q. Doe (MRN 1234567), 64 y/o nurse from Boston, MA 02115.\n"
    "Seen by Dr. Alan Smith at St. Mary's Hospital, 5 West, room 12B. Phone 617-555-0199, "
    "fax (617) 555-0100, jdoe@example.org, http://example.org, 10.0.0.1. SSN 123-45-6789, "
    "plan HP-99, acct 42-A, license L123, VIN 1HGCM82633A004352, device D-7, bio BX9, id 77.\n"
    "Follow up on 05/17/2067 -- call 555-0123 -- or email him.\n"
)


def tag(name: str, start: object, end: object, tag_type: str | None, text: str = "", **extra: str) -> str:
    """One tag element; offsets are written as given (strings may hold odd spellings)."""
    attributes = {"id": "P0", "start": str(start), "end": str(end), "text": text}
    if tag_type is not None:
        attributes["TYPE"] = tag_type
    attributes.update(extra)
    return f"<{name} " + " ".join(f"{k}={quoteattr(v)}" for k, v in attributes.items()) + " />"


def xml(text: str, tags: list[str], newline: str = "\n") -> str:
    body = text.replace("\n", newline)
    return (
        '<?xml version="1.0" encoding="UTF-8" ?>\n<deIdi2b2>\n<TEXT><![CDATA['
        + body
        + "]]></TEXT>\n<TAGS>\n"
        + "".join(t + "\n" for t in tags)
        + "</TAGS>\n</deIdi2b2>\n"
    )


def at(text: str, phrase: str, nth: int = 0) -> tuple[int, int]:
    """Offsets of the ``nth`` occurrence of ``phrase`` in ``text``."""
    start = -1
    for _ in range(nth + 1):
        start = text.index(phrase, start + 1)
    return start, start + len(phrase)


def t(name: str, phrase: str, tag_type: str, text: str = TEXT, dstart: int = 0, dend: int = 0, nth: int = 0) -> str:
    """A tag over ``phrase`` with its offsets moved by ``dstart`` and ``dend``."""
    start, end = at(text, phrase, nth)
    return tag(name, start + dstart, end + dend, tag_type, text[start + dstart : end + dend])


GOLD = [
    t("DATE", "2067-05-03", "DATE"),
    t("NAME", "Jane Q. Doe", "PATIENT"),
    t("ID", "1234567", "MEDICALRECORD"),
    t("AGE", "64", "AGE"),
    t("PROFESSION", "nurse", "PROFESSION"),
    t("LOCATION", "Boston", "CITY"),
    t("LOCATION", "MA", "STATE"),
    t("LOCATION", "02115", "ZIP"),
    t("NAME", "Alan Smith", "DOCTOR"),
    t("LOCATION", "St. Mary's Hospital", "HOSPITAL"),
    t("LOCATION", "5 West", "DEPARTMENT"),
    t("LOCATION", "12B", "ROOM"),
    t("CONTACT", "617-555-0199", "PHONE"),
    t("CONTACT", "(617) 555-0100", "FAX"),
    t("CONTACT", "jdoe@example.org", "EMAIL"),
    t("CONTACT", "http://example.org", "URL"),
    t("CONTACT", "10.0.0.1", "IPADDR"),
    t("ID", "123-45-6789", "SSN"),
    t("ID", "HP-99", "HEALTHPLAN"),
    t("ID", "42-A", "ACCOUNT"),
    t("ID", "L123", "LICENSE"),
    t("ID", "1HGCM82633A004352", "VEHICLE"),
    t("ID", "D-7", "DEVICE"),
    t("ID", "BX9", "BIOID"),
    t("ID", "77", "IDNUM"),
    t("DATE", "05/17/2067", "DATE"),
    t("CONTACT", "555-0123", "PHONE"),
]


def pair(system: list[str], gold: list[str], text: str = TEXT, name: str = "100-01", **kw) -> dict[str, str]:
    return {f"system/{name}.xml": xml(text, system, **kw), f"gold/{name}.xml": xml(text, gold, **kw)}


def handmade() -> list[dict]:
    cases = []

    def add(name: str, files: dict[str, str], *args: str) -> None:
        cases.append({"name": name, "args": list(args), "files": files})

    add("perfect", pair(GOLD, GOLD))
    add("every_type_half_found", pair(GOLD[::2], GOLD))
    add("system_empty", pair([], GOLD))
    add("gold_empty", pair(GOLD[:5], []))
    add("both_empty", pair([], []))
    relaxed = [
        t("DATE", "2067-05-03", "DATE", dend=1),
        t("NAME", "Jane Q. Doe", "PATIENT", dend=2),
        t("ID", "1234567", "MEDICALRECORD", dend=3),
        t("AGE", "64", "AGE", dend=-2),
        t("LOCATION", "Boston", "CITY", dend=-3),
        t("LOCATION", "St. Mary's Hospital", "HOSPITAL", dend=-2),
        t("CONTACT", "617-555-0199", "PHONE", dstart=1),
        t("NAME", "Alan Smith", "DOCTOR", dstart=-1, dend=1),
    ]
    add("relaxed_ends", pair(relaxed, GOLD))
    # one start, ends 10 apart in steps of 1 or 2: Python sets keep some, drop others; not transitive
    s, _ = at(TEXT, "Patient Jane Q. Doe")
    chain_gold = [tag("NAME", s, s + e, "PATIENT") for e in (7, 9, 11, 13, 19)]
    chain_system = [tag("NAME", s, s + e, "PATIENT") for e in (8, 10, 12, 17, 19, 21)]
    add("relaxed_chain", pair(chain_system, chain_gold))
    add("relaxed_chain_reversed", pair(chain_gold, chain_system))
    add("relaxed_chain_tie", pair(chain_system[:5], chain_gold))
    add("relaxed_chain_order", pair(chain_system[::-1], chain_gold[::-1]))
    # one system end between two gold ends 4 apart: TP 1, FN 0 of 2 gold tags (and the other way round)
    fork_gold, fork_system = [tag("NAME", s, s + e, "PATIENT") for e in (7, 11)], [tag("NAME", s, s + 9, "PATIENT")]
    add("relaxed_fork", pair(fork_system, fork_gold))
    add("relaxed_fork_reversed", pair(fork_gold, fork_system))
    add("relaxed_fork_tie", pair([*fork_system, tag("NAME", s, s + 3, "PATIENT")], fork_gold))
    overlapping = [
        t("NAME", "Jane Q. Doe", "PATIENT"),
        t("NAME", "Jane Q.", "PATIENT"),
        t("NAME", "Q. Doe", "PATIENT"),
        t("NAME", "Doe", "DOCTOR"),
        t("LOCATION", "Boston, MA 02115", "CITY"),
        t("LOCATION", "Boston", "CITY"),
    ]
    add("overlaps", pair(overlapping, GOLD))
    add("overlaps_in_gold", pair(GOLD, overlapping + GOLD[:3]))
    add("duplicates_system", pair(GOLD[:6] + GOLD[:6] + GOLD[2:4], GOLD))
    add("duplicates_gold", pair(GOLD[:10], GOLD + GOLD[:4]))
    add(
        "wrong_types",
        pair(
            [
                t("NAME", "Jane Q. Doe", "DOCTOR"),
                t("LOCATION", "Boston", "STATE"),
                t("ID", "1234567", "IDNUM"),
                t("DATE", "64", "DATE"),
                t("CONTACT", "617-555-0199", "FAX"),
                t("AGE", "2067-05-03", "AGE"),
            ],
            GOLD,
        ),
    )
    odd_case = [
        t("NAME", "Jane Q. Doe", "patient"),
        t("LOCATION", "Boston", "City"),
        t("DATE", "2067-05-03", "date"),
        t("ID", "1234567", "medicalrecord"),
        t("CONTACT", "617-555-0199", "PHONE"),
    ]
    add("type_case", pair(odd_case, GOLD))
    add("type_case_in_gold", pair(GOLD, odd_case + GOLD[5:]))
    add(
        "unknown_and_prefixed_types",
        pair(
            [t("LOCATION", "Boston", "CITYX"), t("NAME", "Jane Q. Doe", "PATIENTS"), t("ID", "77", "IDNUMBER")],
            [t("LOCATION", "Boston", "CITYX"), t("NAME", "Jane Q. Doe", "PATIENT"), t("ID", "77", "IDNUMBER")],
        ),
    )
    b, e = at(TEXT, "Boston")
    add(
        "missing_type_attribute",
        pair([tag("LOCATION", b, e, None), tag("DATE", *at(TEXT, "2067-05-03"), None)], GOLD),
    )
    dash, _ = at(TEXT, "--")
    empty_tags = [
        tag("NAME", b, b, "PATIENT"),
        tag("DATE", dash, dash + 2, "DATE"),
        tag("LOCATION", dash - 1, dash + 3, "CITY"),
        tag("AGE", e, e, "AGE"),
    ]
    add("empty_tags", pair(empty_tags + GOLD[:3], [*GOLD[:3], tag("NAME", b, b, "PATIENT"), empty_tags[1]]))
    add(
        "offsets_as_written",
        pair(
            [tag("LOCATION", f"0{b}", e, "CITY"), tag("LOCATION", b, f"{e} ", "CITY"), tag("DATE", "+0", 10, "DATE")],
            [tag("LOCATION", b, e, "CITY"), tag("DATE", 13, 23, "DATE"), tag("DATE", 0, 10, "DATE")],
        ),
    )
    add("end_beyond_text", pair([tag("DATE", len(TEXT) - 10, len(TEXT) + 5, "DATE")], GOLD[-3:]))
    add(
        "generic_phi_and_unknown_elements",
        pair(
            [
                tag("PHI", b, e, "CITY"),
                tag("PHI", *at(TEXT, "Jane Q. Doe"), "PATIENT"),
                tag("name", *at(TEXT, "Alan Smith"), "DOCTOR"),
                tag("PERSON", *at(TEXT, "Alan Smith"), "DOCTOR"),
            ],
            [tag("LOCATION", b, e, "CITY"), tag("PHI", *at(TEXT, "Jane Q. Doe"), "PATIENT"), GOLD[8]],
        ),
    )
    crlf = pair(GOLD[:12], GOLD, newline="\r\n")
    add("crlf_text", crlf)
    # a system that counted offsets in the file's CRLF text: every tag after a line break moves by one per line
    crlf_offsets = [
        tag(name, start + TEXT.count("\n", 0, start), end + TEXT.count("\n", 0, end), tag_type)
        for name, start, end, tag_type in [
            ("DATE", *at(TEXT, "2067-05-03"), "DATE"),
            ("NAME", *at(TEXT, "Jane Q. Doe"), "PATIENT"),
            ("NAME", *at(TEXT, "Alan Smith"), "DOCTOR"),
            ("DATE", *at(TEXT, "05/17/2067"), "DATE"),
        ]
    ]
    add("crlf_offsets_counted_in_the_file", pair(crlf_offsets, GOLD, newline="\r\n"))
    j, _ = at(TEXT, "Jane Q. Doe")
    add(
        "start_after_end",
        pair([tag("NAME", j + 5, j, "PATIENT"), tag("DATE", 20, 13, "DATE")], [t("NAME", "Jane Q. Doe", "PATIENT")]),
    )
    same_span = [tag("NAME", b, e, "PATIENT"), tag("PHI", b, e, "CITY"), tag("LOCATION", *at(TEXT, "MA"), "CITY")]
    add("same_span_other_types", pair(same_span, [tag("LOCATION", b, e, "CITY"), t("LOCATION", "MA", "STATE")]))
    nl, _ = at(TEXT, "\n")
    add(
        "whitespace_tags",
        pair([tag("DATE", nl, nl + 1, "DATE"), tag("NAME", j - 1, j, "PATIENT")], [tag("DATE", nl, nl + 1, "DATE")]),
    )
    suffixed_gold = {"system/100-01.xml": xml(TEXT, GOLD[:7]), "gold/100-01gold.xml": xml(TEXT, GOLD)}
    add("gold_file_with_suffix", suffixed_gold)
    unicode_text = "Pt. José Müller-Ñúñez 😀 seen at Zürich Klinik 東京, née Øberg; DOB 03.05.1967 — 🏥 Bâle.\n"
    unicode_gold = [
        t("NAME", "José Müller-Ñúñez", "PATIENT", unicode_text),
        t("LOCATION", "Zürich Klinik 東京", "HOSPITAL", unicode_text),
        t("NAME", "Øberg", "PATIENT", unicode_text),
        t("DATE", "03.05.1967", "DATE", unicode_text),
        t("LOCATION", "Bâle", "CITY", unicode_text),
        t("LOCATION", "東京", "CITY", unicode_text),
    ]
    unicode_system = [
        t("NAME", "José Müller", "PATIENT", unicode_text),
        t("LOCATION", "Zürich Klinik", "HOSPITAL", unicode_text),
        t("NAME", "née Øberg", "PATIENT", unicode_text),
        t("DATE", "03.05.1967", "DATE", unicode_text, dend=2),
        t("LOCATION", "🏥 Bâle", "CITY", unicode_text),
        t("LOCATION", "東京", "CITY", unicode_text),
    ]
    add("unicode_text", pair(unicode_system, unicode_gold, unicode_text))
    entity_text = "A & B <Clinic> at 1 Main St & Co.\n"
    entity_files = {
        "system/100-01.xml": xml("", [])
        .replace("<![CDATA[]]>", "A &amp; B &lt;Clinic&gt; at 1 Main St &amp; Co.\n")
        .replace("<TAGS>\n", "<TAGS>\n" + t("LOCATION", "B <Clinic>", "HOSPITAL", entity_text) + "\n"),
        "gold/100-01.xml": xml(entity_text, [t("LOCATION", "A & B <Clinic>", "HOSPITAL", entity_text)]),
    }
    add("escaped_text", entity_files)
    many = pair(GOLD[:8], GOLD[:10], name="100-01") | pair(GOLD[5:], GOLD[4:], name="100-02")
    many |= pair([], GOLD[:2], name="101-01") | pair(GOLD[:3], [], name="102-05")
    add("several_notes", many)
    missing = pair(GOLD[:8], GOLD[:10], name="100-01")
    missing["gold/100-02.xml"] = xml(TEXT, GOLD)
    missing["gold/103-01.xml"] = xml(TEXT, GOLD[:4])
    add("missing_system_files", missing)
    extra = pair(GOLD[:8], GOLD[:10], name="100-01")
    extra["system/200-01.xml"] = xml(TEXT, GOLD)
    extra["system/notes.txt"] = "not xml"
    add("extra_system_files", extra)
    add("no_common_note", {"system/100-01.xml": xml(TEXT, GOLD), "gold/100-02.xml": xml(TEXT, GOLD)})
    two_systems = {
        "system/100-01alpha.xml": xml(TEXT, GOLD[:10]),
        "system/100-02alpha.xml": xml(TEXT, GOLD),
        "system/100-01beta.xml": xml(TEXT, relaxed),
        "gold/100-01.xml": xml(TEXT, GOLD),
        "gold/100-02.xml": xml(TEXT, GOLD[3:]),
    }
    add("two_systems", two_systems)
    add("free_file_names", {"system/note-a.xml": xml(TEXT, GOLD[:9]), "gold/note-a.xml": xml(TEXT, GOLD)})
    mixed = pair(overlapping + relaxed + GOLD[10:20], GOLD) | pair(GOLD[::3], GOLD[1:], name="100-02")
    add("filter_name", mixed, "--filter", "NAME")
    add("filter_two_or", mixed, "--filter", "NAME,LOCATION")
    add("filter_two_and", mixed, "--filter", "NAME,LOCATION", "--conjunctive")
    add("filter_invert", mixed, "--filter", "DATE", "--invert")
    add("filter_invert_conjunctive", mixed, "--filter", "DATE,ID", "--invert", "--conjunctive")
    add("filter_unknown_word", mixed, "--filter", "PATIENT")
    add("filter_cardiac_word", mixed, "--filter", "NAME,mention")
    add("filter_trailing_comma", mixed, "--filter", "NAME,")
    add("invert_without_filter", mixed, "--invert")
    add("filter_generic_phi", pair([tag("PHI", b, e, "CITY"), GOLD[1]], [tag("PHI", b, e, "CITY")]), "--filter", "PHI")
    return cases


WORDS = "the of and pt was seen with for on at by to in is no hx c/o s/p pain fever cough".split()
PHRASES = {
    "PATIENT": ["John Roe", "Mary Major", "Li Wei"],
    "DOCTOR": ["Dr. Kay", "Hanna Bo"],
    "USERNAME": ["jk22"],
    "HOSPITAL": ["Mercy General", "Gate Clinic"],
    "CITY": ["Austin", "Lyon"],
    "STATE": ["TX"],
    "ZIP": ["78701"],
    "STREET": ["12 Oak Rd"],
    "ORGANIZATION": ["Acme Corp"],
    "DATE": ["2070-01-02", "Jan 3", "3/4/71"],
    "AGE": ["71", "34"],
    "PHONE": ["555-0142"],
    "MEDICALRECORD": ["MR-8812"],
    "IDNUM": ["A-17"],
    "PROFESSION": ["plumber", "teacher"],
    "COUNTRY": ["Peru"],
}
CATEGORY_OF = {tag_type: cat for cat, types in TYPES.items() for tag_type in types}


def random_note(rng: random.Random) -> tuple[str, list[tuple[str, int, int, str]]]:
    """A note of filler words with PHI phrases; its gold tags (category, start, end, TYPE)."""
    text, tags = "", []
    for _ in range(rng.randint(5, 25)):
        if rng.random() < 0.35:
            tag_type = rng.choice(sorted(PHRASES))
            phrase = rng.choice(PHRASES[tag_type])
            tags.append((CATEGORY_OF[tag_type], len(text), len(text) + len(phrase), tag_type))
            text += phrase
        else:
            text += rng.choice(WORDS)
        text += rng.choice([" ", " ", ", ", ".\n", "\n\n", " - "])
    return text, tags


def perturbed(rng: random.Random, tags: list[tuple[str, int, int, str]], length: int) -> list[tuple]:
    """What a system might predict: some tags dropped, moved, retyped, repeated, and a few spurious ones."""
    out = []
    for cat, start, end, tag_type in tags:
        roll = rng.random()
        if roll < 0.15:
            continue
        if roll < 0.35:
            end = max(start, min(length, end + rng.choice([-3, -2, -1, 1, 2, 3])))
        elif roll < 0.45:
            start = max(0, min(end, start + rng.choice([-1, 1])))
        elif roll < 0.55:
            cat, tag_type = rng.choice([("NAME", "DOCTOR"), ("LOCATION", "CITY"), ("DATE", "DATE"), ("ID", "IDNUM")])
        out.append((cat, start, end, tag_type))
        if rng.random() < 0.08:
            out.append((cat, start, end, tag_type))
    for _ in range(rng.randint(0, 3)):
        start = rng.randrange(length)
        out.append(("LOCATION", start, min(length, start + rng.randint(1, 8)), "CITY"))
    return out


def random_cases(count: int = 8, seed: int = 2014) -> list[dict]:
    rng = random.Random(seed)
    cases = []
    for number in range(count):
        files = {}
        for note in range(rng.randint(1, 6)):
            text, gold = random_note(rng)
            system = perturbed(rng, gold, len(text))
            name = f"{300 + number}-{note:02d}"
            files[f"gold/{name}.xml"] = xml(text, [tag(c, s, e, ty, text[s:e]) for c, s, e, ty in gold])
            if rng.random() < 0.9:
                files[f"system/{name}.xml"] = xml(text, [tag(c, s, e, ty, text[s:e]) for c, s, e, ty in system])
        args = rng.choice([[], [], ["--filter", "LOCATION"], ["--filter", "NAME,DATE", "--invert"]])
        cases.append({"name": f"random_{number}", "args": args, "files": files})
    return cases


#: Four notes each (the seed of their random text and tags, their ids) whose macro means print another last
#: digit summed in sorted order than in evaluate.py's (Python 2.7's set order of the ids, which these ids fix
#: whatever order the file system lists the files in).
ORDER_CASES = ((30, ("125-01", "102-01", "115-01", "138-01")), (89, ("133-01", "101-01", "129-01", "122-01")))


def order_cases() -> list[dict]:
    cases = []
    for seed, ids in ORDER_CASES:
        rng, files = random.Random(seed), {}
        for name in ids:
            text, gold = random_note(rng)
            system = perturbed(rng, gold, len(text))
            files[f"gold/{name}.xml"] = xml(text, [tag(c, s, e, ty, text[s:e]) for c, s, e, ty in gold])
            files[f"system/{name}.xml"] = xml(text, [tag(c, s, e, ty, text[s:e]) for c, s, e, ty in system])
        cases.append({"name": f"macro_order_{seed}", "args": [], "files": files})
    return cases


def stop_cases() -> list[dict]:
    """Files evaluate.py stops on with a traceback (and one it reads, though its tag id is not ASCII)."""
    without_tags = xml(TEXT, []).replace("<TAGS>\n</TAGS>\n", "")
    not_ascii_type = [*GOLD[:3], t("AGE", "64", "AGÉ"), *GOLD[4:]]
    not_ascii_id_bad_type = [*GOLD[:3], tag("NAME", *at(TEXT, "64"), "CITY", "64", id="Pé"), *GOLD[4:]]
    not_ascii_id = [*GOLD[:3], tag("AGE", *at(TEXT, "64"), "AGE", "64", id="Pé"), *GOLD[4:]]
    return [
        {"name": "stop_system_without_tags", "args": [], "files": pair([], GOLD) | {"system/100-01.xml": without_tags}},
        {"name": "stop_gold_without_tags", "args": [], "files": pair(GOLD, []) | {"gold/100-01.xml": without_tags}},
        {"name": "stop_system_type_not_ascii", "args": [], "files": pair(not_ascii_type, GOLD)},
        {"name": "stop_gold_type_not_ascii", "args": [], "files": pair(GOLD, not_ascii_type)},
        {"name": "stop_id_not_ascii_and_a_bad_type", "args": [], "files": pair(not_ascii_id_bad_type, GOLD)},
        {"name": "id_not_ascii_on_a_good_tag", "args": [], "files": pair(not_ascii_id, GOLD)},
    ]


def cases() -> list[dict]:
    return handmade() + random_cases() + order_cases() + stop_cases()


def write_case(case: dict, root: Path) -> None:
    for name in ("system", "gold"):
        (root / name).mkdir(parents=True, exist_ok=True)
    for name, content in case["files"].items():
        (root / name).write_bytes(content.encode("utf-8"))


def parse_blocks(printed: str) -> list[list[str]]:
    """Each block of an evaluate.py summary as [title, notes, macro P, SD, macro R, SD, macro F1, micro P, R, F1]."""
    lines = [line for line in printed.splitlines() if line.strip() and not line.startswith("WARNING")]
    blocks = []
    for index in range(0, len(lines), 5):
        head, _, precision, recall, f1 = lines[index : index + 5]
        title, notes = head[: head.rindex("Measure")].rstrip().rsplit(" (", 1)
        macro_p, sd_p, micro_p = precision[40:].replace("(", " ").replace(")", " ").split()
        macro_r, sd_r, micro_r = recall[40:].replace("(", " ").replace(")", " ").split()
        macro_f, micro_f = f1[40:].split()
        blocks.append([title, notes.rstrip(")"), macro_p, sd_p, macro_r, sd_r, macro_f, micro_p, micro_r, micro_f])
    return blocks


def _vectors_json(how: str, recorded: list[dict]) -> str:
    """The vectors as JSON with one line per case's inputs and one per printed block."""

    def dumps(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    entries = [
        dumps({k: case[k] for k in ("name", "args", "files")})[:-1]
        + ', "blocks": [\n'
        + ",\n".join("  " + dumps(block) for block in case["blocks"])
        + "]"
        + (f', "error": {dumps(case["error"])}' if "error" in case else "")
        + "}"
        for case in recorded
    ]
    return '{"how": ' + dumps(how) + ',\n"cases": [\n' + ",\n".join(entries) + "\n]}\n"


def record(python: str, script: str) -> None:
    recorded = []
    for case in cases():
        with tempfile.TemporaryDirectory() as tmp:
            write_case(case, Path(tmp))
            done = subprocess.run(
                [python, script, "phi", *case["args"], "system/", "gold/"], cwd=tmp, capture_output=True, text=True
            )
        if done.returncode:
            recorded.append(case | {"blocks": [], "error": done.stderr.strip().splitlines()[-1]})
        else:
            recorded.append(case | {"blocks": parse_blocks(done.stdout)})
    how = (
        "Made by `python tests/conformance/i2b2_cases.py record PYTHON EVALUATE_PY`: each case written into a "
        "temporary directory and run as `PYTHON EVALUATE_PY phi [args] system/ gold/` there, with "
        "kotfic/i2b2_evaluation_scripts at acbfd4edaffdfa690e00cf52eedc7b2890641b99 (its latest commit, "
        "'Adding type specific PHI evaluations'), under CPython 2.7.18 (pyenv, wide unicode) with lxml 4.9.3 "
        "and numpy 1.16.6 (pip install --target, PYTHONPATH). blocks: what each printed block says, as printed; "
        "error: the last line of the traceback of a run that stopped."
    )
    VECTORS.write_text(_vectors_json(how, recorded), "utf-8")
    print(f"{VECTORS}: {len(recorded)} cases")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "record":
        sys.exit("usage: i2b2_cases.py record PYTHON EVALUATE_PY")
    record(sys.argv[2], sys.argv[3])
