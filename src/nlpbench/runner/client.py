"""An asyncio client of one NLP Sandbox 1.2.0 tool that trusts nothing it is sent.

Every response is checked against the 1.2.0 schemas (:mod:`nlpbench.toolapi.schemas`,
strictly: a string is not a number); anything else — a body that is not JSON,
a missing field, an unknown ``locationType``, a span past the note's end — is
a :class:`ToolError` that says which request, which note and what was wrong.
Concurrent requests are bounded by a semaphore (``concurrency``). A request
that does not finish within ``timeout`` seconds (sending, waiting and reading
the whole answer), cannot connect, breaks off, or gets 429, 502, 503 or 504 is
retried after ``backoff × 2^attempt`` seconds (at most ``max_backoff``, or what
``Retry-After`` asks); other errors are not, since a deterministic tool gives
the same answer again. A response is read as it streams in and abandoned past
``max_response_bytes``; a note's answers are refused once they hold more than
``max_annotations`` annotations (counted over its types, before any is
checked), so that a tool answering tens of thousands per note fails at its
first such note instead of taking hours.

Notes are protected health information and a tool may echo them, so no
message quotes a response body, a problem ``detail``, a reason phrase or note
text: messages name the note id, offsets, lengths, the HTTP status, the
content type and the byte size. ``show_text=True`` (the command line's
``--show-text``, a local opt-in for debugging) adds what the tool said.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ValidationError

from nlpbench.errors import Kind, NlpbenchError
from nlpbench.model import PHI_TYPES, Annotation, Document, Span
from nlpbench.runner.wire import RedialTransport
from nlpbench.toolapi import schemas
from nlpbench.toolapi.account import ACCOUNTS, HEADER, NOTE_ACCOUNT, Account, AccountError

BASE_PATH = "/api/v1"
PHI_LABELS = tuple(schemas.ANNOTATION_MODELS)
#: The annotation types each kind of tool answers for.
TOOL_LABELS: dict[str, tuple[str, ...]] = {
    f"nlpsandbox:{label.replace('_', '-')}-annotator": (label,) for label in PHI_LABELS
} | {"nlpsandbox:phi-annotator": PHI_LABELS}
#: The largest response read by default: far above what a real note's annotations take.
MAX_RESPONSE_BYTES = 32 * 2**20
#: The most annotations one note's answers may hold by default, all types together: a long note holds a few
#: hundred PHI spans; 10,000 is one per character of a 10,000-character note.
MAX_ANNOTATIONS = 10_000
#: The metadata key under which :meth:`ToolClient.deidentify` keeps the tool's annotations of the de-identified text.
DEIDENTIFIED_ANNOTATIONS = "deidentifiedAnnotations"
#: How much of a body ``show_text`` shows.
SHOWN_CHARS = 120
#: The note a tool is validated with: the example of the 1.2.0 Note schema.
PROBE_NOTE = Document(
    "awesome-note",
    "On 12/26/2020, Ms. Chloe Price met with Dr. Prescott in Seattle.",
    metadata={"patientId": "awesome-patient", "noteType": "loinc:LP29684-5"},
)


class ToolError(NlpbenchError):
    """A tool that is unreachable, failing, or answering outside the 1.2.0 schemas; one line."""

    kind = Kind.tool


class Unanswered(ToolError):
    """No usable answer: the tool could not be reached, broke off, took too long, or answered an error status.

    What the network said, which the platform keeps from a team that gave the URL (a port scan reads it).
    """


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


@dataclass(frozen=True)
class ClientOptions:
    """How a tool is asked — every option of a :class:`ToolClient` but its transport.

    The one place a run's client is built from its options: the local executor
    and each Dask worker (:mod:`nlpbench.runner.dask`, which is sent these
    options with every batch) call :meth:`client`, so an option set on the
    command line applies wherever the requests are sent from.
    """

    concurrency: int = 8
    timeout: float = 30.0
    retry: RetryPolicy = RetryPolicy()
    max_response_bytes: int = MAX_RESPONSE_BYTES
    show_text: bool = False
    max_annotations: int = MAX_ANNOTATIONS

    def client(self, url: str, transport: httpx.AsyncBaseTransport | None = None) -> ToolClient:
        """A :class:`ToolClient` of the tool at ``url`` asking it as these options say."""
        return ToolClient(
            url,
            concurrency=self.concurrency,
            timeout=self.timeout,
            retry=self.retry,
            max_response_bytes=self.max_response_bytes,
            show_text=self.show_text,
            max_annotations=self.max_annotations,
            transport=transport,
        )


@dataclass
class ClientStats:
    requests: int = 0
    retries: int = 0
    #: Annotations whose ``text`` is not the note text at ``[start, start + length)``.
    text_mismatches: int = 0
    #: The first of them by note id, type and start, and that place.
    mismatch_example: str = ""
    mismatch_place: tuple = ()
    #: The ids of the notes with at least one of them: an answer that failed this check is not finished.
    mismatched: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class ToolCheck:
    """What :func:`validate_tool` found: the tool's self-description and the types it annotates."""

    tool: schemas.Tool
    labels: tuple[str, ...]
    health: str
    warnings: tuple[str, ...] = field(default=())


