"""The queue: submissions in, quotas checked atomically, claimed by workers under leases, moved through statuses.

Every move of a submission is one transaction that also writes its event
(:func:`move`). A worker claims the oldest submission of its queue that is
``RECEIVED``, or running under a lease that expired (its worker died):
PostgreSQL skips rows another worker holds (``FOR UPDATE SKIP LOCKED``), and
SQLite's writing transactions take the database's write lock up front, so two
workers never claim the same submission. A worker renews its lease
(:func:`renew`) and fences each write with it (:func:`hold`): once another
worker has taken over, or the submission was cancelled, the first one's
writes fail with :class:`Lost`.

Quotas are checked in :mod:`nlpbench.platform.quotas`, submitted files read and written in
:mod:`nlpbench.platform.submitted`, gold files kept in :mod:`nlpbench.platform.golds`; the queue's
refusals are :mod:`nlpbench.platform.errors`, named here too as callers have always named them.
"""

from __future__ import annotations

import re
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO, cast
from urllib.parse import urlsplit

from sqlalchemy import CursorResult, and_, exists, or_, select, update
from sqlalchemy.orm import Session

from nlpbench import files
from nlpbench.errors import InputError
from nlpbench.platform import at_sites, challenges, images, tasks
from nlpbench.platform.errors import Conflict, Forbidden, Lost, NotFound
from nlpbench.platform.errors import PlatformError as PlatformError
from nlpbench.platform.errors import QuotaExceeded as QuotaExceeded
from nlpbench.platform.golds import find_gold
from nlpbench.platform.golds import register_gold as register_gold
from nlpbench.platform.quotas import check_quota, window_start
from nlpbench.platform.submitted import MAX_PREDICTION_BYTES, safe_name
from nlpbench.store import Store, artifacts, repository
from nlpbench.store.models import Dataset
from nlpbench.store.repository.common import insert_ignoring_conflicts
from nlpbench.store.sites import SiteRun
from nlpbench.store.submissions import (
    ANNOTATING,
    CANCELLED,
    FAILED,
    FINAL,
    RECEIVED,
    RUNNING,
    SCORING,
    VALIDATING,
    Queue,
    Submission,
    SubmissionEvent,
)

DEFAULT_QUEUE = "default"
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,59}"
#: The digest of an uploaded archive.
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
#: The most characters of the model a submission names.
MODEL_LENGTH = 120
#: The largest archive (a tool's source, an image) a team may upload.
MAX_ARCHIVE_BYTES = 4 * 2**30
#: What an upload is, as the platform API and the command line name it, and as the store keeps it.
ARCHIVE_KINDS = {"source": "source-archive", "image": "oci-archive"}
#: The most characters of a submission's description, and of a link to its paper or code.
MAX_DESCRIPTION = 2000
MAX_LINK = 500
#: The longest webhook secret and URL a queue keeps.
MAX_SECRET = 500
MAX_URL = 2000
#: The largest id a submission may have (the column is a 32-bit integer): a larger one is not found.
MAX_ID = 2**31 - 1


