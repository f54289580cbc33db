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

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

from nlpbench import profiles
from nlpbench.errors import InputError, collected_warnings
from nlpbench.formats import codiesp as tsv
from nlpbench.metrics.coding import code_category, reference_counts
from nlpbench.metrics.counts import PRF, score_set
from nlpbench.metrics.ranking import Mean, average_precision, precision_at_k, recall_at_k
from nlpbench.model import CodeReference
from nlpbench.profiles.codiesp import DEFAULT_K, CodingProfile
from nlpbench.report import Report
from nlpbench.report.model import Row
from nlpbench.tasks import collector_paused, register
from nlpbench.tasks.coverage import listed

TRACKS = ("D", "P", "X")
#: Characters a CodiEsp-X prediction may reach beyond a gold reference on each side.
SLACK = 10


@register("codiesp", "Clinical coding (CodiEsp 2020): MAP over ranked codes (D, P), F1 with references (X)", "codiesp")
def score_codiesp(
    gold: Path | str,
    pred: Path | str,
    valid_codes: Sequence[Path | str],
    *,
    track: str,
    profile: str = "standard",
    k: Sequence[int] = DEFAULT_K,
) -> Report:
    """Score CodiEsp predictions of ``track`` against gold; the valid codes are the union of the lists given.

    ``k`` are the cutoffs of the ``standard`` extras MAP@k, P@k and R@k (tracks D and P).
    """
    chosen: CodingProfile = profiles.get("codiesp", profile)
    track = track.upper()
    if track not in TRACKS:
        raise InputError(f"unknown track {track!r}; CodiEsp tracks are D, P and X")
    if not valid_codes:
        raise InputError("give at least one valid-code list")
    cutoffs = sorted(set(k)) if track != "X" and chosen.extras else []
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in cutoffs):
        raise InputError(f"cutoffs k must be positive integers, not {list(k)}")
    with collected_warnings() as warnings, collector_paused():
        valid = frozenset().union(*(tsv.read_valid_codes(path) for path in valid_codes))
        if track == "X":
            tally = _score_references(Path(gold), Path(pred), valid, chosen)
        else:
            tally = _score_rankings(Path(gold), Path(pred), valid, chosen, track, cutoffs)
    inputs = {"track": track, "gold": str(gold), "pred": str(pred), "valid_codes": [str(v) for v in valid_codes]}
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
class _Tally:
    """Sums over the scored documents, their per-document rows, and what the run noted."""

    means: dict[str, Mean] = field(default_factory=dict)
    counts: dict[str, PRF] = field(default_factory=dict)
    per_document: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add_mean(self, metric: str, mean: Mean) -> None:
        self.means[metric] = self.means.get(metric, Mean()) + mean

    def add_counts(self, document: str, metric: str, prf: PRF, values: tuple) -> None:
        self.counts[metric] = self.counts.get(metric, PRF()) + prf
        self.per_document.append({"document": document, "metric": metric, **_prf_fields(prf, values)})

    def score_rows(self, profile: CodingProfile) -> list[Row]:
        rows: list[Row] = [
            {"metric": metric, "documents": mean.count, "sum": mean.total, "value": profile.rounded(mean.value)}
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
    gold: Path, pred: Path, valid: frozenset[str], profile: CodingProfile, track: str, cutoffs: list[int]
) -> _Tally:
    relevant = {doc.doc_id: {code.lower() for code in doc.codes} for doc in tsv.read_ranked_codes(gold)}
    rankings: dict[str, tuple[str, ...]] = {}
    invalid: Counter[str] = Counter()
    repeats = total = 0
    for doc in tsv.read_ranked_codes(pred):
        distinct = dict.fromkeys(map(str.lower, doc.codes))
        total += len(doc.codes)
        repeats += len(doc.codes) - len(distinct)
        invalid.update(distinct.keys() - valid)
        ranking = tuple([code for code in distinct if code in valid])
        if ranking:
            rankings[doc.doc_id] = ranking
    if not rankings:
        raise _nothing_valid(pred, total)
    sides = _Sides(set(relevant), set(rankings), profile)
    tally = _Tally(notes=_code_notes(invalid, relevant.values(), valid, ranked=True))
    if repeats:
        tally.notes.append(f"{repeats} repeated predicted codes were dropped; each code keeps its first rank")
    below = sum(max(0, len(r) - profile.depth) for r in rankings.values()) if profile.depth else 0
    if below:
        tally.notes.append(f"{below} valid predicted codes ranked below {profile.depth} add nothing to MAP")
    tally.notes += sides.notes(ranked=True)

    category = _category_key(track)
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


