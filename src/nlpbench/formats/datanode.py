"""An NLP Sandbox data node (API 1.2.0) as a source of notes and annotation records, and a sink of annotations.

A data-node URL names one store of one dataset, as the NLP Sandbox controller
addressed them::

    http://HOST/api/v1/datasets/DATASET/fhirStores/evaluation           notes
    http://HOST/api/v1/datasets/DATASET/annotationStores/goldstandard   annotation records

(``datanode:`` before the URL is accepted and ignored). Lists are read a page
at a time (``limit`` 100, ``offset`` advanced by the page's length) for as
long as ``links.next`` is set, the page is not empty and ``totalResults`` is
not reached, so a data node that always sets ``next`` (as the original did)
still ends. Annotations are written one record per note, with the note id as
annotation id and ``annotationSource.resourceSource.name`` naming the note in
its FHIR store, as the controller stored them.

Every request has a timeout; a timeout, a refused connection or HTTP 429, 502,
503 or 504 is retried after ``backoff × 2^attempt`` seconds (what
``Retry-After`` asks, at most ``max_backoff``). A response is read up to
``MAX_RESPONSE_BYTES``. Every failure is a :class:`DataNodeError`, one line
naming the URL, the HTTP status and the response's size — never its body, so
that no note text reaches a message. A data node that requires API keys gets
the one in ``$NLPBENCH_DATANODE_KEY`` (``X-API-Key``), never one given on the
command line, where other users of the machine would see it.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from nlpbench import files, formats
from nlpbench.errors import InputError
from nlpbench.formats import jsonstream, sandbox
from nlpbench.model import Annotation, Document

if TYPE_CHECKING:
    import httpx

PREFIX = "datanode:"
KEY_VARIABLE = "NLPBENCH_DATANODE_KEY"
NOTES, ANNOTATIONS = "fhirStores", "annotationStores"
#: The NLP Sandbox convention: a dataset's gold standard is its annotation store ``goldstandard``.
GOLDSTANDARD = "goldstandard"
PAGE_LIMIT = 100  # the largest page the 1.2.0 API serves
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
RETRY_STATUSES = frozenset({429, 502, 503, 504})
#: Ids of datasets, stores, notes and annotations (``^[a-z0-9]+(?:-[a-z0-9]+)*$``, 3 to 60 characters).
RESOURCE_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_URL = re.compile(
    r"(?P<api>https?://[^/?#]+(?:/[^?#]*?)?/api/v1)/datasets/(?P<dataset>[^/?#]+)"
    r"/(?P<kind>fhirStores|annotationStores)/(?P<store>[^/?#]+)/?"
)


class DataNodeError(InputError):
    """A data node that cannot be reached, answers with an error, or answers outside the 1.2.0 schemas."""


def is_data_node(source: str | Path) -> bool:
    """Whether ``source`` names a data node (an ``http(s)://`` URL, or ``datanode:`` and one) rather than a file."""
    text = str(source)
    return text.startswith((PREFIX, "http://", "https://"))


@dataclass(frozen=True)
class StoreURL:
    """One FHIR store or annotation store of a data node: ``{api}/datasets/{dataset}/{kind}/{store}``."""

    api: str
    dataset: str
    kind: str
    store: str

    @classmethod
    def parse(cls, text: str | Path, kind: str | None = None) -> StoreURL:
        """Read a store URL; ``kind`` (``fhirStores`` or ``annotationStores``) is the kind required."""
        given = str(text).removeprefix(PREFIX)
        found = _URL.fullmatch(given)
        if found is None:
            wanted = kind or "fhirStores|annotationStores"
            raise DataNodeError(
                f"not a data-node store URL: expected http://HOST/api/v1/datasets/ID/{wanted}/ID", given
            )
        url = cls(found["api"], found["dataset"], found["kind"], found["store"])
        if kind is not None and url.kind != kind:
            what = "notes (a FHIR store" if kind == NOTES else "annotations (an annotation store"
            raise DataNodeError(
                f"this names a{'n' * (url.kind == ANNOTATIONS)} {url.kind[:-1]}; {what} is needed)", given
            )
        for name in (url.dataset, url.store):
            if not (3 <= len(name) <= 60 and RESOURCE_ID.fullmatch(name)):
                raise DataNodeError(f"{name!r} is not a data-node id (a-z, 0-9 and single dashes, 3-60 chars)", given)
        return url

    @property
    def path(self) -> str:
        return f"/datasets/{self.dataset}/{self.kind}/{self.store}"

    @property
    def url(self) -> str:
        return self.api + self.path

    def sibling(self, kind: str, store: str) -> StoreURL:
        """Another store of the same dataset."""
        return StoreURL(self.api, self.dataset, kind, store)

    def __str__(self) -> str:
        return self.url


class DataNodeClient:
    """``with DataNodeClient(api) as node:`` — requests to the data node whose base is ``api`` (…/api/v1)."""

    def __init__(
        self,
        api: str,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ):
        self.api = api.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.requests = 0
        import httpx  # loaded only when a data node is used: scoring files never needs it

        key = os.environ.get(KEY_VARIABLE)
        headers = {"X-API-Key": key} if key else None
        self._client = httpx.Client(base_url=self.api, timeout=timeout, transport=transport, headers=headers)

    def __enter__(self) -> DataNodeClient:
        return self

    def __exit__(self, *exc_info) -> None:
        self._client.close()

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params or None)

    def request(
        self, method: str, path: str, *, params: dict | None = None, json: Any = None, accept: Collection[int] = ()
    ) -> Any:
        """The decoded JSON answer; a status in ``accept`` is returned as ``None`` instead of raised."""
        import httpx

        where = self._where(path, params)
        for attempt in range(self.retries + 1):
            retry_after = None
            try:
                self.requests += 1
                with self._client.stream(method, path, params=params, json=json) as response:
                    status = response.status_code
                    body = _read(response, where)
            except httpx.TimeoutException:
                problem = f"{method}: no answer within {self.timeout:g} s"
            except httpx.TransportError as error:
                problem = f"{method}: cannot reach the data node ({type(error).__name__})"
            else:
                if status < 400:
                    return _decoded(body, response, method, where)
                if status in accept:
                    return None
                problem = f"{method}: HTTP {status} {response.reason_phrase} ({len(body)} bytes)".replace("  ", " ")
                if status == 401:
                    problem += f"; the data node wants an API key: set ${KEY_VARIABLE}"
                if status not in RETRY_STATUSES:
                    raise DataNodeError(problem, where)
                retry_after = response.headers.get("retry-after")
            if attempt == self.retries:
                tries = self.retries + 1
                raise DataNodeError(f"{problem} ({tries} attempt{'s' * (tries > 1)})", where)
            time.sleep(self._delay(attempt, retry_after))
        raise AssertionError("unreachable")

    def pages(self, path: str, key: str, limit: int = PAGE_LIMIT) -> Iterator[tuple[int, Any]]:
        """Every item of the list at ``path`` (its array ``key``), with its position, a page at a time."""
        offset = 0
        while True:
            page = self.get(path, offset=offset, limit=limit)
            where = self._where(path, {"offset": offset, "limit": limit})
            items, total, following = _page(page, key, where)
            for index, item in enumerate(items):
                yield offset + index, item
            offset += len(items)
            if not following or not items or (total is not None and offset >= total):
                return

    def total(self, path: str, key: str) -> int:
        """``totalResults`` of the list at ``path``."""
        where = self._where(path, {"limit": 10})
        _, total, _ = _page(self.get(path, limit=10), key, where)
        if total is None:
            raise DataNodeError("the page has no totalResults", where)
        return total

    def _where(self, path: str, params: dict | None) -> str:
        query = "&".join(f"{k}={v}" for k, v in (params or {}).items())
        return self.api + path + (f"?{query}" if query else "")

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after and retry_after.strip().isdigit():
            return min(float(retry_after), self.max_backoff)
        return min(self.backoff * 2**attempt, self.max_backoff)