@dataclass
class Request:
    """A submission as a team makes it: exactly one of ``tool_url``, ``command``, ``image``, ``predictions``,
    or an ``archive`` (the digest of an uploaded source archive) with its start ``command``.

    ``image`` is the digest (``sha256:…``) of an OCI image archive the team uploaded, or
    ``REGISTRY/NAME@sha256:…`` from a registry the queue names.
    """

    team: str
    task: str
    dataset: str
    queue: str = DEFAULT_QUEUE
    tool_url: str | None = None
    command: str | None = None
    image: str | None = None
    predictions: str | None = None
    predictions_name: str | None = None
    archive: str | None = None
    #: The challenge and its phase the submission is made to (both or neither): the phase decides its queue,
    #: its dataset's version, when it may be made and how many (:mod:`nlpbench.platform.challenges`).
    challenge: str | None = None
    phase: str | None = None
    #: What the team says of it, shown on its page (at most :data:`MAX_DESCRIPTION` characters), and links
    #: (``http``/``https``) to its paper and its code.
    description: str | None = None
    paper_url: str | None = None
    code_url: str | None = None
    #: The model an LLM tool runs, as the queue's price table names it (its cost is priced by it).
    model: str | None = None
    #: An organiser's OpenAI-compatible endpoint, served as a tool by the worker with ``model`` and ``template``.
    llm_url: str | None = None
    template: str | None = None
    #: Made by an organiser, who may open a queue by naming it and give any tool URL. The Python API and the
    #: command line are the organisers'; the platform API says whose key made the request.
    organiser: bool = True

    @property
    def kind(self) -> str:
        if self.archive is not None:
            if self.command is None or any(v is not None for v in (self.tool_url, self.image, self.predictions)):
                raise InputError("an archive goes with its start command (--command) and nothing else")
            return "archive"
        given = [k for k in ("tool_url", "command", "image", "predictions", "llm_url") if getattr(self, k) is not None]
        if len(given) != 1:
            raise InputError("give exactly one of --tool, --command, --archive, --image, --predictions or --llm")
        return given[0].removesuffix("_url")


def now() -> datetime:
    return datetime.now(UTC)


def split_dataset(name: str) -> tuple[str, str | None]:
    """``NAME[@VERSION]`` as (name, version or None)."""
    dataset, _, version = name.partition("@")
    return dataset, version or None


def _checked_name(value: str, what: str) -> str:
    if not re.fullmatch(NAME_PATTERN, value):
        raise InputError(f"{what} {value!r} is not a name (letters, digits, '_', '.', '-'; at most 60)")
    return value


# --- queues and golds -------------------------------------------------------------------------


def get_queue(session: Session, name: str, *, create: bool = True) -> Queue:
    """The queue ``name``, created with the default settings when it does not exist yet — or, without
    ``create`` (a team naming it), :class:`NotFound`: queues are opened by organisers."""
    _checked_name(name, "queue")
    found = session.scalars(select(Queue).where(Queue.name == name)).first()
    if found is not None:
        return found
    if not create:
        raise NotFound(f"no queue {name!r}: queues are opened by the organisers")
    with session.begin_nested():
        session.execute(insert_ignoring_conflicts(session, Queue).values(**_defaults(name)))
    return session.scalars(select(Queue).where(Queue.name == name)).one()


def _defaults(name: str) -> dict[str, Any]:
    """A new queue's row: each column's default (a callable one called, as SQLAlchemy calls it with no context)."""
    defaults = {
        column.name: column.default.arg(None) if column.default.is_callable else column.default.arg
        for column in Queue.__table__.columns
        if column.default is not None
    }
    return defaults | {"name": name}


SETTINGS: dict[str, Callable[[Any], Any]] = {
    "time_budget_seconds": float,
    "quota": int,
    "quota_window": str,
    "profile": str,
    "api_version_fatal": bool,
    "request_timeout": float,
    "retries": int,
    "concurrency": int,
    "max_response_bytes": int,
    "tool_memory_bytes": int,
    "max_attempts": int,
    "tool_hosts": lambda hosts: _host_entries(hosts),
    "image_registries": lambda entries: sorted({images.registry_entry(entry) for entry in entries}),
    "weak_sandbox": bool,
    "token_budget": int,
    "prices": lambda table: {model: {"input": p.input, "output": p.output} for model, p in table.items()},
    "webhook_url": lambda url: checked_webhook(url),
    "webhook_secret": lambda secret: checked_secret(secret),
    "deid_steps": list,
}
#: The settings a value clears: ``0`` (no quota, no token budget), ``""`` (no webhook, no secret), ``[]`` (the
#: default de-identification steps).
CLEARED: dict[str, Any] = {"quota": 0, "token_budget": 0, "webhook_url": "", "webhook_secret": "", "deid_steps": []}


