"""Compare two systems scored on the same documents: every overall value, its difference and a paired test."""

from __future__ import annotations

from collections.abc import Sequence

from nlpbench.errors import InputError
from nlpbench.report.model import Report, Row
from nlpbench.stats.paired import approximate_randomization, paired_bootstrap
from nlpbench.stats.report import Derivation, arithmetic_warnings, derivations

TESTS = ("randomization", "bootstrap")


def compare_reports(
    a: Report,
    b: Report,
    *,
    metrics: Sequence[str] = (),
    test: str = "randomization",
    trials: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Report:
    """A report with a row per compared value: A's and B's scores, A − B, its interval and p-value.

    The interval of the difference is the paired bootstrap's percentile
    interval; the p-value is the chosen test's (two-sided).
    """
    if test not in TESTS:
        raise InputError(f"unknown test {test!r}; known: {', '.join(TESTS)}")
    if (a.task, a.profile) != (b.task, b.profile):
        raise InputError(f"A was scored as {a.task}/{a.profile} and B as {b.task}/{b.profile}")
    ours, theirs = _by_value(a), _by_value(b)
    if not ours:
        raise InputError(f"no score of {a.task} is determined by per-document counts: nothing to compare")
    wanted = list(metrics) or list(dict.fromkeys(metric for metric, _ in ours))
    unknown = [metric for metric in wanted if not any(m == metric for m, _ in ours)]
    if unknown:
        known = ", ".join(dict.fromkeys(metric for metric, _ in ours))
        raise InputError(f"no metric {unknown[0]!r} in {a.task} scores; known: {known}")
    rows: list[Row] = []
    for key, derivation in ours.items():
        if key[0] not in wanted:
            continue
        other = theirs.get(key)
        if other is None:
            raise InputError(f"B's report has no {key[0]} {key[1]}")
        rows.append(_compare(derivation, _aligned(derivation, other), test, trials, confidence, seed))
    inputs = {"a": a.inputs, "b": b.inputs, "test": test, "trials": trials, "confidence": confidence, "seed": seed}
    notes = arithmetic_warnings(a, [ours[key] for key in ours if key[0] in wanted])
    return Report(f"compare {a.task}", a.profile, inputs, rows, [], [*a.warnings, *b.warnings, *notes])


def _by_value(report: Report) -> dict[tuple[str, str], Derivation]:
    return {(d.metric, d.field): d for d in derivations(report)}


def _aligned(a: Derivation, b: Derivation) -> Derivation:
    """``b`` with its rows in the order of ``a``'s documents; different document sets are an error."""
    if set(a.documents) != set(b.documents):
        only_a = [d for d in a.documents if d not in set(b.documents)]
        only_b = [d for d in b.documents if d not in set(a.documents)]
        parts = [
            f"{len(side)} only in {name} (first: {side[0]})" for name, side in (("A", only_a), ("B", only_b)) if side
        ]
        raise InputError(f"A and B were scored on different documents: {'; '.join(parts)}")
    position = {document: i for i, document in enumerate(b.documents)}
    order = [position[document] for document in a.documents]
    return Derivation(b.metric, b.field, b.statistic, a.documents, b.counts[order])


def _compare(a: Derivation, b: Derivation, test: str, trials: int, confidence: float, seed: int) -> Row:
    bootstrap = paired_bootstrap(a.counts, b.counts, a.statistic, resamples=trials, confidence=confidence, seed=seed)
    if test == "randomization":
        p_value = approximate_randomization(a.counts, b.counts, a.statistic, trials=trials, seed=seed).p_value
    else:
        p_value = bootstrap.p_value
    return {
        "metric": a.metric,
        "score": a.field,
        "a": bootstrap.a,
        "b": bootstrap.b,
        "difference": bootstrap.difference,
        "ci_low": bootstrap.low,
        "ci_high": bootstrap.high,
        "p_value": p_value,
        "documents": len(a.documents),
    }