def _score_references(gold: Path, pred: Path, valid: frozenset[str], profile: CodingProfile) -> _Tally:
    gold_refs = _by_document(tsv.read_references(gold))
    pred_refs: dict[str, list[CodeReference]] = {}
    invalid: Counter[str] = Counter()
    odd = total = 0
    for reference in tsv.read_predicted_references(pred):
        total += 1
        if (code := reference.code.lower()) not in valid:
            invalid[code] += 1
            continue
        start, end = reference.fragments[0]  # a prediction has one
        odd += end < start or start < 0
        pred_refs.setdefault(reference.doc_id, []).append(reference)
    if not pred_refs:
        raise _nothing_valid(pred, total)
    gold_codes = [{r.code.lower() for r in refs} for refs in gold_refs.values()]
    sides = _Sides(set(gold_refs), set(pred_refs), profile)
    tally = _Tally(notes=_code_notes(invalid, gold_codes, valid, ranked=False))
    if odd:
        tally.notes.append(
            f"{odd} predicted spans end before they start or start at a negative offset: scored as written, "
            "as the official script scores them"
        )
    bounds: Callable[[CodeReference], tuple[int, int]] = attrgetter(
        "listed_bounds" if profile.listed_reference_bounds else "covering_bounds"
    )
    if profile.listed_reference_bounds:
        tally.notes += _unreachable_note(gold_refs.values())
    tally.notes += sides.notes(ranked=False)

    for doc in sides.documents():
        gold_doc, pred_doc = gold_refs.get(doc, []), pred_refs.get(doc, [])
        prf = reference_counts(gold_doc, pred_doc, slack=SLACK, bounds=bounds, key=str.lower)
        values = profile.document_values(prf, doc in sides.gold, doc in sides.pred, references=True)
        tally.add_counts(doc, "micro", prf, values)
        if profile.extras:
            prf = reference_counts(gold_doc, pred_doc, slack=SLACK, bounds=bounds, key=_lower_category)
            tally.add_counts(doc, "category_micro", prf, profile.values(prf))
    return tally


def _lower_category(code: str) -> str:
    return code_category(code.lower())


def _by_document(references: Iterable[CodeReference]) -> dict[str, list[CodeReference]]:
    grouped: dict[str, list[CodeReference]] = {}
    for reference in references:
        grouped.setdefault(reference.doc_id, []).append(reference)
    return grouped


def _category_key(track: str) -> Callable[[str], str]:
    return lambda code: code_category(code, track)


def _nothing_valid(pred: Path, total: int) -> InputError:
    return InputError(
        f"none of the {total} predicted codes is in the valid-code lists: nothing to score "
        "(are the lists and --track the right ones?)",
        pred,
    )


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


def _unreachable_note(gold_refs: Iterable[list[CodeReference]]) -> list[str]:
    """Codes whose every gold reference is inverted when spanned from first listed start to last listed end."""
    inverted = 0
    codes: dict[tuple[str, str], bool] = {}
    for refs in gold_refs:
        for r in refs:
            start, end = r.listed_bounds
            inverted += end < start
            pair = r.doc_id, r.code.lower()
            codes[pair] = codes.get(pair, False) or start <= end
    if not inverted:
        return []
    return [
        f"{inverted} gold references list their pieces out of text order; spanned from the first listed start "
        f"to the last listed end they end before they start, so {len(codes) - sum(codes.values())} codes "
        "cannot be found"
    ]