def _host_entries(hosts: list[str]) -> list[str]:
    """The hosts a queue allow-lists, each as :func:`nlpbench.platform.network.host_entry` spells it."""
    from nlpbench.platform import network  # httpx loads when a URL is read, not with every platform command

    return sorted({network.host_entry(host) for host in hosts})


def checked_webhook(url: str) -> str:
    """An ``http(s)`` URL a queue's webhook (:mod:`nlpbench.platform.webhooks`) may post to: the organisers', so
    any host; InputError else."""
    from nlpbench.runner.client import ToolError, checked_url  # httpx and pydantic load when a URL is read

    if len(url) > MAX_URL:
        raise InputError(f"a webhook URL has at most {MAX_URL} characters", record="--webhook")
    try:
        checked_url(url)
    except ToolError:
        raise InputError("not an http(s) URL with a host", record="--webhook") from None
    return url


def checked_secret(secret: str) -> str:
    """A secret to sign with: 16 to :data:`MAX_SECRET` printable characters; InputError else."""
    if not (16 <= len(secret) <= MAX_SECRET and secret.isprintable()):
        raise InputError(f"a webhook secret is 16 to {MAX_SECRET} printable characters", record="--webhook-secret")
    return secret


def configure_queue(store: Store, name: str, **settings: Any) -> Queue:
    """Change the settings given (see :data:`SETTINGS`; ``quota=0`` removes the quota, ``token_budget=0`` the
    token budget, ``tool_hosts`` replaces the allow-list, ``[]`` empties it; ``prices`` is a price table by
    model, :func:`nlpbench.toolapi.cost.read_prices`'s, replacing the queue's; ``webhook_url`` and
    ``webhook_secret`` are :mod:`nlpbench.platform.webhooks`', ``""`` removes them; ``deid_steps`` are
    :func:`read_deid_steps`'s, ``[]`` the default steps); returns the queue."""
    if settings.get("quota_window") is not None:
        window_start(now(), settings["quota_window"])
    with store.session() as session:
        queue = get_queue(session, name)
        for key, value in settings.items():
            if value is not None:
                cleared = key in CLEARED and value == CLEARED[key]
                setattr(queue, key, None if cleared else SETTINGS[key](value))
        return queue


def read_deid_steps(path: Path) -> list[dict[str, Any]]:
    """The de-identification steps of the file ``path`` for a queue (``submissions queue --deid-steps``), as
    ``score deid --config`` reads them (:func:`nlpbench.tasks.deid.read_config`) and as JSON: 1.2.0 steps that a
    de-identifier can carry out (:func:`nlpbench.toolapi.deidentify.check_steps`), never nlpbench's own
    ``surrogateConfig``, which no tool is asked for. Bad steps are an :class:`InputError` naming the file."""
    from nlpbench.tasks.deid import SURROGATE_STRATEGY, read_config
    from nlpbench.toolapi.deidentify import StepError, check_steps
    from nlpbench.toolapi.schemas import dump

    steps = read_config(path)
    if any(SURROGATE_STRATEGY in names for names in steps.strategies.values()):
        raise InputError("surrogateConfig is a step nlpbench scores, not one a 1.2.0 de-identifier is asked for", path)
    try:
        check_steps(steps.api)
    except StepError as error:
        raise InputError(str(error), path) from None
    return [dump(step) for step in steps.api]


def deid_steps(queue: Queue | None) -> tuple[dict[str, Any], ...]:
    """The de-identification steps ``queue`` asks for and is scored against: its own, or (a queue with none, or
    none yet) :data:`~nlpbench.toolapi.deidentify.DEFAULT_STEPS`."""
    from nlpbench.toolapi.deidentify import DEFAULT_STEPS

    return tuple(queue.deid_steps) if queue is not None and queue.deid_steps else DEFAULT_STEPS


