"""Send a stream of notes to a tool and collect its annotations, in input order, resumably.

:class:`AnnotationRun` validates the tool (:func:`~nlpbench.runner.client.validate_tool`),
then keeps a window of work in flight and yields each note's annotations as a
:class:`~nlpbench.model.Document` (no text) in the order the notes came, so
the output is the same however requests interleave. The local executor sends
each note from this process (at most ``4 × concurrency`` notes in the window,
``concurrency`` requests at once); with ``scheduler`` set, batches of
``batch_size`` notes go to the workers of a Dask cluster (:mod:`nlpbench.runner.dask`),
each worker sending at most ``concurrency`` requests at once. Each finished
note is appended to the checkpoint before it is yielded; notes the checkpoint
already holds (with the same text) are read back from it, checked against the
note like a fresh answer, and not sent again. A note whose answer failed a
check that lets the run go on — an annotation whose ``text`` is not the note's
text at its offsets, counted in a warning — is yielded but never checkpointed
as finished: the next run asks the tool again (a fixed tool's answer replaces
it). Nothing is held beyond the
window, and with a checkpoint not even that for a note of many annotations:
it waits there, not in memory, and is read back when its turn comes, so a
caller that writes what :meth:`AnnotationRun.stream` yields as it comes keeps
memory flat however many notes, and however many annotations, there are. The first note that
fails after its retries stops the run: the error names it, and the notes
finished so far stay in the checkpoint.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections import deque
from collections.abc import AsyncGenerator, Callable, Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from nlpbench.model import Document
from nlpbench.runner.checkpoint import Checkpoint, Entry, header
from nlpbench.runner.client import (
    MAX_ANNOTATIONS,
    MAX_RESPONSE_BYTES,
    ClientOptions,
    ClientStats,
    RetryPolicy,
    ToolCheck,
    ToolClient,
    ToolError,
    validate_tool,
)
from nlpbench.runner.dask import annotate_batch, connect
from nlpbench.toolapi.account import ACCOUNTS
from nlpbench.toolapi.cost import Usage

log = logging.getLogger(__name__)

#: Called after each note with its id and whether it came from the checkpoint.
ProgressCallback = Callable[[str, bool], None]
WINDOW_PER_SLOT = 4
#: A finished note with more annotations than this waits for its turn in the checkpoint, not in memory.
HELD_ANNOTATIONS = 1000


@dataclass(frozen=True)
class Stored:
    """A finished note whose annotations wait in the checkpoint."""

    note: Document
    entry: Entry


@dataclass
class RunStats:
    notes: int = 0
    resumed: int = 0
    annotations: int = 0
    requests: int = 0
    retries: int = 0
    text_mismatches: int = 0
    warnings: list[str] = field(default_factory=list)
    #: An LLM tool's accounts of the notes it answered in this run (none for other tools, or resumed notes).
    usage: Usage = field(default_factory=Usage)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A fresh event loop whose errors nobody awaited are logged by the exception's type alone.

    asyncio's default handler prints a traceback to stderr, with a message that may quote a callback's
    arguments (what a tool sent). One such error changes no outcome and is a debug line: anyio's
    Unix-socket connect, cancelled while the socket turns writable, sets a cancelled future's result
    ("Exception in callback Future.set_result(None)", an ``InvalidStateError``). Any other is a warning.
    """
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(_callback_error)
    return loop


