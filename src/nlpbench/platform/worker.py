"""A worker: claim a submission, validate it, annotate under its time budget, score it; resume what a dead one left.

:meth:`Worker.run` claims submissions of one queue (:func:`nlpbench.platform.queue.claim`)
and runs each from the status it is in, so that a submission taken over from
a worker that died goes on where that one stopped:

- ``VALIDATING``: a tool is checked (:mod:`nlpbench.platform.validation`) on
  the dataset's ``NAME-subset`` (the first :data:`SUBSET_NOTES` notes of the
  dataset when there is none, with a warning); a prediction file is read and
  each span (each de-identified note, for ``deid``) checked against its note; failures end ``INVALID``.
- ``ANNOTATING``: the notes not yet in annotation store ``submission-<id>``
  go through the runner (:class:`~nlpbench.runner.AnnotationRun`: concurrency,
  retries, timeouts, response caps; with ``scheduler``, the Dask executor sends
  them from the workers of that cluster, except to a ``--command`` tool, which
  only this machine reaches, and to a team's URL, which this machine reaches
  through :class:`~nlpbench.platform.network.GuardedTransport` unless the queue
  allow-lists its host); finished notes are written in batches (at most
  :data:`FLUSH_NOTES` notes or :data:`FLUSH_SECONDS` apart), each batch in one
  transaction with the progress count and fenced by the lease, so that the
  store is the checkpoint: a note is written once and never lost. A batch is
  written on the event loop's thread (SQLite in WAL mode with
  ``synchronous=NORMAL`` does not wait for the disk at commit), which costs
  less CPU than handing rows to a thread. The time budget runs from the
  first ``ANNOTATING`` and is enforced as a deadline around the whole run (a hanging tool included).
  A ``deid`` submission's de-identifier is sent the notes instead
  (:func:`~nlpbench.runner.deidentifier.deidentified`, ``POST /deidentifiedNotes``
  with the steps it keeps from its queue, :func:`nlpbench.platform.queue.submission_deid_steps`), and its answers are
  stored as de-identified notes, batched and fenced the same way.
- ``SCORING``: :mod:`nlpbench.platform.scoring` stores the result and
  :mod:`nlpbench.platform.ranks` the rank groups of the task's columns it
  changes, in the transaction that moves the submission to SCORED.

A heartbeat thread renews the lease every third of it; when the lease is
lost (cancelled, or taken over after this worker stalled) it cancels the work
in progress, and the fenced writes refuse anything late.

Why a submission ended is told as :class:`~nlpbench.platform.validation.Disclosure`
decides (a team tool's failure after it saw notes of a private dataset by its
class, the whole line kept for organisers in the log stream ``reason``); an
error nobody foresaw fails the one submission and the worker goes on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import socket
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Table, delete, func, select
from sqlalchemy.orm import Session

from nlpbench import formats
from nlpbench.errors import InputError, collected_warnings, raised_at
from nlpbench.files import MemoryPath
from nlpbench.formats.sandbox import record_json
from nlpbench.model import Document
from nlpbench.platform import accounts, challenges, images, ranks, tasks, webhooks
from nlpbench.platform import queue as queues
from nlpbench.platform.network import GuardedTransport, allow_listed
from nlpbench.platform.scoring import PREDICTIONS_FOLDER, new_result, predictions_store, score, store_result
from nlpbench.platform.submitted import safe_name
from nlpbench.platform.validation import Disclosure, Invalid, Settings, Verdict, validate
from nlpbench.platform.views import REASON_STREAM
from nlpbench.runner.client import DEIDENTIFIED_ANNOTATIONS, ClientOptions, RetryPolicy, ToolError, Unanswered
from nlpbench.runner.deidentifier import deidentified
from nlpbench.runner.isolation import INSIDE, Sandbox
from nlpbench.runner.run import AnnotationRun, new_event_loop
from nlpbench.runner.sandbox import Limits
from nlpbench.store import Store, repository
from nlpbench.store.challenges import Phase
from nlpbench.store.models import AnnotationRecord, Dataset
from nlpbench.store.submissions import (
    ANNOTATING,
    FAILED,
    INVALID,
    RECEIVED,
    RUNNING,
    SCORED,
    SCORING,
    VALIDATING,
    DeidentifiedNote,
    Queue,
    Submission,
    SubmissionLog,
)

#: Notes of the dataset validated when it has no ``-subset`` twin.
SUBSET_NOTES = 10
#: Write finished notes at least this often (notes, seconds).
FLUSH_NOTES = 256
FLUSH_SECONDS = 1.0
#: The most of a started tool's output kept in the store (its end).
MAX_LOG_BYTES = 2**20
#: The reason a submission ends with when processing it failed in a way nobody foresaw (the log names the place).
INTERNAL_ERROR = "the worker met an internal error while processing this submission; the organisers can see where"

log = logging.getLogger(__name__)


class Failed(Verdict):
    """The submission cannot finish."""


# Outside the NlpbenchError hierarchy on purpose: a BaseException, like KeyboardInterrupt, so that no
# `except Exception` on the way (a tool's failure, a scoring error) can catch the worker's stop and go on.
class Stopped(BaseException):
    """The worker is asked to stop (``SIGTERM``): like Ctrl+C, it unwinds everything (the tools it started end)
    and the submission in hand is given back to the queue; the argument names the signal."""


def default_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass
class Worker:
    store: Store
    queue: str = queues.DEFAULT_QUEUE
    name: str = field(default_factory=default_name)
    lease: float = 60.0
    poll: float = 1.0
    #: Called with (submission id, status) after each move this worker makes.
    on_status: Callable[[int, str], None] = lambda _id, _status: None
    #: A Dask scheduler's address: annotate from its workers (:mod:`nlpbench.runner.dask`).
    scheduler: str | None = None
    #: How team tools are sandboxed here (which sandbox, the runtime they may read).
    sandbox: Sandbox = field(default_factory=Sandbox)
    #: The submission given back to the queue when the worker was stopped, if any.
    given_back: int | None = None
    #: The webhook deliveries this worker may have in flight (:mod:`nlpbench.platform.webhooks`).
    deliveries: threading.BoundedSemaphore = field(default_factory=webhooks.slots, repr=False)

    def run(self, *, until_idle: bool = False) -> int:
        """Work on the queue; with ``until_idle``, return once nothing in it waits or runs. How many were claimed."""
        claimed = 0
        while True:
            ended: list[int] = []  # failed at their claim: they stopped too many workers
            submission_id = queues.claim(self.store, self.queue, self.name, self.lease, ended)
            for done in ended:
                webhooks.deliver_later(self.store, done, self.deliveries)
            if submission_id is not None:
                claimed += 1
                self.process(submission_id)
                continue
            if until_idle and not self._pending():
                return claimed
            time.sleep(self.poll)

    def _pending(self) -> bool:
        with self.store.session(readonly=True) as session:
            waiting = select(func.count()).where(
                Submission.queue == self.queue, Submission.status.in_((RECEIVED, *RUNNING))
            )
            return session.execute(waiting).scalar_one() > 0

    def process(self, submission_id: int) -> None:
        """Run one claimed submission from its status to its end (or until the lease is lost).

        Nothing one submission does stops the worker: an exception nobody foresaw ends it FAILED with
        :data:`INTERNAL_ERROR`, and the log names the exception's type and place only (its message may
        quote a note or what a tool sent). Once it has ended, its completion goes to its queue's webhook, if
        any, in the background (:mod:`nlpbench.platform.webhooks`).
        """
        job = _Job(self, submission_id)
        try:
            with job.heartbeat(), suppress(queues.Lost):  # another worker holds it now: it finishes the job
                job.run()
        except (Stopped, KeyboardInterrupt):  # its tools ended as the stack unwound: the next worker goes on
            if queues.release(self.store, submission_id, self.name):
                self.given_back = submission_id
            raise
        except Exception as error:
            log.error("submission %d: %s", submission_id, raised_at(error))
            try:
                job.move(FAILED, INTERNAL_ERROR)
            except Exception as again:  # the store itself failing, or the lease lost: another claim ends it
                log.error("submission %d could not be marked FAILED: %s", submission_id, raised_at(again))
        webhooks.deliver_later(self.store, submission_id, self.deliveries)  # once it has ended, in the background


class _Job:
    """One claimed submission; every write goes through :meth:`write`, fenced by the lease."""

    def __init__(self, worker: Worker, submission_id: int):
        self.worker = worker
        self.store = worker.store
        self.id = submission_id
        self.lost = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        #: What the team may read of a failure; :meth:`run` sets it from the submission (private until then).
        self.told = Disclosure(private=True)
        #: What a team's tool may use, and the time budget: the queue's, or those of the challenge phase
        #: the submission was made to; :meth:`run` sets them.
        self.limits = Limits()
        self.budget = self.limits.wall_seconds

    # --- lease ------------------------------------------------------------------------------

    @contextmanager
    def heartbeat(self) -> Iterator[None]:
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.worker.lease / 3):
                try:
                    held = queues.renew(self.store, self.id, self.worker.name, self.worker.lease)
                except Exception:  # a database hiccup: the next beat tries again
                    continue
                if not held:
                    self.lost.set()
                    if self._loop is not None and self._task is not None:
                        self._loop.call_soon_threadsafe(self._task.cancel)
                    return

        thread = threading.Thread(target=beat, name=f"heartbeat-{self.id}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    @contextmanager
    def fenced(self, **values: Any) -> Iterator[Any]:
        """A writing transaction that holds the lease (or raises :class:`Lost`) and sets ``values``."""
        with self.store.session() as session:
            queues.hold(session, self.id, self.worker.name, self.worker.lease, **values)
            yield session

    @contextmanager
    def write(self, **values: Any) -> Iterator[tuple[Any, Submission]]:
        """:meth:`fenced`, with the submission row."""
        with self.fenced(**values) as session:
            yield session, session.get(Submission, self.id, populate_existing=True)

    def move(self, status: str, reason: str, **values: Any) -> None:
        with self.write(**values) as (session, submission):
            queues.move(session, submission, status, reason)
        self.worker.on_status(self.id, status)

    def run_async(self, work: Coroutine) -> Any:
        """Run ``work`` on a fresh event loop that the heartbeat can cancel."""
        loop = new_event_loop()
        try:
            self._loop, self._task = loop, loop.create_task(work)
            try:
                return loop.run_until_complete(self._task)
            except asyncio.CancelledError:
                raise queues.Lost(f"submission {self.id}: lease lost") from None
            except BaseException:  # stopped (a signal) with the work in flight: end it before the loop closes
                self._task.cancel()
                with suppress(BaseException):  # the task's own end (its cancellation) is not what is raised
                    loop.run_until_complete(self._task)
                raise
        finally:
            self._loop = self._task = None
            loop.close()

    # --- stages -----------------------------------------------------------------------------

    def run(self) -> None:
        with self.store.session() as session:
            submission = session.get_one(Submission, self.id)
            queue = queues.get_queue(session, submission.queue)
            phase = session.get(Phase, submission.phase_id) if submission.phase_id is not None else None
            if phase is None:
                self.budget = queue.time_budget_seconds
                self.limits = Limits(memory_bytes=queue.tool_memory_bytes, wall_seconds=self.budget + 600)
            else:
                self.budget, self.limits = phase.wall_seconds, challenges.limits(phase)
            organisers_tool = submission.kind in ("tool", "llm") and submission.submitted_by == "organiser"
            self.told = Disclosure(
                private=not organisers_tool and queues.is_private(session, submission),
                team_url=submission.kind == "tool" and not organisers_tool,
            )
        try:
            with self._tool(submission, queue) as reached:  # one start of a --command tool for both stages
                reached = _guarded(reached, submission, queue)
                if submission.status == VALIDATING:
                    submission = self.validate(submission, queue, reached)
                if submission.status == ANNOTATING:
                    submission = self.annotate(submission, queue, reached)
            if submission.status == SCORING:
                self.score(submission, queue)
        except Verdict as verdict:
            self.end(INVALID if isinstance(verdict, Invalid) else FAILED, verdict)

    def end(self, status: str, verdict: Verdict) -> None:
        """Move to ``status`` with the line the team reads; the organisers' detail, if any, kept beside the
        tool's output (``nlpbench submissions logs``), in the same transaction."""
        with self.write() as (session, submission):
            queues.move(session, submission, status, str(verdict))
            mine = (SubmissionLog.submission_id == self.id, SubmissionLog.stream == REASON_STREAM)
            session.execute(delete(SubmissionLog).where(*mine))
            if verdict.detail is not None:
                session.add(SubmissionLog(submission_id=self.id, stream=REASON_STREAM, content=verdict.detail))
        self.worker.on_status(self.id, status)

    def validate(self, submission: Submission, queue: Queue, reached: _Reached | None) -> Submission:
        if submission.kind == "predictions":
            if tasks.is_phi(submission.task):
                self._store_predictions(submission)
            elif tasks.is_deid(submission.task):
                self._store_deidentified(submission)
            else:
                self._try_scoring(submission, queue)
            self.move(SCORING, "predictions read and checked")
        else:
            assert reached is not None  # a submission that is not a prediction file runs a tool
            subset, warnings = self._subset(submission)
            try:
                validated = self.run_async(
                    validate(reached.url, subset, _settings(submission, queue, self.told), reached.transport)
                )
            except Invalid as error:
                raise reached.explained(error) from None
            total = self._count_notes(submission.dataset)
            tool = validated.tool
            self.move(
                ANNOTATING,
                f"validated: {tool['name']} {tool['version']} ({tool['type']}), reproducible on {len(subset)} notes",
                tool_meta=tool,
                warnings=warnings + validated.warnings,
                notes_total=total,
            )
        return self._reload()

    def annotate(self, submission: Submission, queue: Queue, reached: _Reached | None) -> Submission:
        assert reached is not None  # a submission annotating runs a tool
        work = self._deidentify if tasks.is_deid(submission.task) else self._annotate
        self.run_async(work(submission, queue, reached))
        with self.store.session(readonly=True) as session:
            done = session.get_one(Submission, self.id).notes_done
        self.move(SCORING, f"annotated {done} notes")
        return self._reload()

    def score(self, submission: Submission, queue: Queue) -> None:
        with self.write() as (session, held):
            result = new_result(session, held, queue.profile)  # a PHI task's rows are stored into it as scored
            try:
                scored = score(session, held, queue.profile, into=result)
            except InputError as error:  # the result and its rows go with the transaction
                raise self._unscorable(Invalid if held.kind == "predictions" else Failed, held, error) from None
            store_result(session, held, queue.profile, scored, into=result)
            rows = scored.rows
            queues.move(session, held, SCORED, f"scored under profile {queue.profile}: {rows} per-document rows")
            ranks.rank(
                session, held.task, derived=scored.derived
            )  # the groups of the columns it enters, stored with it
        self.worker.on_status(self.id, SCORED)

    # --- helpers ----------------------------------------------------------------------------

    def _reload(self) -> Submission:
        with self.store.session(readonly=True) as session:
            return session.get_one(Submission, self.id)

    def _submitted_file(self) -> MemoryPath:
        """The prediction file of a PHI or ``deid`` submission as its reader takes it, in memory (no file is
        written), named by its :func:`~nlpbench.platform.submitted.safe_name`: its text is read here, from a
        row of its own (:class:`~nlpbench.store.submissions.SubmittedPredictions`), not with the submission."""
        with self.store.session(readonly=True) as session:
            submission = session.get_one(Submission, self.id)
            return MemoryPath.file(safe_name(submission.predictions_name).rstrip("/"), submission.predictions or "")

    def _notes_done(self) -> str:
        """``N of M notes``: the progress stored."""
        done_now = self._reload()
        return f"{done_now.notes_done} of {done_now.notes_total} notes"

    @contextmanager
    def _tool(self, submission: Submission, queue: Queue) -> Iterator[_Reached | None]:
        """The submitted URL, or the team's tool started in its sandbox for the time the block takes.

        A ``command`` runs in the worker's sandbox with the worker's runtime; an
        ``archive`` (the team's source, stored by digest) is unpacked inside the
        sandbox and its start command run there; an ``image`` archive runs under
        podman. None for a prediction file, and for a submission past
        annotating: there is no tool to run.
        """
        if submission.kind == "predictions" or submission.status not in (VALIDATING, ANNOTATING):
            yield None
            return
        if submission.kind == "tool":
            assert submission.tool_url is not None  # a tool submission has its URL
            yield _Reached(submission.tool_url)
            return
        if submission.kind == "llm":
            with self._llm_tool(submission) as url:
                yield _Reached(url)
            return
        from nlpbench.runner.sandbox import SandboxError, start_tool

        # the weaker fallback only where the organiser allowed it, and only for public data
        settings = replace(self.worker.sandbox, weak=queue.weak_sandbox and self._public(submission))
        with tempfile.TemporaryDirectory(prefix=f"nlpbench-tool-{self.id}-") as work:
            log = Path(work) / "tool.log"
            image: Path | str | None
            command, files, image, plain = submission.command or "", {}, None, False
            if submission.artifact is not None:
                archive = self._fetch_artifact(submission.artifact, Path(work) / "tool.tar")
                if submission.kind == "image":
                    image = archive
                else:
                    files, command = {ARCHIVE_INSIDE: archive}, unpacked(command)
            elif submission.kind == "image":
                assert submission.image is not None  # an image submission without an upload names its image
                image, plain = submission.image, _registry_of(submission.image, queue)
            try:
                with start_tool(
                    command, self.limits, log, sandbox=settings, files=files, image=image, plain_registry=plain
                ) as tool:
                    yield _Reached(tool.url, tool.transport, tool)
            except SandboxError as error:
                raise Failed(f"the tool did not start: {error}") from None
            finally:
                self._keep_log(log)

    @contextmanager
    def _llm_tool(self, submission: Submission) -> Iterator[str]:
        """The URL of ``nlpbench serve --llm`` started on this machine for an organiser's endpoint, with the
        submission's model and template (``--annotator deidentifier`` too for a ``deid`` submission), for the
        time the block takes (the endpoint's key, if any, from this
        worker's ``NLPBENCH_LLM_API_KEY``; answers cached in its data directory)."""
        from nlpbench.runner.services import local_tools

        assert submission.tool_url is not None and submission.model is not None  # checked when it was submitted
        served = ["--llm", submission.tool_url, "--model", submission.model, "--template", submission.template or ""]
        if tasks.is_deid(submission.task):  # the de-identifier on the model's mentions
            served += ["--annotator", "deidentifier"]  # nlpbench.cli.serve.DEIDENTIFIER
        with tempfile.TemporaryDirectory(prefix=f"nlpbench-llm-{self.id}-") as logs, ExitStack() as stack:
            try:
                urls = stack.enter_context(local_tools(["llm"], Path(logs), arguments={"llm": served}))
            except ToolError as error:  # its log's end, for the organisers
                raise Failed("the LLM tool did not start", str(error)) from None
            yield urls["llm"]

    def _fetch_artifact(self, digest: str, path: Path) -> Path:
        """The uploaded archive ``digest``, written to ``path`` (readable by the sandbox's unprivileged user)."""
        from nlpbench.store import artifacts

        with self.store.session(readonly=True) as session, open(path, "wb") as sink:
            try:
                artifacts.write_to(session, digest, sink)
            except repository.StoreError as error:
                raise Failed(str(error)) from None
        path.chmod(0o644)
        return path

    def _public(self, submission: Submission) -> bool:
        """Whether the submission's dataset is public (the weak sandbox fallback may then be allowed)."""
        with self.store.session(readonly=True) as session:
            try:
                return repository.get_dataset(session, submission.dataset).visibility == "public"
            except repository.NotFound:  # no such dataset: not public
                return False

    def _keep_log(self, path: Path) -> None:
        """Keep the last :data:`MAX_LOG_BYTES` of what the tool printed (organisers only: it may hold PHI)."""
        if not path.exists():
            return
        size = path.stat().st_size
        with open(path, "rb") as handle:
            handle.seek(max(0, size - MAX_LOG_BYTES))
            content = handle.read().decode("utf-8", "replace")
        with self.store.session() as session:
            session.execute(delete(SubmissionLog).where(SubmissionLog.submission_id == self.id))
            session.add(
                SubmissionLog(submission_id=self.id, stream="output", content=content, truncated=size > MAX_LOG_BYTES)
            )

    def _subset(self, submission: Submission) -> tuple[list[Document], list[str]]:
        name = f"{submission.dataset}-subset"
        with self.store.session(readonly=True) as session:
            if session.scalars(select(Dataset.id).where(Dataset.name == name)).first() is not None:
                return list(repository.documents(session, name, None)), []
            notes = []
            for note in repository.documents(session, submission.dataset, None):
                notes.append(note)
                if len(notes) == SUBSET_NOTES:
                    break
        return notes, [f"no dataset {name}: reproducibility checked on the first {len(notes)} notes"]

    def _count_notes(self, dataset: str) -> int:
        with self.store.session(readonly=True) as session:
            return repository.list_notes(session, dataset, repository.EVALUATION, 0, 1).total

    async def _annotate(self, submission: Submission, queue: Queue, reached: _Reached) -> None:
        dataset, store_name = submission.dataset, predictions_store(self.id)
        with self.store.session() as session:
            annotations = _annotation_store(session, dataset, store_name)
            done = set(
                session.scalars(
                    select(AnnotationRecord.note_identifier).where(AnnotationRecord.annotation_store_id == annotations)
                )
            )
        labels = tasks.PHI_TASKS[submission.task]
        # a Dask worker reaches URLs by its own means: only the organisers' URLs are sent from there
        local = reached.sandboxed is not None or submission.kind == "llm"  # a tool on this machine only
        scheduler = self.worker.scheduler if not local and not self.told.team_url else None
        run = AnnotationRun(
            reached.url, labels=labels, transport=reached.transport(), scheduler=scheduler, **_limits(queue)
        )

        async def answers(notes: Iterator[Document]) -> AsyncIterator[Document]:
            async for document in run.stream(notes):
                self._same_tool(submission, run)
                yield document

        def write(session: Session, documents: list[Document]) -> None:
            _insert_records(session, dataset, annotations, documents)

        await self._run_notes(submission, queue, reached, done, answers, write)
        self._same_tool(submission, run)

    async def _deidentify(self, submission: Submission, queue: Queue, reached: _Reached) -> None:
        """The ``deid`` stage of annotating: each note not yet de-identified sent to the de-identifier, its
        answer stored as a de-identified note."""
        with self.store.session(readonly=True) as session:
            done = set(
                session.scalars(
                    select(DeidentifiedNote.note_identifier).where(DeidentifiedNote.submission_id == self.id)
                )
            )
        options = ClientOptions(queue.concurrency, queue.request_timeout, RetryPolicy(retries=queue.retries),
                                queue.max_response_bytes)  # fmt: skip
        steps = queues.submission_deid_steps(submission)

        async def answers(notes: Iterator[Document]) -> AsyncIterator[Document]:
            async with options.client(reached.url, reached.transport()) as client:
                async for document in deidentified(client, notes, steps, 4 * queue.concurrency):
                    yield document

        def write(session: Session, documents: list[Document]) -> None:
            _insert_deidentified(session, self.id, documents)

        await self._run_notes(submission, queue, reached, done, answers, write)

    async def _run_notes(
        self,
        submission: Submission,
        queue: Queue,
        reached: _Reached,
        done: set[str],
        answers: Callable[[Iterator[Document]], AsyncIterator[Document]],
        write: Callable[[Session, list[Document]], None],
    ) -> None:
        """Send the dataset's notes not in ``done`` through ``answers`` under the time budget and ``write``
        the answers in batches, with an LLM tool's account of each note (:class:`accounts.Accounting`) under the
        queue's token budget."""
        assert submission.started_at is not None  # set when a worker claimed it
        remaining = submission.started_at.timestamp() + self.budget - time.time()
        with self.store.session(readonly=True) as session:
            accounting = accounts.Accounting.of(session, self.id, queue.token_budget)
        batch: list[Document] = []
        flushed = time.monotonic()

        def flush() -> None:
            """Write the batch in one fenced transaction (a lost lease raises here), on the event loop's thread.

            A write thread cost more CPU than the write itself: each row's GIL hand-off between it and the
            loop (measured: ~10 % of the runner's CPU at 4,000 notes, against ~1 % written here).
            """
            nonlocal batch, flushed
            if batch:
                documents, batch = batch, []
                with self.fenced(notes_done=Submission.notes_done + len(documents)) as session:
                    write(session, documents)
                    accounting.store(session, documents)
            flushed = time.monotonic()

        with self.store.session(readonly=True) as reader:
            notes = (note for note in repository.documents(reader, submission.dataset, None) if note.id not in done)
            try:
                async with asyncio.timeout(max(remaining, 0)):
                    async for document in answers(notes):
                        accounting.see(document)
                        batch.append(document)
                        # counted before the batch is written: writing it hands the note's account to the store
                        why = accounting.spend(document)
                        if why is not None or len(batch) >= FLUSH_NOTES or time.monotonic() - flushed >= FLUSH_SECONDS:
                            flush()
                        if why is not None:
                            raise Failed(f"{why} after {self._notes_done()}")
                flush()
            except TimeoutError:
                flush()
                raise Failed(f"time budget of {self.budget / 60:g} min exceeded after {self._notes_done()}") from None
            except ToolError as error:
                flush()
                failed = self.told.verdict(
                    Failed, str(error), unanswered=isinstance(error, Unanswered), seen="the tool failed on a note"
                )
                raise reached.explained(failed) from None

    def _same_tool(self, submission: Submission, run: AnnotationRun) -> None:
        """A tool that changed since it was validated (another version behind the same URL) is not run further."""
        tool, meta = run.check.tool if run.check else None, submission.tool_meta or {}
        if tool is not None and (tool.name, tool.version, tool.type) != (
            meta.get("name"),
            meta.get("version"),
            meta.get("type"),
        ):
            detail = (
                f"the tool is now {tool.name} {tool.version} ({tool.type}), "
                f"not the {meta.get('name')} {meta.get('version')} that was validated"
            )
            raise self.told.verdict(Failed, detail, unanswered=False, seen="the tool changed since it was validated")

    def _store_predictions(self, submission: Submission) -> None:
        """Read a PHI prediction file, check every note and span against the dataset, and store it."""
        labels = set(tasks.PHI_TASKS[submission.task])
        given = self._submitted_file()
        shown = str(given)
        try:
            with collected_warnings() as warnings:
                predicted = {d.id: d for d in formats.get("sandbox").read(given, labels=labels)}
        except InputError as error:
            raise Invalid(str(error)) from None
        kept: list[Document] = []
        mismatches = 0
        with self.write(warnings=warnings) as (session, held):
            for note in repository.documents(session, held.dataset, None):
                document = predicted.pop(note.id, None)
                if document is None:
                    continue
                assert note.text is not None  # a stored note has its text
                for annotation in document.annotations:
                    if annotation.end > len(note.text):  # the note's length is not said: it is the note's
                        raise Invalid(
                            f"{shown}: note {note.id}: {annotation.label} at {annotation.start}-{annotation.end} "
                            "ends beyond the note"
                        )
                    covered = note.text[annotation.start : annotation.end]
                    if annotation.text != covered:
                        mismatches += 1
                        annotation.text = covered
                kept.append(document)
            if predicted:
                unknown = sorted(predicted)
                raise Invalid(f"{shown}: {len(unknown)} notes not in dataset {held.dataset} (first: {unknown[0]})")
            annotations = _annotation_store(session, held.dataset, predictions_store(self.id))
            _insert_records(session, held.dataset, annotations, kept)
            if mismatches:
                held.warnings = [
                    *held.warnings,
                    f"{mismatches} annotations whose text is not the note's text at their offsets; the note's is kept",
                ]
            held.notes_done = len(kept)

    def _store_deidentified(self, submission: Submission) -> None:
        """Read a file of de-identified notes (:func:`nlpbench.tasks.deid.read_deidentified`), check that each
        is a note of the dataset, and store them as the submission's de-identified notes."""
        from nlpbench.tasks.deid import read_deidentified

        submitted = self._submitted_file()
        shown = str(submitted)
        try:
            given = {note.id: note for note in read_deidentified(submitted)}
        except InputError as error:
            raise Invalid(str(error)) from None
        kept: list[Document] = []
        with self.write() as (session, held):
            for note in repository.documents(session, held.dataset, None):
                found = given.pop(note.id, None)
                if found is not None:
                    kept.append(Document(note.id, found.text))
            if given:
                unknown = sorted(given)
                raise Invalid(f"{shown}: {len(unknown)} notes not in dataset {held.dataset} (first: {unknown[0]})")
            _insert_deidentified(session, self.id, kept)
            held.notes_done = len(kept)

    def _try_scoring(self, submission: Submission, queue: Queue) -> None:
        """A file-scored task's predictions are valid when the task's scorer reads them without an error."""
        with self.store.session(readonly=True) as session:
            try:
                score(session, session.get_one(Submission, self.id), queue.profile)
            except InputError as error:
                raise self._unscorable(Invalid, submission, error) from None

    def _unscorable(self, kind: type[Verdict], submission: Submission, error: InputError) -> Verdict:
        """Why scoring stopped: the scorer's line when it is about the team's own prediction file, else (the
        gold, or predictions nlpbench stored) told by its class on a private dataset."""
        own = not tasks.is_phi(submission.task) and (error.path or "").startswith(f"{PREDICTIONS_FOLDER}/")
        seen = None if own else "the predictions could not be scored against the gold"
        return self.told.verdict(kind, str(error), unanswered=False, seen=seen)