def _read(response: httpx.Response, where: str) -> bytes:
    """The body, refused beyond ``MAX_RESPONSE_BYTES`` without reading the rest."""
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise DataNodeError(f"the response is larger than {MAX_RESPONSE_BYTES} bytes", where)
        chunks.append(chunk)
    return b"".join(chunks)


def _decoded(body: bytes, response: httpx.Response, method: str, where: str) -> Any:
    """The answer's JSON; not JSON is a :class:`DataNodeError`, and so is a JSON object anywhere in it that
    repeats a key (its path in the answer named), as in a file."""
    try:
        jsonstream.check(body)  # first: deeper nesting exhausts msgspec's recursion (a RecursionError)
        value = msgspec.json.decode(body)
        jsonstream.no_repeated_key(body, where, value=value)
    except msgspec.DecodeError:
        kind = response.headers.get("content-type", "no content type")
        raise DataNodeError(
            f"{method}: HTTP {response.status_code}: the response is not JSON ({len(body)} bytes, {kind})", where
        ) from None
    except InputError as error:
        raise DataNodeError(f"{method}: {error.problem}", where, error.record) from None
    return value


def _page(page: Any, key: str, where: str) -> tuple[list, int | None, bool]:
    """A page's items, ``totalResults`` and whether ``links.next`` is set; its shape checked."""
    if not isinstance(page, dict) or not isinstance(page.get(key), list):
        raise DataNodeError(f"not a page of {key}: no {key!r} list", where)
    total = page.get("totalResults")
    if total is not None and (type(total) is not int or total < 0):
        raise DataNodeError("totalResults is not a count", where)
    links = page.get("links")
    following = isinstance(links, dict) and bool(links.get("next"))
    return page[key], total, following