def submission_deid_steps(submission: Submission) -> tuple[dict[str, Any], ...]:
    """The de-identification steps a ``deid`` submission runs with and is scored against: its queue's when it
    was first claimed (:func:`claim` keeps them), whatever the queue asks now; one claimed before they were
    kept ran with :data:`~nlpbench.toolapi.deidentify.DEFAULT_STEPS`."""
    from nlpbench.toolapi.deidentify import DEFAULT_STEPS

    return tuple(submission.deid_steps) if submission.deid_steps is not None else DEFAULT_STEPS


def upload(store: Store, stream: BinaryIO, kind: str, team: str, *, limit: int = MAX_ARCHIVE_BYTES) -> str:
    """Keep a team's archive (``kind`` ``source`` or ``image``) read from ``stream``; its digest."""
    if kind not in ARCHIVE_KINDS:
        raise InputError(f"an archive is a source or an image, not {kind[:40]!r}")
    _checked_name(team, "team")
    try:
        with store.session() as session:
            return artifacts.put(session, stream, ARCHIVE_KINDS[kind], limit=limit, team=team).digest
    except artifacts.TooLarge as error:
        raise InputError(str(error)) from None


@contextmanager
def packed(path: Path) -> Iterator[BinaryIO]:
    """A tool's source to upload: an archive file as it is, or a folder packed as a gzip'd tar (in a temporary
    file). Only regular files and folders are packed; a link or anything else is refused, never followed."""
    if not files.is_folder(path):
        with files.opened(path) as handle:
            yield handle
        return
    with tempfile.TemporaryFile() as packed_file:
        with tarfile.open(fileobj=packed_file, mode="w:gz") as tar:
            for member in sorted(path.rglob("*")):
                inside = member.relative_to(path).as_posix()
                if member.is_symlink() or not (member.is_file() or member.is_dir()):
                    raise InputError(f"{inside[:80]} is not a file or a folder: pack the source yourself", path)
                tar.add(member, inside, recursive=False)
        packed_file.seek(0)
        yield packed_file


# --- submitting -------------------------------------------------------------------------------


def submit(store: Store, request: Request, *, moment: datetime | None = None) -> int:
    """Check the request, count it against the quota and queue it as RECEIVED; its id.

    What a team may not do (an organiser may): name a queue that does not exist (:class:`NotFound`), give
    a tool URL on a private dataset or into the worker's networks unless the queue allow-lists its host,
    or a prediction file of a private dataset's notes, which it never saw — a probe of them
    (:class:`Forbidden`).
    """
    kind = _checked_request(request)
    if request.phase is not None:
        with store.session(readonly=True) as session:
            request = challenges.addressed(session, request)
    dataset, version = split_dataset(request.dataset)
    moment = moment or now()
    if request.tool_url is not None and not request.organiser:
        from nlpbench.platform import network  # httpx loads when a URL is read, not with every platform command

        with store.session(readonly=True) as session:
            private = at_sites.check_submission(session, request.task, dataset, kind) or _check_dataset(
                session, request.task, dataset, version
            )
            allowed = network.allow_listed(request.tool_url, get_queue(session, request.queue, create=False).tool_hosts)
        if not allowed:  # outside any transaction: it may wait for a resolver
            _check_team_url(request.tool_url, private)
    with store.session() as session:
        sited = at_sites.check_submission(session, request.task, dataset, kind)
        private = sited or _check_dataset(session, request.task, dataset, version)
        if private and kind == "predictions" and tasks.on_dataset(request.task) and not request.organiser:
            raise Forbidden(
                "the notes of a private dataset are annotated by a tool that comes to them (a command), "
                "not by a team's prediction file"
            )
        queue = get_queue(session, request.queue, create=request.organiser)
        artifact = _uploaded(session, kind, request, queue)
        phase = challenges.admit(session, request, kind, moment) if request.phase is not None else None
        if phase is None and queue.quota is not None:  # a phase's quota replaces its queue's
            check_quota(session, queue, request.team, request.task, moment)
        submission = Submission(
            queue=request.queue,
            team=request.team,
            task=request.task,
            dataset=dataset,
            dataset_version=version,
            kind=kind,
            tool_url=request.tool_url if request.llm_url is None else request.llm_url,
            command=request.command,
            image=request.image if artifact is None else None,
            artifact=artifact,
            predictions=request.predictions,
            predictions_name=safe_name(request.predictions_name) if kind == "predictions" else None,
            model=request.model,
            template=request.template,
            submitted_by="organiser" if request.organiser else "team",
            status=RECEIVED,
            reason=f"{kind} submission received",
            created_at=moment,
            updated_at=moment,
            attempts=0,
            notes_total=0,
            notes_done=0,
            warnings=[],
            phase_id=phase,
            description=request.description,
            paper_url=request.paper_url,
            code_url=request.code_url,
        )
        session.add(submission)
        session.flush()
        session.add(SubmissionEvent(submission_id=submission.id, at=moment, status=RECEIVED, reason=submission.reason))
        if sited:
            at_sites.open_runs(session, submission)
        return submission.id


