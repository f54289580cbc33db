"""Validate a tool before it sees a dataset, as the NLP Sandbox controller's ``validate_tool.py`` did, and more.

In order, each failure a one-line :class:`Invalid` naming what failed (never
a response body):

1. ``GET /`` redirects (3xx) to ``/api/v1/tool``;
2. ``GET /api/v1/ui`` answers (after redirects) with a status below 400;
3. the runner's check (:func:`nlpbench.runner.client.validate_tool`): health,
   ``GET /tool`` valid against the 1.2.0 schema and of a type that serves the
   task's annotation types, and one schema-valid answer to the example note of
   the Note schema — the warm-up request, which no budget times;
4. ``apiVersion`` is 1.2.0 — a mismatch is :class:`Invalid` when the queue
   says it is fatal, else a warning;
5. reproducibility: the notes of dataset ``NAME-subset`` annotated twice
   (the controller annotated its subset twice and compared); any difference is
   :class:`Invalid` with the number of notes and spans that differed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from nlpbench.api import schemas
from nlpbench.model import Document
from nlpbench.runner import AnnotationRun, RetryPolicy, ToolError, validate_tool
from nlpbench.runner.client import BASE_PATH, MAX_RESPONSE_BYTES, ClientOptions

#: Seconds each of the ``/`` and ``/ui`` checks may take.
PAGE_TIMEOUT = 10.0


class Invalid(Exception):
    """The tool failed validation; one line."""


@dataclass(frozen=True)
class Settings:
    labels: tuple[str, ...]
    api_version_fatal: bool = True
    timeout: float = 30.0
    retry: RetryPolicy = RetryPolicy()  # noqa: RUF009 - frozen
    concurrency: int = 8
    max_response_bytes: int = MAX_RESPONSE_BYTES


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

    ``transport`` makes a new httpx transport for each client (a sandboxed tool is reached over a Unix socket).
    """
    await _check_pages(url, settings.timeout, transport())
    options = ClientOptions(settings.concurrency, settings.timeout, settings.retry, settings.max_response_bytes)
    client = options.client(url, transport())
    try:
        async with client:
            check = await validate_tool(client, settings.labels)
    except ToolError as error:
        raise Invalid(str(error)) from None
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
        raise Invalid(
            f"not reproducible: annotating the {len(subset)} validation notes twice gave different "
            f"annotations for {notes} notes ({spans} spans differ)"
        )
    return validated


async def _check_pages(url: str, timeout: float, transport) -> None:
    root = root_of(url)
    async with httpx.AsyncClient(base_url=root, timeout=min(timeout, PAGE_TIMEOUT), transport=transport) as http:
        try:
            response = await http.get("/", follow_redirects=False)
            location = response.headers.get("location", "")
            if not (300 <= response.status_code < 400 and location.rstrip("/").endswith(f"{BASE_PATH}/tool")):
                raise Invalid(f"GET / answers HTTP {response.status_code} instead of redirecting to {BASE_PATH}/tool")
            response = await http.get(f"{BASE_PATH}/ui", follow_redirects=True)
            if response.status_code >= 400:
                raise Invalid(f"GET {BASE_PATH}/ui answers HTTP {response.status_code}")
        except httpx.HTTPError as error:
            raise Invalid(f"{root}: the tool cannot be reached ({type(error).__name__})") from None


async def _annotate(
    url: str, subset: Sequence[Document], settings: Settings, transport: Callable[[], Any]
) -> list[Document]:
    run = AnnotationRun(
        url,
        labels=settings.labels,
        concurrency=settings.concurrency,
        timeout=settings.timeout,
        retry=settings.retry,
        max_response_bytes=settings.max_response_bytes,
        transport=transport(),
    )
    try:
        return [document async for document in run.stream(subset)]
    except ToolError as error:
        raise Invalid(f"validation notes: {error}") from None


def differences(first: Sequence[Document], second: Sequence[Document]) -> tuple[int, int]:
    """(notes whose annotations differ, spans in one run and not the other) between two runs over the same notes."""
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
    }
