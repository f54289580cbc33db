"""``score i2b2``: PHI tags of i2b2 2014 XML scored as the track's ``evaluate.py phi`` scores them.

System and gold are directories of ``PATIENT-RECORD[SYSTEM].xml`` files (or
single files); notes pair by ``PATIENT-RECORD``, and each SYSTEM suffix of
the system files is scored as a system of its own. Every evaluation the
script prints is a metric: ``token``, ``strict``, ``relaxed`` (end within 2
characters), their HIPAA subsets, the binary (PHI or not) ones, and per
category (``label``) ``token``, ``strict``, ``hipaa_token`` and
``hipaa_strict``. Each has a micro row (summed counts) and a macro row
(mean and SD of per-note precision and recall, F1 of the means).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import cast

from nlpbench import files, profiles
from nlpbench.errors import InputError
from nlpbench.files import Input, Source
from nlpbench.formats.i2b2 import RawTag, read_raw
from nlpbench.metrics import deid
from nlpbench.metrics.counts import PRF
from nlpbench.profiles import py27
from nlpbench.profiles.i2b2 import CARDIAC_RISK_VALUES, CATEGORIES, SCRIPT_TYPES, TYPES, I2b2Profile
from nlpbench.profiles.rounding import significant
from nlpbench.report import Report
from nlpbench.report.model import Row
from nlpbench.tasks import collector_paused, register
from nlpbench.tasks.coverage import listed, no_gold

#: Tag names the script reads as PHI: the categories and the generic ``PHI``.
TAG_NAMES = frozenset(CATEGORIES) | {"PHI"}
RELAX = 2  # how far apart relaxed ends may be


@dataclass(frozen=True, slots=True)
class Tag:
    """A PHI tag: its category (the element name), TYPE and offsets as written, and the offsets as numbers."""

    category: str
    type: str
    start_text: str
    end_text: str
    start: int
    end: int


@dataclass
class Note:
    id: str  # PATIENT-RECORD
    system: str  # what follows RECORD in the file name
    path: Source
    text: str
    tags: list[Tag]
    stop: str | None = None  # why evaluate.py stops with a traceback on this file (under script_stops)


_FILE_NAME = re.compile(r"^([0-9]+)-([0-9]+)(.*)\.xml")


def note_id(path: Source) -> tuple[str, str]:
    """``(PATIENT-RECORD, SYSTEM)`` of a file name ``PATIENT-RECORD[SYSTEM].xml``; any other name
    ``NAME.ext`` is the note ``NAME-`` of the system '' (as the script names it)."""
    match = _FILE_NAME.match(path.name)
    if match:
        return f"{match[1]}-{match[2]}", match[3]
    return f"{path.stem}-", ""


def read_note(path: Source, profile: I2b2Profile, odd: Counter[str]) -> Note:
    """One file: its PHI tags. What is odd but scored (elements that are not PHI tags, tags without a TYPE)
    is counted in ``odd``, by what the warning says."""
    text, raw = read_raw(path)
    doc_id, system = note_id(path)
    tags = []
    for index, tag in enumerate(raw or ()):
        if tag.name not in TAG_NAMES:
            odd[f"<{tag.name}> elements are not PHI tags: not scored"] += 1
            continue
        try:
            start, end = int(tag.start or ""), int(tag.end or "")
        except ValueError:
            raise InputError(
                f"bad offsets start={tag.start!r} end={tag.end!r}", path, f"tag {index} <{tag.name}>"
            ) from None
        if not profile.unchecked_offsets and not 0 <= start <= end <= len(text):
            raise InputError(f"offsets {start}-{end} outside the text of {len(text)} characters", path, f"tag {index}")
        if tag.type is None:
            odd["PHI tags have no TYPE: read as TYPE=''"] += 1
        tags.append(Tag(tag.name, tag.type or "", tag.start or "", tag.end or "", start, end))
    return Note(doc_id, system, path, text, tags, script_stop(raw) if profile.script_stops else None)


def script_stop(raw: list[RawTag] | None) -> str | None:
    """Why evaluate.py stops with a traceback on a file of these elements (None: no ``<TAGS>``), if it does.

    Its tag classes print a WARNING for each attribute that fails their test (the TYPE of another category,
    offsets that are not integers) or that is missing (start, end, TYPE), built with ``str.format``: under
    Python 2 that raises UnicodeEncodeError when the line would hold non-ASCII text (the value, or the tag's
    id). A file without ``<TAGS>`` makes it call ``findall`` on None.
    """
    if raw is None:
        return "it has no <TAGS> element: evaluate.py stops here (AttributeError); scored as a note without tags"
    for index, tag in enumerate(raw):
        if tag.name not in TAG_NAMES:
            continue
        warned = [
            value
            for value, valid in ((tag.start, _is_int), (tag.end, _is_int), (tag.type, _script_type(tag.name)))
            if value is None or not valid(value)
        ]
        if warned and not all(text.isascii() for text in [*(v for v in warned if v is not None), tag.id or ""]):
            return (
                f"tag {index} <{tag.name}>: evaluate.py stops here (UnicodeEncodeError: its warning about the "
                "tag holds non-ASCII text); scored"
            )
    return None


def _is_int(value: str) -> bool:
    """Whether Python 2's ``int()`` reads ``value`` (Python 3's also reads digits joined by underscores)."""
    try:
        int(value)
    except ValueError:  # not an integer, as Python 2 read it
        return False
    return "_" not in value


def _script_type(name: str) -> Callable[[str], bool]:
    """The test evaluate.py's class for element ``name`` puts a TYPE to."""
    return lambda value: value.upper() in SCRIPT_TYPES[name]


