"""An asyncio client of one NLP Sandbox 1.2.0 tool that trusts nothing it is sent.

Every response is checked against the 1.2.0 schemas (:mod:`nlpbench.api.schemas`,
strictly: a string is not a number); anything else — a body that is not JSON,
a missing field, an unknown ``locationType`` — is a :class:`ToolError` that
says which request, which note and what was wrong. Concurrent requests are
bounded by a semaphore (``concurrency``). A request that times out, cannot
connect or gets 429, 502, 503 or 504 is retried after ``backoff × 2^attempt``
seconds (at most ``max_backoff``, or what ``Retry-After`` asks); other errors
are not, since a deterministic tool gives the same answer again.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from nlpbench.api import schemas
from nlpbench.model import PHI_TYPES, Annotation, Document, Span

BASE_PATH = "/api/v1"
PHI_LABELS = tuple(schemas.ANNOTATION_MODELS)
#: The annotation types each kind of tool answers for.
TOOL_LABELS: dict[str, tuple[str, ...]] = {
    f"nlpsandbox:{label.replace('_', '-')}-annotator": (label,) for label in PHI_LABELS
} | {"nlpsandbox:phi-annotator": PHI_LABELS}
#: The note a tool is validated with: the example of the 1.2.0 Note schema.
PROBE_NOTE = Document(
    "awesome-note",
    "On 12/26/2020, Ms. Chloe Price met with Dr. Prescott in Seattle.",
    metadata={"patientId": "awesome-patient", "noteType": "loinc:LP29684-5"},
)


class ToolError(Exception):
    """A tool that is unreachable, failing, or answering outside the 1.2.0 schemas; one line."""


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 10.0
    statuses: frozenset[int] = frozenset({429, 502, 503, 504})

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        if retry_after and retry_after.strip().isdigit():
            return min(float(retry_after), self.max_backoff)
        return min(self.backoff * 2**attempt, self.max_backoff)


@dataclass
class ClientStats:
    requests: int = 0
    retries: int = 0
    #: Annotations whose ``text`` is not the note text at ``[start, start + length)``.
    text_mismatches: int = 0
    mismatch_example: str = ""


@dataclass(frozen=True)
class ToolCheck:
    """What :func:`validate_tool` found: the tool's self-description and the types it annotates."""

    tool: schemas.Tool
    labels: tuple[str, ...]
    health: str
    warnings: tuple[str, ...] = field(default=())


def note_identifier(name: str) -> str:
    """``name`` if it is a valid NoteId/PatientId, else a valid id made from it (and a hash, to stay unique)."""
    if 3 <= len(name) <= 60 and re.fullmatch(schemas.RESOURCE_ID_PATTERN, name):
        return name
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40].strip("-")
    return f"{slug or 'note'}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def note_json(document: Document) -> dict[str, str]:
    """The 1.2.0 ``Note`` sent for a document; its id and patient id made valid when they are not."""
    if document.text is None:
        raise ToolError(f"note {document.id} has no text to send")
    return {
        "identifier": note_identifier(document.id),
        "text": document.text,
        "type": str(document.metadata.get("noteType") or "unknown"),
        "patientId": note_identifier(str(document.metadata.get("patientId") or "unknown")),
    }


