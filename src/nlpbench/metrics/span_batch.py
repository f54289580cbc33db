"""The span metrics of :mod:`nlpbench.metrics.spans`, computed for many documents at once.

Each document's annotations of one type come as
:class:`~nlpbench.model.SpanColumns`; each side of a batch becomes numpy
columns — document, start, end, the codes of the compared properties and
of the slice label — and every metric is a count over rows:

- exact matches (``instance_strict``, ``type``, ``date_format``, ``hipaa``,
  ``token``): rows with equal keys pair off, so a key found ``g`` times in gold
  and ``p`` times in the prediction gives ``min(g, p)`` true positives;
- matches within a tolerance (``instance_relax``): rows sharing a document,
  a start (and a label) form a group; one gold and one predicted row match
  when their lengths differ by at most the tolerance, larger groups are paired
  greedily in length order, exactly as :func:`~nlpbench.metrics.spans.match_instances` does.

Each matching marks which gold and which predicted rows are matched; counts
come back per document (for the per-document table) and per label (gold
labels for TP and FN, predicted labels for FP).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, filterfalse, starmap
from typing import Any

import numpy as np

from nlpbench.metrics.counts import PRF
from nlpbench.metrics.spans import (
    EXACT_PROPERTIES,
    SLICED,
    SpanRules,
    Tokenizer,
    cut_many,
    greedy_pairs,
    hashable,
    in_text_order,
    tokens_as_arrays,
)
from nlpbench.model import MISSING, Annotation, SpanColumns
from nlpbench.model.columns import LENGTH, START, SUBTYPE, TEXT

Pair = tuple[SpanColumns, SpanColumns]


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

    def total(self, metric: str) -> PRF:
        """The counts of ``metric`` summed over the documents."""
        tp, fp, fn = (int(n) for n in self.documents[metric].sum(axis=0))
        return PRF(tp, fp, fn)


class TokenTable(dict):
    """The tokens of each distinct annotation text, cut once and kept as numpy rows.

    ``table[key]`` is a text's number (the key is the text, or ``(text, length)`` when
    the annotation's length is not its text's); the texts of a batch not seen before
    are numbered and cut with ``tokenize`` together, in the order first met.
    Text ``i``'s tokens are rows ``first[i]`` to ``first[i] + count[i]``
    of ``offset`` and ``length``; the arrays grow by doubling, so that adding a batch
    costs what the batch holds, not what the table holds. Past ``KEPT`` texts it
    forgets them all before a batch, so that memory stays flat.
    """

    KEPT = 1 << 17

    def __init__(self, tokenize: Tokenizer):
        super().__init__()
        self.tokenize = tokenize
        self._forget()

    def _forget(self) -> None:
        self.clear()
        self.count = self.first = self.offset = self.length = np.zeros(0, np.int64)
        self.tokens = 0  # the rows of ``offset`` and ``length`` in use

    def rows(self, texts: list[str | None], lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each token of each annotation as a row: the annotation's position, the token's offset from its
        start and its length."""
        if len(self) > self.KEPT:
            self._forget()
        keys: list = texts
        try:
            lengths_of_texts = np.fromiter(map(len, texts), np.int64, len(texts))  # type: ignore[arg-type]  # None raises
            misfits = np.flatnonzero(lengths_of_texts != lengths).tolist()
        except TypeError:  # a text is unknown (None): every text is keyed with its length
            keys = list(zip(texts, lengths.tolist(), strict=True))
        else:
            if misfits:
                keys = list(texts)
                for index in misfits:
                    keys[index] = (texts[index], int(lengths[index]))
        self._add(keys)
        text_of = np.fromiter(map(self.__getitem__, keys), np.int64, len(keys))
        per_annotation = self.count[text_of]
        owner = np.repeat(np.arange(len(keys)), per_annotation)
        # a token's row: where its text's tokens begin, plus its place among them
        place = np.arange(len(owner)) - np.repeat(np.cumsum(per_annotation) - per_annotation, per_annotation)
        row = np.repeat(self.first[text_of], per_annotation) + place
        return owner, self.offset[row], self.length[row]

    def _add(self, keys: list) -> None:
        """Number the keys not seen before and add their texts' tokens to the arrays; the loops run in C
        (``map``, ``filterfalse``), and the new texts are cut together (:func:`~nlpbench.metrics.spans.cut_many`)."""
        fresh = list(filterfalse(self.__contains__, dict.fromkeys(keys)))
        if not fresh:
            return
        known = len(self)
        self.update(zip(fresh, range(known, known + len(fresh)), strict=True))
        if all(map(str.__instancecheck__, fresh)):
            count, offset, length = cut_many(self.tokenize, fresh)
        else:  # the texts as long as they are cut together, the others (text, length) one at a time
            whole = np.fromiter(map(str.__instancecheck__, fresh), bool, len(fresh))
            apart = [fresh[i] for i in np.flatnonzero(~whole).tolist()]
            parts = [
                (np.flatnonzero(whole), cut_many(self.tokenize, list(compress(fresh, whole)))),
                (np.flatnonzero(~whole), tokens_as_arrays(list(starmap(self.tokenize, apart)))),
            ]
            count, offset, length = in_text_order(parts, len(fresh))
        self.first = _appended(self.first, known, self.tokens + np.cumsum(count) - count)
        self.count = _appended(self.count, known, count)
        self.offset = _appended(self.offset, self.tokens, offset)
        self.length = _appended(self.length, self.tokens, length)
        self.tokens += len(offset)