def _files(path: Source, suffix: str | None) -> list[Source]:
    """``path`` itself when it is a file, else the entries of the directory whose names end in ``suffix``
    (every entry, none of which may then be a folder, when ``suffix`` is None), in name order; an entry that
    cannot be read says why when it is read."""
    if not files.is_folder(path):
        return [path]
    if suffix is not None:
        return files.listed(path, suffix, hidden=True)
    entries = files.listed(path, hidden=True)
    for entry in entries:
        if files.is_folder(entry):
            raise InputError("not a file (evaluate.py reads every entry of the gold directory)", entry)
    return entries


def _gold_notes(path: Source, profile: I2b2Profile, odd: Counter[str]) -> dict[str, Note]:
    notes: dict[str, Note] = {}
    for file in _files(path, None if profile.gold_reads_every_file else ".xml"):
        note = read_note(file, profile, odd)
        if note.id in notes:
            raise InputError(f"two gold files for note {note.id}: {notes[note.id].path.name}, {file.name}", path)
        notes[note.id] = note
    return notes


def _system_notes(path: Source, profile: I2b2Profile, odd: Counter[str]) -> dict[str, dict[str, Note]]:
    """System notes by system suffix, then by note id."""
    by_system: dict[str, dict[str, Note]] = {}
    for file in _files(path, "xml" if profile.gold_reads_every_file else ".xml"):
        note = read_note(file, profile, odd)
        notes = by_system.setdefault(note.system, {})
        if note.id in notes:
            raise InputError(f"two system files for note {note.id}: {notes[note.id].path.name}, {file.name}", path)
        notes[note.id] = note
    return by_system


# --- selections -------------------------------------------------------------------------------------------

Select = Callable[[Tag], bool]


@dataclass(frozen=True)
class Selection:
    """What --filter, --conjunctive and --invert ask for."""

    words: tuple[str, ...] = ()
    conjunctive: bool = False
    invert: bool = False


def _word_predicate(word: str, profile: I2b2Profile, warnings: list[str]) -> Select:
    if profile.filter_words == "script":
        if word in TAG_NAMES:
            return lambda tag: tag.category == word
        if word in CARDIAC_RISK_VALUES:
            return lambda tag: False
        warnings.append(f"--filter {word!r} is neither a tag name nor an attribute value: evaluate.py keeps every tag")
        return lambda tag: True
    wanted = word.strip().upper()
    if wanted in TAG_NAMES:
        return lambda tag: tag.category == wanted
    if wanted in TYPES:
        return lambda tag: tag.type.upper() == wanted
    raise InputError(f"--filter {word!r} is neither a category ({', '.join(sorted(TAG_NAMES))}) nor a TYPE")


def _combine(predicates: list[Select], conjunctive: bool, invert: bool) -> Select:
    join = all if conjunctive else any
    return lambda tag: join(p(tag) for p in predicates) != invert


@dataclass(frozen=True)
class Evaluation:
    """One block of the script's output: what it scores, how it matches, which tags it keeps."""

    metric: str
    label: str | None
    unit: str  # "tag" or "token"
    match: str  # "strict", "relaxed" or "binary"
    select: Select


