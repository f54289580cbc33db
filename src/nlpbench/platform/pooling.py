"""One estimate over several data sites: their per-document counts pooled, the interval stratified by site.

Each site returns, per annotation type, its overall score rows and its
per-document rows (documents named by the site: ``d1``, ``d2``, …). The pooled
report of a type holds every site's per-document rows, each document renamed
``SITE/dN``, in the sites' order; its overall rows are the first site's, each
count column summed over the sites (TP, FP, FN, the coreference numerators and
denominators, SemEval's COR, PAR, ACTUAL, POSSIBLE, de-identification's PART
and WHOLE) and each value its documents determine computed again from the
pooled counts (:func:`nlpbench.stats.report.derivations`): the pooled F1 is the
micro F1 of all sites' documents, as if they had been scored in one run.

Its interval resamples documents within each site (:func:`strata`: the sites'
runs of consecutive documents), so that every resample keeps each site's
size, and the rank groups are computed on the pooled value like any result's.
A site that sends its totals only (no per-document rows) is pooled as one
document (:data:`TOTALS`): its counts are in the pooled value and in every
resample as they are, so the interval has no width from its documents — it
is narrower than it would be with them, and the pages say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nlpbench.report.model import Report, Row, overall_rows
from nlpbench.stats.report import derivations, group_of
from nlpbench.stats.statistics import BLANC_COLUMNS, COREF_COLUMNS, PRF_COLUMNS, RATE_COLUMNS, SEMEVAL_COLUMNS

#: The count columns of an overall row, summed over the sites.
COUNT_COLUMNS = frozenset((*PRF_COLUMNS, *COREF_COLUMNS, *SEMEVAL_COLUMNS, *RATE_COLUMNS, *BLANC_COLUMNS))
#: The values each kind of counts determines (:func:`nlpbench.stats.report.derivations`).
DERIVED = (
    (PRF_COLUMNS, ("precision", "recall", "f1")),
    (COREF_COLUMNS, ("precision", "recall", "f1")),
    (SEMEVAL_COLUMNS, ("precision", "recall", "f1")),
    (RATE_COLUMNS, ("rate",)),
)
#: The text fields of a row: what names it, not what it counts.
NAMING = ("metric", "label", "average", "annotation_type", "system")
SEPARATOR = "/"
#: The one document a site that sends its totals only is pooled as: a stratum of one, which every resample draws
#: once, so its counts are in every resample as they are and its documents add no width to the interval.
TOTALS = "totals"


def pooled(task: str, profile: str, by_site: Mapping[str, Mapping[str, Report]]) -> dict[str, Report]:
    """The pooled report of each annotation type every site scored, from each site's report of it.

    A type is pooled only when every site has it; a site's overall rows are matched with the first site's by
    their metric and group (:func:`~nlpbench.stats.report.group_of`).
    """
    sites = list(by_site)
    if not sites:
        return {}
    types = [t for t in by_site[sites[0]] if all(t in by_site[site] for site in sites)]
    found: dict[str, Report] = {}
    for annotation_type in types:
        reports = [by_site[site][annotation_type] for site in sites]
        per_document = [
            {**row, "document": f"{site}{SEPARATOR}{row['document']}"}
            for site, report in zip(sites, reports, strict=True)
            for row in report.per_document or _as_one_document(report)
        ]
        scores = [_summed(row, reports) for row in overall_rows(reports[0])]
        report = Report(task, profile, {}, scores, per_document)
        for derived in derivations(report):
            for row in scores:
                if row["metric"] == derived.metric and group_of(row) == derived.group:
                    row[derived.field] = derived.estimate
        found[annotation_type] = report
    return found


def _as_one_document(report: Report) -> list[Row]:
    """A site's totals as the rows of one document, :data:`TOTALS`: each overall row's names and counts."""
    return [
        {"document": TOTALS, **{k: v for k, v in row.items() if k in NAMING or k in COUNT_COLUMNS}}
        for row in overall_rows(report)
    ]


def totals_only(report: Report) -> bool:
    """Whether a site sent its totals only (no per-document rows): pooled as one document, :data:`TOTALS`."""
    return not report.per_document


def _summed(row: Row, reports: Sequence[Report]) -> Row:
    """``row``'s names and each of its count columns summed over the matching overall row of every report, with
    the values those counts determine (:data:`DERIVED`) to be computed again: a site's own values are not kept."""
    matching = [_matching(row, report) for report in reports]
    summed: dict[str, Any] = {key: value for key, value in row.items() if key in NAMING}
    for key in row:
        if key in COUNT_COLUMNS:
            summed[key] = sum(other.get(key) or 0 for other in matching if other is not None)
    for columns, fields in DERIVED:
        if all(column in summed for column in columns):
            summed.update(dict.fromkeys(fields))
    return summed


def _matching(row: Row, report: Report) -> Row | None:
    for other in overall_rows(report):
        if other["metric"] == row["metric"] and group_of(other) == group_of(row):
            return other
    return None


def strata(documents: Sequence[str]) -> tuple[int, ...]:
    """The sizes of the runs of consecutive documents of one site (``SITE/…``), in order: the bootstrap's strata.

    Documents that name no site are one site's."""
    sizes: list[int] = []
    previous = None
    for document in documents:
        site = document.split(SEPARATOR, 1)[0] if SEPARATOR in document else ""
        if site != previous or not sizes:
            sizes.append(0)
            previous = site
        sizes[-1] += 1
    return tuple(sizes)