@dataclass
class _Reached:
    """How to reach a submission's tool: its URL, a maker of httpx transports, and the sandbox it runs in if any."""

    url: str
    transport: Callable[[], Any] = lambda: None
    sandboxed: Any = None

    def explained(self, verdict: Verdict) -> Verdict:
        """``verdict``, or why the sandboxed tool ended when it did (a limit it hit) — what explains a failure.

        A limit is told to the team (it is the organisers' setting); how the tool ended otherwise (its exit
        status) is added where the verdict's whole line is.
        """
        ended = self.sandboxed.wait(1) if self.sandboxed is not None else None
        if ended is None:
            return verdict
        if ended.limit:
            return type(verdict)(ended.reason)
        if verdict.detail is None:
            return type(verdict)(f"{verdict} ({ended.reason})")
        return type(verdict)(str(verdict), f"{verdict.detail} ({ended.reason})")


def _registry_of(reference: str, queue: Queue) -> bool:
    """Whether the image's registry is reached without TLS; :class:`Failed` when the queue no longer names it."""
    named = images.registries(queue.image_registries)
    parsed = images.reference(reference)
    assert parsed is not None  # checked when it was submitted
    registry = parsed.registry
    if registry not in named:
        raise Failed(f"images come from the registries the organisers named, not from {registry}")
    return named[registry]


