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

Quotas count, per team, task and queue, the submissions made since the
window began (``day``: 00:00 UTC; ``week``: Monday 00:00 UTC; ``month``: the
1st, 00:00 UTC) that got past validation or may still: a submission that
never did costs no place however it ended (INVALID, or CANCELLED or FAILED
before it was validated — a command tool that exits at its start, a
submission that stopped its workers), and one waiting for validation holds
its place until it fails it. The count and the insert run under a lock per
(team, task, queue) — an advisory transaction lock on PostgreSQL, the write
lock on SQLite — so concurrent submits never overrun the quota.
"""

from __future__ import annotations

import hashlib
import json
import re
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from sqlalchemy import and_, func, or_, select, text, update
from sqlalchemy.orm import Session

from nlpbench import files
from nlpbench.errors import InputError
from nlpbench.platform import images, network, tasks
from nlpbench.runner.client import ToolError, checked_url
from nlpbench.store import Store, artifacts, repository
from nlpbench.store.models import Dataset
from nlpbench.store.submissions import (
    ANNOTATING,
    CANCELLED,
    FAILED,
    FINAL,
    INVALID,
    RECEIVED,
    RUNNING,
    SCORING,
    VALIDATING,
    WINDOWS,
    Queue,
    Submission,
    SubmissionEvent,
    TaskGold,
)

DEFAULT_QUEUE = "default"
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,59}"
#: The digest of an uploaded archive.
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
#: The largest archive (a tool's source, an image) a team may upload.
MAX_ARCHIVE_BYTES = 4 * 2**30
#: What an upload is, as the platform API and the command line name it, and as the store keeps it.
ARCHIVE_KINDS = {"source": "source-archive", "image": "oci-archive"}
#: The largest prediction file a submission may carry.
MAX_PREDICTION_BYTES = 64 * 2**20
#: The longest file name a submission keeps, its extension included (:func:`safe_name`).
MAX_NAME_CHARS = 100
#: The largest id a submission may have (the column is a 32-bit integer): a larger one is not found.
MAX_ID = 2**31 - 1


class PlatformError(Exception):
    """A request the queue refuses or cannot find; one line."""


class NotFound(PlatformError):
    pass


class QuotaExceeded(PlatformError):
    pass


class Forbidden(PlatformError):
    """A team may not do this: give a tool URL on a private dataset or into the worker's networks, or a
    prediction file of a private dataset's notes."""


class Conflict(PlatformError):
    """The submission is not in a status that allows this."""


class Lost(Exception):
    """This worker no longer holds the submission: its lease was taken over, or the submission cancelled."""


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
    #: Made by an organiser, who may open a queue by naming it and give any tool URL. The Python API and the
    #: command line are the organisers'; the platform API says whose key made the request.
    organiser: bool = True

    @property
    def kind(self) -> str:
        if self.archive is not None:
            if self.command is None or any(v is not None for v in (self.tool_url, self.image, self.predictions)):
                raise InputError("an archive goes with its start command (--command) and nothing else")
            return "archive"
        given = [k for k in ("tool_url", "command", "image", "predictions") if getattr(self, k) is not None]
        if len(given) != 1:
            raise InputError("give exactly one of --tool, --command, --archive, --image or --predictions")
        return given[0].removesuffix("_url")


def now() -> datetime:
    return datetime.now(UTC)


def window_start(moment: datetime, window: str) -> datetime:
    """When the quota window holding ``moment`` began, in UTC."""
    day = moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if window == "day":
        return day
    if window == "week":
        return day - timedelta(days=day.weekday())
    if window == "month":
        return day.replace(day=1)
    raise InputError(f"unknown quota window {window!r}; known: {', '.join(WINDOWS)}")


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
        session.execute(_insert_ignoring(session, Queue).values(**_defaults(name)))
    return session.scalars(select(Queue).where(Queue.name == name)).one()


def _defaults(name: str) -> dict[str, Any]:
    """A new queue's row: each column's default (a callable one called, as SQLAlchemy calls it with no context)."""
    defaults = {
        column.name: column.default.arg(None) if column.default.is_callable else column.default.arg
        for column in Queue.__table__.columns
        if column.default is not None
    }
    return defaults | {"name": name}


def _insert_ignoring(session: Session, model):
    from sqlalchemy.dialects import postgresql, sqlite

    dialect = session.get_bind().dialect.name
    return (postgresql.insert if dialect == "postgresql" else sqlite.insert)(model).on_conflict_do_nothing()