def _checked_request(request: Request) -> str:
    _check_characters(request)
    kind = request.kind
    _checked_name(request.team, "team")
    if (request.challenge is None) != (request.phase is None):
        raise InputError("a submission to a challenge names its phase too (--challenge NAME --phase NAME)")
    if not tasks.known(request.task):
        raise InputError(f"unknown task {request.task!r}; known: {', '.join(tasks.names())}")
    if kind != "predictions" and not tasks.on_dataset(request.task):
        raise InputError(f"task {request.task} is scored from files: submit it with --predictions FILE")
    if request.tool_url is not None:
        from nlpbench.runner.client import ToolError, checked_url  # httpx and pydantic load when a URL is read

        try:
            checked_url(request.tool_url)
        except ToolError as error:
            raise InputError(str(error), record="--tool") from None
    if request.model is not None and not (0 < len(request.model) <= MODEL_LENGTH and request.model.isprintable()):
        raise InputError(f"a model's name is 1 to {MODEL_LENGTH} printable characters", record="--model")
    if kind == "llm":
        _check_llm(request)
    elif request.template is not None:
        raise InputError("a prompt template goes with an LLM endpoint (--llm URL)", record="--template")
    if request.command is not None and not request.command.strip():
        raise InputError("the command is empty", record="--command")
    if request.archive is not None and not DIGEST.fullmatch(request.archive):
        raise InputError("not the digest of an uploaded archive (sha256: and 64 hex digits)", record="--archive")
    if request.image is not None and not (DIGEST.fullmatch(request.image) or images.reference(request.image)):
        raise InputError(
            "not an uploaded image (sha256:…) nor REGISTRY/NAME@sha256:… (64 hexadecimal digits)", record="--image"
        )
    if request.description is not None and len(request.description) > MAX_DESCRIPTION:
        raise InputError(f"over the {MAX_DESCRIPTION} characters a description may have", record="--description")
    for link, record in ((request.paper_url, "--paper"), (request.code_url, "--code")):
        if link is not None:
            _check_link(link, record)
    if request.predictions is not None and len(request.predictions.encode("utf-8")) > MAX_PREDICTION_BYTES:
        raise InputError(f"over the {MAX_PREDICTION_BYTES} bytes a prediction file may have", request.predictions_name)
    return kind


def _check_llm(request: Request) -> None:
    """An organiser's LLM endpoint: an organiser's request, a URL, a model, a prompt template that exists
    (:data:`~nlpbench.annotators.llm.prompts.DEFAULT_TEMPLATE` when none is named). Its task is one a tool
    runs (:func:`_checked_request` checked it): a PHI task, or ``deid``, whose model the worker serves as a
    de-identifier."""
    from nlpbench.annotators.llm import prompts
    from nlpbench.runner.client import ToolError, checked_url

    assert request.llm_url is not None  # the kind says so
    if not request.organiser:
        raise Forbidden("LLM endpoints are served by the organisers' workers: a team submits its tool's URL")
    try:
        checked_url(request.llm_url)
    except ToolError as error:
        raise InputError(str(error), record="--llm") from None
    if request.model is None:
        raise InputError("an LLM endpoint's submission names its model", record="--model")
    request.template = request.template or prompts.DEFAULT_TEMPLATE
    if request.template not in prompts.names():
        raise InputError(f"no prompt template {request.template[:60]!r}; known: {', '.join(prompts.names())}",
                         record="--template")  # fmt: skip