def _callback_error(_loop: asyncio.AbstractEventLoop, context: dict) -> None:
    error = context.get("exception")
    kind = type(error).__name__ if error else "no exception"
    # not asyncio's message: it holds the callback's arguments, which may be a tool's bytes
    if isinstance(error, asyncio.InvalidStateError):
        log.debug("event loop: an error in a callback (%s)", kind)
    else:
        log.warning("event loop: an error nobody awaited (%s)", kind)


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
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        max_annotations: int = MAX_ANNOTATIONS,
        show_text: bool = False,
        checkpoint: Path | None = None,
        restart: bool = False,
        on_progress: ProgressCallback | None = None,
        scheduler: str | None = None,
        batch_size: int = 32,
        transport=None,
    ):
        self.url = url
        self.labels = labels
        #: How the tool is asked, from this process or from a Dask worker alike.
        self.options = ClientOptions(concurrency, timeout, retry, max_response_bytes, show_text, max_annotations)
        self.checkpoint = Checkpoint(checkpoint) if checkpoint is not None else None
        self.restart = restart
        self.on_progress = on_progress or (lambda _note_id, _resumed: None)
        self.scheduler = scheduler
        self.batch_size = batch_size
        self.transport = transport
        self.stats = RunStats()
        self.check: ToolCheck | None = None

    @property
    def checked(self) -> ToolCheck:
        """What checking the tool found, once the notes have started streaming."""
        if self.check is None:
            raise RuntimeError("the tool is checked when the notes start streaming")
        return self.check

    async def stream(self, notes: Iterable[Document]) -> AsyncGenerator[Document, None]:
        """Each note's annotations, in the order of ``notes``."""
        async with self.options.client(self.url, self.transport) as client:
            self.check = await validate_tool(client, self.labels)
            self.stats.warnings.extend(self.check.warnings)
            client.stats.text_mismatches, client.stats.mismatch_example = 0, ""  # count the notes', not the probe's
            client.stats.mismatched.clear()
            self._open_checkpoint(client.url)
            dask = await connect(self.scheduler, self.options.timeout) if self.scheduler else None
            window: deque[asyncio.Future[list[Document | Stored]]] = deque()
            slots = self.options.concurrency if dask is None else max(1, len(dask.scheduler_info()["workers"]))
            limit = WINDOW_PER_SLOT * slots
            try:
                for work in self._work(notes, batched=dask is not None):
                    window.append(self._start(client, dask, work))
                    while window and (len(window) >= limit or window[0].done()):
                        for finished in await window.popleft():
                            yield self._count(finished, client.stats)
                while window:
                    for finished in await window.popleft():
                        yield self._count(finished, client.stats)
            finally:
                for pending in window:
                    pending.cancel()
                await asyncio.gather(*window, return_exceptions=True)
                if dask is not None:
                    await dask.close()
                if self.checkpoint is not None:
                    self.checkpoint.close()
                    if self.checkpoint.changed:
                        self.stats.warnings.append(
                            f"{self.checkpoint.changed} notes changed since {self.checkpoint.path} was written; "
                            "they were annotated again"
                        )
                self._add(client.stats)

    def iterate(self, notes: Iterable[Document]) -> Generator[Document, None, None]:
        """:meth:`stream` from synchronous code, one note at a time (a writer can take them as they come).

        Ctrl-C while waiting for the tool cancels the requests in flight, closes
        the checkpoint, and raises :class:`KeyboardInterrupt`; while the caller
        holds a note, it does so when the caller asks for the next. A caller that may stop
        early closes it where it took it (``contextlib.closing``): its clean-up runs
        its own event loop, which cannot run inside another, as it may when the
        garbage collector closes it later.
        """
        loop = new_event_loop()
        documents = self.stream(notes)
        interruption = _Interruption()

        async def next_document() -> Document:
            return await anext(documents)

        with _interrupting(loop, interruption):
            try:
                while not interruption.signalled:  # a Ctrl-C while the caller had the last note
                    interruption.step = loop.create_task(next_document())
                    try:
                        document = loop.run_until_complete(interruption.step)
                    except StopAsyncIteration:  # no more documents
                        return
                    except asyncio.CancelledError:  # the Ctrl-C cancelled the step: raised below as an interrupt
                        break
                    if interruption.signalled:  # it came as the step finished: the step was not cancelled
                        break
                    yield document
                raise KeyboardInterrupt
            finally:
                loop.run_until_complete(documents.aclose())
                loop.close()

    def run(self, notes: Iterable[Document]) -> list[Document]:
        """Every note's annotations, in order, in a list."""
        return list(self.iterate(notes))

    def _open_checkpoint(self, url: str) -> None:
        if self.checkpoint is not None:
            tool = self.checked.tool
            expected = header(url, tool.name, tool.version, tool.type, self.checked.labels)
            self.checkpoint.open(expected, restart=self.restart)

    def _work(self, notes: Iterable[Document], *, batched: bool) -> Iterator[Stored | list[Document]]:
        """Finished notes one by one; notes to send one by one, or in batches for Dask."""
        batch: list[Document] = []
        for note in notes:
            resumed = self.checkpoint.resumed(note) if self.checkpoint is not None else None
            if resumed is not None:
                if batch:
                    yield batch
                    batch = []
                self.stats.resumed += 1
                self.on_progress(note.id, True)
                yield Stored(note, resumed)
            elif batched:
                batch.append(note)
                if len(batch) == self.batch_size:
                    yield batch
                    batch = []
            else:
                yield [note]
        if batch:
            yield batch

    def _start(
        self, client: ToolClient, dask, work: Stored | list[Document]
    ) -> asyncio.Future[list[Document | Stored]]:
        if isinstance(work, Stored):
            done: asyncio.Future[list[Document | Stored]] = asyncio.get_running_loop().create_future()
            done.set_result([work])
            return done
        if dask is None:
            return asyncio.ensure_future(self._annotate(client, work[0]))
        return asyncio.ensure_future(self._annotate_on_dask(dask, work))

    async def _annotate(self, client: ToolClient, note: Document) -> list[Document | Stored]:
        return [self._finished(note, await client.annotate(note, self.checked.labels), client.stats)]

    async def _annotate_on_dask(self, dask, batch: list[Document]) -> list[Document | Stored]:
        try:
            documents, stats, failure = await dask.submit(
                annotate_batch, self.url, batch, self.checked.labels, self.options
            )
        except ToolError:
            raise
        except Exception as error:  # a worker that died, a scheduler that went away
            raise ToolError(f"Dask executor: batch from note {batch[0].id}: {type(error).__name__}: {error}") from None
        if failure is not None:
            raise ToolError(failure)
        self._add(stats)
        return [self._finished(note, document, stats) for note, document in zip(batch, documents, strict=True)]

    def _finished(self, note: Document, document: Document, stats: ClientStats) -> Document | Stored:
        """Into the checkpoint, when there is one and the answer passed every check; out of memory until its
        turn, when it is a large one."""
        self.on_progress(document.id, False)
        if self.checkpoint is None or note.id in stats.mismatched:
            return document
        entry = self.checkpoint.add(note, document)
        return Stored(note, entry) if len(document.annotations) > HELD_ANNOTATIONS else document

    def _add(self, stats: ClientStats) -> None:
        self.stats.requests += stats.requests
        self.stats.retries += stats.retries
        if stats.text_mismatches:
            self.stats.text_mismatches += stats.text_mismatches
            self.stats.warnings.append(
                f"{stats.text_mismatches} annotations whose text is not the note's text at their offsets; "
                f"the note's text is kept (first: {stats.mismatch_example}); "
                f"{len(stats.mismatched)} notes with them are not checkpointed, a rerun asks the tool again"
            )

    def _count(self, finished: Document | Stored, stats: ClientStats) -> Document:
        if isinstance(finished, Stored):
            assert self.checkpoint is not None  # only a checkpoint stores answers
            document = self.checkpoint.document(finished.note, finished.entry, stats)
        else:
            document = finished
        self.stats.notes += 1
        self.stats.annotations += len(document.annotations)
        if ACCOUNTS in document.metadata:
            self.stats.usage.add(document.metadata[ACCOUNTS])
        return document


class _Interruption:
    """A SIGINT for an event loop run one step at a time: it cancels the step running, and it is remembered.

    Remembered, because a signal that comes as a step finishes, or between two steps, would otherwise be lost:
    asyncio calls the handler on the loop's next turn, when the step it would cancel may be done already.
    """

    def __init__(self) -> None:
        self.step: asyncio.Task | None = None
        self.signalled = False

    def __call__(self) -> None:
        self.signalled = True
        if self.step is not None:
            self.step.cancel()


@contextmanager
def _interrupting(loop: asyncio.AbstractEventLoop, handler: Callable[[], None]) -> Iterator[None]:
    """SIGINT calls ``handler`` on ``loop`` (a byte the loop reads on its next turn) instead of striking wherever
    the program happens to be."""
    try:
        loop.add_signal_handler(signal.SIGINT, handler)
    except (ValueError, RuntimeError, NotImplementedError):  # not the main thread, or no signals here
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
