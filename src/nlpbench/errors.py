"""Errors that reach the user as one line.

An :class:`InputError` names the file, the record inside it and what is wrong;
the command line prints ``str(error)`` and exits with status 2. Everything
below the command line raises it instead of printing or exiting.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class InputError(Exception):
    """Bad input: ``FILE: RECORD: PROBLEM``."""

    def __init__(self, problem: str, path: str | Path | None = None, record: str | None = None):
        self.problem = " ".join(problem.split("\n")).strip()  # always one line
        self.path = str(path) if path is not None else None
        self.record = record
        super().__init__(str(self))

    def __str__(self) -> str:
        return ": ".join(part for part in (self.path, self.record, self.problem) if part)

    def at(self, path: str | Path | None = None, record: str | None = None) -> InputError:
        """The same problem with the file and record filled in where they were unknown."""
        return InputError(self.problem, self.path or path, self.record or record)


class InputWarning(UserWarning):
    """Valid but odd input that is scored anyway: a note on one side only, a skipped line.

    Raised with :func:`warnings.warn`; the command line collects these into the
    report's ``warnings`` and prints them.
    """


@contextmanager
def collected_warnings() -> Iterator[list[str]]:
    """Collect every :class:`InputWarning` raised inside the block, in order, as strings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InputWarning)
        messages: list[str] = []
        yield messages
    messages.extend(str(w.message) for w in caught if issubclass(w.category, InputWarning))