#: The fields of a :class:`Request` that are text, as a submission names them.
_TEXT_FIELDS = {
    "team": "team",
    "task": "task",
    "dataset": "dataset",
    "queue": "queue",
    "tool_url": "toolUrl",
    "command": "command",
    "image": "image",
    "predictions": "predictions",
    "predictions_name": "predictionsName",
    "archive": "archive",
    "challenge": "challenge",
    "phase": "phase",
    "description": "description",
    "paper_url": "paperUrl",
    "code_url": "codeUrl",
    "model": "model",
    "llm_url": "llmUrl",
    "template": "template",
}


def _check_link(link: str, record: str) -> None:
    """A link a page may show: an ``http`` or ``https`` URL with a host, without spaces, at most :data:`MAX_LINK`."""
    try:
        parts = urlsplit(link) if len(link) <= MAX_LINK and not any(c.isspace() for c in link) else None
    except ValueError:  # an unclosed IPv6 bracket
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"not an http(s) URL of at most {MAX_LINK} characters", record=record)


def _uploaded(session: Session, kind: str, request: Request, queue: Queue) -> str | None:
    """The digest of the team's own upload an ``archive`` or ``image`` submission runs, or None (an image
    from a registry the queue names); :class:`NotFound` for another team's or a missing upload."""
    digest = request.archive if kind == "archive" else request.image if kind == "image" else None
    if digest is None:
        return None
    if kind == "image" and not DIGEST.fullmatch(digest):
        parsed = images.reference(digest)
        assert parsed is not None  # _checked_request checked it
        registry = parsed.registry
        if registry not in images.registries(queue.image_registries):
            raise Forbidden(f"images come from the registries the organisers named, not from {registry}")
        return None
    wanted = "source-archive" if kind == "archive" else "oci-archive"
    try:
        found = artifacts.get(session, digest, request.team)
    except repository.NotFound:
        raise NotFound(f"team {request.team} uploaded no archive {digest}") from None
    if found.kind != wanted:
        raise InputError(f"{digest} is a {found.kind}, not a {wanted}", record=f"--{kind}")
    return digest


def _check_characters(request: Request) -> None:
    """No NUL and no lone surrogate in any text of the request: neither is text a file or the store can hold."""
    for attribute, shown in _TEXT_FIELDS.items():
        value = getattr(request, attribute)
        if value is None:
            continue
        if "\x00" in value:
            raise InputError(f"a NUL character at character {value.index(chr(0))}", record=shown)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            raise InputError(f"a lone surrogate at character {error.start}: not Unicode text", record=shown) from None


def _check_dataset(session: Session, task: str, dataset: str, version: str | None) -> bool:
    """That the dataset (or the task's gold on it) exists; whether it is private."""
    if tasks.on_dataset(task):
        try:
            row = repository.get_dataset(session, dataset)
        except repository.NotFound:
            raise InputError(f"no dataset {dataset!r} in the store", record="--dataset") from None
        if version is not None and row.version != version:
            raise InputError(f"dataset {dataset} is version {row.version}, not {version}", record="--dataset")
        return row.visibility != "public"
    gold = find_gold(session, task, dataset, version)
    if gold is None:
        shown = dataset + (f"@{version}" if version else "")
        raise InputError(f"no gold of task {task} for dataset {shown}: register one first", record="--dataset")
    return gold.visibility != "public"