# --- reading -------------------------------------------------------------------------------


def read_notes(url: StoreURL, node: DataNodeClient) -> Iterator[Document]:
    """The notes of a FHIR store, with their texts, patient ids and note types, in the data node's order."""
    node.get(url.path)  # a missing store or dataset is a 404 here (listing its notes would be a 400)
    for index, note in node.pages(url.path + "/fhir/Note", "notes"):
        where = f"notes[{index}]"
        if not isinstance(note, dict):
            raise DataNodeError("a note must be an object", url.url, where)
        for field in ("identifier", "text", "type", "patientId"):
            if not isinstance(note.get(field), str):
                raise DataNodeError(f"the note has no {field} string (1.2.0 Note schema)", url.url, where)
        metadata = {"patientId": note["patientId"], "noteType": note["type"]}
        yield Document(note["identifier"], note["text"], metadata=metadata)


def read_annotations(
    url: StoreURL, node: DataNodeClient, labels: Collection[str] | None = None, columns: bool = False
) -> Iterator[Document]:
    """The annotation records of an annotation store, one document per note, checked and merged as a file's
    records are (the store is paged through twice: once to count each note's records, once to read them);
    ``columns`` as :func:`nlpbench.formats.sandbox.read` takes it."""
    node.get(url.path)  # a missing store is a 404 here rather than an empty list

    def records() -> Iterator[Any]:
        return (record for _, record in node.pages(url.path + "/annotations", "annotations"))

    return sandbox.read_records(records, url.url, labels, columns)


def read_dataset(url: StoreURL, node: DataNodeClient, gold: str = GOLDSTANDARD) -> Iterator[Document]:
    """The notes of a FHIR store with the annotations of their dataset's ``gold`` store, every span checked.

    A note without a record in the gold has no annotations; a record for a
    note the FHIR store lacks is an error.
    """
    gold_url = url.sibling(ANNOTATIONS, gold)
    annotations = {document.id: document.annotations for document in read_annotations(gold_url, node)}
    for document in read_notes(url, node):
        document.annotations = annotations.pop(document.id, [])
        problem = document.span_problem()
        if problem:
            raise DataNodeError(problem, gold_url.url, f"note {document.id}")
        yield document
    if annotations:
        raise DataNodeError(
            f"{len(annotations)} records for notes that {url.url} does not hold (first: {next(iter(annotations))})",
            gold_url.url,
        )