def _appended(buffer: np.ndarray, used: int, values: np.ndarray) -> np.ndarray:
    """``buffer`` with ``values`` written after its first ``used`` entries; when they do not fit, a new buffer twice
    the size needed, so that appending costs what is appended, on average."""
    needed = used + len(values)
    if needed > len(buffer):
        grown = np.empty(max(2 * needed, 1024), buffer.dtype)
        grown[:used] = buffer[:used]
        buffer = grown
    buffer[used:needed] = values
    return buffer


class _Codes(dict):
    """Small integer codes for hashable values, shared by both sides of a batch: ``codes[value]``."""

    def __missing__(self, value: Hashable) -> int:
        code = self[value] = len(self)
        return code


def batch_counts(
    pairs: Sequence[Pair],
    rules: SpanRules,
    metrics: Sequence[str],
    label: Callable[[Any], str] | None = None,
    texts: TokenTable | None = None,
) -> BatchCounts:
    """Counts of each metric for each ``(gold, pred)`` pair of one document's columns, and per label.

    ``label`` gives the slice label of a subtype value; ``texts`` keeps the tokens of the texts
    met (of earlier batches too), cut with ``rules.tokenize``. Per label, ``instance_strict``,
    ``instance_relax`` and ``token`` are matched as for the whole (labels play no part in
    matching), then sliced: true positives and false negatives by the gold
    annotation's label, false positives by the predicted one's. The slices of a
    metric add up to its total.
    """
    values, labels = _Codes(), _Codes()
    properties = {m: rules.compared(m) for m in metrics if m in EXACT_PROPERTIES}
    if "date_format" in properties and rules.type_attribute != "dateFormat":
        raise ValueError("date_format compares the subtype of dates: rules whose type attribute is dateFormat")
    if texts is None and ("token" in metrics or label is not None):
        texts = TokenTable(rules.tokenize)
    gold, gold_left_out = _columns([g.rows for g, _ in pairs], rules, properties, label, values, labels, texts)
    pred, pred_left_out = _columns([p.rows for _, p in pairs], rules, properties, label, values, labels, texts)
    n_docs, n_labels = len(pairs), len(labels)
    counts = BatchCounts(collapsed=gold_left_out + pred_left_out)
    wanted = list(metrics) + [m for m in SLICED if label is not None and m not in metrics]
    for metric in wanted:
        group = "doc"
        if metric == "token":
            if rules.distinct_tokens:
                gold_side, pred_side, hits = _distinct_hits(gold, pred)
            else:
                gold_side, pred_side = gold, pred
                hits = _exact_hits(gold, pred, list(_TOKEN_KEY))
            gold_side = gold_side | {"doc": gold_side["token_doc"], "label": gold_side["token_label"]}
            pred_side = pred_side | {"doc": pred_side["token_doc"], "label": pred_side["token_label"]}
        elif metric == "instance_relax" and rules.tolerance:
            gold_side, pred_side = gold, pred
            hits = _within_hits(gold, pred, ["doc", "start"], rules.tolerance)
        else:
            gold_side, pred_side = gold, pred
            # instance_strict, the properties, and instance_relax with no tolerance: equal (start, end)
            hits = _exact_hits(gold, pred, ["doc", "start", "end"] + ([metric] if metric in properties else []))
        if metric in metrics:
            counts.documents[metric] = _per_group(gold_side, pred_side, *hits, group, n_docs)
        if label is not None and metric in SLICED:
            table = _per_group(gold_side, pred_side, *hits, "label", n_labels)
            for name, code in labels.items():
                counts.labels[metric, name] = PRF(*(int(n) for n in table[code]))
    return counts


