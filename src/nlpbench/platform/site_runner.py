"""A data site's side (``nlpbench site serve``): take the centre's runs, run them here, send back counts only.

The site has its own store (its datasets, their gold) and runs each run the
centre gives it (:mod:`nlpbench.platform.sites`) as a submission of its own
queue, with its own :class:`~nlpbench.platform.worker.Worker`: the same
validation, sandbox, time budget and checkpoints as any submission here. A
:class:`~nlpbench.store.sites.SiteJob` links the centre's run to the local
submission, so a site stopped mid-run (even killed) takes the same run again
when it comes back and its worker goes on where the store says it stopped.

While the local worker runs, a thread tells the centre the run's progress
(notes done, of how many) and cancels the local submission once the centre
says its submission has ended. What goes to the centre (:func:`site_result`):
the outcome, the dataset's content hash, the number of notes, the nlpbench
version, the tool's name, version and type as it told them before it was sent
any note (each a name, or left out), and each annotation type's overall and per-document count rows, the
documents renamed ``d1``, ``d2``, … in the order they were scored — checked
here by the centre's own closed form (:func:`nlpbench.platform.sites.checked_reports`)
before it leaves, so a field that is not a name or a number is an error here,
not a byte sent. Never a note, an annotation, a tool's log or a reason. With
``approve``, a finished run waits (``held``) until the site's organiser approves
it (:func:`nlpbench.platform.site_jobs.approve`); it is sent at the next look at the centre.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from sqlalchemy import select

from nlpbench.errors import InputError, Kind, NlpbenchError
from nlpbench.platform import queue as queues
from nlpbench.platform.site_jobs import APPROVED, HELD, RUNNING, SENT
from nlpbench.platform.sites import NAME, SITE_OUTCOMES, TOOL_FIELDS, checked_reports
from nlpbench.platform.worker import Worker, default_name
from nlpbench.report.model import Report, overall_rows
from nlpbench.runner.sandbox import Sandbox
from nlpbench.store import Store, repository
from nlpbench.store.sites import SiteJob
from nlpbench.store.submissions import FINAL, Result, ResultDocument, Submission
from nlpbench.store.vocabulary import CANCELLED, SCORED
from nlpbench.version import __version__

log = logging.getLogger(__name__)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


class CentralError(NlpbenchError):
    """The centre refused a request (``status``) or did not answer (``status`` 0): one line, no body."""

    kind = Kind.unavailable

    def __init__(self, line: str, status: int = 0):
        super().__init__(line)
        self.status = status


def checked_central(url: str) -> str:
    """The centre's base URL: HTTPS, or HTTP to this machine only (a test, a tunnel); one line otherwise."""
    parts = urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOCAL_HOSTS):
        return url.rstrip("/")
    raise InputError("the centre is reached over HTTPS (http only to this machine)", record="--central")


