"""Errors that reach the user as one line, and the one hierarchy every error of the project belongs to.

Every error nlpbench raises on purpose is an :class:`NlpbenchError`, whose
:class:`Kind` says what went wrong in terms both front ends understand: the
command line prints ``nlpbench: error: MESSAGE`` and exits with
``kind.exit_code`` (:mod:`nlpbench.cli`), a service answers an RFC 7807 problem
with ``kind.status`` and ``kind.title`` and the message as its ``detail``
(:func:`nlpbench.api.problems.install_problem_handlers`). The message is one
line that names what is wrong and never quotes a note (no note text, spans,
offsets or lengths of private notes), so both may show it. Anything else that
escapes is a bug: a service answers it with a 500 and logs its type and place
only (:func:`raised_at`), never its message.

An :class:`InputError` names the file, the record inside it and what is wrong;
the command line prints ``str(error)`` and exits with status 2. Everything
below the command line raises it instead of printing or exiting.
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Any, cast

#: The most characters of an input value a message quotes (never note text: see :func:`excerpt`).
EXCERPT = 80
#: The longest problem a message states; anything longer was built from input and is cut.
PROBLEM_LIMIT = 400


def excerpt(value: Any, limit: int = EXCERPT) -> str:
    """``repr(value)`` cut to about ``limit`` characters, so that a huge cell or line makes a short message.

    Only for values that are not note text (labels, codes, offsets as written, ids): a
    message names a note's text by its offsets and length, never quotes it.
    """
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value)} characters)"
    shown = repr(value)
    return shown if len(shown) <= limit + 2 else f"{shown[:limit]}…"


def shorten(text: str, limit: int = EXCERPT) -> str:
    """``text`` as it is when short, else its first ``limit`` characters and its length (ids, cells, JSON)."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def json_kind(value: Any) -> str:
    """The JSON type of a decoded value, for messages that must not quote it."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def raised_at(error: BaseException) -> str:
    """``ValueError raised at dateshift.py:120 in shift_date``: the type and the innermost frame, no message.

    What a log line says of an error nobody expected: its message may quote what it was given (a note).
    """
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return type(error).__name__
    last = frames[-1]
    return f"{type(error).__name__} raised at {Path(last.filename).name}:{last.lineno} in {last.name}"


class Kind(Enum):
    """What kind of refusal an error is, and how each front end tells it: ``(exit code, HTTP status, title)``.

    Every kind exits with status 2 on the command line (one line, as bad input always has: a script tells a
    refusal, 2, from a crash, 1, and an interruption, 130) except :attr:`internal`, a bug, which exits 1. The HTTP
    status tells a client whether asking again can help: 4xx never, 502 and 503 perhaps later.
    """

    #: The request or a file is wrong: a malformed record, an unknown name, a bad option value.
    input = (2, 400, "Bad Request")
    #: What the request names does not exist (or is not the caller's to see).
    not_found = (2, 404, "Not Found")
    #: What the request names is not in a state that allows it (a finished submission cancelled).
    conflict = (2, 409, "Conflict")
    #: The caller may not do this (a tool URL on a private dataset, an internal address).
    forbidden = (2, 403, "Forbidden")
    #: The caller has used up a quota.
    quota = (2, 429, "Too Many Requests")
    #: The request or an upload is over a size limit (RFC 9110's title, whatever Python's HTTPStatus says).
    too_large = (2, 413, "Content Too Large")
    #: Something the work needs cannot be had here or now: a sandbox, a database, a scheduler.
    unavailable = (2, 503, "Service Unavailable")
    #: A tool (a team's, or one being run) is unreachable, failing, or answers outside its schemas.
    tool = (2, 502, "Bad Gateway")
    #: nlpbench itself failed in a way it can name without quoting what it was given.
    internal = (1, 500, "Internal error")

    def __init__(self, exit_code: int, status: int, title: str):
        #: The command line's exit status.
        self.exit_code = exit_code
        #: The HTTP status of the service's problem answer.
        self.status = status
        #: The RFC 7807 ``title`` of that problem.
        self.title = title


class NlpbenchError(Exception):
    """The base of every error nlpbench raises on purpose; ``str(error)`` is one line a user may read.

    A subclass sets :attr:`kind`; one raised as is (``NlpbenchError("…")``) is a refusal of what the user gave.
    """

    #: How the command line and the services tell this error (:class:`Kind`).
    kind: Kind = Kind.input

    def problem_headers(self) -> dict[str, str]:
        """The HTTP headers a service's problem answer carries besides its status (``Retry-After``): none here."""
        return {}


class InputError(NlpbenchError):
    """Bad input: ``FILE: RECORD: PROBLEM``; ``path`` is what names the file (a path, or a file given in
    memory, :class:`nlpbench.files.MemoryPath`), as its ``str`` spells it."""

    kind = Kind.input

    def __init__(self, problem: str, path: object = None, record: str | None = None):
        self.problem = _one_line(problem)
        self.path = str(path) if path is not None else None
        self.record = record
        super().__init__(str(self))

    def __str__(self) -> str:
        return ": ".join(_one_line(part) for part in (self.path, self.record, self.problem) if part)

    def at(self, path: object = None, record: str | None = None) -> InputError:
        """The same problem with the file and record filled in where they were unknown."""
        return InputError(self.problem, self.path or path, self.record or record)


def _one_line(text: str) -> str:
    """``text`` on one line (every kind of line break a blank) and at most :data:`PROBLEM_LIMIT` characters."""
    text = " ".join(text.splitlines()).strip()
    return text if len(text) <= PROBLEM_LIMIT else f"{text[:PROBLEM_LIMIT]}… ({len(text)} characters)"


class InputWarning(UserWarning):
    """Valid but odd input that is scored anyway: a note on one side only, a skipped line.

    Raised with :func:`warnings.warn`; the command line collects these into the
    report's ``warnings`` and prints them.
    """


class TypedWarning(InputWarning):
    """An :class:`InputWarning` that counts annotations of several types together; :attr:`by_type` holds, for each
    type it counts any of, the message a reading of that type's annotations alone gives."""

    def __init__(self, message: str, by_type: dict[str, str]):
        super().__init__(message)
        #: Per annotation type, the warning as a reading of that type alone words it.
        self.by_type = by_type


@contextmanager
def caught_warnings() -> Iterator[list[InputWarning]]:
    """Collect every :class:`InputWarning` raised inside the block, in order, as the warnings themselves."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InputWarning)
        found: list[InputWarning] = []
        yield found
    found.extend(cast(InputWarning, w.message) for w in caught if issubclass(w.category, InputWarning))


def warning_lines(found: Iterable[InputWarning], annotation_type: str | None = None) -> list[str]:
    """Warnings as one-line strings of bounded length; with ``annotation_type``, as a reading of that type alone
    gives them: a :class:`TypedWarning` as its message for that type, left out when it counts none of it."""
    lines = []
    for warning in found:
        if annotation_type is not None and isinstance(warning, TypedWarning):
            if annotation_type in warning.by_type:
                lines.append(_one_line(warning.by_type[annotation_type]))
        else:
            lines.append(_one_line(str(warning)))
    return lines


@contextmanager
def collected_warnings() -> Iterator[list[str]]:
    """Collect every :class:`InputWarning` raised inside the block, in order, as one-line strings of bounded length."""
    with caught_warnings() as found:
        messages: list[str] = []
        yield messages
    messages.extend(warning_lines(found))
