"""Clinical coding: which codes of a document were found, with or without the text that justifies them.

Without references (CodiEsp-D and -P) a document's gold and predicted codes
are compared as sets (:func:`~nlpbench.metrics.counts.score_set`). With
references (CodiEsp-X) a gold code is found when a prediction of the same code
*contains* one of its references, reaching at most ``slack`` characters
beyond it on either side::

    0 ≤ reference.start − prediction.start ≤ slack  and  0 ≤ prediction.end − reference.end ≤ slack

One found reference is enough for a code, however many it has. Per document,
over distinct codes: TP = gold codes found, FP = predicted codes − TP,
FN = gold codes − TP (:func:`reference_counts`). :func:`found_keys` does the
matching over whole corpora at once, on integer keys (a document and a code,
or a category) and numpy arrays.

Code categories: the first 3 characters of an ICD-10-CM diagnosis code
(``n39.0`` → ``n39``), the first 4 of an ICD-10-PCS procedure code
(section, body system, root operation, body part: ``0dt70zz`` → ``0dt7``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import TYPE_CHECKING, TypeAlias, overload

from nlpbench.metrics.counts import PRF
from nlpbench.model import CodeReference

if TYPE_CHECKING:  # numpy is loaded by found_keys, for whole corpora: one document is matched in plain Python
    import numpy as np

Bounds = tuple[int, int]
#: Starts and ends of many bounds, pair by pair.
ArrayBounds: TypeAlias = "tuple[np.ndarray, np.ndarray]"

#: Pairs of a prediction and a gold reference of the same key compared at once: bounds the memory of found_keys.
_PAIRS = 1 << 22

#: Characters that make the category of a diagnosis (D) and a procedure (P) code.
CATEGORY_LENGTH = {"D": 3, "P": 4}


@overload
def contains(reference: Bounds, prediction: Bounds, slack: int) -> bool: ...
@overload
def contains(reference: ArrayBounds, prediction: ArrayBounds, slack: int) -> np.ndarray: ...
def contains(reference: Bounds | ArrayBounds, prediction: Bounds | ArrayBounds, slack: int) -> bool | np.ndarray:
    """Whether ``prediction`` covers ``reference`` with at most ``slack`` extra characters on each side.

    The bounds may also be numpy arrays of starts and ends: the answer is then an array, pair by pair.
    """
    before = reference[0] - prediction[0]
    after = prediction[1] - reference[1]
    return (before >= 0) & (before <= slack) & (after >= 0) & (after <= slack)


def reference_counts(
    gold: Iterable[CodeReference],
    pred: Iterable[CodeReference],
    *,
    slack: int = 10,
    bounds: Callable[[CodeReference], Bounds] = attrgetter("covering_bounds"),
    key: Callable[[str], str] = str,
) -> PRF:
    """TP, FP and FN over the distinct ``key(code)`` of one document's gold and predicted references.

    ``bounds`` gives the (start, end) a reference is compared by; ``key`` what
    is compared of a code (the code itself, or its category). In plain Python,
    each prediction against the gold references of its key: :func:`found_keys`
    does the same for whole corpora with numpy.
    """
    if slack < 0:
        raise ValueError(f"slack must be 0 or more, not {slack}")
    references: dict[str, list[Bounds]] = {}
    for reference in gold:
        references.setdefault(key(reference.code), []).append(bounds(reference))
    predicted: dict[str, list[Bounds]] = {}
    for prediction in pred:
        predicted.setdefault(key(prediction.code), []).append(bounds(prediction))
    found = sum(
        any(contains(reference, span, slack) for span in predicted.get(code, ()) for reference in listed)
        for code, listed in references.items()
    )
    return PRF.from_matches(found, len(references), len(predicted))


def found_keys(
    gold_keys: np.ndarray,
    gold_starts: np.ndarray,
    gold_ends: np.ndarray,
    pred_keys: np.ndarray,
    pred_starts: np.ndarray,
    pred_ends: np.ndarray,
    *,
    slack: int = 10,
) -> np.ndarray:
    """The distinct gold keys one of whose references a prediction of the same key contains (:func:`contains`).

    Entry ``i`` of the three gold arrays is one gold reference, of the three
    predicted ones one prediction; keys are integers.
    """
    import numpy as np  # loaded for whole corpora only

    if slack < 0:
        raise ValueError(f"slack must be 0 or more, not {slack}")
    order = np.argsort(gold_keys, kind="stable")
    keys, starts, ends = gold_keys[order], gold_starts[order], gold_ends[order]
    # predictions of a gold key, the only ones that can match (found in a table of the keys' range when small)
    small = len(keys) and int(keys[-1]) - int(keys[0]) < _PAIRS * 16
    candidates = np.flatnonzero(np.isin(pred_keys, keys, kind="table" if small else None))
    first = np.zeros(len(pred_keys), dtype=np.intp)
    count = np.zeros(len(pred_keys), dtype=np.intp)  # gold references of each prediction's key
    first[candidates] = np.searchsorted(keys, pred_keys[candidates], side="left")
    count[candidates] = np.searchsorted(keys, pred_keys[candidates], side="right") - first[candidates]
    found = []
    # every (prediction, gold reference of its key) pair, a bounded number at a time
    for chunk in np.split(candidates, np.flatnonzero(np.diff(np.cumsum(count[candidates]) // _PAIRS)) + 1):
        pairs = count[chunk]
        pred = np.repeat(chunk, pairs)
        offsets = np.arange(pairs.sum()) - np.repeat(np.cumsum(pairs) - pairs, pairs)
        ref = np.repeat(first[chunk], pairs) + offsets
        found.append(keys[ref[contains((starts[ref], ends[ref]), (pred_starts[pred], pred_ends[pred]), slack)]])
    return sorted_distinct(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)


def sorted_distinct(keys: np.ndarray) -> np.ndarray:
    """The distinct values of ``keys`` in order: what ``np.unique(keys)`` gives, without its check for a masked
    array, which loads ``numpy.ma`` (about 20 ms of a command's start-up)."""
    import numpy as np  # loaded for whole corpora only

    ordered = np.sort(keys)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if len(ordered) else ordered


def code_kind(code: str) -> str:
    """``"D"`` for an ICD-10-CM diagnosis code, ``"P"`` for an ICD-10-PCS procedure code, by their shape.

    Diagnosis codes are a three-character category, alone or followed by a dot
    and up to four more characters; procedure codes have no dot and four
    (the partial codes CodiEsp uses) or seven characters.
    """
    return "D" if len(code) <= 3 or code[3] == "." else "P"


def code_category(code: str, kind: str | None = None) -> str:
    """The category of a code of ``kind`` ``"D"`` or ``"P"``; recognised by :func:`code_kind` when None."""
    return code[: CATEGORY_LENGTH[kind or code_kind(code)]]