def checked_url(url: str) -> str:
    """``url`` as messages show it (without a user or password) if it is an http(s) URL with a host.

    Anything else is a :class:`ToolError` at once: there is nothing to retry.
    """
    try:
        parsed = httpx.URL(url)
        urlsplit(url).port  # noqa: B018 - raises ValueError on a port that is not one
    except (httpx.InvalidURL, ValueError, UnicodeError):
        raise ToolError(f"{url!r} is not a URL; give one like http://127.0.0.1:8080") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        what = f"a {parsed.scheme}:// URL" if parsed.scheme and parsed.host else "not an http(s) URL"
        raise ToolError(f"{url!r} is {what}; a tool is reached at http://HOST:PORT or https://HOST:PORT")
    if parsed.query or parsed.fragment:
        raise ToolError(f"{url!r}: a tool's URL has no query (?) or fragment (#)")
    return str(parsed.copy_with(username=None, password=None)) if parsed.userinfo else url


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


def annotation_of(
    note: Document,
    label: str,
    start: int,
    length: int,
    text: str,
    attributes: dict[str, Any],
    confidence: float,
    where: str,
    stats: ClientStats,
    *,
    show_text: bool = False,
) -> Annotation:
    """The annotation ``[start, start + length)`` of ``note``, checked against it.

    A span outside the note is a :class:`ToolError`. A ``text`` that is not the
    note's text at the span is counted in ``stats`` (the first by note id, type and
    start described by offsets and lengths, the note's id kept in ``stats.mismatched``) and
    replaced by the note's text: the offsets are what is scored.
    """
    assert note.text is not None  # a note goes to a tool with its text
    if start < 0 or length < 0:
        raise ToolError(f"{where}: negative offset (start {start}, length {length})")
    if start + length > len(note.text):
        raise ToolError(f"{where}: ends at {start + length}, beyond the note ({len(note.text)} chars)")
    covered = note.text[start : start + length]
    if covered != text:
        stats.text_mismatches += 1
        stats.mismatched.add(note.id)
        place = (note.id, PHI_LABELS.index(label) if label in PHI_LABELS else len(PHI_LABELS), start)
        if not stats.mismatch_example or place < stats.mismatch_place:  # the same however answers interleave
            said = f" ({text!r} covers {covered!r})" if show_text else ""
            stats.mismatch_example = f"{where}: start {start}, length {length}: a text of {len(text)} chars{said}"
            stats.mismatch_place = place
    return Annotation(note.id, Span.of(start, length), label, covered, attributes, confidence)


