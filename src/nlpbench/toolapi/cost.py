"""What an LLM tool's notes cost: tokens, latency percentiles, and money from an organiser's price table.

A run sums the :class:`~nlpbench.toolapi.account.Account` of each note
(:class:`Usage`); money comes from a price table the organiser gives, a JSON
file of US dollars per million tokens, by model::

    {"models": {"Qwen/Qwen2.5-7B-Instruct": {"input": 0.30, "output": 0.90}}}

so that :math:`\\text{cost} = (t_{in} \\cdot p_{in} + t_{out} \\cdot p_{out}) / 10^6`. The tool reports
tokens; the price is applied by whoever reports the cost (the organiser's
numbers, never the tool's). Latency percentiles are nearest-rank: the
:math:`p`-th percentile of :math:`n` sorted latencies is the one at rank
:math:`\\lceil p n / 100 \\rceil`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlpbench.errors import Kind, NlpbenchError
from nlpbench.toolapi.account import Account

PERCENTILES = (50, 95, 99)


class PriceError(NlpbenchError, ValueError):
    """A price table that cannot be read; the message names the file and the entry."""

    kind = Kind.input


@dataclass(frozen=True)
class Price:
    """US dollars per million input (prompt) and output (completion) tokens."""

    input: float
    output: float

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """:math:`(t_{in} p_{in} + t_{out} p_{out}) / 10^6` dollars."""
        return (tokens_in * self.input + tokens_out * self.output) / 1e6


def read_prices(path: Path) -> dict[str, Price]:
    """The price table of ``path`` by model; a bad file is a :class:`PriceError` naming it and the entry."""
    try:
        data = json.loads(path.read_bytes())
    except OSError as error:
        raise PriceError(f"{path}: cannot be read ({error.strerror or type(error).__name__})") from None
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past Python's stack
        raise PriceError(f"{path}: not a JSON price table") from None
    return parse_prices(data, str(path))


def parse_prices(data: Any, source: str) -> dict[str, Price]:
    """The price table ``data`` (read from ``source``, which messages name) by model; a :class:`PriceError`
    naming the entry when it is not ``{"models": {NAME: {"input": p, "output": p}}}`` with prices ≥ 0."""
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise PriceError(f'{source}: a price table is {{"models": {{NAME: {{"input": …, "output": …}}}}}}')
    prices = {}
    for model, entry in models.items():
        values = [entry.get(side) if isinstance(entry, dict) else None for side in ("input", "output")]
        if not all(isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < math.inf for v in values):
            raise PriceError(f"{source}: models.{model[:80]}: give input and output as dollars per million tokens, ≥ 0")
        prices[model] = Price(float(values[0]), float(values[1]))  # type: ignore[arg-type]
    return prices


def percentile(values: Sequence[int], p: float) -> int:
    """The nearest-rank ``p``-th percentile of ``values`` (not empty): rank :math:`\\lceil p n / 100 \\rceil`."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(p * len(ordered) / 100)) - 1]


def note_account(accounts: Mapping[str, Account]) -> Account:
    """One note's account over its types: the grounding counts summed, its tokens and latency counted once."""
    grounding = sum((Account(a.exact, a.normalised, a.fuzzy, a.unplaced) for a in accounts.values()), Account())
    first = next(iter(accounts.values()), Account())
    return grounding + Account(
        tokens_in=first.tokens_in, tokens_out=first.tokens_out, latency_ms=first.latency_ms, cached=first.cached
    )


@dataclass
class Usage:
    """A run's accounts: grounding counts per type, tokens, cached notes, and each note's latency."""

    per_type: dict[str, Account] = field(default_factory=dict)
    total: Account = field(default_factory=Account)
    latencies_ms: list[int] = field(default_factory=list)

    def add(self, accounts: Mapping[str, Account]) -> None:
        """Add one note's accounts (by type)."""
        for label, account in accounts.items():
            grounding = Account(account.exact, account.normalised, account.fuzzy, account.unplaced)
            self.per_type[label] = self.per_type.get(label, Account()) + grounding
        note = note_account(accounts)
        self.total = self.total + note
        self.latencies_ms.append(note.latency_ms)

    def latency(self) -> dict[int, int]:
        """The latency percentiles (:data:`PERCENTILES`) in milliseconds; empty when no note was counted."""
        return {p: percentile(self.latencies_ms, p) for p in PERCENTILES} if self.latencies_ms else {}

    def summary(self, price: Price | None = None) -> str:
        """One line: mentions by stage, tokens, latency percentiles and, given a price, the cost in dollars."""
        t = self.total
        line = (
            f"{len(self.latencies_ms)} notes ({t.cached} cached): mentions placed exactly {t.exact}, normalised "
            f"{t.normalised}, fuzzily {t.fuzzy}, unplaced {t.unplaced}; tokens {t.tokens_in} in, {t.tokens_out} out"
        )
        if self.latencies_ms:
            line += "; latency per note " + ", ".join(f"p{p} {ms} ms" for p, ms in self.latency().items())
        if price is not None:
            line += f"; cost ${price.cost(t.tokens_in, t.tokens_out):.4f}"
        return line
