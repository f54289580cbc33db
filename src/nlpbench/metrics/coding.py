"""Clinical coding: which codes of a document were found, with or without the text that justifies them.

Without references (CodiEsp-D and -P) a document's gold and predicted codes
are compared as sets (:func:`~nlpbench.metrics.counts.score_set`). With
references (CodiEsp-X) a gold code is found when a prediction of the same code
*contains* one of its references, reaching at most ``slack`` characters
beyond it on either side::

    0 ≤ reference.start − prediction.start ≤ slack  and  0 ≤ prediction.end − reference.end ≤ slack

One found reference is enough for a code, however many it has. Per document,
over distinct codes: TP = gold codes found, FP = predicted codes − TP,
FN = gold codes − TP (:func:`reference_counts`).

Code categories: the first 3 characters of an ICD-10-CM diagnosis code
(``n39.0`` → ``n39``), the first 4 of an ICD-10-PCS procedure code
(section, body system, root operation, body part: ``0dt70zz`` → ``0dt7``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import attrgetter

from nlpbench.metrics.counts import PRF
from nlpbench.model import CodeReference

Bounds = tuple[int, int]

#: Characters that make the category of a diagnosis (D) and a procedure (P) code.
CATEGORY_LENGTH = {"D": 3, "P": 4}


def contains(reference: Bounds, prediction: Bounds, slack: int) -> bool:
    """Whether ``prediction`` covers ``reference`` with at most ``slack`` extra characters on each side."""
    before = reference[0] - prediction[0]
    after = prediction[1] - reference[1]
    return 0 <= before <= slack and 0 <= after <= slack


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
    is compared of a code (the code itself, or its category).
    """
    if slack < 0:
        raise ValueError(f"slack must be 0 or more, not {slack}")
    gold_bounds: dict[str, list[Bounds]] = {}
    for reference in gold:
        gold_bounds.setdefault(key(reference.code), []).append(bounds(reference))
    predicted: set[str] = set()
    candidates: dict[str, list[Bounds]] = {}  # predictions of gold codes: the only ones that can be found
    for reference in pred:
        code = key(reference.code)
        predicted.add(code)
        if code in gold_bounds:
            candidates.setdefault(code, []).append(bounds(reference))
    found = sum(
        any(contains(g, p, slack) for g in references for p in candidates.get(code, ()))
        for code, references in gold_bounds.items()
    )
    return PRF.from_matches(found, len(gold_bounds), len(predicted))


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
