"""``score codiesp``: clinical coding as CodiEsp 2020 scored it (tracks D, P and X).

CodiEsp-D and -P rank codes per document: MAP (and, under ``standard``,
MAP@k, P@k and R@k) over the ranking, and micro precision/recall/F1 over the
set of codes. CodiEsp-X gives each code a text reference: micro
precision/recall/F1 over the distinct (document, code) pairs, a code found
when a prediction contains one of its references. Every document is reduced
to counts first (AP as a :class:`~nlpbench.metrics.ranking.Mean`, TP/FP/FN as
a :class:`~nlpbench.metrics.counts.PRF`); corpus rows are their sums.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any, cast

from nlpbench import files, profiles
from nlpbench.errors import InputError, collected_warnings
from nlpbench.files import Input, Source
from nlpbench.formats import codiesp as tsv
from nlpbench.metrics.coding import code_category, found_keys, reference_counts, sorted_distinct
from nlpbench.metrics.counts import PRF, score_set
from nlpbench.metrics.ranking import Mean, average_precision, precision_at_k, recall_at_k
from nlpbench.model import CodeReference
from nlpbench.model.coding import DEFAULT_K
from nlpbench.profiles.codiesp import CodingProfile
from nlpbench.report import Report
from nlpbench.report.model import Row
from nlpbench.tasks import collector_paused, register
from nlpbench.tasks.coverage import listed, no_gold

if TYPE_CHECKING:  # numpy is loaded by large prediction files only (tsv.SMALL bytes or more)
    import numpy as np

    from nlpbench.formats.codiesp_columns import ReferenceColumns

TRACKS = ("D", "P", "X")
#: Characters a CodiEsp-X prediction may reach beyond a gold reference on each side.
SLACK = 10
#: Largest key space whose distinct keys are found by marking a table (bytes); larger ones are sorted.
_TABLE = 1 << 26


@register(
    "codiesp",
    "Clinical coding (CodiEsp 2020): MAP over ranked codes (D, P), F1 with references (X)",
    "codiesp",
    formats=("codiesp",),
    files=("valid_codes",),
    lists=("valid_codes", "k"),
)
def score_codiesp(
    gold: Input,
    pred: Input,
    valid_codes: Sequence[Input],
    *,
    track: str,
    profile: str = "standard",
    k: Sequence[int] = DEFAULT_K,
) -> Report:
    """Score CodiEsp predictions of ``track`` against gold; the valid codes are the union of the lists given.

    ``k`` are the cutoffs of the ``standard`` extras MAP@k, P@k and R@k (tracks D and P).
    """
    chosen = cast(CodingProfile, profiles.get("codiesp", profile))
    track = track.upper()
    if track not in TRACKS:
        raise InputError(f"unknown track {track!r}; CodiEsp tracks are D, P and X")
    if not valid_codes:
        raise InputError("give at least one valid-code list")
    cutoffs = sorted(set(k)) if track != "X" and chosen.extras else []
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in cutoffs):
        raise InputError(f"cutoffs k must be positive integers, not {list(k)}")
    with collected_warnings() as warnings, collector_paused():
        lists = [tsv.read_valid_codes(path) for path in dict.fromkeys(map(files.source, valid_codes))]
        valid = frozenset().union(*lists)
        if track == "X":
            tally = _score_references(files.source(gold), files.source(pred), valid, chosen)
        else:
            tally = _score_rankings(files.source(gold), files.source(pred), valid, chosen, track, cutoffs)
    if chosen.official_failures:
        tally.shape.numeric_list = next((_number_type(codes) for codes in lists if _numbers(codes)), None)
        tally.notes += [
            f"the official {script} fails on this input ({exception}): {why}; the values here follow its formulas"
            for script, exception, why in _official_failures(track, tally.shape)
        ]
    inputs: dict[str, Any] = {
        "track": track,
        "gold": str(gold),
        "pred": str(pred),
        "valid_codes": [str(v) for v in valid_codes],
    }
    if cutoffs:
        inputs["k"] = cutoffs
    return Report(
        task="codiesp",
        profile=chosen.name,
        inputs=inputs,
        scores=tally.score_rows(chosen),
        per_document=tally.per_document,
        warnings=tally.notes + warnings,
    )


@dataclass
class _Shape:
    """What of the input decides whether an official script fails on it: each file ``empty``, all its codes
    numbers (``numeric``) or neither (``""``); whether a predicted code is valid; a valid-code list of numbers
    (``"int"`` or ``"float"``, the type pandas reads them as)."""

    gold: str = ""
    pred: str = ""
    valid: bool = True
    numeric_list: str | None = None


@dataclass
class _Tally:
    """Sums over the scored documents, their per-document rows, and what the run noted."""

    means: dict[str, Mean] = field(default_factory=dict)
    counts: dict[str, PRF] = field(default_factory=dict)
    per_document: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    shape: _Shape = field(default_factory=_Shape)

    def start(self, means: list[str], counts: list[str]) -> None:
        """Give each metric its row, in this order, even when no document is scored."""
        self.means = dict.fromkeys(means, Mean())
        self.counts = dict.fromkeys(counts, PRF())

    def add_mean(self, metric: str, mean: Mean) -> None:
        self.means[metric] = self.means.get(metric, Mean()) + mean

    def add_counts(self, document: str, metric: str, prf: PRF, values: tuple) -> None:
        self.counts[metric] = self.counts.get(metric, PRF()) + prf
        self.per_document.append({"document": document, "metric": metric, **_prf_fields(prf, values)})

    def score_rows(self, profile: CodingProfile) -> list[Row]:
        rows: list[Row] = [
            {"metric": metric, "documents": mean.count, "sum": mean.total, "value": profile.mean_value(mean)}
            for metric, mean in self.means.items()
        ]
        rows += [{"metric": metric, **_prf_fields(prf, profile.values(prf))} for metric, prf in self.counts.items()]
        return rows


def _prf_fields(prf: PRF, values: tuple) -> Row:
    precision, recall, f1 = values
    return {"tp": prf.tp, "fp": prf.fp, "fn": prf.fn, "precision": precision, "recall": recall, "f1": f1}


@dataclass
class _Sides:
    """Which documents each side has and which of them a profile scores."""

    gold: set[str]
    pred: set[str]
    profile: CodingProfile

    def documents(self) -> list[str]:
        return sorted(self.gold | self.pred if self.profile.score_unknown_documents else self.gold)

    def notes(self, ranked: bool) -> list[str]:
        notes = []
        missing = sorted(self.gold - self.pred)
        if missing:
            consequence = (
                "MAP leaves them out (its denominator is the predicted documents); their codes are false negatives"
                if self.profile.map_over_predicted and ranked
                else "they score 0"
            )
            notes.append(f"{len(missing)} gold documents have no valid prediction: {consequence}: {listed(missing)}")
        unknown = sorted(self.pred - self.gold)
        if unknown:
            consequence = (
                "scored as the official scripts do (" + ("0 in MAP, " if ranked else "") + "codes are false positives)"
                if self.profile.score_unknown_documents
                else "not scored"
            )
            notes.append(f"{len(unknown)} predicted documents are not in the gold, {consequence}: {listed(unknown)}")
        return notes


def _score_rankings(
    gold: Source, pred: Source, valid: frozenset[str], profile: CodingProfile, track: str, cutoffs: list[int]
) -> _Tally:
    relevant = {doc.doc_id: {code.lower() for code in doc.codes} for doc in tsv.read_ranked_codes(gold)}
    if not relevant:
        raise no_gold(gold, "codes")
    predicted = tsv.read_ranked_codes(pred)
    rankings: dict[str, tuple[str, ...]] = {}
    invalid: Counter[str] = Counter()
    repeats = total = 0
    for ranked in predicted:
        distinct = dict.fromkeys(map(str.lower, ranked.codes))
        total += len(ranked.codes)
        repeats += len(ranked.codes) - len(distinct)
        invalid.update(distinct.keys() - valid)
        ranking = tuple([code for code in distinct if code in valid])
        if ranking:
            rankings[ranked.doc_id] = ranking
    sides = _Sides(set(relevant), set(rankings), profile)
    tally = _Tally(notes=_code_notes(invalid, relevant.values(), valid, ranked=True))
    tally.notes += _undefined_notes(profile, track, predicted=total, valid=len(rankings))
    tally.shape = _Shape(
        _state((code for codes in relevant.values() for code in codes) if relevant else ()),
        _state((code for doc in predicted for code in doc.codes) if predicted else ()),
        bool(rankings),
    )
    if repeats:
        tally.notes.append(f"{repeats} repeated predicted codes were dropped; each code keeps its first rank")
    below = sum(max(0, len(r) - profile.depth) for r in rankings.values()) if profile.depth else 0
    if below:
        tally.notes.append(f"{below} valid predicted codes ranked below {profile.depth} add nothing to MAP")
    tally.notes += sides.notes(ranked=True)

    category = _category_key(track)
    tally.start(["map", *(f"{metric}@{cutoff}" for metric in ("map", "precision", "recall") for cutoff in cutoffs)],
                ["micro", "category_micro"] if profile.extras else ["micro"])  # fmt: skip
    for doc in sides.documents():
        gold_codes, ranking = relevant.get(doc, set()), rankings.get(doc, ())
        counted = doc in (sides.pred if profile.map_over_predicted else sides.gold)
        ap = average_precision(ranking, gold_codes, profile.depth)
        tally.add_mean("map", Mean.of(ap) if counted else Mean())
        tally.per_document.append(
            {"document": doc, "metric": "map", "relevant": len(gold_codes), "ranked": len(ranking),
             "value": ap if counted else None}
        )  # fmt: skip
        for cutoff in cutoffs:
            tally.add_mean(f"map@{cutoff}", Mean.of(average_precision(ranking, gold_codes, cutoff)))
        for cutoff in cutoffs:
            tally.add_mean(f"precision@{cutoff}", Mean.of(precision_at_k(ranking, gold_codes, cutoff)))
        for cutoff in cutoffs:
            tally.add_mean(f"recall@{cutoff}", Mean.of(recall_at_k(ranking, gold_codes, cutoff)))
        in_gold, in_pred = doc in sides.gold, doc in sides.pred
        prf = score_set(gold_codes, ranking)
        tally.add_counts(doc, "micro", prf, profile.document_values(prf, in_gold, in_pred, references=False))
        if profile.extras:
            prf = score_set(map(category, gold_codes), map(category, ranking))
            tally.add_counts(doc, "category_micro", prf, profile.values(prf))
    return tally


@dataclass
class _Matched:
    """What CodiEsp-X scoring takes from its two files, however they were read: the documents of each side (a
    predicted one has a valid prediction), the distinct codes of each side (lower-cased; predicted ones valid
    or not), the invalid predicted codes and how often each occurs, how many predictions there are and how many
    are valid, how many of those are odd (inverted or negative), the note on gold codes no prediction can find,
    and each document's counts over codes (``micro``) and, with the profile's extras, over categories."""

    gold_documents: set[str]
    predicted_documents: set[str]
    gold_codes: list[str]
    predicted_codes: list[str]
    invalid: Counter[str]
    predicted: int
    valid: int
    odd: int
    unreachable: list[str]
    micro: dict[str, PRF]
    category: dict[str, PRF]


def _score_references(gold: Source, pred: Source, valid: frozenset[str], profile: CodingProfile) -> _Tally:
    records = tsv.gold_records(gold)
    if not records.records:
        raise no_gold(gold, "codes")
    predictions = tsv.read_predictions(pred)
    if isinstance(predictions, list):
        matched = _matched_references(tsv.references_of(records), predictions, valid, profile)
    else:
        from nlpbench.formats.codiesp_columns import reference_columns  # numpy, as the predictions' columns

        gold_columns = reference_columns(records, listed=profile.listed_reference_bounds)
        matched = _matched_columns(gold_columns, predictions, valid, profile)
    sides = _Sides(matched.gold_documents, matched.predicted_documents, profile)
    tally = _Tally(notes=_code_notes(+matched.invalid, [set(matched.gold_codes)], valid, ranked=False))
    tally.notes += _undefined_notes(profile, "X", predicted=matched.predicted, valid=matched.valid)
    tally.shape = _Shape(_state(matched.gold_codes), _state(matched.predicted_codes if matched.predicted else ()),
                         bool(matched.valid))  # fmt: skip
    if matched.odd:
        tally.notes.append(
            f"{matched.odd} predicted spans end before they start or start at a negative offset: scored as written, "
            "as the official script scores them"
        )
    tally.notes += matched.unreachable
    tally.notes += sides.notes(ranked=False)
    tally.start([], ["micro", "category_micro"] if profile.extras else ["micro"])
    for doc in sides.documents():
        micro = matched.micro.get(doc, PRF())
        tally.add_counts(doc, "micro", micro, profile.document_values(micro, doc in sides.gold, doc in sides.pred,
                                                                      references=True))  # fmt: skip
        if profile.extras:
            category = matched.category.get(doc, PRF())
            tally.add_counts(doc, "category_micro", category, profile.values(category))
    return tally


def _matched_references(
    gold: list[CodeReference], predictions: list[CodeReference], valid: frozenset[str], profile: CodingProfile
) -> _Matched:
    """:class:`_Matched` of references read one object a line (a small prediction file), in plain Python, one
    document at a time (:func:`~nlpbench.metrics.coding.reference_counts`)."""
    codes = [prediction.code.lower() for prediction in predictions]
    kept = [prediction for prediction, code in zip(predictions, codes, strict=True) if code in valid]
    bounds = attrgetter("listed_bounds" if profile.listed_reference_bounds else "covering_bounds")
    by_document: dict[str, tuple[list[CodeReference], list[CodeReference]]] = {}
    for side, references in enumerate((gold, kept)):
        for reference in references:
            by_document.setdefault(reference.doc_id, ([], []))[side].append(reference)

    def counts(key: Callable[[str], str]) -> dict[str, PRF]:
        return {
            doc: reference_counts(golds, preds, slack=SLACK, bounds=bounds, key=key)
            for doc, (golds, preds) in by_document.items()
        }

    gold_codes = [reference.code.lower() for reference in gold]
    odd = sum(end < start or start < 0 for start, end in (prediction.fragments[0] for prediction in kept))
    return _Matched(
        {reference.doc_id for reference in gold},
        {prediction.doc_id for prediction in kept},
        list(dict.fromkeys(gold_codes)),
        list(dict.fromkeys(codes)),
        Counter(code for code in codes if code not in valid),
        len(predictions),
        len(kept),
        odd,
        _unreachable_note(list(zip(map(attrgetter("doc_id"), gold), gold_codes, strict=True)), list(map(bounds, gold)))
        if profile.listed_reference_bounds
        else [],
        counts(str.lower),
        counts(_lower_category) if profile.extras else {},
    )


def _lower_category(code: str) -> str:
    return code_category(code.lower())


def _matched_columns(
    gold_columns: ReferenceColumns, columns: ReferenceColumns, valid: frozenset[str], profile: CodingProfile
) -> _Matched:
    """:class:`_Matched` of references read as numpy columns (a large prediction file), every document at once
    (:func:`~nlpbench.metrics.coding.found_keys`)."""
    import numpy as np  # loaded for large prediction files only

    valid_code = np.array([code in valid for code in columns.codes], dtype=bool)
    counts = np.bincount(columns.code, minlength=len(columns.codes))
    invalid = Counter(dict(zip(columns.codes, np.where(valid_code, 0, counts).tolist(), strict=True)))
    every = valid_code.all()  # the usual file: no copy of the columns
    document, code, start, end = (
        column if every else column[valid_code[columns.code]]
        for column in (columns.document, columns.code, columns.start, columns.end)
    )
    odd = int(np.count_nonzero((end < start) | (start < 0)))

    # one numbering of the documents and codes of both sides
    documents = dict(zip(columns.documents, itertools.count()))
    codes = dict(zip(columns.codes, itertools.count()))
    gold_document = _renumbered(gold_columns.document, gold_columns.documents, documents)
    gold_code = _renumbered(gold_columns.code, gold_columns.codes, codes)
    names = list(documents)
    predicted = np.flatnonzero(np.bincount(document, minlength=len(names))).tolist()
    unreachable = []
    if profile.listed_reference_bounds:
        keys = (gold_document * len(codes) + gold_code).tolist()
        unreachable = _unreachable_note(
            keys, list(zip(gold_columns.start.tolist(), gold_columns.end.tolist(), strict=True))
        )

    def per_document(key_of_code: np.ndarray) -> dict[str, PRF]:
        """Each document's TP, FP and FN over the distinct keys of its codes."""
        stride = int(key_of_code.max(initial=0)) + 1
        gold_keys = gold_document * stride + key_of_code[gold_code]
        pred_keys = document * stride + key_of_code[code]
        found = found_keys(gold_keys, gold_columns.start, gold_columns.end, pred_keys, start, end, slack=SLACK)
        tp, n_gold, n_pred = (
            np.bincount(keys // stride, minlength=len(names)).tolist()
            for keys in (found, _distinct(gold_keys, stride * len(names)), _distinct(pred_keys, stride * len(names)))
        )
        return {name: PRF.from_matches(*counts) for name, *counts in zip(names, tp, n_gold, n_pred, strict=True)}

    categories: dict[str, int] = {}
    return _Matched(
        set(gold_columns.documents),
        {names[i] for i in predicted},
        gold_columns.codes,
        columns.codes,
        invalid,
        len(columns.code),
        len(document),
        odd,
        unreachable,
        per_document(np.arange(len(codes))),
        per_document(np.array([categories.setdefault(code_category(c), len(categories)) for c in codes]))
        if profile.extras
        else {},
    )


def _renumbered(indices: np.ndarray, names: list[str], numbers: dict[str, int]) -> np.ndarray:
    """Indices into ``names`` as the numbers ``numbers`` gives the names (adding the names it lacks)."""
    import numpy as np  # loaded for large prediction files only

    return np.array([numbers.setdefault(name, len(numbers)) for name in names], dtype=np.int64)[indices]


def _distinct(keys: np.ndarray, size: int) -> np.ndarray:
    """The distinct values of ``keys``, all in ``range(size)``, in order (marked in a table of ``size`` when small)."""
    import numpy as np  # loaded for large prediction files only

    if size > _TABLE:
        return sorted_distinct(keys)
    seen = np.zeros(size, dtype=bool)
    seen[keys] = True
    return np.flatnonzero(seen)


def _category_key(track: str) -> Callable[[str], str]:
    return lambda code: code_category(code, track)


def _undefined_notes(profile: CodingProfile, track: str, *, predicted: int, valid: int) -> list[str]:
    """Warnings for input without a valid prediction: which values divide by 0 and what the profile reports
    for them (a gold file without codes is an error: :func:`~nlpbench.tasks.coverage.no_gold`)."""
    ranked = track != "X"
    zero = "null, as the official scripts print nan" if profile.nan_when_undefined else "reported as 0"
    notes = []
    if not predicted:
        notes.append("the prediction file has no predictions")
    elif not valid:
        notes.append(f"none of the {predicted} predicted codes is in the valid-code lists "
                     "(are the lists and --track the right ones?)")  # fmt: skip
    if not valid:
        what = "micro precision and F1 have" if profile.nan_when_undefined else "micro precision has"
        if ranked and profile.map_over_predicted:
            what = "MAP averages over no predicted document, and " + what
        tail = "; every gold document scores 0 in MAP" if ranked and not profile.map_over_predicted else ""
        notes.append(f"{what} no predicted code (0/0): {zero}{tail}")
    return notes


def _official_failures(track: str, shape: _Shape) -> list[tuple[str, str, str]]:
    """(script, exception, reason) for each official script that fails on valid input of this shape, by the first
    thing it reads that it fails on (recorded in tests/conformance/codiesp_official_cases.json)."""
    lists = shape.numeric_list and (
        f"AttributeError: '{shape.numeric_list}' object has no attribute 'lower'",
        "every code of a valid-code list is a number, which pandas reads as one",
    )
    reading = lists or _reading_failure("gold", shape.gold) or _reading_failure("prediction", shape.pred)
    if track == "X":
        failure = reading or (not shape.valid and (_UNPACK, "no predicted code is valid"))
        return [("codiespX_evaluation.py", *failure)] if failure else []
    scripts = (("codiespD_P_evaluation.py", reading), ("comp_f1_diag_proc.py", lists))
    return [(script, *failure) for script, failure in scripts if failure]


def _reading_failure(side: str, state: str) -> tuple[str, str] | None:
    if state == "empty":
        return _EMPTY_DATA, f"an empty {side} file"
    if state == "numeric":
        return _STR_ACCESSOR, f"every {side} code is a number, which pandas reads as one"
    return None


def _state(codes: Iterable[str]) -> str:
    """``empty`` without codes (a false ``codes``), ``numeric`` if every code is a number, else ``""``."""
    return "empty" if not codes else "numeric" if _numbers(codes) else ""


def _numbers(codes: Iterable[str]) -> bool:
    """Whether pandas reads every code as a number (stops at the first that is not)."""
    return all(map(_NUMBER.fullmatch, codes))


def _number_type(codes: Iterable[str]) -> str:
    return "int" if all(map(str.isdigit, codes)) else "float"


_EMPTY_DATA = "pandas.errors.EmptyDataError: No columns to parse from file"
_STR_ACCESSOR = "AttributeError: Can only use .str accessor with string values!. Did you mean: 'std'?"
_UNPACK = "ValueError: not enough values to unpack (expected 2, got 0)"
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _code_notes(
    invalid: Counter[str], gold_codes: Iterable[set[str]], valid: frozenset[str], ranked: bool
) -> list[str]:
    notes = []
    if invalid:
        removed = "were removed before ranking" if ranked else "were not scored"
        notes.append(
            f"{invalid.total()} predicted codes are in no valid-code list and {removed}: {listed(sorted(invalid))}"
        )
    outside = sorted({code for codes in gold_codes for code in codes if code not in valid})
    if outside:
        notes.append(f"{len(outside)} gold codes are in no valid-code list, so no prediction can find them: "
                     f"{listed(outside)}")  # fmt: skip
    return notes


def _unreachable_note(keys: list[Hashable], bounds: list[tuple[int, int]]) -> list[str]:
    """Codes (``keys``: document and code) whose every gold reference is inverted when spanned from first listed
    start to last listed end (``bounds``)."""
    inverted = [end < start for start, end in bounds]
    if not any(inverted):
        return []
    unreachable = len(set(keys)) - len({key for key, wrong in zip(keys, inverted, strict=True) if not wrong})
    return [
        f"{sum(inverted)} gold references list their pieces out of text order; spanned from the first listed "
        f"start to the last listed end they end before they start, so {unreachable} codes cannot be found"
    ]