class ToolClient:
    """``async with ToolClient(url) as tool:`` — ``url`` is the server root or its ``/api/v1``."""

    def __init__(
        self,
        url: str,
        *,
        concurrency: int = 8,
        timeout: float = 30.0,
        retry: RetryPolicy = RetryPolicy(),
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        show_text: bool = False,
        max_annotations: int = MAX_ANNOTATIONS,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        shown, root = checked_url(url).rstrip("/"), url.rstrip("/")
        #: The API's URL as messages and checkpoints name it: no user or password.
        self.url = shown if shown.endswith(BASE_PATH) else shown + BASE_PATH
        self._base = root if root.endswith(BASE_PATH) else root + BASE_PATH
        self._root = self._base.removesuffix(BASE_PATH)
        self.concurrency = concurrency
        self.timeout = timeout
        self.retry = retry
        self.max_response_bytes = max_response_bytes
        self.show_text = show_text
        self.max_annotations = max_annotations
        self.stats = ClientStats()
        self._transport = transport
        #: The transport every request goes over (:mod:`nlpbench.runner.wire`), once the client is entered.
        self.wire: RedialTransport | None = None
        self._client: httpx.AsyncClient | None = None
        self._slots: asyncio.Semaphore | None = None

    async def __aenter__(self) -> ToolClient:
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        self.wire = RedialTransport(self._transport or httpx.AsyncHTTPTransport(limits=limits))
        self._client = httpx.AsyncClient(base_url=self._base, timeout=self.timeout, transport=self.wire)
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
        counts: dict[str, int] = {}  # annotations per type answered so far
        try:
            async with asyncio.TaskGroup() as group:  # the first failure cancels the note's other requests
                replies = [group.create_task(self._annotate_one(document, note, label, counts)) for label in labels]
        except ExceptionGroup as failures:
            # not ``except*``: on Python 3.11.0-3.11.3 an exception raised inside it escapes wrapped in a new
            # group (gh-103590), which nothing above expects; the TaskGroup's group is flat
            tool_errors, others = failures.split(ToolError)
            if tool_errors is None or others is not None:
                raise
            raise tool_errors.exceptions[0] from None
        result = Document(document.id)
        accounts = {}
        for label, reply in zip(labels, replies, strict=True):
            found, account = reply.result()
            result.annotations.extend(found)
            if account is not None:
                accounts[label] = account
        if accounts:  # an LLM tool's grounding counts, tokens and latency (nlpbench.toolapi.account)
            result.metadata[ACCOUNTS] = accounts
        return result

    async def deidentify(self, document: Document, steps: Sequence[dict[str, Any]]) -> Document:
        """``POST /deidentifiedNotes``: ``document`` de-identified by ``steps``, as a document holding the
        de-identified text, with the tool's ``deidentifiedAnnotations`` (schema-valid, as it gave them: they
        are kept, not scored) in its metadata, and the note's account under :data:`NOTE_ACCOUNT` when the tool
        sent one (an LLM de-identifier)."""
        note = note_json(document)
        what = f"POST /deidentifiedNotes for note {document.id}"
        body = {"note": note, "deidentificationSteps": list(steps)}
        data, headers = await self._request_reply("POST", "/deidentifiedNotes", what, json=body)
        account = self._account(headers, what)
        reply = _checked(schemas.DeidentifyResponse, data, f"{self.url}: {what}")
        if reply.deidentifiedNote.identifier != note["identifier"]:
            raise ToolError(f"{self.url}: {what}: the answer is about another note")
        metadata = {**document.metadata, DEIDENTIFIED_ANNOTATIONS: schemas.dump(reply.deidentifiedAnnotations)}
        if account is not None:  # an LLM de-identifier's account of the note (nlpbench.toolapi.account)
            metadata[NOTE_ACCOUNT] = account
        return Document(document.id, reply.deidentifiedNote.text, metadata=metadata)

    async def _annotate_one(
        self, document: Document, note: dict, label: str, counts: dict[str, int]
    ) -> tuple[list[Annotation], Account | None]:
        array = PHI_TYPES[label].array
        attribute = PHI_TYPES[label].type_attribute
        what = f"POST /{array} for note {document.id}"
        data, headers = await self._request_reply("POST", f"/{array}", what, json={"note": note})
        account = self._account(headers, what)
        self._count(data, array, label, counts, what)
        reply = _checked(schemas.RESPONSE_MODELS[label], data, f"{self.url}: {what}")
        found = []
        for index, item in enumerate(getattr(reply, array)):
            value = getattr(item, attribute, None)
            try:
                annotation = annotation_of(
                    document,
                    label,
                    item.start,
                    item.length,
                    item.text,
                    {attribute: value} if value is not None else {},
                    item.confidence,
                    f"{what}: {array}[{index}]",
                    self.stats,
                    show_text=self.show_text,
                )
            except ToolError as error:
                raise ToolError(f"{self.url}: {error}") from None
            found.append(annotation)
        return found, account

    def _account(self, headers: httpx.Headers, what: str) -> Account | None:
        """The account an LLM tool sent in the answer's :data:`~nlpbench.toolapi.account.HEADER`, None without
        one; a :class:`ToolError` naming the field, never the value, for a bad one."""
        if HEADER not in headers:
            return None
        try:
            return Account.parse(headers[HEADER])
        except AccountError as error:
            raise ToolError(f"{self.url}: {what}: {error}") from None

    def _count(self, data: Any, array: str, label: str, counts: dict[str, int], what: str) -> None:
        """Add the length of ``data[array]`` to the note's ``counts``; a :class:`ToolError` past ``max_annotations``.

        Cheap, before any annotation is checked: the note's total is ``sum(counts.values())``.
        """
        items = data.get(array) if isinstance(data, dict) else None
        counts[label] = len(items) if isinstance(items, list) else 0
        total = sum(counts.values())
        if total > self.max_annotations:
            raise ToolError(
                f"{self.url}: {what}: {total} annotations for the note, more than the {self.max_annotations} "
                "one note may have (--max-annotations)"
            )

    async def _get(self, path: str, model: type[BaseModel]):
        what = f"GET {path}"
        return _checked(model, await self._request("GET", path, what), f"{self.url}: {what}")

    async def page(self, path: str | httpx.URL) -> tuple[int, str, httpx.URL]:
        """The status, ``Location`` and URL of ``GET path`` (from the server root, not ``/api/v1``), redirects
        not followed and the body never read; retried as every request is (an error status not retried is
        returned, not raised)."""
        target = path if isinstance(path, httpx.URL) else httpx.URL(self._root + path)
        response, _ = await self._retried(f"GET {target.path}", lambda: self._head(target))
        return response.status_code, response.headers.get("location", ""), response.url

    async def _head(self, url: httpx.URL) -> tuple[httpx.Response, bytes]:
        assert self._client is not None  # _retried, its caller, checked it
        async with self._client.stream("GET", url, follow_redirects=False) as response:
            return response, b""

    async def _request(self, method: str, path: str, what: str, **kwargs) -> Any:
        return (await self._request_reply(method, path, what, **kwargs))[0]

    async def _request_reply(self, method: str, path: str, what: str, **kwargs) -> tuple[Any, httpx.Headers]:
        """The JSON body of the answer and its headers, retried as :attr:`retry` says."""
        response, body = await self._retried(what, lambda: self._exchange(method, path, what, **kwargs))
        if response.status_code >= 400:
            raise Unanswered(f"{self.url}: {what}: {self._described(response, body)}")
        return self._json(response, body, what), response.headers

    async def _retried(
        self, what: str, exchange: Callable[[], Awaitable[tuple[httpx.Response, bytes]]]
    ) -> tuple[httpx.Response, bytes]:
        """What ``exchange`` answers, retried as :attr:`retry` says: after a timeout, a failure of the network
        or a status of ``retry.statuses``; an :class:`Unanswered` when the last attempt fails too."""
        if self._client is None or self._slots is None:
            raise RuntimeError("use `async with ToolClient(url) as client`")
        for attempt in range(self.retry.retries + 1):
            retry_after = None
            try:
                async with self._slots:
                    await asyncio.sleep(0)  # a sibling's failure, woken with this slot, cancels this request first
                    self.stats.requests += 1
                    async with asyncio.timeout(self.timeout):  # the whole exchange, however slowly it drips in
                        response, body = await exchange()
            except (TimeoutError, httpx.TimeoutException):
                problem = f"no answer within {self.timeout:g} s"
            except httpx.ConnectError as error:  # nothing came from the server: the OS's reason is safe to show
                problem = f"cannot reach the tool ({error or type(error).__name__})"
            except httpx.TransportError as error:  # its text may quote what the server sent: named only
                problem = f"the connection broke off ({type(error).__name__})"
            except httpx.HTTPError as error:
                raise Unanswered(f"{self.url}: {what}: the response cannot be read ({type(error).__name__})") from None
            else:
                if response.status_code not in self.retry.statuses:
                    return response, body
                problem = self._described(response, body)
                retry_after = response.headers.get("retry-after")
            if attempt == self.retry.retries:
                tries = self.retry.retries + 1
                raise Unanswered(f"{self.url}: {what}: {problem} ({tries} attempt{'s' * (tries > 1)})")
            self.stats.retries += 1
            await asyncio.sleep(self.retry.delay(attempt, retry_after))
        raise AssertionError("unreachable")

    async def _exchange(self, method: str, path: str, what: str, **kwargs) -> tuple[httpx.Response, bytes]:
        """The response and its body, read as it streams in and abandoned past ``max_response_bytes``."""
        assert self._client is not None  # _request, its caller, checked it
        async with self._client.stream(method, path, **kwargs) as response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_response_bytes:
                raise ToolError(f"{self.url}: {what}: {self._too_large(response, f'{int(declared)} bytes')}")
            chunks, size = [], 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > self.max_response_bytes:  # named by the cap: how far the read got depends on chunking
                    too_large = self._too_large(response, f"over {self.max_response_bytes} bytes")
                    raise ToolError(f"{self.url}: {what}: {too_large}")
                chunks.append(chunk)
        return response, b"".join(chunks)

    def _too_large(self, response: httpx.Response, size: str) -> str:
        return (
            f"{_status(response)}, {_content_type(response)}, {size}: larger than the "
            f"{self.max_response_bytes} bytes one response may take (--max-response-bytes)"
        )

    def _json(self, response: httpx.Response, body: bytes, what: str) -> Any:
        try:
            return json.loads(body)
        except RecursionError:
            problem = "the response is JSON nested too deeply"
        except ValueError:  # UnicodeDecodeError included
            problem = "the response is not JSON"
        raise ToolError(f"{self.url}: {what}: {problem} ({self._described(response, body)})") from None

    def _described(self, response: httpx.Response, body: bytes) -> str:
        """``HTTP 400 Bad Request, application/problem+json, 312 bytes``; with ``show_text``, the body's start."""
        described = f"{_status(response)}, {_content_type(response)}, {len(body)} bytes"
        if self.show_text and body:
            described += f": {body[:SHOWN_CHARS].decode(errors='replace')!r}"
        return described


def _status(response: httpx.Response) -> str:
    """``HTTP 503 Service Unavailable``, the phrase from the standard (the server's own may be anything)."""
    try:
        return f"HTTP {response.status_code} {HTTPStatus(response.status_code).phrase}"
    except ValueError:  # a status the standard does not name
        return f"HTTP {response.status_code}"


def _content_type(response: httpx.Response) -> str:
    """The media type the response declares, if it looks like one; never more than a short token."""
    declared = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if not declared:
        return "no content type"
    if len(declared) <= 80 and re.fullmatch(r"[\w.+-]+/[\w.+-]+", declared):
        return declared
    return "an unreadable content type"


def _checked(model: type[BaseModel], data: Any, what: str):
    """``data`` as ``model``; the first problem named by its place and the rule it breaks
    (:func:`~nlpbench.toolapi.schemas.rule_broken`, which quotes no input)."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors(include_input=False, include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "the body"
        more = f" (and {error.error_count() - 1} more problems)" if error.error_count() > 1 else ""
        broken = schemas.rule_broken(where, first)
        schema = f"the 1.2.0 {model.__name__} schema"
        raise ToolError(f"{what}: the response does not follow {schema}: {broken}{more}") from None


async def health_and_tool(client: ToolClient) -> tuple[str, schemas.Tool]:
    """The first checks of any tool: ``GET /healthCheck`` (``fail`` refused) and its ``GET /tool``."""
    health = await client.health()
    if health == "fail":
        raise ToolError(f"{client.url}: GET /healthCheck says the tool's status is fail")
    return health, await client.tool()


def checked(tool: schemas.Tool, labels: tuple[str, ...], health: str) -> ToolCheck:
    """A tool that passed its checks, with the warnings of an older API version and of a ``warn`` health."""
    warnings = []
    if tool.apiVersion != schemas.API_VERSION:
        warnings.append(f"the tool implements API {tool.apiVersion}; nlpbench speaks {schemas.API_VERSION}")
    if health == "warn":
        warnings.append("GET /healthCheck says warn")
    return ToolCheck(tool, labels, health, tuple(warnings))


async def validate_tool(client: ToolClient, labels: tuple[str, ...] | None = None) -> ToolCheck:
    """Check a tool before sending it data: health, ``/tool``, and one schema-valid answer per endpoint.

    ``labels`` narrows what a PHI annotator is asked for; asking a tool for a
    type it does not annotate is an error.
    """
    health, tool = await health_and_tool(client)
    if tool.type not in TOOL_LABELS:
        raise ToolError(f"{client.url}: the tool is a {tool.type}, not an annotator of PHI (date, person name, …)")
    served = TOOL_LABELS[tool.type]
    chosen = served if labels is None else tuple(labels)
    missing = [label for label in chosen if label not in served]
    if missing:
        raise ToolError(f"{client.url}: a {tool.type} does not annotate {', '.join(missing)}")
    await client.annotate(PROBE_NOTE, chosen)
    return checked(tool, chosen, health)