@dataclass
class SiteRunner:
    """Take the runs of centre ``central`` with the site key ``key`` and run them in queue ``queue`` of ``store``."""

    store: Store
    central: str
    key: str
    queue: str = "site"
    approve: bool = False
    poll: float = 5.0
    lease: float = 60.0
    #: Seconds between two reports of progress to the centre.
    beat: float = 5.0
    name: str = field(default_factory=default_name)
    sandbox: Sandbox = field(default_factory=Sandbox)
    #: Send each type's totals only, no per-document rows: pooled as one document, which adds no width to the
    #: pooled interval (:data:`nlpbench.platform.pooling.TOTALS`).
    totals_only: bool = False
    #: Called with one line for each thing done (a run taken, finished, held, sent).
    said: Callable[[str], None] = lambda _line: None
    transport: httpx.BaseTransport | None = None

    def run(self, *, until_idle: bool = False) -> int:
        """Take runs until stopped (with ``until_idle``: until the centre has none); how many were run here."""
        ran = 0
        with self._client() as central:
            while True:
                self._send_approved(central)
                job = self._post(central, "/sites/lease")
                if job is None:
                    if until_idle:
                        return ran
                    time.sleep(self.poll)
                    continue
                self._run(central, job)
                ran += 1

    @contextmanager
    def _client(self) -> Iterator[httpx.Client]:
        base = f"{checked_central(self.central)}/api/v1"
        headers = {"x-api-key": self.key, "user-agent": f"nlpbench-site/{__version__}"}
        with httpx.Client(base_url=base, headers=headers, timeout=60.0, transport=self.transport) as client:
            yield client

    def _post(self, central: httpx.Client, path: str, body: dict[str, Any] | None = None) -> Any:
        try:
            response = central.post(path, json=body or {})
        except httpx.HTTPError as error:
            raise CentralError(f"POST {path}: the centre did not answer ({type(error).__name__})") from None
        if response.status_code == 204:
            return None
        if response.status_code >= 400:
            detail = _detail(response)
            line = f"POST {path}: {response.status_code}{f': {detail}' if detail else ''}"
            raise CentralError(line, response.status_code)
        return response.json()

    def _run(self, central: httpx.Client, job: dict[str, Any]) -> None:
        """Run the job here; a job already finished here (the centre did not hear of it) is told again."""
        run = int(job["run"])
        state = self._state(run)
        if state == HELD:
            self._tell_held(central, run)
            return
        if state == SENT:  # the centre did not take it: sent again, or refused for good (a 409)
            self._mark(run, APPROVED)
            self._send_approved(central)
            return
        try:
            local = self._local(job)
        except InputError as error:  # a dataset this site does not hold, at the version the run names
            self.said(f"run {run}: not run here: {error}")
            self._post(central, f"/sites/runs/{run}/result", {"status": "FAILED"})
            return
        self.said(f"run {run} (submission {job['submission']} at the centre): submission {local} here")
        stop = threading.Event()
        beat = threading.Thread(target=self._beat, args=(central, run, local, stop), daemon=True)
        beat.start()
        try:
            Worker(self.store, self.queue, self.name, self.lease, min(self.poll, 1.0), sandbox=self.sandbox).run(
                until_idle=True
            )
        finally:
            stop.set()
            beat.join()
        with self.store.session() as session:
            submission = session.get_one(Submission, local)
            if submission.status not in FINAL:
                return  # its lease was lost: taken again at the next lease
            site_job = _job_of(session, self.central, run)
            site_job.state = HELD if self.approve and submission.status != CANCELLED else APPROVED
            status = submission.status
        if status == CANCELLED:
            self._mark(run, SENT)
            self.said(f"run {run}: cancelled at the centre")
        elif self.approve:
            self._tell_held(central, run)
            self.said(f"run {run}: {status}, held until approved (nlpbench site approve {run})")
        else:
            self._send_approved(central)

    def _state(self, run: int) -> str | None:
        with self.store.session(readonly=True) as session:
            return session.scalars(
                select(SiteJob.state).where(SiteJob.central == self.central, SiteJob.run_id == run)
            ).first()

    def _tell_held(self, central: httpx.Client, run: int) -> None:
        """Tell the centre the run finished here and waits for approval: it offers it no more."""
        with self.store.session(readonly=True) as session:
            local = _job_of(session, self.central, run).submission_id
            total = session.get_one(Submission, local).notes_total
        self._post(central, f"/sites/runs/{run}/progress", {"done": total, "total": total, "held": True})

    def _local(self, job: dict[str, Any]) -> int:
        """The local submission of the centre's run: the one made before (resumed), or a new one."""
        with self.store.session(readonly=True) as session:
            found = session.scalars(
                select(SiteJob.submission_id).where(SiteJob.central == self.central, SiteJob.run_id == job["run"])
            ).first()
        if found is not None:
            return found
        if job["kind"] != "command":
            raise CentralError(f"run {job['run']}: a {job['kind']} submission is not run at a site")
        queues.configure_queue(self.store, self.queue, profile=job["profile"])
        version = job.get("datasetVersion")
        request = queues.Request(
            team=job["team"],
            task=job["task"],
            dataset=f"{job['dataset']}@{version}" if version else job["dataset"],
            queue=self.queue,
            command=job["command"],
            description=f"run {job['run']} of the centre's submission {job['submission']}",
            organiser=False,
        )
        local = queues.submit(self.store, request)
        with self.store.session() as session:
            session.add(SiteJob(central=self.central, run_id=job["run"], submission_id=local, state=RUNNING))
        return local

    def _beat(self, central: httpx.Client, run: int, local: int, stop: threading.Event) -> None:
        """Every :attr:`beat` seconds, the run's progress to the centre; the local submission cancelled when the
        centre says it ended. A centre that does not answer is tried again at the next beat."""
        while not stop.wait(self.beat):
            with self.store.session(readonly=True) as session:
                submission = session.get_one(Submission, local)
                done, total = submission.notes_done, submission.notes_total
            try:
                said = self._post(central, f"/sites/runs/{run}/progress", {"done": done, "total": total})
            except CentralError as error:
                log.warning("run %d: %s", run, error)
                continue
            if said is not None and not said.get("go", True):
                with self.store.session(readonly=True) as session:
                    ended = session.get_one(Submission, local).status in FINAL
                if not ended:
                    queues.cancel(self.store, local, by="the centre")
                return

    def _send_approved(self, central: httpx.Client) -> None:
        with self.store.session(readonly=True) as session:
            ready = list(session.execute(select(SiteJob.run_id, SiteJob.submission_id).where(
                SiteJob.central == self.central, SiteJob.state == APPROVED
            )))  # fmt: skip
        for run, local in ready:
            body = site_result(self.store, local, totals_only=self.totals_only)
            try:
                said = self._post(central, f"/sites/runs/{run}/result", body)
            except CentralError as error:
                if error.status not in (404, 409):  # the centre will not take it, ever: said, and not sent again
                    raise
                self.said(f"run {run}: refused by the centre: {error}")
                self._mark(run, SENT)
                continue
            self._mark(run, SENT)
            self.said(f"run {run}: {body['status']} sent; the submission is {said['status']} at the centre")

    def _mark(self, run: int, state: str) -> None:
        with self.store.session() as session:
            _job_of(session, self.central, run).state = state