SETTINGS = {
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
    "tool_hosts": lambda hosts: sorted({network.host_entry(host) for host in hosts}),
    "image_registries": lambda entries: sorted({images.registry_entry(entry) for entry in entries}),
    "weak_sandbox": bool,
}


def configure_queue(store: Store, name: str, **settings: Any) -> Queue:
    """Change the settings given (see :data:`SETTINGS`; ``quota=0`` removes the quota, ``tool_hosts`` replaces
    the allow-list, ``[]`` empties it); returns the queue."""
    if settings.get("quota_window") is not None:
        window_start(now(), settings["quota_window"])
    with store.session() as session:
        queue = get_queue(session, name)
        for key, value in settings.items():
            if value is not None:
                setattr(queue, key, None if key == "quota" and value == 0 else SETTINGS[key](value))
        return queue


def register_gold(
    store: Store, task: str, dataset: str, files: dict[str, Path], options: dict[str, str], version: str = "1"
) -> TaskGold:
    """Keep the gold files of a file-scored task on a dataset (replacing those of the same version).

    ``files`` maps each argument of the task's scoring function that takes a file (``gold``, ``all_ids``,
    ``valid_codes``, …) to its path; ``options`` fixes other arguments (``track=D``, ``mode=relaxed``, …).
    """
    if task not in tasks.file_tasks():
        raise InputError(f"task {task!r} is not scored from files; those are: {', '.join(tasks.file_tasks())}")
    gold_argument = tasks.spec(task).sides[0]
    if gold_argument not in files:
        raise InputError(f"the gold of {task} needs a file named {gold_argument} (--file {gold_argument}=PATH)")
    texts = {name: list(read_submitted(path)) for name, path in sorted(files.items())}
    digest = hashlib.sha256()
    for name, (_, content) in texts.items():
        digest.update(f"{name}\n{len(content)}\n".encode())
        digest.update(content.encode("utf-8", "surrogatepass"))
    with store.session() as session:
        session.execute(
            TaskGold.__table__.delete().where(
                TaskGold.task == task, TaskGold.dataset == dataset, TaskGold.version == version
            )
        )
        gold = TaskGold(
            task=task, dataset=dataset, version=version, files=texts, options=options, content_hash=digest.hexdigest()
        )
        session.add(gold)
        return gold


def read_submitted(path: Path) -> tuple[str, str]:
    """The name and text of a submitted file, or of a directory (i2b2 XML, brat): its name ends with ``/``
    and its text is JSON mapping each file's path inside it to the file's text (:func:`write_submitted` undoes it).
    """
    if not path.is_dir():
        return path.name, read_text(path)
    files = sorted(p for p in path.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in files)
    if size > MAX_PREDICTION_BYTES:
        raise InputError(
            f"{size} bytes in {len(files)} files, over the {MAX_PREDICTION_BYTES} a submission may have", path
        )
    return f"{path.name}/", json.dumps(
        {p.relative_to(path).as_posix(): read_text(p) for p in files}, ensure_ascii=False
    )


def safe_name(name: str | None) -> str:
    """A submitted file's name reduced to a base name that names no other place.

    Its last path segment (``/`` and ``\\`` both separate), control characters made ``_``, at most
    :data:`MAX_NAME_CHARS` characters (the extension kept); ``predictions`` when nothing usable is left
    (``.``, ``..``, ``/``, empty). A trailing ``/`` — a directory of files (:func:`read_submitted`) — is kept.
    """
    name = name or ""
    directory = name.endswith(("/", "\\"))
    base = re.sub(r"[\x00-\x1f\x7f]", "_", re.split(r"[/\\]", name.rstrip("/\\"))[-1]).strip()
    if base in ("", ".", ".."):
        base = "predictions"
    if len(base) > MAX_NAME_CHARS:
        _, dot, extension = base.rpartition(".")
        extension = dot + extension if dot and len(extension) < 10 else ""
        base = base[: MAX_NAME_CHARS - len(extension)] + extension
    return base + "/" * directory


def write_submitted(name: str | None, text: str, parent: Path) -> Path:
    """Write a submitted file or directory (:func:`read_submitted`) back under ``parent``; its path."""
    name = safe_name(name)
    target = parent / name.rstrip("/")
    if not name.endswith("/"):
        target.write_text(text, encoding="utf-8")
        return target
    try:
        files = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"a directory's files are not JSON (line {error.lineno})", name) from None
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise InputError("a directory's files are not a JSON object of file paths and texts", name)
    target.mkdir()
    for relative, content in files.items():
        inside = PurePosixPath(relative)
        if inside.is_absolute() or ".." in inside.parts or not inside.parts:
            raise InputError(f"file path {relative!r} is not inside the directory", name)
        path = target.joinpath(*inside.parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return target


def read_text(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_PREDICTION_BYTES:
        raise InputError(f"{size} bytes, over the {MAX_PREDICTION_BYTES} a submitted file may have", path)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start})", path) from None


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