_TOKEN_KEY = ("token_doc", "token_start", "token_length")


def span_counts(
    gold: Sequence[Annotation],
    pred: Sequence[Annotation],
    rules: SpanRules,
    metrics: Sequence[str],
    *,
    label: Callable[[Any], str] | None = None,
) -> dict[tuple[str, str | None], PRF]:
    """The counts of each metric for one document's annotation objects: keys ``(metric, None)``, and with
    ``label`` (the slice label of a subtype value) ``(metric, name)`` for ``instance_strict``,
    ``instance_relax`` and ``token`` sliced by label."""
    columns = [SpanColumns.of(side, rules.type_attribute) for side in (gold, pred)]
    batch = batch_counts([(columns[0], columns[1])], rules, metrics, label)
    counts: dict[tuple[str, str | None], PRF] = {(metric, None): batch.document(metric, 0) for metric in metrics}
    counts.update(batch.labels.items())
    return counts


def _columns(documents, rules, properties, label, values, labels, texts) -> tuple[dict[str, np.ndarray], int]:
    """One side of a batch (the rows of each document) as numpy columns, and how many of its annotations
    collapsing left out.

    A row per instance: ``doc``, ``start``, ``end``, ``label`` and the code of each
    compared property; a row per token: ``token_doc``, ``token_start``,
    ``token_length``, ``token_label`` (when ``texts`` is given: :class:`TokenTable`).
    """
    rows = list(chain.from_iterable(documents))
    n = len(rows)
    doc = np.repeat(np.arange(len(documents), dtype=np.int64), list(map(len, documents)))
    start = np.fromiter(map(START, rows), np.int64, n)
    length = np.fromiter(map(LENGTH, rows), np.int64, n)
    kinds, kind_of = _kinds(list(map(SUBTYPE, rows))) if label or properties else ([], np.zeros(n, np.int64))
    code = _codes([labels[label(kind)] for kind in kinds], kind_of) if label else np.zeros(n, np.int64)
    columns = {"doc": doc, "start": start, "end": start + length, "label": code}
    for name, compared in properties.items():
        columns[name] = _compared_codes(kinds, kind_of, compared, values)
    if texts is not None:
        owner, offset, token_length = texts.rows(list(map(TEXT, rows)), length)
        columns["token_doc"] = doc[owner]
        columns["token_start"] = start[owner] + offset
        columns["token_length"] = token_length
        columns["token_label"] = code[owner]
    if not rules.collapse_by_start:
        return columns, 0
    # the last annotation read of each (document, start): the first one met walking backwards
    _, from_end = np.unique(_pack([doc[::-1], start[::-1]], [])[0], return_index=True)
    kept = np.sort(n - 1 - from_end)
    for name in ("doc", "start", "end", "label", *properties):
        columns[name] = columns[name][kept]
    return columns, n - len(kept)


