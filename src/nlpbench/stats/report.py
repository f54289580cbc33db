"""From a report's per-document rows to the count tables its overall scores are computed from.

Each overall score row (no ``label``, ``average`` or ``document``) is matched
with the per-document rows that add up to it, by the kind of counts they
carry:

- ``tp``/``fp``/``fn`` rows (spans, NER, linking, relations, CodiEsp X, the
  timelines' micro row): precision, recall and F1 of the summed counts;
- ``cor``/``par``/``actual``/``possible`` rows (NER, SemEval 2013): precision
  (COR + ½·PAR) / ACTUAL, recall (COR + ½·PAR) / POSSIBLE and their F1;
- ``recall_num``/``recall_den``/``precision_num``/``precision_den`` rows
  (coreference): R, P and F1 from the summed numerators and denominators, and
  the CoNLL score from the MUC, B³ and CEAFe rows;
- ``value`` rows (CodiEsp MAP): the mean of the documents' values;
- ``part``/``whole`` rows (de-identification's residual PHI, over-redaction, format, date shifts,
  alignment): the rate PART / WHOLE of the summed counts;
- the timelines' Type A (mean over every patient of their P, R, F1), Type B
  (the same over patients with gold) and official ((Type A F1 + Type B F1) / 2)
  rows, from the ``patient`` rows.

A table's rows are the documents (patients for timelines) in the order the
report first names them, so two reports over the same documents give tables
whose rows pair up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from nlpbench.errors import InputError
from nlpbench.report.model import Report, Row, overall_rows
from nlpbench.stats.statistics import (
    COREF_COLUMNS,
    PRF_COLUMNS,
    RATE_COLUMNS,
    SEMEVAL_COLUMNS,
    STATISTICS,
    Statistic,
)

if TYPE_CHECKING:
    from nlpbench.stats.bootstrap import Method

_VALUES = ("precision", "recall", "f1")
_COREF_VALUES = {"recall": "coref_recall", "precision": "coref_precision", "f1": "coref_f1"}
_CONLL_PARTS = ("muc", "bcub", "ceafe")
_BLANC_PARTS = ("coreference", "non-coreference")
_SUMMED_FROM = {"micro": "patient"}  # the timelines' micro row sums the counts of the patient rows
#: Fields that tell apart several wholes scored in one report (``score sandbox -t all``, i2b2's systems).
_GROUP_FIELDS = ("annotation_type", "system")

Group = tuple[tuple[str, str], ...]


def group_of(row: Row) -> Group:
    """The ``(field, value)`` pairs of ``row`` that name the whole it belongs to (empty for most reports)."""
    return tuple((name, row[name]) for name in _GROUP_FIELDS if row.get(name) is not None)


@dataclass(frozen=True)
class Derivation:
    """One overall value of a report, the statistic that computes it and its per-document count table."""

    metric: str
    field: str
    statistic: Statistic
    documents: tuple[str, ...]
    counts: np.ndarray  # [documents, len(statistic.columns)]
    reported: float | None = None  # the value the report gives
    group: Group = ()

    @property
    def name(self) -> str:
        return " ".join([*(value for _, value in self.group), self.metric, self.field])

    @property
    def estimate(self) -> float:
        return float(self.statistic.compute(self.counts.sum(axis=0)))

    @property
    def differs(self) -> bool:
        """Whether the profile computes the reported value otherwise than the statistic (rounding, say)."""
        return isinstance(self.reported, float) and abs(self.reported - self.estimate) > 1e-9


def arithmetic_warnings(report: Report, found: Sequence[Derivation]) -> list[str]:
    """A warning naming the values whose resampled statistic is not how the report's profile computes them."""
    differing = [d.name for d in found if d.differs]
    if not differing:
        return []
    return [
        f"{', '.join(differing)}: resampled as the unrounded statistic of the per-document counts; "
        f"profile {report.profile} computes the reported value otherwise (rounding)"
    ]