# --- writing -------------------------------------------------------------------------------


@dataclass
class Written:
    """What :func:`write_annotations` did: records created, and records found already stored as they are."""

    created: int = 0
    unchanged: int = 0


def write_annotations(
    documents: Iterable[Document], url: StoreURL, node: DataNodeClient, notes: StoreURL | None = None
) -> Written:
    """Store each document's annotations as one record of the annotation store ``url``, created if missing.

    The record's id is the note id; its ``resourceSource.name`` is the note's
    resource name in ``notes`` (a FHIR store of the same data node), or the
    bare note id. A record the store already holds is left as it is when it is
    the same (a run that stopped half way is finished by running it again), and
    is an error when it differs: nothing stored is ever overwritten.
    """
    node.get(f"/datasets/{url.dataset}")  # a missing dataset is a 404 here (creating a store in it would be a 400)
    stores = f"/datasets/{url.dataset}/annotationStores"
    node.request("POST", stores, params={"annotationStoreId": url.store}, json={}, accept=(409,))
    path = url.path + "/annotations"
    written = Written()
    for document in documents:
        if not (3 <= len(document.id) <= 60 and RESOURCE_ID.fullmatch(document.id)):
            raise DataNodeError(
                "the note id is not a data-node annotation id (a-z, 0-9 and single dashes, 3-60 chars)",
                url.url,
                f"note {document.id}",
            )
        record = sandbox.record_json(document)
        del record["name"]
        name = f"{notes.path.lstrip('/')}/fhir/Note/{document.id}" if notes is not None else document.id
        record["annotationSource"]["resourceSource"]["name"] = name
        created = node.request("POST", path, params={"annotationId": document.id}, json=record, accept=(409,))
        if created is None:
            _same_or_fail(node, url, document)
            written.unchanged += 1
        else:
            written.created += 1
    return written


def _same_or_fail(node: DataNodeClient, url: StoreURL, document: Document) -> None:
    stored = node.get(f"{url.path}/annotations/{document.id}")
    [kept] = sandbox.read_records(lambda: [stored], url.url)
    if sorted(map(_key, kept.annotations)) != sorted(map(_key, document.annotations)):
        raise DataNodeError(
            "the store already holds a different record for this note (delete the store or choose another one)",
            url.url,
            f"note {document.id}",
        )


def _key(annotation: Annotation) -> tuple:
    attributes = sorted(annotation.attributes.items())
    return annotation.start, annotation.end, annotation.label, annotation.text, attributes, annotation.confidence


# --- scoring inputs ----------------------------------------------------------------------


def documents(
    source: Any, fmt: str, labels: Collection[str] | None = None, *, timeout: float = 30.0, columns: bool = False
) -> Iterator[Document]:
    """Annotated documents to score: a file of ``fmt`` (on disk or in memory, :class:`~nlpbench.files.MemoryPath`),
    an annotation store of a data node, or an object whose ``read(labels)`` yields them (an annotation store
    of nlpbench's store, as the command line opens it).

    ``columns`` asks the readers that can for annotations as columns (``Document.columns``)."""
    if not isinstance(source, (str, Path, files.MemoryPath)):
        yield from source.read(labels)
        return
    if isinstance(source, files.MemoryPath) or not is_data_node(source):
        chosen = formats.get(fmt)
        taken = {"columns": True} if columns and chosen.columns else {}
        yield from chosen.read(files.source(source), labels=labels, **taken)
        return
    url = StoreURL.parse(source, ANNOTATIONS)
    with DataNodeClient(url.api, timeout=timeout) as node:
        yield from read_annotations(url, node, labels, columns)