def _kinds(subtypes: list[Any]) -> tuple[list[Any], np.ndarray]:
    """The distinct subtypes and each subtype's place among them. Subtypes that are equal share a place
    (1 and true too: their slice labels and compared values are equal as well); JSON lists and objects
    are told apart by :func:`~nlpbench.metrics.spans.hashable`."""
    try:
        place = dict.fromkeys(subtypes)
    except TypeError:
        keys = list(map(hashable, subtypes))
        first = dict(zip(keys, subtypes, strict=True))  # a subtype for each key (any of the equal ones)
        place = dict(zip(first, range(len(first)), strict=True))
        return [first[key] for key in place], np.fromiter(map(place.__getitem__, keys), np.int64, len(keys))
    place = dict(zip(place, range(len(place)), strict=True))
    return list(place), np.fromiter(map(place.__getitem__, subtypes), np.int64, len(subtypes))


def _codes(of_kind: list[int], kind_of: np.ndarray) -> np.ndarray:
    """Each row's code, from the code of each kind and each row's kind."""
    return np.array(of_kind, np.int64)[kind_of] if of_kind else np.zeros(len(kind_of), np.int64)


def _compared_codes(
    kinds: list[Any], kind_of: np.ndarray, compared: Callable[[Any], Hashable], values: _Codes
) -> np.ndarray:
    """The code of what a property compares for each row, from its subtype's kind (:func:`_kinds`); a missing
    subtype that equals nothing (``compared`` gives a new value each time) gets a code of its own on each row."""
    codes = _codes([values[compared(kind)] for kind in kinds], kind_of)
    missing = [place for place, kind in enumerate(kinds) if kind is MISSING]
    if missing and compared(MISSING) != compared(MISSING):
        rows = np.flatnonzero(np.isin(kind_of, missing))
        codes[rows] = [values[compared(MISSING)] for _ in range(len(rows))]
    return codes


def _distinct_hits(gold, pred) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], Hits]:
    """The first token row of each distinct token (document, start, length) on each side, and which of them the
    other side has too: one sort a side, each side's distinct keys then looked up in the other's."""
    keys = _pack([gold[c] for c in _TOKEN_KEY], [pred[c] for c in _TOKEN_KEY])
    sides, distinct = [], []
    for side, side_keys in zip((gold, pred), keys, strict=True):
        found, first = np.unique(side_keys, return_index=True)
        sides.append({c: side[c][first] for c in (*_TOKEN_KEY, "token_label")})
        distinct.append(found)
    return sides[0], sides[1], (_in_sorted(distinct[0], distinct[1]), _in_sorted(distinct[1], distinct[0]))