def derivations(
    report: Report, *, only: tuple[str, str] | None = None, documents: Sequence[str] | None = None
) -> list[Derivation]:
    """Every overall value of ``report`` that its per-document rows determine, in row order.

    ``only``: the values of that ``(metric, field)`` alone, the others not computed. ``documents``: the tables'
    rows, in this order (every document the per-document rows name among them; a document without a row is
    a row of zeros); by default, the documents of the per-document rows in the order they first appear. With
    the documents of a whole report and the rows of the metrics :func:`sources` names, a value is derived as
    from the whole report.
    """
    if documents is None:
        documents = tuple(dict.fromkeys(row["document"] for row in report.per_document))
    documents = tuple(documents)
    groups: dict[Group, dict[str, list[Row]]] = {}
    for row in report.per_document:
        key = row["metric"] if row.get("label") is None else f"{row['metric']}:{row['label']}"
        groups.setdefault(group_of(row), {}).setdefault(key, []).append(row)
    position = {document: i for i, document in enumerate(documents)}
    # the fields of a metric share the table of the same columns: by identity, each kept alive beside its table
    tables: dict[tuple[tuple[int, int], ...], tuple[Columns, np.ndarray]] = {}
    found: list[Derivation] = []
    for row in overall_rows(report):
        if only is not None and row["metric"] != only[0]:
            continue
        group = group_of(row)
        for field, statistic, columns in _recipes(row, groups.get(group, {})):
            if only is not None and field != only[1]:
                continue
            key = tuple((id(rows), id(getters)) for rows, getters in columns)
            if key not in tables:
                tables[key] = columns, _table(position, columns)
            table = tables[key][1]
            found.append(Derivation(row["metric"], field, statistic, documents, table, row.get(field), group))
    return found


def counted_derivations(report: Report, documents: Sequence[str], tables: Mapping[str, np.ndarray]) -> list[Derivation]:
    """The derivations :func:`derivations` gives of ``report`` when its per-document rows are ``tp``/``fp``/``fn``
    counts without label, from those counts as tables instead of rows: ``tables[metric]`` is
    ``[documents, (tp, fp, fn)]``, a document's row the sum of its rows of ``metric`` (0 without), in the order
    of ``documents`` — as :func:`derivations` builds it, so the same values, bit for bit. A metric without a
    table has no derivation, as one without per-document rows."""
    documents = tuple(documents)
    found: list[Derivation] = []
    for row in overall_rows(report):
        metric: str = row["metric"]
        table = tables.get(_SUMMED_FROM.get(metric, metric))
        if table is None or not _has(row, PRF_COLUMNS):
            continue
        for field, statistic in _prf_values(row):
            found.append(Derivation(row["metric"], field, statistic, documents, table, row.get(field), group_of(row)))
    return found


def _prf_values(row: Row) -> Iterable[tuple[str, Statistic]]:
    """The fields of a ``tp``/``fp``/``fn`` row that are derived from its counts, with their statistics."""
    return ((field, STATISTICS.get(field)) for field in _VALUES if field in row)


def sources(metric: str) -> tuple[str, ...]:
    """The metrics whose per-document rows (labelled or not) an overall value of ``metric`` is derived from:
    its own (the timelines' micro row: the patients'), the CoNLL score's MUC, B³ and CEAFe, the timelines'
    Type A, Type B and official values' patients."""
    found = [metric, _SUMMED_FROM.get(metric, metric)]
    if metric == "conll":
        found.extend(_CONLL_PARTS)
    if metric in ("type_a", "type_b", "official"):
        found.append("patient")
    return tuple(dict.fromkeys(found))


Column = Callable[[Row], float]
Columns = list[tuple[list[Row], Sequence[Column]]]


