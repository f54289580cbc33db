"""Small annotators and servers the tool API and runner tests share."""

from __future__ import annotations

import asyncio
import re
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn

from nlpbench.annotators import Annotator, ToolInfo
from nlpbench.model import Annotation, Document, Span

NOTE = {
    "identifier": "awesome-note",
    "text": "On 12/26/2020, Ms. Chloe Price met with Dr. Prescott in Seattle.",
    "type": "loinc:LP29684-5",
    "patientId": "awesome-patient",
}

#: (pattern, label, attributes, confidence) in the order the test annotator tries them.
RULES = (
    (r"\b\d{1,2}/\d{1,2}/\d{4}\b", "date", {"dateFormat": "MM/DD/YYYY"}, 90.0),
    (r"\b(?:January|March|December) \d{1,2}, \d{4}\b", "date", {"dateFormat": "MMMM D, YYYY"}, 85.0),
    (r"\b(?:Chloe Price|Prescott|Mary|Williamson)\b", "person_name", {}, 80.0),
    (r"\bSeattle\b", "location", {"locationType": "city"}, 70.0),
    (r"\bMercy Hospital\b", "location", {"locationType": "hospital"}, 40.0),
    (r"\b\d{3}-\d{2}-\d{4}\b", "id", {"idType": "ssn"}, 95.0),
    (r"\(\d{3}\) \d{3}-\d{4}", "contact", {"contactType": "phone"}, 60.0),
    (r"\b[\w.]+@[\w.]+\.\w+\b", "contact", {"contactType": "email"}, 99.0),
)


class RegexPhi(Annotator):
    """Finds a few fixed PHI patterns of all five types; confidence per rule."""

    info = ToolInfo("regex-phi", "1.0.0", "A PHI annotator for tests: a handful of regular expressions.", "mit")
    types = ("date", "person_name", "location", "id", "contact")

    def annotate(self, note: Document) -> list[Annotation]:
        found = [
            Annotation(note.id, Span(*m.span()), label, m[0], dict(attributes), confidence)
            for pattern, label, attributes, confidence in RULES
            for m in re.finditer(pattern, note.text or "")
        ]
        return sorted(found, key=lambda a: (a.start, a.end))


class DatesOnly(RegexPhi):
    info = ToolInfo("regex-date", "0.1.0", "Dates only, for tests.", "mit")
    types = ("date",)

    def annotate(self, note: Document) -> list[Annotation]:
        return [a for a in super().annotate(note) if a.label == "date"]


class Fixed(Annotator):
    """Returns the annotations it was given, whatever the note: for exact de-identifier tests."""

    info = ToolInfo("fixed-phi", "1.0.0", "Fixed annotations, for tests.", "mit")
    types = ("date", "person_name", "location", "id", "contact")

    def __init__(self, annotations: list[tuple[int, int, str, dict, float]]):
        self.annotations = annotations

    def annotate(self, note: Document) -> list[Annotation]:
        return [
            Annotation(note.id, Span(start, end), label, (note.text or "")[start:end], dict(attributes), confidence)
            for start, end, label, attributes, confidence in self.annotations
        ]


class AsgiClient:
    """A synchronous facade over ``httpx.AsyncClient`` with the app as its transport."""

    def __init__(self, app):
        self.app = app

    def request(self, method: str, url: str, **kwargs) -> httpx.Response:
        async def send() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://tool") as client:
                return await client.request(method, url, **kwargs)

        return asyncio.run(send())

    def get(self, url: str, **kwargs) -> httpx.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs) -> httpx.Response:
        return self.request("POST", url, **kwargs)


@contextmanager
def served(app, log_level: str = "warning") -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free port of 127.0.0.1; yields its base URL."""
    with serving(app, log_level) as (url, _):
        yield url


@contextmanager
def serving(app, log_level: str = "warning") -> Iterator[tuple[str, uvicorn.Server]]:
    """:func:`served`, yielding the server too (its state tells which connections and requests are open)."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level=log_level, lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start within 10 s")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", server
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def unique_marker(kind: str) -> str:
    """A name no other test, and no other suite running on this machine at the same time, gives a process or a
    file: ``KIND-`` and 12 random hex digits (a test's ``tmp_path.name`` is the same in every suite)."""
    return f"{kind}-{uuid.uuid4().hex[:12]}"


def local_cluster(**options):
    """A Dask ``LocalCluster`` whose every server listens on 127.0.0.1 and a free port: the scheduler (over TCP)
    and its HTTP server, which otherwise takes port 8787 on every interface (or another port when a test running
    beside it holds that one)."""
    import distributed

    return distributed.LocalCluster(protocol="tcp", host="127.0.0.1", dashboard_address="127.0.0.1:0", **options)