#: Where a team's source archive appears inside its sandbox, read-only.
ARCHIVE_INSIDE = f"{INSIDE}/tool.tar"


def unpacked(start: str) -> str:
    """The shell line that unpacks the team's source archive into its home and runs ``start`` there.

    GNU tar (from the runtime) reads plain or compressed archives, keeps members inside the target (it refuses
    ``..`` and strips a leading ``/``), and runs as the sandbox's user, in the sandbox: whatever the archive
    holds lands in the tool's own size-limited folder.
    """
    target = '"$HOME/tool"'
    return (
        f"mkdir -p {target} && tar -xf {ARCHIVE_INSIDE} -C {target} --no-same-owner --no-same-permissions "
        f"&& cd {target} && exec /bin/sh -c {shlex.quote(start)}"
    )


def _guarded(reached: _Reached | None, submission: Submission, queue: Queue) -> _Reached | None:
    """A team's tool URL is reached through :class:`GuardedTransport` (public addresses only, checked at each
    connection), unless the queue allow-lists its host; every other tool as it is."""
    if reached is None or submission.kind != "tool" or submission.submitted_by == "organiser":
        return reached
    assert submission.tool_url is not None  # a tool submission has its URL
    if allow_listed(submission.tool_url, queue.tool_hosts):
        return reached
    return _Reached(reached.url, GuardedTransport, reached.sandboxed)