def _check_team_url(url: str, private: bool) -> None:
    """A team's tool URL (not allow-listed): refused on a private dataset, and into the worker's networks."""
    if private:
        raise Forbidden(
            "on a private dataset a tool URL is the organisers' to give: submit a command, or ask the "
            "organisers to allow-list the tool's host"
        )
    from nlpbench.platform import network  # httpx loads when a URL is read, not with every platform command

    try:
        network.check_team_url(url)
    except network.Refused as refused:
        raise Forbidden(str(refused)) from None


def is_private(session: Session, submission: Submission) -> bool:
    """Whether the submission's dataset (or, for a file-scored task, its gold) is private: then its team sees
    aggregate scores only, and nothing a tool did after it saw a note. What is missing counts as private."""
    if tasks.on_dataset(submission.task):
        found = session.scalars(select(Dataset.visibility).where(Dataset.name == submission.dataset)).first()
    else:
        gold = find_gold(session, submission.task, submission.dataset, submission.dataset_version)
        found = gold.visibility if gold is not None else None
    return found != "public"


# --- reading ----------------------------------------------------------------------------------


def get(session: Session, submission_id: int, team: str | None = None) -> Submission:
    """The submission; a team sees only its own (another team's is not found, not forbidden)."""
    found = session.get(Submission, submission_id) if 0 < submission_id <= MAX_ID else None
    if found is None or (team is not None and found.team != team):
        raise NotFound(f"no submission {submission_id}")
    return found


def listed(
    session: Session, *, team: str | None = None, queue: str | None = None, status: str | None = None, limit: int = 100
) -> list[Submission]:
    query = select(Submission).order_by(Submission.id.desc()).limit(limit)
    for column, value in ((Submission.team, team), (Submission.queue, queue), (Submission.status, status)):
        if value is not None:
            query = query.where(column == value)
    return list(session.scalars(query))


def events(session: Session, submission_id: int) -> list[SubmissionEvent]:
    query = select(SubmissionEvent).where(SubmissionEvent.submission_id == submission_id)
    return list(session.scalars(query.order_by(SubmissionEvent.id)))


# --- moving -----------------------------------------------------------------------------------


def move(session: Session, submission: Submission, status: str, reason: str) -> None:
    """Set ``status`` with its one-line reason, its timestamps and its event."""
    moment = now()
    if submission.status == VALIDATING and status in (ANNOTATING, SCORING):
        submission.validated_at = moment
    if status == ANNOTATING and submission.started_at is None:
        submission.started_at = moment
    if status in FINAL:
        submission.finished_at = moment
        submission.worker = submission.lease_expires_at = None
    submission.status, submission.reason, submission.updated_at = status, reason, moment
    session.add(SubmissionEvent(submission_id=submission.id, at=moment, status=status, reason=reason))


def claim(store: Store, queue: str, worker: str, lease: float, ended: list[int] | None = None) -> int | None:
    """Take the oldest waiting submission of ``queue``, or one whose worker's lease expired; its id. A ``deid``
    submission taken the first time keeps the queue's de-identification steps (:func:`submission_deid_steps`).

    A submission already claimed the queue's ``max_attempts`` times ends FAILED instead ("stopped N
    workers"; its id added to ``ended``, once committed) and the next is looked at: whatever ended those
    workers (a crash, an OOM kill) is not tried on another.
    """
    failed: list[int] = []
    claimed = _claim(store, queue, worker, lease, failed)
    if ended is not None:
        ended += failed
    return claimed


