"""Validate a tool before it sees a dataset, as the NLP Sandbox controller's ``validate_tool.py`` did, and more.

In order, each failure a one-line :class:`Invalid` naming what failed (never
a response body):

1. ``GET /`` redirects (3xx) to ``/api/v1/tool``;
2. ``GET /api/v1/ui`` answers with a status below 400, after redirects within the tool's own origin only
   (neither page's body is read);
3. the runner's check (:func:`nlpbench.runner.client.validate_tool`): health,
   ``GET /tool`` valid against the 1.2.0 schema and of a type that serves the
   task's annotation types, and one schema-valid answer to the example note of
   the Note schema — the warm-up request, which no budget times; for the ``deid``
   task (:attr:`Settings.steps`), a de-identifier's
   (:func:`nlpbench.runner.deidentifier.validate_deidentifier`): of type
   ``nlpsandbox:phi-deidentifier``, and the example note de-identified;
4. ``apiVersion`` is 1.2.0 — a mismatch is :class:`Invalid` when the queue
   says it is fatal, else a warning;
5. reproducibility: the notes of dataset ``NAME-subset`` annotated (or de-identified) twice
   (the controller annotated its subset twice and compared); any difference is
   :class:`Invalid` with the number of notes and spans (or texts) that differed.

What the submission's team reads of a failure is decided by :class:`Disclosure`:
once the tool has been sent notes of a private dataset, whatever it does
(a status, a size, an offset, a content type, which note it fails on) can
carry what it read, so the team reads the class of failure only and the
organisers the whole line (:class:`Verdict`); and what the network said of a
team's tool URL (refused, reset, timed out, an error status) is the
organisers' too, so that the worker is no port scanner.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from nlpbench.errors import Kind, NlpbenchError
from nlpbench.model import Document
from nlpbench.runner.client import (
    BASE_PATH,
    MAX_RESPONSE_BYTES,
    ClientOptions,
    RetryPolicy,
    ToolClient,
    ToolError,
    Unanswered,
    validate_tool,
)
from nlpbench.runner.deidentifier import deidentified, validate_deidentifier
from nlpbench.runner.run import AnnotationRun
from nlpbench.toolapi import schemas

#: Seconds each of the ``/`` and ``/ui`` checks may take.
PAGE_TIMEOUT = 10.0
#: Redirects ``GET /api/v1/ui`` may take, each within the tool's origin.
MAX_REDIRECTS = 5


#: What a team reads when the tool it gave by URL could not be reached or answered with an error.
UNREACHABLE = "the tool could not be reached, or gave no usable answer"


class Verdict(NlpbenchError):
    """Why a submission ends: ``str()`` is the one line its team reads, ``detail`` the line only organisers
    read when it says more (None when it does not)."""

    kind = Kind.tool

    def __init__(self, reason: str, detail: str | None = None):
        super().__init__(reason)
        self.detail = detail if detail != reason else None


class Invalid(Verdict):
    """The tool failed validation."""


@dataclass(frozen=True)
class Disclosure:
    """What a submission's team may read of why its tool failed (organisers read every detail)."""

    #: The dataset is private and the tool the team's (not a URL the organisers gave): a failure after the
    #: tool was sent notes is told by its class only.
    private: bool = False
    #: The team gave the tool's URL: a failure of the network or an error status is told as UNREACHABLE.
    team_url: bool = False

    def verdict(self, kind: type[Verdict], detail: str, *, unanswered: bool, seen: str | None = None) -> Verdict:
        """``kind`` of ``detail``: the team reads ``seen`` (the class of a failure after the tool saw notes)
        on a private dataset, :data:`UNREACHABLE` for a team's URL that gave no usable answer, else ``detail``."""
        if seen is not None and self.private:
            return kind(seen, detail)
        if unanswered and self.team_url:
            return kind(UNREACHABLE, detail)
        return kind(detail)


@dataclass(frozen=True)
class Settings:
    labels: tuple[str, ...]
    #: The de-identification steps a de-identifier is asked for (``deid``); None for an annotator.
    steps: tuple[dict[str, Any], ...] | None = None
    api_version_fatal: bool = True
    timeout: float = 30.0
    retry: RetryPolicy = RetryPolicy()  # noqa: RUF009 - frozen
    concurrency: int = 8
    max_response_bytes: int = MAX_RESPONSE_BYTES
    disclosure: Disclosure = Disclosure()


@dataclass
class Validated:
    """What validation found: ``GET /tool``'s answer and the warnings it leaves."""

    tool: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def root_of(url: str) -> str:
    """The server root of a tool URL given as the root or its ``/api/v1``."""
    url = url.rstrip("/")
    return url.removesuffix(BASE_PATH)


def _no_transport() -> None:
    return None