def _recipes(row: Row, by_metric: dict[str, list[Row]]) -> Iterable[tuple[str, Statistic, Columns]]:
    metric: str = row["metric"]
    own = by_metric.get(_SUMMED_FROM.get(metric, metric), [])
    if own and _has(row, PRF_COLUMNS) and _has(own[0], PRF_COLUMNS):
        for field, statistic in _prf_values(row):
            yield field, statistic, [(own, _PRF_GETTERS)]
    elif own and _has(row, COREF_COLUMNS) and _has(own[0], COREF_COLUMNS):
        for field, name in _COREF_VALUES.items():
            if field in row:
                yield field, STATISTICS.get(name), [(own, _COREF_GETTERS)]
    elif own and _has(row, SEMEVAL_COLUMNS) and _has(own[0], SEMEVAL_COLUMNS):
        for field in _VALUES:
            if field in row:
                yield field, STATISTICS.get(f"semeval_{field}"), [(own, _SEMEVAL_GETTERS)]
    elif metric == "conll" and all(by_metric.get(part) for part in _CONLL_PARTS):
        yield "f1", STATISTICS.get("conll"), [(by_metric[p], _COREF_GETTERS) for p in _CONLL_PARTS]
    elif metric == "blanc" and all(by_metric.get(f"blanc:{part}") for part in _BLANC_PARTS):
        parts: Columns = [(by_metric[f"blanc:{part}"], _COREF_GETTERS) for part in _BLANC_PARTS]
        for field in _VALUES:
            if field in row:
                yield field, STATISTICS.get(f"blanc_{field}"), parts
    elif own and "rate" in row and _has(own[0], RATE_COLUMNS):
        yield "rate", STATISTICS.get("rate"), [(own, [_field(c) for c in RATE_COLUMNS])]
    elif own and "value" in row and "value" in own[0]:
        yield "value", STATISTICS.get("mean"), [(own, [_value_or_zero, _counted])]
    elif metric in ("type_a", "type_b", "official") and by_metric.get("patient"):
        patients = by_metric["patient"]
        weight = _counted if metric == "type_a" else _has_gold
        if metric == "official":
            yield (
                "f1",
                STATISTICS.get("official_timelines"),
                [(patients, [_field("f1"), _counted, _weighted("f1"), _has_gold])],
            )
            return
        for field in _VALUES:
            if field in row:
                values = _field(field) if metric == "type_a" else _weighted(field)
                yield field, STATISTICS.get("mean"), [(patients, [values, weight])]


def _has(row: Row, columns: Sequence[str]) -> bool:
    return all(column in row for column in columns)


def _field(name: str) -> Column:
    return lambda row: row[name]


def _value_or_zero(row: Row) -> float:
    return row["value"] or 0.0


def _counted(row: Row) -> float:
    return 0.0 if row.get("value", 0.0) is None else 1.0


def _has_gold(row: Row) -> float:
    return 1.0 if row["gold"] else 0.0


def _weighted(name: str) -> Column:
    return lambda row: row[name] if row["gold"] else 0.0


_PRF_GETTERS = tuple(_field(c) for c in PRF_COLUMNS)
_COREF_GETTERS = tuple(_field(c) for c in COREF_COLUMNS)
_SEMEVAL_GETTERS = tuple(_field(c) for c in SEMEVAL_COLUMNS)


def _table(position: dict[str, int], columns: Columns) -> np.ndarray:
    """``[documents, k]``: each group's columns of its rows, added at their documents' ``position`` (0 elsewhere),
    a document's rows in their order."""
    blocks = []
    for rows, getters in columns:
        block = np.zeros((len(position), len(getters)))
        at = np.fromiter((position[row["document"]] for row in rows), dtype=np.intp, count=len(rows))
        values = np.array([[getter(row) for getter in getters] for row in rows], dtype=float)
        np.add.at(block, at, values.reshape(len(rows), len(getters)))
        blocks.append(block)
    return np.hstack(blocks)


def with_intervals(
    report: Report, *, confidence: float = 0.95, resamples: int = 10_000, method: Method = "bca", seed: int = 0
) -> Report:
    """``report`` with ``FIELD_ci_low`` and ``FIELD_ci_high`` beside each overall value its documents determine.

    The interval is of the statistic of the per-document counts, unrounded;
    where a profile's arithmetic (rounding, say) makes the row's value differ
    from that statistic, a warning says so.
    """
    from nlpbench.stats.bootstrap import bootstrap_intervals

    found = derivations(report)
    if not found:
        raise InputError(f"--ci: no score of {report.task} is computed from per-document counts")
    intervals = bootstrap_intervals(
        [(derivation.counts, derivation.statistic) for derivation in found],
        confidence=confidence,
        resamples=resamples,
        method=method,
        seed=seed,
    )
    rows = {(group_of(row), row["metric"]): row for row in overall_rows(report)}
    for derivation, interval in zip(found, intervals, strict=True):
        row = rows[derivation.group, derivation.metric]
        row[f"{derivation.field}_ci_low"], row[f"{derivation.field}_ci_high"] = interval.low, interval.high
    unit = "patients" if report.task == "timelines" else "documents"
    report.inputs["ci"] = {
        "confidence": confidence,
        "method": method,
        "resamples": resamples,
        "seed": seed,
        unit: len(found[0].documents),
    }
    report.warnings.extend(arithmetic_warnings(report, found))
    return report