class ToolClient:
    """``async with ToolClient(url) as tool:`` — ``url`` is the server root or its ``/api/v1``."""

    def __init__(
        self,
        url: str,
        *,
        concurrency: int = 8,
        timeout: float = 30.0,
        retry: RetryPolicy = RetryPolicy(),
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        root = url.rstrip("/")
        self.url = root if root.endswith(BASE_PATH) else root + BASE_PATH
        self.concurrency = concurrency
        self.timeout = timeout
        self.retry = retry
        self.stats = ClientStats()
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._slots: asyncio.Semaphore | None = None

    async def __aenter__(self) -> ToolClient:
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        self._client = httpx.AsyncClient(
            base_url=self.url, timeout=self.timeout, limits=limits, transport=self._transport
        )
        self._slots = asyncio.Semaphore(self.concurrency)
        return self

    async def __aexit__(self, *exc_info) -> None:
        if self._client is not None:
            await self._client.aclose()

    async def health(self) -> str:
        return (await self._get("/healthCheck", schemas.HealthCheck)).status

    async def tool(self) -> schemas.Tool:
        return await self._get("/tool", schemas.Tool)

    async def annotate(self, document: Document, labels: tuple[str, ...]) -> Document:
        """The tool's annotations of ``document`` for each of ``labels``, as a document without text."""
        note = note_json(document)
        replies = await asyncio.gather(*(self._annotate_one(document, note, label) for label in labels))
        result = Document(document.id)
        for found in replies:
            result.annotations.extend(found)
        return result

    async def _annotate_one(self, document: Document, note: dict, label: str) -> list[Annotation]:
        array = PHI_TYPES[label].array
        what = f"POST /{array} for note {document.id}"
        data = await self._request("POST", f"/{array}", what, json={"note": note})
        reply = _checked(schemas.RESPONSE_MODELS[label], data, what)
        found = []
        for index, item in enumerate(getattr(reply, array)):
            found.append(self._annotation(document, label, item, f"{what}: {array}[{index}]"))
        return found

    def _annotation(self, document: Document, label: str, item: schemas.TextAnnotation, what: str) -> Annotation:
        if item.start < 0 or item.length < 0:
            raise ToolError(f"{what}: negative offset (start {item.start}, length {item.length})")
        if item.start + item.length > len(document.text):
            raise ToolError(f"{what}: ends at {item.start + item.length}, beyond the note ({len(document.text)} chars)")
        covered = document.text[item.start : item.start + item.length]
        if covered != item.text:
            self.stats.text_mismatches += 1
            self.stats.mismatch_example = self.stats.mismatch_example or f"{what}: {item.text!r} covers {covered!r}"
        attribute = PHI_TYPES[label].type_attribute
        value = getattr(item, attribute, None)
        return Annotation(
            document.id,
            Span.of(item.start, item.length),
            label,
            item.text,
            {attribute: value} if value is not None else {},
            item.confidence,
        )

    async def _get(self, path: str, model: type[BaseModel]):
        what = f"GET {path}"
        return _checked(model, await self._request("GET", path, what), what)

    async def _request(self, method: str, path: str, what: str, **kwargs) -> Any:
        if self._client is None or self._slots is None:
            raise RuntimeError("use `async with ToolClient(url) as client`")
        for attempt in range(self.retry.retries + 1):
            retry_after = None
            try:
                async with self._slots:
                    self.stats.requests += 1
                    response = await self._client.request(method, path, **kwargs)
            except httpx.TimeoutException:
                problem = f"no answer within {self.timeout:g} s"
            except httpx.TransportError as error:
                problem = f"cannot reach {self.url}: {error or type(error).__name__}"
            else:
                if response.status_code < 400:
                    return _json(response, what)
                problem = _http_problem(response)
                if response.status_code not in self.retry.statuses:
                    raise ToolError(f"{self.url}: {what}: {problem}")
                retry_after = response.headers.get("retry-after")
            if attempt == self.retry.retries:
                tries = self.retry.retries + 1
                raise ToolError(f"{self.url}: {what}: {problem} ({tries} attempt{'s' * (tries > 1)})")
            self.stats.retries += 1
            await asyncio.sleep(self.retry.delay(attempt, retry_after))
        raise AssertionError("unreachable")


def _json(response: httpx.Response, what: str) -> Any:
    try:
        return response.json()
    except ValueError as error:
        start = response.text[:60]
        raise ToolError(f"{response.url}: {what}: the response is not JSON ({error}); it begins {start!r}") from None


def _http_problem(response: httpx.Response) -> str:
    """``HTTP 400 Bad Request: detail`` from a problem object, or the start of whatever came back."""
    problem = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
    try:
        body = response.json()
    except ValueError:
        return f"{problem}: {response.text[:120]!r}" if response.text else problem
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        return f"{problem}: {body['detail']}"
    return f"{problem}: {str(body)[:120]}"


def _checked(model: type[BaseModel], data: Any, what: str):
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the body"
        more = f" (and {error.error_count() - 1} more problems)" if error.error_count() > 1 else ""
        raise ToolError(
            f"{what}: the response does not follow the 1.2.0 {model.__name__} schema: {where}: {first['msg']}{more}"
        ) from None


async def validate_tool(client: ToolClient, labels: tuple[str, ...] | None = None) -> ToolCheck:
    """Check a tool before sending it data: health, ``/tool``, and one schema-valid answer per endpoint.

    ``labels`` narrows what a PHI annotator is asked for; asking a tool for a
    type it does not annotate is an error.
    """
    health = await client.health()
    if health == "fail":
        raise ToolError(f"{client.url}: GET /healthCheck says the tool's status is fail")
    tool = await client.tool()
    if tool.type not in TOOL_LABELS:
        raise ToolError(f"{client.url}: the tool is a {tool.type}, not an annotator of PHI (date, person name, …)")
    served = TOOL_LABELS[tool.type]
    chosen = served if labels is None else tuple(labels)
    missing = [label for label in chosen if label not in served]
    if missing:
        raise ToolError(f"{client.url}: a {tool.type} does not annotate {', '.join(missing)}")
    await client.annotate(PROBE_NOTE, chosen)
    warnings = []
    if tool.apiVersion != schemas.API_VERSION:
        warnings.append(f"the tool implements API {tool.apiVersion}; nlpbench speaks {schemas.API_VERSION}")
    if health == "warn":
        warnings.append("GET /healthCheck says warn")
    return ToolCheck(tool, chosen, health, tuple(warnings))