async def validate(
    url: str, subset: Sequence[Document], settings: Settings, transport: Callable[[], Any] = _no_transport
) -> Validated:
    """Run every check in order; :class:`Invalid` at the first that fails.

    ``transport`` makes a new httpx transport for each client (a sandboxed tool is reached over a Unix socket,
    a team's URL through :class:`~nlpbench.platform.network.GuardedTransport`).
    """
    told = settings.disclosure
    options = ClientOptions(settings.concurrency, settings.timeout, settings.retry, settings.max_response_bytes)
    await _check_pages(url, options, transport(), told)
    client = options.client(url, transport())
    try:
        async with client:
            if settings.steps is not None:
                check = await validate_deidentifier(client, settings.steps)
            else:
                check = await validate_tool(client, settings.labels)
    except ToolError as error:
        raise told.verdict(Invalid, str(error), unanswered=isinstance(error, Unanswered)) from None
    validated = Validated(check.tool.model_dump(), list(check.warnings))
    if check.tool.apiVersion != schemas.API_VERSION:
        message = f"the tool implements API {check.tool.apiVersion}, not {schemas.API_VERSION}"
        if settings.api_version_fatal:
            raise Invalid(message)
        validated.warnings = [w for w in validated.warnings if "implements API" not in w] + [message]
    first = await _annotate(url, subset, settings, transport)
    second = await _annotate(url, subset, settings, transport)
    notes, spans = differences(first, second)
    if notes:
        done, answers, parts = (
            ("de-identifying", "de-identified notes", "spans or texts")
            if settings.steps is not None
            else ("annotating", "annotations", "spans")
        )
        detail = (
            f"not reproducible: {done} the {len(subset)} validation notes twice gave different "
            f"{answers} for {notes} notes ({spans} {parts} differ)"
        )
        seen = f"not reproducible: {done} the validation notes twice gave different {answers}"
        raise told.verdict(Invalid, detail, unanswered=False, seen=seen)
    return validated


async def _check_pages(url: str, options: ClientOptions, transport, told: Disclosure) -> None:
    """``GET /`` redirects to the tool's description; ``GET /api/v1/ui`` answers, redirected within the origin.

    Only statuses and headers are read: a body the tool sends here is never taken in. The requests are the
    runner client's (:meth:`~nlpbench.runner.client.ToolClient.page`), retried as every request is. Every
    failure here is one a port scan would read, so a team's URL gets :data:`UNREACHABLE` for each.
    """
    try:
        async with replace(options, timeout=min(options.timeout, PAGE_TIMEOUT)).client(url, transport) as client:
            problem = await _pages_problem(client)
    except ToolError as error:
        problem = str(error)
    if problem is not None:
        raise told.verdict(Invalid, problem, unanswered=True)


async def _pages_problem(client: ToolClient) -> str | None:
    """What is wrong with the tool's ``/`` and ``/api/v1/ui``, or None."""
    status, location, _ = await client.page("/")
    if not (300 <= status < 400 and location.rstrip("/").endswith(f"{BASE_PATH}/tool")):
        return f"GET / answers HTTP {status} instead of redirecting to {BASE_PATH}/tool"
    target: str | httpx.URL = f"{BASE_PATH}/ui"
    for _ in range(MAX_REDIRECTS + 1):
        status, location, at = await client.page(target)
        if not (300 <= status < 400 and location):
            break
        target = at.join(location)
        if (target.scheme, target.host, target.port) != (at.scheme, at.host, at.port):
            return f"GET {BASE_PATH}/ui redirects outside the tool's origin"
    else:
        return f"GET {BASE_PATH}/ui redirects more than {MAX_REDIRECTS} times"
    return f"GET {BASE_PATH}/ui answers HTTP {status}" if status >= 400 else None


async def _annotate(
    url: str, subset: Sequence[Document], settings: Settings, transport: Callable[[], Any]
) -> list[Document]:
    """The validation notes' annotations (a de-identifier's answers when :attr:`Settings.steps` says so), in
    order; a failure is :class:`Invalid`."""
    try:
        if settings.steps is not None:
            options = ClientOptions(settings.concurrency, settings.timeout, settings.retry, settings.max_response_bytes)
            async with options.client(url, transport()) as client:
                answers = deidentified(client, subset, settings.steps, 4 * settings.concurrency)
                return [note async for note in answers]
        run = AnnotationRun(
            url,
            labels=settings.labels,
            concurrency=settings.concurrency,
            timeout=settings.timeout,
            retry=settings.retry,
            max_response_bytes=settings.max_response_bytes,
            transport=transport(),
        )
        return [document async for document in run.stream(subset)]
    except ToolError as error:
        raise settings.disclosure.verdict(
            Invalid,
            f"validation notes: {error}",
            unanswered=isinstance(error, Unanswered),
            seen="validation notes: the tool failed on them",
        ) from None


def differences(first: Sequence[Document], second: Sequence[Document]) -> tuple[int, int]:
    """(notes whose answers differ, spans — and de-identified texts — in one run and not the other) between
    two runs over the same notes."""
    notes = spans = 0
    for one, two in zip(first, second, strict=True):
        a, b = _keys(one), _keys(two)
        if a != b:
            notes += 1
            spans += len(a ^ b)
    return notes, spans


def _keys(document: Document) -> set[tuple]:
    return {
        (a.label, a.start, a.end, tuple(sorted((k, str(v)) for k, v in a.attributes.items())))
        for a in document.annotations
    } | {("text", document.text)}
