"""An LLM tool's account of one note, sent beside the 1.2.0 answer in the ``X-Nlpbench-Account`` header.

An annotation of the tool API has offsets, so a mention an LLM returned that
is nowhere in the note (an *unplaced*, invented mention) cannot be sent as
one. Dropping it would flatter the model: the platform counts it as a false
positive of its type. So every ``POST /text…Annotations`` answer of an LLM
tool carries, in one response header, how the mentions of the types that
endpoint answers were placed, and what the note cost::

    X-Nlpbench-Account: exact=3; normalised=1; fuzzy=0; unplaced=2; tokens-in=812; tokens-out=64;
                        latency-ms=431; cached=0

A header rather than a field of the body: the body stays exactly the 1.2.0
schema (which forbids nothing extra but which other clients check strictly),
and a header reaches every client — the runner, ``curl -i``, a proxy's log —
without a second request or state kept on the tool between requests. It
holds counts only, never a mention's text, so a log that keeps headers keeps
no PHI. ``exact``, ``normalised``, ``fuzzy`` and ``unplaced`` count mentions
of the endpoint's type (each placed mention counted once, however many
occurrences it was placed at); ``tokens-in``, ``tokens-out`` and
``latency-ms`` are the note's, the same on each of its five answers (one
model call serves them all), so a client takes them once per note;
``cached=1`` says the answer came from the tool's answer cache (its tokens and
latency are the call's that filled it). An LLM de-identifier's ``POST
/deidentifiedNotes`` answer carries the note's account in the same header
(:meth:`Account.of_note`): the grounding counts of every type its steps ask for,
summed, and the note's tokens, latency and caching once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields

from nlpbench.errors import Kind, NlpbenchError

#: The response header an LLM tool's account travels in.
HEADER = "X-Nlpbench-Account"
#: The metadata key of an annotated document's accounts per type, when the tool sent them (an LLM tool).
ACCOUNTS = "accounts"
#: The metadata key of a de-identified note's account, when the tool sent one (an LLM de-identifier): the
#: grounding counts of every type asked for and the note's cost, in one account.
NOTE_ACCOUNT = "account"
#: Each field's name in the header, in order.
NAMES = ("exact", "normalised", "fuzzy", "unplaced", "tokens-in", "tokens-out", "latency-ms", "cached")
#: The largest header read: eight counts take far less.
MAX_HEADER_CHARS = 400
#: The most digits a count may have: a trillion tokens or milliseconds is past any note, and sums of
#: counts stay far inside a 64-bit column.
MAX_DIGITS = 12


class AccountError(NlpbenchError, ValueError):
    """A header that is not an account; the message names the field, never the header's text."""

    kind = Kind.tool


@dataclass(frozen=True, slots=True)
class Account:
    """How one answer's mentions were placed (:mod:`nlpbench.annotators.llm.grounding`) and what the note cost.

    Accounts add with ``+`` (the grounding counts and tokens sum; latency
    sums too, so a per-note latency is read from one note's account only).
    """

    exact: int = 0
    normalised: int = 0
    fuzzy: int = 0
    unplaced: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: int = 0
    cached: int = 0

    def __add__(self, other: Account) -> Account:
        return Account(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    @classmethod
    def of_note(cls, accounts: Iterable[Account]) -> Account:
        """The account of a note from its accounts per type, one model call's (at least one): the grounding
        counts summed, the note's tokens, latency and caching counted once (the first account's)."""
        given = list(accounts)
        first = given[0]
        return cls(
            exact=sum(a.exact for a in given),
            normalised=sum(a.normalised for a in given),
            fuzzy=sum(a.fuzzy for a in given),
            unplaced=sum(a.unplaced for a in given),
            tokens_in=first.tokens_in,
            tokens_out=first.tokens_out,
            latency_ms=first.latency_ms,
            cached=first.cached,
        )

    @property
    def placed(self) -> int:
        """Mentions placed in the note: ``exact + normalised + fuzzy``."""
        return self.exact + self.normalised + self.fuzzy

    def header(self) -> str:
        """The header's value: ``exact=3; normalised=1; …``."""
        return "; ".join(f"{name}={getattr(self, f.name)}" for name, f in zip(NAMES, fields(self), strict=True))

    @classmethod
    def parse(cls, value: str) -> Account:
        """The account a header's value gives; every field required, each a count (a non-negative integer of at
        most :data:`MAX_DIGITS` digits), the whole at most :data:`MAX_HEADER_CHARS` characters."""
        if len(value) > MAX_HEADER_CHARS:
            raise AccountError(f"{HEADER} is {len(value)} characters, over the {MAX_HEADER_CHARS} an account takes")
        given: dict[str, int] = {}
        for part in value.split(";"):
            name, equals, number = part.strip().partition("=")
            if name not in NAMES:
                raise AccountError(f"{HEADER} has a field that is not one of {', '.join(NAMES)}")
            if not equals or not number.isascii() or not number.isdigit():
                raise AccountError(f"{HEADER}: {name} is not a count")
            if len(number) > MAX_DIGITS:
                raise AccountError(f"{HEADER}: {name} has more than the {MAX_DIGITS} digits a count may have")
            if name in given:
                raise AccountError(f"{HEADER}: {name} is given twice")
            given[name] = int(number)
        missing = [name for name in NAMES if name not in given]
        if missing:
            raise AccountError(f"{HEADER} lacks {', '.join(missing)}")
        if given["cached"] > 1:
            raise AccountError(f"{HEADER}: cached is 0 or 1")
        return cls(*(given[name] for name in NAMES))