def _claim(store: Store, queue: str, worker: str, lease: float, failed: list[int]) -> int | None:
    with store.session() as session:
        limit = session.scalars(select(Queue.max_attempts).where(Queue.name == queue)).first()
        limit = _defaults(queue)["max_attempts"] if limit is None else limit
        while (submission := _claimable(session, store.dialect, queue)) is not None:
            if submission.attempts < limit:
                break
            stopped = submission.attempts
            move(session, submission, FAILED, f"stopped {stopped} worker{'s' * (stopped != 1)}")
            failed.append(submission.id)
        else:
            return None
        previous = submission.worker
        submission.worker, submission.lease_expires_at = worker, now() + timedelta(seconds=lease)
        submission.attempts += 1
        if submission.status == RECEIVED:
            if tasks.is_deid(submission.task):  # the steps it runs with, whatever the queue asks later
                submission.deid_steps = list(
                    deid_steps(session.scalars(select(Queue).where(Queue.name == queue)).first())
                )
            move(session, submission, VALIDATING, f"claimed by worker {worker}")
        else:
            move(
                session,
                submission,
                submission.status,
                f"taken over by worker {worker}: the lease of {previous} expired",
            )
        return submission.id


def _claimable(session: Session, dialect: str, queue: str) -> Submission | None:
    """The oldest submission of ``queue`` that waits, or runs under an expired lease; row-locked on PostgreSQL."""
    query = (
        select(Submission)
        .where(
            Submission.queue == queue,
            or_(
                Submission.status == RECEIVED,
                and_(Submission.status.in_(RUNNING), Submission.lease_expires_at < now()),
            ),
            ~exists().where(SiteRun.submission_id == Submission.id),  # run at its data sites, not here
        )
        .order_by(Submission.id)
        .limit(1)
    )
    if dialect == "postgresql":
        query = query.with_for_update(skip_locked=True)
    return session.scalars(query).first()


def _held(submission_id: int, worker: str):
    return (
        update(Submission)
        .where(Submission.id == submission_id, Submission.worker == worker, Submission.status.in_(RUNNING))
        .execution_options(synchronize_session=False)
    )


def renew(store: Store, submission_id: int, worker: str, lease: float) -> bool:
    """Extend the lease; False when this worker no longer holds the submission."""
    with store.session() as session:
        result = session.execute(_held(submission_id, worker).values(lease_expires_at=now() + timedelta(seconds=lease)))
        return cast(CursorResult, result).rowcount == 1


def release(store: Store, submission_id: int, worker: str) -> bool:
    """Give a submission back (its worker is stopping): its lease ends now, so the next claim takes it over
    where it stands. False when this worker no longer held it."""
    with store.session() as session:
        given = session.execute(_held(submission_id, worker).values(lease_expires_at=now() - timedelta(seconds=1)))
        return cast(CursorResult, given).rowcount == 1


def hold(session: Session, submission_id: int, worker: str, lease: float, **values: Any) -> None:
    """Inside a writing transaction: renew the lease (and set ``values``), or raise :class:`Lost`."""
    statement = _held(submission_id, worker).values(lease_expires_at=now() + timedelta(seconds=lease), **values)
    if cast(CursorResult, session.execute(statement)).rowcount != 1:
        raise Lost(f"submission {submission_id} is no longer held by {worker}")


def held(session: Session, submission_id: int, worker: str, lease: float) -> Submission:
    """The submission, row-locked where the backend can, after :func:`hold`."""
    hold(session, submission_id, worker, lease)
    return session.get_one(Submission, submission_id, populate_existing=True)


def cancel(
    store: Store, submission_id: int, *, team: str | None = None, by: str = "organiser", waited: list[int] | None = None
) -> Submission:
    """CANCELLED, unless the submission already ended; a worker running it stops at its next heartbeat (and
    posts its webhook). A submission cancelled while it waited (RECEIVED) has no worker to post it: its id is
    added to ``waited``, for the caller to post once this has committed
    (:func:`nlpbench.platform.webhooks.deliver_later`)."""
    with store.session() as session:
        submission = get(session, submission_id, team)
        if submission.status in FINAL:
            raise Conflict(f"submission {submission_id} is {submission.status}: it can no longer be cancelled")
        waiting = submission.status == RECEIVED
        move(session, submission, CANCELLED, f"cancelled by {by}")
    if waiting and waited is not None:
        waited.append(submission_id)
    return submission