def _settings(submission: Submission, queue: Queue, told: Disclosure) -> Settings:
    return Settings(
        labels=tasks.PHI_TASKS.get(submission.task, ()),
        steps=queues.submission_deid_steps(submission) if tasks.is_deid(submission.task) else None,
        disclosure=told,
        api_version_fatal=queue.api_version_fatal,
        timeout=queue.request_timeout,
        retry=RetryPolicy(retries=queue.retries),
        concurrency=queue.concurrency,
        max_response_bytes=queue.max_response_bytes,
    )


def _limits(queue: Queue) -> dict[str, Any]:
    return {
        "concurrency": queue.concurrency,
        "timeout": queue.request_timeout,
        "retry": RetryPolicy(retries=queue.retries),
        "max_response_bytes": queue.max_response_bytes,
    }


def _annotation_store(session, dataset: str, name: str) -> int:
    """The id of annotation store ``name`` of ``dataset``, created when missing."""
    try:
        return repository.get_annotation_store(session, dataset, name).id
    except repository.NotFound:  # the first result on this dataset makes it
        return repository.create_annotation_store(session, dataset, name).id


def _insert_records(session, dataset: str, store_id: int, documents: list[Document]) -> None:
    prefix = f"datasets/{dataset}/fhirStores/{repository.EVALUATION}/fhir/Note/"
    rows = []
    for document in documents:
        record = record_json(document)
        rows.append(
            {
                "annotation_store_id": store_id,
                "identifier": document.id,
                "source": prefix + document.id,
                "note_identifier": document.id,
                "arrays": {key: value for key, value in record.items() if key.startswith("text")},
            }
        )
    if rows:  # a Core executemany: the ORM's bulk insert costs more than the rows' encoding
        session.connection().execute(cast(Table, AnnotationRecord.__table__).insert(), rows)


def _insert_deidentified(session: Session, submission_id: int, documents: list[Document]) -> None:
    """Store de-identified notes: each note's id, de-identified text and the tool's annotations of it (none for
    a file of de-identified notes)."""
    rows = [
        {
            "submission_id": submission_id,
            "note_identifier": document.id,
            "text": document.text or "",
            "annotations": document.metadata.get(DEIDENTIFIED_ANNOTATIONS, {}),
        }
        for document in documents
    ]
    if rows:
        session.connection().execute(cast(Table, DeidentifiedNote.__table__).insert(), rows)