#: The script's heading of each evaluation (its spellings kept), overall and per category.
TITLES = {
    "token": "Token",
    "strict": "Strict",
    "relaxed": "Relaxed",
    "hipaa_token": "HIPPA Token",
    "hipaa_strict": "HIPAA Strict",
    "hipaa_relaxed": "HIPAA Relaxed",
    "binary_token": "Binary Token",
    "binary_strict": "Binary Strict",
    "binary_hipaa_token": "Binary HIPPA Token",
    "binary_hipaa_strict": "Binary HIPAA Strict",
}
CATEGORY_TITLES = {
    "token": "Token",
    "strict": "Strict",
    "hipaa_token": "HIPPA Token",
    "hipaa_strict": "Binary HIPAA Strict",
}


def script_title(metric: str, label: str | None) -> str:
    """The heading evaluate.py prints for an evaluation (its per-category ``hipaa_strict`` says "Binary")."""
    return f"{label} {CATEGORY_TITLES[metric]}" if label else TITLES[metric]


def evaluations(profile: I2b2Profile, selection: Selection, warnings: list[str]) -> list[Evaluation]:
    """Every evaluation in the order the script prints them, with the tags each selects."""
    user = [_word_predicate(w, profile, warnings) for w in selection.words]
    base: Callable[[Tag], bool]
    within: Callable[[Tag], bool]
    if profile.filter_scope == "script":
        invert = selection.invert if user else False  # without --filter the script never passes --invert on
        conjunctive = selection.conjunctive if user else False
        base = _combine(user, conjunctive, invert) if user else _everything
        within = _everything
    else:
        if (selection.invert or selection.conjunctive) and not user:
            raise InputError("--invert and --conjunctive need --filter")
        invert = conjunctive = False
        base = within = _combine(user, selection.conjunctive, selection.invert) if user else _everything

    def hipaa(tag: Tag) -> bool:
        return profile.is_hipaa(tag.category, tag.type)

    def restricted(predicates: list[Select], conjunctive_: bool) -> Select:
        chosen = _combine(predicates, conjunctive_, invert)
        return lambda tag: within(tag) and chosen(tag)

    hipaa_only = restricted([hipaa], conjunctive)
    found = [
        Evaluation("token", None, "token", "strict", base),
        Evaluation("strict", None, "tag", "strict", base),
        Evaluation("relaxed", None, "tag", "relaxed", base),
        Evaluation("hipaa_token", None, "token", "strict", hipaa_only),
        Evaluation("hipaa_strict", None, "tag", "strict", hipaa_only),
        Evaluation("hipaa_relaxed", None, "tag", "relaxed", hipaa_only),
        Evaluation("binary_token", None, "token", "binary", within),
        Evaluation("binary_strict", None, "tag", "binary", within),
        Evaluation("binary_hipaa_token", None, "token", "binary", hipaa_only),
        Evaluation("binary_hipaa_strict", None, "tag", "binary", hipaa_only),
    ]
    for category in profile.print_order:

        def of_category(tag: Tag, category: str = category) -> bool:
            return tag.category == category

        alone = restricted([of_category], conjunctive)
        with_hipaa = restricted([of_category, hipaa], True)
        found += [
            Evaluation("token", category, "token", "strict", alone),
            Evaluation("strict", category, "tag", "strict", alone),
            Evaluation("hipaa_token", category, "token", "strict", with_hipaa),
            Evaluation("hipaa_strict", category, "tag", "strict", with_hipaa),
        ]
    return found


def _everything(tag: Tag) -> bool:
    return True


# --- counts -----------------------------------------------------------------------------------------------


def _keys(note: Note, tags: list[Tag], evaluation: Evaluation, profile: I2b2Profile) -> list[tuple]:
    """The keys the evaluation compares for the selected tags of a note."""
    if evaluation.unit == "token":
        keys: list[tuple] = []
        for tag in tags:
            spans = deid.tokens(note.text, tag.start, tag.end, empty_token=profile.empty_token)
            if evaluation.match == "binary":
                keys += spans
            else:
                tag_type = tag.type if profile.token_type_as_written else tag.type.upper()
                keys += [(tag.category, tag_type, start, end) for start, end in spans]
        return keys
    start: Iterator[str | int]
    end: Iterator[str | int]
    if profile.offsets_as_strings:
        start, end = (t.start_text.upper() for t in tags), (t.end_text.upper() for t in tags)
    else:
        start, end = (t.start for t in tags), (t.end for t in tags)
    if evaluation.match == "binary":
        typed = "PHI" if profile.binary_keeps_phi_type else None
        return [
            (tag.category, s, e, tag.type.upper()) if tag.category == typed else (s, e)
            for tag, s, e in zip(tags, start, end, strict=True)
        ]
    if evaluation.match == "relaxed":
        return [(tag.category, s, tag.type.upper(), tag.end) for tag, s in zip(tags, start, strict=True)]
    return [(tag.category, s, e, tag.type.upper()) for tag, s, e in zip(tags, start, end, strict=True)]


