"""The span metrics of :mod:`nlpbench.metrics.spans`, computed for many documents at once.

Each side of a batch becomes columns — document, start, end, the codes of
the compared properties and of the slice label — and every metric is a
count over rows, done with numpy:

- exact matches (``instance_strict``, ``type``, ``date_format``, ``hipaa``,
  ``token``): rows with equal keys pair off, so a key found ``g`` times in gold
  and ``p`` times in the prediction gives ``min(g, p)`` true positives;
- matches within a tolerance (``instance_relax``): rows sharing a document,
  a start (and a label) form a group; one gold and one predicted row match
  when their lengths differ by at most the tolerance, larger groups are paired
  greedily in length order, exactly as :func:`~nlpbench.metrics.spans.match_instances` does.

Counts come back per document (for the per-document table) and per label.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from nlpbench.metrics.counts import PRF
from nlpbench.metrics.spans import SpanRules
from nlpbench.model import Annotation

Pair = tuple[Sequence[Annotation], Sequence[Annotation]]
_EXACT_PROPERTIES = ("type", "date_format", "hipaa")


@dataclass
class BatchCounts:
    """Counts of one batch: ``documents[metric]`` is an (n_documents, 3) array of TP, FP, FN;
    ``labels[metric, label]`` the counts of a metric restricted to one label."""

    documents: dict[str, np.ndarray] = field(default_factory=dict)
    labels: dict[tuple[str, str], PRF] = field(default_factory=dict)
    #: annotations left out of the instance metrics because a later one shares their start
    collapsed: int = 0

    def document(self, metric: str, index: int) -> PRF:
        tp, fp, fn = (int(n) for n in self.documents[metric][index])
        return PRF(tp, fp, fn)


class _Codes(dict):
    """Small integer codes for hashable values, shared by both sides of a batch: ``codes[value]``."""

    def __missing__(self, value: Hashable) -> int:
        code = self[value] = len(self)
        return code


def batch_counts(
    pairs: Sequence[Pair],
    rules: SpanRules,
    metrics: Sequence[str],
    label: Callable[[Annotation], str] | None = None,
) -> BatchCounts:
    """Counts of each metric for each ``(gold, pred)`` pair of annotation lists, and per label."""
    values, labels = _Codes(), _Codes()
    properties = {m: rules.property_of(m) for m in metrics if m in _EXACT_PROPERTIES}
    want_tokens = "token" in metrics or label is not None
    gold, gold_left_out = _columns([g for g, _ in pairs], rules, properties, label, values, labels, want_tokens)
    pred, pred_left_out = _columns([p for _, p in pairs], rules, properties, label, values, labels, want_tokens)
    n_docs, n_labels = len(pairs), len(labels)
    counts = BatchCounts(collapsed=gold_left_out + pred_left_out)
    for metric in metrics:
        if metric == "token":
            counts.documents[metric] = _token_counts(gold, pred, rules.distinct_tokens, "token_doc", n_docs)
        elif metric == "instance_relax":
            counts.documents[metric] = _within(gold, pred, ["doc", "start"], "doc", n_docs, rules.tolerance)
        else:
            columns = ["doc", "start", "end"] + ([metric] if metric in properties else [])
            counts.documents[metric] = _exact(gold, pred, columns, "doc", n_docs)
    if label is not None:
        sliced = {
            "instance_strict": _exact(gold, pred, ["label", "doc", "start", "end"], "label", n_labels),
            "instance_relax": _within(gold, pred, ["label", "doc", "start"], "label", n_labels, rules.tolerance),
            "token": _token_counts(gold, pred, rules.distinct_tokens, "token_label", n_labels),
        }
        for metric, table in sliced.items():
            for name, code in labels.items():
                counts.labels[metric, name] = PRF(*(int(n) for n in table[code]))
    return counts


def span_counts(
    gold: Sequence[Annotation],
    pred: Sequence[Annotation],
    rules: SpanRules,
    metrics: Sequence[str],
    *,
    label: Callable[[Annotation], str] | None = None,
) -> dict[tuple[str, str | None], PRF]:
    """The counts of each metric for one document: keys ``(metric, None)``, and with ``label``
    ``(metric, name)`` for ``instance_strict``, ``instance_relax`` and ``token`` restricted to each label."""
    batch = batch_counts([(gold, pred)], rules, metrics, label)
    counts: dict[tuple[str, str | None], PRF] = {(metric, None): batch.document(metric, 0) for metric in metrics}
    counts.update(batch.labels)
    return counts


def _columns(documents, rules, properties, label, values, labels, want_tokens) -> tuple[dict[str, np.ndarray], int]:
    """One side of a batch as columns, and how many of its annotations collapsing left out.

    A row per instance: ``doc``, ``start``, ``end``, ``label`` and the code of each
    compared property; a row per token: ``token_doc``, ``token_start``,
    ``token_length``, ``token_label``. Each column is one list comprehension over
    all the side's annotations, then numpy.
    """
    annotations = [a for found in documents for a in found]
    n = len(annotations)
    doc = np.repeat(np.arange(len(documents), dtype=np.int64), [len(found) for found in documents])
    spans = [a.span for a in annotations]
    start = np.fromiter([span.start for span in spans], np.int64, n)
    end = np.fromiter([span.end for span in spans], np.int64, n)
    code = np.fromiter([labels[label(a)] for a in annotations], np.int64, n) if label else np.zeros(n, np.int64)
    columns = {"doc": doc, "start": start, "end": end, "label": code}
    for name, compared in properties.items():
        columns[name] = np.fromiter([values[compared(a)] for a in annotations], np.int64, n)
    if want_tokens:
        tokens = [rules.tokenize(a) for a in annotations]
        per_annotation = np.fromiter(map(len, tokens), np.int64, n)
        units = np.fromiter(chain.from_iterable(chain.from_iterable(tokens)), np.int64).reshape(-1, 2)
        columns["token_doc"] = np.repeat(doc, per_annotation)
        columns["token_start"] = np.repeat(start, per_annotation) + units[:, 0]
        columns["token_length"] = units[:, 1]
        columns["token_label"] = np.repeat(code, per_annotation)
    if not rules.collapse_by_start:
        return columns, 0
    # the last annotation read of each (document, start): the first one met walking backwards
    _, from_end = np.unique(_pack([doc[::-1], start[::-1]], [])[0], return_index=True)
    kept = np.sort(n - 1 - from_end)
    for name in ("doc", "start", "end", "label", *properties):
        columns[name] = columns[name][kept]
    return columns, n - len(kept)


def _token_counts(gold, pred, distinct: bool, group: str, n_groups: int) -> np.ndarray:
    """Exact token matches per document, or per label (tokens then match only within their label).

    ``distinct`` first keeps one row per token (per label when grouping by label).
    """
    columns = ["token_doc", "token_start", "token_length"]
    if group == "token_label":
        columns.insert(0, group)
    if distinct:
        gold, pred = _distinct_rows(gold, columns), _distinct_rows(pred, columns)
    return _exact(gold, pred, columns, group, n_groups)


def _distinct_rows(side: dict[str, np.ndarray], columns: list[str]) -> dict[str, np.ndarray]:
    keys = _pack([side[c] for c in columns], [side[c] for c in columns])[0]
    _, first = np.unique(keys, return_index=True)
    return {c: side[c][first] for c in set(columns)}


def _exact(gold, pred, columns: list[str], group: str, n_groups: int) -> np.ndarray:
    """(n_groups, 3) TP, FP, FN when rows with equal ``columns`` pair off one to one."""
    n_keys, gold_of, pred_of = _keyed(gold, pred, columns)
    matched = np.minimum(np.bincount(gold_of, minlength=n_keys), np.bincount(pred_of, minlength=n_keys))
    return _per_group(gold, pred, gold_of, pred_of, matched, group, n_groups)


def _within(gold, pred, columns: list[str], group: str, n_groups: int, tolerance: int) -> np.ndarray:
    """(n_groups, 3) TP, FP, FN when rows sharing ``columns`` pair off by length within ``tolerance``."""
    n_keys, gold_of, pred_of = _keyed(gold, pred, columns)
    n_gold_key = np.bincount(gold_of, minlength=n_keys)
    n_pred_key = np.bincount(pred_of, minlength=n_keys)
    gold_length, pred_length = gold["end"] - gold["start"], pred["end"] - pred["start"]
    matched = np.zeros(n_keys, dtype=np.int64)
    single = (n_gold_key == 1) & (n_pred_key == 1)
    length_of_gold = np.zeros(n_keys, dtype=np.int64)
    length_of_pred = np.zeros(n_keys, dtype=np.int64)
    length_of_gold[gold_of] = gold_length
    length_of_pred[pred_of] = pred_length
    matched[single] = np.abs(length_of_gold[single] - length_of_pred[single]) <= tolerance
    crowded = np.flatnonzero((n_gold_key > 0) & (n_pred_key > 0) & ~single)
    if len(crowded):
        gold_order, pred_order = np.argsort(gold_of, kind="stable"), np.argsort(pred_of, kind="stable")
        gold_from = np.searchsorted(gold_of[gold_order], crowded)
        pred_from = np.searchsorted(pred_of[pred_order], crowded)
        for key, g, p in zip(crowded, gold_from, pred_from, strict=True):
            gold_rows = gold_order[g : g + n_gold_key[key]]
            pred_rows = pred_order[p : p + n_pred_key[key]]
            matched[key] = _greedy(gold_length[gold_rows], pred_length[pred_rows], tolerance)
    return _per_group(gold, pred, gold_of, pred_of, matched, group, n_groups)


def _keyed(gold, pred, columns: list[str]) -> tuple[int, np.ndarray, np.ndarray]:
    """How many distinct keys (rows' values of ``columns``) the two sides hold, and each row's key number."""
    gold_keys, pred_keys = _pack([gold[c] for c in columns], [pred[c] for c in columns])
    keys, inverse = np.unique(np.concatenate([gold_keys, pred_keys]), return_inverse=True)
    return len(keys), inverse[: len(gold_keys)], inverse[len(gold_keys) :]


def _per_group(gold, pred, gold_of, pred_of, matched: np.ndarray, group: str, n_groups: int) -> np.ndarray:
    """(n_groups, 3) TP, FP, FN: TP = the pairs ``matched`` under each key, summed over the keys of a group
    (rows with one key share a group); FP = predicted rows − TP; FN = gold rows − TP."""
    key_group = np.empty(len(matched), dtype=np.int64)
    key_group[np.concatenate([gold_of, pred_of])] = np.concatenate([gold[group], pred[group]])
    tp = np.bincount(key_group, weights=matched, minlength=n_groups).astype(np.int64)
    n_gold = np.bincount(gold[group], minlength=n_groups)
    n_pred = np.bincount(pred[group], minlength=n_groups)
    return np.stack([tp, n_pred - tp, n_gold - tp], axis=1)


def _greedy(gold_lengths: np.ndarray, pred_lengths: np.ndarray, tolerance: int) -> int:
    """The size of the maximum matching of two length lists within ``tolerance``, walking both sorted."""
    gold_sorted, pred_sorted = sorted(gold_lengths.tolist()), sorted(pred_lengths.tolist())
    i = j = matched = 0
    while i < len(gold_sorted) and j < len(pred_sorted):
        difference = gold_sorted[i] - pred_sorted[j]
        if abs(difference) <= tolerance:
            matched += 1
            i += 1
            j += 1
        elif difference < 0:
            i += 1
        else:
            j += 1
    return matched


def _pack(gold_columns: list[np.ndarray], pred_columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """One integer key per row for each side, equal exactly when all columns are equal.

    Each column is counted from its smallest value on either side (a Treebank
    token can start at -1) with the radix of its range. When the radices do not
    fit in 63 bits, rows are numbered by a joint sort instead. ``pred_columns``
    may be empty: the gold side alone is keyed.
    """
    sides = [columns for columns in (gold_columns, pred_columns) if columns]
    lows, radices = [], []
    for i in range(len(gold_columns)):
        both = [columns[i] for columns in sides]
        low = min(int(column.min(initial=0)) for column in both)
        lows.append(low)
        radices.append(max(int(column.max(initial=0)) for column in both) - low + 1)
    if np.prod([float(r) for r in radices]) < 2**62:
        keys = []
        for columns in sides:
            key = np.zeros(len(columns[0]), dtype=np.int64)
            for column, low, radix in zip(columns, lows, radices, strict=True):
                key = key * radix + (column - low)
            keys.append(key)
        return keys[0], keys[1] if len(keys) > 1 else keys[0][:0]
    rows = np.concatenate([np.stack(columns, axis=1) for columns in sides])
    _, numbered = np.unique(rows, axis=0, return_inverse=True)
    numbered = numbered.reshape(-1)
    return numbered[: len(gold_columns[0])], numbered[len(gold_columns[0]) :]