def find_gold(session: Session, task: str, dataset: str, version: str | None) -> TaskGold | None:
    query = select(TaskGold).where(TaskGold.task == task, TaskGold.dataset == dataset)
    if version is not None:
        query = query.where(TaskGold.version == version)
    return session.scalars(query.order_by(TaskGold.created_at.desc(), TaskGold.id.desc())).first()


# --- submitting -------------------------------------------------------------------------------


def submit(store: Store, request: Request, *, moment: datetime | None = None) -> int:
    """Check the request, count it against the quota and queue it as RECEIVED; its id.

    What a team may not do (an organiser may): name a queue that does not exist (:class:`NotFound`), give
    a tool URL on a private dataset or into the worker's networks unless the queue allow-lists its host,
    or a prediction file of a private dataset's notes, which it never saw — a probe of them
    (:class:`Forbidden`).
    """
    kind = _checked_request(request)
    dataset, version = split_dataset(request.dataset)
    moment = moment or now()
    if kind == "tool" and not request.organiser:
        with store.session(readonly=True) as session:
            private = _check_dataset(session, request.task, dataset, version)
            allowed = network.allow_listed(request.tool_url, get_queue(session, request.queue, create=False).tool_hosts)
        if not allowed:  # outside any transaction: it may wait for a resolver
            _check_team_url(request.tool_url, private)
    with store.session() as session:
        private = _check_dataset(session, request.task, dataset, version)
        if private and kind == "predictions" and tasks.is_phi(request.task) and not request.organiser:
            raise Forbidden(
                "the notes of a private dataset are annotated by a tool that comes to them (a command), "
                "not by a team's prediction file"
            )
        queue = get_queue(session, request.queue, create=request.organiser)
        artifact = _uploaded(session, kind, request, queue)
        if queue.quota is not None:
            _check_quota(session, queue, request, moment)
        submission = Submission(
            queue=request.queue,
            team=request.team,
            task=request.task,
            dataset=dataset,
            dataset_version=version,
            kind=kind,
            tool_url=request.tool_url,
            command=request.command,
            image=request.image if artifact is None else None,
            artifact=artifact,
            predictions=request.predictions,
            predictions_name=safe_name(request.predictions_name) if kind == "predictions" else None,
            submitted_by="organiser" if request.organiser else "team",
            status=RECEIVED,
            reason=f"{kind} submission received",
            created_at=moment,
            updated_at=moment,
            attempts=0,
            notes_total=0,
            notes_done=0,
            warnings=[],
        )
        session.add(submission)
        session.flush()
        session.add(SubmissionEvent(submission_id=submission.id, at=moment, status=RECEIVED, reason=submission.reason))
        return submission.id


def _checked_request(request: Request) -> str:
    _check_characters(request)
    kind = request.kind
    _checked_name(request.team, "team")
    if not tasks.known(request.task):
        raise InputError(f"unknown task {request.task!r}; known: {', '.join(tasks.names())}")
    if kind != "predictions" and not tasks.is_phi(request.task):
        raise InputError(f"task {request.task} is scored from files: submit it with --predictions FILE")
    if kind == "tool":
        try:
            checked_url(request.tool_url)
        except ToolError as error:
            raise InputError(str(error), record="--tool") from None
    if kind in ("command", "archive") and not request.command.strip():
        raise InputError("the command is empty", record="--command")
    if kind == "archive" and not DIGEST.fullmatch(request.archive):
        raise InputError("not the digest of an uploaded archive (sha256: and 64 hex digits)", record="--archive")
    if kind == "image" and not (DIGEST.fullmatch(request.image) or images.reference(request.image)):
        raise InputError(
            "not an uploaded image (sha256:…) nor REGISTRY/NAME@sha256:… (64 hexadecimal digits)", record="--image"
        )
    if kind == "predictions" and len(request.predictions.encode("utf-8")) > MAX_PREDICTION_BYTES:
        raise InputError(f"over the {MAX_PREDICTION_BYTES} bytes a prediction file may have", request.predictions_name)
    return kind


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
}