def _in_sorted(values: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    """Which of ``values`` ``sorted_values`` holds."""
    if not len(sorted_values):
        return np.zeros(len(values), bool)
    at = np.minimum(np.searchsorted(sorted_values, values), len(sorted_values) - 1)
    return sorted_values[at] == values


Hits = tuple[np.ndarray, np.ndarray]


def _exact_hits(gold, pred, columns: list[str]) -> Hits:
    """Which gold and which predicted rows are matched when rows with equal ``columns`` pair off one to one.

    Of several rows with one key, the first predicted rows match the last gold rows, as
    :func:`~nlpbench.metrics.spans.match_instances` pairs them (each prediction takes the gold one
    waiting last).
    """
    n_keys, gold_of, pred_of = _keyed(gold, pred, columns)
    n_gold, n_pred = np.bincount(gold_of, minlength=n_keys), np.bincount(pred_of, minlength=n_keys)
    matched = np.minimum(n_gold, n_pred)
    gold_hit = (_rank(gold_of, from_end=True) if n_gold.max(initial=0) > 1 else 0) < matched[gold_of]
    pred_hit = (_rank(pred_of) if n_pred.max(initial=0) > 1 else 0) < matched[pred_of]
    return gold_hit, pred_hit


def _rank(key_of: np.ndarray, from_end: bool = False) -> np.ndarray:
    """Each row's place among the rows of its key, in row order (or counted from the last)."""
    order = np.argsort(key_of, kind="stable")
    ordered = key_of[order]
    position = np.arange(len(ordered))
    if from_end:
        placed = np.searchsorted(ordered, ordered, side="right") - 1 - position
    else:
        placed = position - np.searchsorted(ordered, ordered, side="left")
    rank = np.empty_like(placed)
    rank[order] = placed
    return rank


def _within_hits(gold, pred, columns: list[str], tolerance: int) -> Hits:
    """Which rows are matched when rows sharing ``columns`` pair off by length within ``tolerance``."""
    n_keys, gold_of, pred_of = _keyed(gold, pred, columns)
    n_gold_key = np.bincount(gold_of, minlength=n_keys)
    n_pred_key = np.bincount(pred_of, minlength=n_keys)
    gold_length, pred_length = gold["end"] - gold["start"], pred["end"] - pred["start"]
    single = (n_gold_key == 1) & (n_pred_key == 1)
    length_of_gold = np.zeros(n_keys, dtype=np.int64)
    length_of_pred = np.zeros(n_keys, dtype=np.int64)
    length_of_gold[gold_of] = gold_length
    length_of_pred[pred_of] = pred_length
    single_hit = single & (np.abs(length_of_gold - length_of_pred) <= tolerance)
    gold_hit, pred_hit = single_hit[gold_of], single_hit[pred_of]
    crowded = np.flatnonzero((n_gold_key > 0) & (n_pred_key > 0) & ~single)
    if len(crowded):
        gold_order, pred_order = np.argsort(gold_of, kind="stable"), np.argsort(pred_of, kind="stable")
        gold_from = np.searchsorted(gold_of[gold_order], crowded)
        pred_from = np.searchsorted(pred_of[pred_order], crowded)
        for key, g, p in zip(crowded, gold_from, pred_from, strict=True):
            gold_rows = gold_order[g : g + n_gold_key[key]]
            pred_rows = pred_order[p : p + n_pred_key[key]]
            gold_matched, pred_matched = greedy_pairs(gold_length[gold_rows], pred_length[pred_rows], tolerance)
            gold_hit[gold_rows[gold_matched]] = True
            pred_hit[pred_rows[pred_matched]] = True
    return gold_hit, pred_hit


def _keyed(gold, pred, columns: list[str]) -> tuple[int, np.ndarray, np.ndarray]:
    """How many distinct keys (rows' values of ``columns``) the two sides hold, and each row's key number."""
    gold_keys, pred_keys = _pack([gold[c] for c in columns], [pred[c] for c in columns])
    keys, inverse = np.unique(np.concatenate([gold_keys, pred_keys]), return_inverse=True)
    return len(keys), inverse[: len(gold_keys)], inverse[len(gold_keys) :]


def _per_group(gold, pred, gold_hit, pred_hit, group: str, n_groups: int) -> np.ndarray:
    """(n_groups, 3) TP, FP, FN: TP and FN are the matched and unmatched gold rows of each group,
    FP the unmatched predicted rows of each group."""
    n_gold = np.bincount(gold[group], minlength=n_groups)
    tp = np.bincount(gold[group][gold_hit], minlength=n_groups)
    fp = np.bincount(pred[group], minlength=n_groups) - np.bincount(pred[group][pred_hit], minlength=n_groups)
    return np.stack([tp, fp, n_gold - tp], axis=1)


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