def note_counts(gold: Note, system: Note | None, evaluation: Evaluation, profile: I2b2Profile) -> PRF:
    """One note's counts under one evaluation (``system`` None: the system left the note out)."""
    gold_keys = _keys(gold, [t for t in gold.tags if evaluation.select(t)], evaluation, profile)
    system_tags = [t for t in system.tags if evaluation.select(t)] if system else []
    system_keys = _keys(system or gold, system_tags, evaluation, profile)
    if evaluation.unit == "token":
        return deid.exact(gold_keys, system_keys, sets=True)
    if evaluation.match == "relaxed":
        return deid.relaxed(gold_keys, system_keys, RELAX, sets=profile.sets)
    return deid.exact(gold_keys, system_keys, sets=profile.sets)


# --- the report -------------------------------------------------------------------------------------------


@dataclass
class _Scored:
    evaluation: Evaluation
    counts: list[PRF] = field(default_factory=list)


def _rows(scored: _Scored, system: str, profile: I2b2Profile) -> list[Row]:
    value_digits, sd_digits = profile.digits or (None, None)
    evaluation, counts = scored.evaluation, scored.counts
    total = sum(counts, PRF())
    head: Row = {"metric": evaluation.metric, "label": evaluation.label}
    if system:
        head["system"] = system
    micro_f1 = deid.f1_of(total.precision, total.recall)
    average = deid.macro(counts, skip_undefined=not profile.macro_zero_for_empty, f1_nan=profile.macro_f1_nan)
    return [
        {
            **head,
            "documents": len(counts),
            "tp": total.tp,
            "fp": total.fp,
            "fn": total.fn,
            "precision": significant(total.precision, value_digits),
            "recall": significant(total.recall, value_digits),
            "f1": significant(micro_f1, value_digits),
        },
        {
            **head,
            "average": "macro",
            "documents": len(counts),
            "precision": significant(average.precision, value_digits),
            "precision_sd": significant(average.precision_sd, sd_digits),
            "recall": significant(average.recall, value_digits),
            "recall_sd": significant(average.recall_sd, sd_digits),
            "f1": significant(average.f1, value_digits),
        },
    ]


def _pairs(
    gold: dict[str, Note], system: dict[str, Note], profile: I2b2Profile, name: str, warnings: list[str]
) -> Iterator[tuple[Note, Note | None]]:
    missing = sorted(gold.keys() - system.keys())
    extra = sorted(system.keys() - gold.keys())
    who = f"system {name!r}" if name else "the system"
    if missing:
        consequence = "not scored" if profile.only_common_notes else "scored as notes without system tags"
        named = listed([gold[doc_id].path.name for doc_id in missing])
        warnings.append(f"{len(missing)} gold notes have no file from {who} ({named}): {consequence}")
    if extra:
        named = listed([system[doc_id].path.name for doc_id in extra])
        warnings.append(f"{len(extra)} notes from {who} have no gold file ({named}): not scored")
    scored = gold.keys() & system.keys() if profile.only_common_notes else gold.keys()
    for doc_id in _script_order(gold, system) if profile.note_order == "python27-set" else sorted(scored):
        found = system.get(doc_id)
        if found is not None and found.text != gold[doc_id].text:
            raise InputError(f"the note text differs from the gold's ({gold[doc_id].path})", found.path)
        yield gold[doc_id], found


def _system_order(pred: Source, by_system: dict[str, dict[str, Note]], profile: I2b2Profile) -> list[str]:
    """The systems (file-name suffixes) in the order they are scored and printed: sorted, or evaluate.py's,
    the Python 2.7 order of a dict filled in the order ``os.listdir`` gives their files (a folder given in
    memory: the order its files were given, :func:`nlpbench.files.listed`)."""
    if profile.note_order != "python27-set" or len(by_system) < 2:
        return sorted(by_system)
    listing = [note_id(path)[1] for path in files.listed(pred, "xml", hidden=True, ordered=False)]
    return [name for name in py27.Table(listing) if name in by_system]


