"""Send a stream of notes to a tool and collect its annotations, in input order, resumably.

:class:`AnnotationRun` validates the tool (:func:`~nlpbench.runner.client.validate_tool`),
then keeps a window of at most ``4 × concurrency`` notes in flight — the
client bounds concurrent requests to ``concurrency`` — and yields each note's
annotations as a :class:`~nlpbench.model.Document` (no text) in the order the
notes came, so the output is the same however requests interleave. Each
finished note is appended to the checkpoint before it is yielded; notes the
checkpoint already holds are not sent again. The first note that fails after
its retries stops the run: the error names it, and the notes finished so far
stay in the checkpoint.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from nlpbench.model import Document
from nlpbench.runner.checkpoint import Checkpoint, header
from nlpbench.runner.client import RetryPolicy, ToolCheck, ToolClient, validate_tool

#: Called after each note with its id and whether it came from the checkpoint.
ProgressCallback = Callable[[str, bool], None]
WINDOW_PER_SLOT = 4


@dataclass
class RunStats:
    notes: int = 0
    resumed: int = 0
    annotations: int = 0
    requests: int = 0
    retries: int = 0
    text_mismatches: int = 0
    warnings: list[str] = field(default_factory=list)


class AnnotationRun:
    """One tool, one set of annotation types, one optional checkpoint; :meth:`stream` or :meth:`run` the notes."""

    def __init__(
        self,
        url: str,
        *,
        labels: tuple[str, ...] | None = None,
        concurrency: int = 8,
        timeout: float = 30.0,
        retry: RetryPolicy = RetryPolicy(),  # noqa: B008 - frozen
        checkpoint: Path | None = None,
        on_progress: ProgressCallback | None = None,
        transport=None,
    ):
        self.url = url
        self.labels = labels
        self.concurrency = concurrency
        self.timeout = timeout
        self.retry = retry
        self.checkpoint = Checkpoint(checkpoint) if checkpoint is not None else None
        self.on_progress = on_progress or (lambda _note_id, _resumed: None)
        self.transport = transport
        self.stats = RunStats()
        self.check: ToolCheck | None = None

    async def stream(self, notes: Iterable[Document]) -> AsyncIterator[Document]:
        """Each note's annotations, in the order of ``notes``."""
        client = ToolClient(
            self.url, concurrency=self.concurrency, timeout=self.timeout, retry=self.retry, transport=self.transport
        )
        async with client:
            self.check = await validate_tool(client, self.labels)
            self.stats.warnings.extend(self.check.warnings)
            probe_mismatches = client.stats.text_mismatches
            finished = self._open_checkpoint()
            window: deque[asyncio.Future[Document]] = deque()
            try:
                for note in notes:
                    window.append(self._start(client, note, finished))
                    while len(window) >= WINDOW_PER_SLOT * self.concurrency or window[0].done():
                        yield self._count(await window.popleft())
                        if not window:
                            break
                while window:
                    yield self._count(await window.popleft())
            finally:
                for pending in window:
                    pending.cancel()
                await asyncio.gather(*window, return_exceptions=True)
                if self.checkpoint is not None:
                    self.checkpoint.close()
                self.stats.requests = client.stats.requests
                self.stats.retries = client.stats.retries
                self.stats.text_mismatches = client.stats.text_mismatches - probe_mismatches
                if self.stats.text_mismatches:
                    self.stats.warnings.append(
                        f"{self.stats.text_mismatches} annotations whose text is not the note's text at their offsets "
                        f"(first: {client.stats.mismatch_example})"
                    )

    def run(self, notes: Iterable[Document]) -> list[Document]:
        """:meth:`stream` from synchronous code: every note's annotations, in order."""

        async def collect() -> list[Document]:
            return [document async for document in self.stream(notes)]

        return asyncio.run(collect())

    def _open_checkpoint(self) -> dict[str, Document]:
        if self.checkpoint is None:
            return {}
        tool = self.check.tool
        return self.checkpoint.open(header(tool.name, tool.version, self.check.labels))

    def _start(self, client: ToolClient, note: Document, finished: dict[str, Document]) -> asyncio.Future[Document]:
        if note.id in finished:
            self.stats.resumed += 1
            self.on_progress(note.id, True)
            done: asyncio.Future[Document] = asyncio.get_running_loop().create_future()
            done.set_result(finished.pop(note.id))
            return done
        return asyncio.ensure_future(self._annotate(client, note))

    async def _annotate(self, client: ToolClient, note: Document) -> Document:
        document = await client.annotate(note, self.check.labels)
        if self.checkpoint is not None:
            self.checkpoint.add(document)
        self.on_progress(note.id, False)
        return document

    def _count(self, document: Document) -> Document:
        self.stats.notes += 1
        self.stats.annotations += len(document.annotations)
        return document