def _job_of(session, central: str, run: int) -> SiteJob:
    return session.scalars(select(SiteJob).where(SiteJob.central == central, SiteJob.run_id == run)).one()


def _detail(response: httpx.Response) -> str:
    """The problem's detail of a centre's refusal: the centre writes it of names and counts only."""
    try:
        detail = response.json().get("detail", "")
    except ValueError:  # not JSON (a proxy's page): the status alone says it
        return ""
    return detail if isinstance(detail, str) and detail.isprintable() and len(detail) <= 400 else ""


def site_result(store: Store, local: int, *, totals_only: bool = False) -> dict[str, Any]:
    """What the centre gets for the run of local submission ``local``: the outcome and, when SCORED, the counts
    (with ``totals_only``, no per-document rows).

    Documents are renamed ``d1``, ``d2``, … in the order their first row was stored; every row is checked by
    :func:`nlpbench.platform.sites.checked_reports` before it may leave.
    """
    with store.session(readonly=True) as session:
        submission = session.get_one(Submission, local)
        status = submission.status if submission.status in SITE_OUTCOMES else "FAILED"
        if status != SCORED:
            return {"status": status}
        result = session.scalars(
            select(Result).where(Result.submission_id == local).order_by(Result.id.desc()).limit(1)
        ).one()
        names: dict[str, str] = {}
        per_document: dict[str, list[dict[str, Any]]] = {}
        query = select(ResultDocument).where(ResultDocument.result_id == result.id).order_by(ResultDocument.id)
        for row in session.scalars(query):
            name = names.setdefault(row.document, f"d{len(names) + 1}")
            per_document.setdefault(row.annotation_type, []).append(
                {"document": name, "metric": row.metric, **row.counts}
            )
        reports = {
            annotation_type: {
                "scores": overall_rows(Report(submission.task, result.profile, {}, rows)),
                "perDocument": [] if totals_only else per_document.get(annotation_type, []),
            }
            for annotation_type, rows in result.scores.items()
        }
        content_hash = repository.content_hash(session, submission.dataset)
        notes = len(names)
        said = submission.tool_meta or {}  # asked at validation, before the tool was sent any note
        tool = {key: said[key] for key in TOOL_FIELDS if isinstance(said.get(key), str) and NAME.fullmatch(said[key])}
    try:
        checked = checked_reports(reports, submission.task)
    except InputError as error:
        raise InputError(f"submission {local}'s result cannot leave the site: {error}") from None
    return {
        "status": SCORED,
        "contentHash": content_hash,
        "notes": notes,
        "nlpbench": __version__,
        "reports": checked,
        "tool": tool,
    }