def _script_order(gold: dict[str, Note], system: dict[str, Note]) -> list[str]:
    """The notes both sides have, in evaluate.py's order: ``list(set(s_sas.keys()) & set(g_sas.keys()))``
    under Python 2.7, the dicts filled in the order ``os.listdir`` gives the files (every gold entry, the
    system's files ending in 'xml' of this system), as the script fills them."""
    orders = []
    for notes in (system, gold):
        paths = [note.path for note in notes.values()]
        folder = paths[0].parent if paths else None
        listing = files.listed(folder, hidden=True, ordered=False) if folder and len(paths) > 1 else paths
        wanted = {path.name for path in paths}
        orders.append([note_id(path)[0] for path in listing if path.name in wanted])
    shared = py27.intersection(*(py27.Table(py27.Table(order)) for order in orders))
    return list(shared)


@register("i2b2", "i2b2 2014 de-identification XML: evaluate.py phi's evaluations", "i2b2", formats=("i2b2",))
def score_i2b2(
    gold: Input,
    pred: Input,
    *,
    profile: str = "standard",
    selection: Selection = Selection(),
    per_document: bool = True,
    on_document: Callable[..., None] | None = None,
) -> Report:
    """Score a directory (or file) of system XML (``pred``) against gold XML (``gold``)."""
    chosen = cast(I2b2Profile, profiles.get("i2b2", profile))
    warnings: list[str] = []
    odd: Counter[str] = Counter()
    report = Report(
        "i2b2",
        profile,
        {
            "gold": str(gold),
            "pred": str(pred),
            "filter": ",".join(selection.words) or None,
            "conjunctive": selection.conjunctive,
            "invert": selection.invert,
        },
    )
    with collector_paused():
        gold_notes = _gold_notes(files.source(gold), chosen, odd)
        if not gold_notes:
            raise no_gold(gold, "notes")
        by_system = _system_notes(files.source(pred), chosen, odd)
        read = [*gold_notes.values(), *(note for notes in by_system.values() for note in notes.values())]
        warnings += [f"{note.path}: {note.stop}" for note in read if note.stop]
        found = evaluations(chosen, selection, warnings)
        for name in _system_order(files.source(pred), by_system, chosen) or [""]:
            scored = [_Scored(e) for e in found]
            for gold_note, system_note in _pairs(gold_notes, by_system.get(name, {}), chosen, name, warnings):
                for item in scored:
                    counts = note_counts(gold_note, system_note, item.evaluation, chosen)
                    item.counts.append(counts)
                    if per_document:
                        report.per_document.append(_document_row(gold_note.id, name, item.evaluation, counts))
                if on_document:
                    on_document()
            for item in scored:
                report.scores += _rows(item, name, chosen)
    warnings += [f"{count} {what}" for what, count in sorted(odd.items())]
    report.warnings = warnings
    return report


def _document_row(doc_id: str, system: str, evaluation: Evaluation, counts: PRF) -> Row:
    row: Row = {"document": doc_id, "metric": evaluation.metric, "label": evaluation.label}
    if system:
        row["system"] = system
    return row | {
        "tp": counts.tp,
        "fp": counts.fp,
        "fn": counts.fn,
        "precision": counts.precision,
        "recall": counts.recall,
        "f1": deid.f1_of(counts.precision, counts.recall),
    }


# --- the script's printout --------------------------------------------------------------------------------

_LINE = "{:<25}{:<15}{:<15}{:<20}"


def _shown(value: float | None, digits: int) -> str:
    return "nan" if value is None else f"{value:.{digits}}"


def official_text(report: Report) -> str:
    """The report as ``evaluate.py phi`` prints its summary: one block per evaluation, in order."""
    out: list[str] = []
    rows = iter(report.scores)
    for micro, macro_row in zip(rows, rows, strict=True):
        system = micro.get("system", "")
        title = script_title(micro["metric"], micro["label"])
        title = f"{system} {title}" if system else title
        out.append(_LINE.format(f"{title} ({micro['documents']})", "Measure", "Macro (SD)", "Micro (Primary)"))
        out.append("-" * 75)
        for heading, name in (("Total", "precision"), ("", "recall")):
            macro_text = f"{_shown(macro_row[name], 4)} ({_shown(macro_row[name + '_sd'], 2)})"
            out.append(_LINE.format(heading, name.title(), macro_text, _shown(micro[name], 4)))
        out.append(_LINE.format("", "F1", _shown(macro_row["f1"], 4), _shown(micro["f1"], 4)))
        out.append("\n")
    return "\n".join(out) + "\n"