def _uploaded(session: Session, kind: str, request: Request, queue: Queue) -> str | None:
    """The digest of the team's own upload an ``archive`` or ``image`` submission runs, or None (an image
    from a registry the queue names); :class:`NotFound` for another team's or a missing upload."""
    digest = request.archive if kind == "archive" else request.image if kind == "image" else None
    if digest is None:
        return None
    if kind == "image" and not DIGEST.fullmatch(digest):
        registry = images.reference(digest).registry
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
    if tasks.is_phi(task):
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
    try:
        network.check_team_url(url)
    except network.Refused as refused:
        raise Forbidden(str(refused)) from None


def is_private(session: Session, submission: Submission) -> bool:
    """Whether the submission's dataset (or, for a file-scored task, its gold) is private: then its team sees
    aggregate scores only, and nothing a tool did after it saw a note. What is missing counts as private."""
    if tasks.is_phi(submission.task):
        found = session.scalars(select(Dataset.visibility).where(Dataset.name == submission.dataset)).first()
    else:
        gold = find_gold(session, submission.task, submission.dataset, submission.dataset_version)
        found = gold.visibility if gold is not None else None
    return found != "public"


def _check_quota(session: Session, queue: Queue, request: Request, moment: datetime) -> None:
    if session.get_bind().dialect.name == "postgresql":
        key = f"{request.team}/{request.task}/{queue.name}"
        session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": key})
    start = window_start(moment, queue.quota_window)
    used = session.execute(
        select(func.count()).where(
            Submission.team == request.team,
            Submission.task == request.task,
            Submission.queue == queue.name,
            Submission.created_at >= start,
            Submission.status != INVALID,
            or_(Submission.status.not_in((CANCELLED, FAILED)), Submission.validated_at.is_not(None)),
        )
    ).scalar_one()
    if used >= queue.quota:
        raise QuotaExceeded(
            f"team {request.team} has used its {queue.quota} submissions of {request.task} in queue {queue.name} "
            f"this {queue.quota_window} (the window began {start:%Y-%m-%d %H:%M} UTC)"
        )


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


def claim(store: Store, queue: str, worker: str, lease: float) -> int | None:
    """Take the oldest waiting submission of ``queue``, or one whose worker's lease expired; its id.

    A submission already claimed the queue's ``max_attempts`` times ends FAILED instead ("stopped N
    workers") and the next is looked at: whatever ended those workers (a crash, an OOM kill) is not
    tried on another.
    """
    with store.session() as session:
        limit = session.scalars(select(Queue.max_attempts).where(Queue.name == queue)).first()
        limit = _defaults(queue)["max_attempts"] if limit is None else limit
        while (submission := _claimable(session, store.dialect, queue)) is not None:
            if submission.attempts < limit:
                break
            stopped = submission.attempts
            move(session, submission, FAILED, f"stopped {stopped} worker{'s' * (stopped != 1)}")
        else:
            return None
        previous = submission.worker
        submission.worker, submission.lease_expires_at = worker, now() + timedelta(seconds=lease)
        submission.attempts += 1
        if submission.status == RECEIVED:
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
        return result.rowcount == 1


def release(store: Store, submission_id: int, worker: str) -> bool:
    """Give a submission back (its worker is stopping): its lease ends now, so the next claim takes it over
    where it stands. False when this worker no longer held it."""
    with store.session() as session:
        given = session.execute(_held(submission_id, worker).values(lease_expires_at=now() - timedelta(seconds=1)))
        return given.rowcount == 1


def hold(session: Session, submission_id: int, worker: str, lease: float, **values: Any) -> None:
    """Inside a writing transaction: renew the lease (and set ``values``), or raise :class:`Lost`."""
    statement = _held(submission_id, worker).values(lease_expires_at=now() + timedelta(seconds=lease), **values)
    if session.execute(statement).rowcount != 1:
        raise Lost(f"submission {submission_id} is no longer held by {worker}")


def held(session: Session, submission_id: int, worker: str, lease: float) -> Submission:
    """The submission, row-locked where the backend can, after :func:`hold`."""
    hold(session, submission_id, worker, lease)
    return session.get(Submission, submission_id, populate_existing=True)


def cancel(store: Store, submission_id: int, *, team: str | None = None, by: str = "organiser") -> Submission:
    """CANCELLED, unless the submission already ended; a worker running it stops at its next heartbeat."""
    with store.session() as session:
        submission = get(session, submission_id, team)
        if submission.status in FINAL:
            raise Conflict(f"submission {submission_id} is {submission.status}: it can no longer be cancelled")
        move(session, submission, CANCELLED, f"cancelled by {by}")
        return submission
