"""The centre's side of data sites: sites and their keys, a run per site, results pooled when all are back.

A site (:class:`~nlpbench.store.sites.Site`) holds datasets whose notes never
leave it. A submission made to such a dataset is not run by the centre's
workers: :func:`open_runs` gives it one run per site that holds the dataset,
and each site takes its run (:func:`next_run`), reports progress
(:func:`progress`, which also tells it when the submission was cancelled) and
returns its result (:func:`receive`): per-document counts under document ids of
its own making (``d1``, ``d2``, …), the dataset's content hash and the
reproducibility fields — a closed form (:func:`checked_reports`), every text in
it a name of nlpbench's vocabulary. The first result of a site's dataset fixes
its content hash; a result of another hash is refused in one line until an
organiser registers the site's dataset again. When every site has returned,
the submission's result is the sites' reports pooled
(:mod:`nlpbench.platform.pooling`, the interval stratified by site), stored and
ranked as any result; each site's own primary values and intervals stay with its
run, for the leaderboard's per-site columns (:func:`site_columns`).

A site that stops mid-run takes the same run again when it comes back (a run
belongs to its site: nobody else can take it over), and goes on where its own
store says it stopped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from math import isfinite
from typing import Any

from sqlalchemy import case, select
from sqlalchemy.orm import Session

from nlpbench.errors import InputError
from nlpbench.platform import pooling, tasks
from nlpbench.platform import queue as queues
from nlpbench.platform.at_sites import HELD, RETURNED, RUNNING, WAITING
from nlpbench.platform.errors import Conflict, NotFound
from nlpbench.platform.scoring import Scored, sha256_of, store_result
from nlpbench.report.model import Report, Row
from nlpbench.store import Store
from nlpbench.store.keys import new_secret, parse_key, secret_matches
from nlpbench.store.sites import Site, SiteDataset, SiteRun
from nlpbench.store.submissions import FINAL, Submission
from nlpbench.store.vocabulary import ANNOTATING, CANCELLED, FAILED, INVALID, RECEIVED, SCORED, SCORING
from nlpbench.version import __version__

KEY_PREFIX = "nbs"
#: What a site may say of its run: its counts are in (``SCORED``), or the submission ended there.
SITE_OUTCOMES = (SCORED, INVALID, FAILED)
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,59}")
DOCUMENT = re.compile(r"d[1-9][0-9]{0,8}")
HASH = re.compile(r"[0-9a-f]{64}")
#: The text fields a returned row may have (each a name: :data:`NAME`); every other field is a number.
TEXT_FIELDS = (*pooling.NAMING, "document")
#: What a site tells of the tool it ran, each a name (:data:`NAME`): the leaderboard's label for it.
TOOL_FIELDS = ("name", "version", "type", "apiVersion")
MAX_FIELDS = 40
#: The most annotation types a site's result may report: each is bootstrapped when it comes, so a bound keeps a
#: buggy (or stolen-key) site from holding the centre for minutes with one request.
MAX_TYPES = 100


@dataclass(frozen=True)
class Job:
    """A run as its site takes it: what to run, on which of its datasets, scored under which profile."""

    run: int
    submission: int
    team: str
    task: str
    dataset: str
    dataset_version: str | None
    kind: str
    command: str | None
    profile: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "submission": self.submission,
            "team": self.team,
            "task": self.task,
            "dataset": self.dataset,
            "datasetVersion": self.dataset_version,
            "kind": self.kind,
            "command": self.command,
            "profile": self.profile,
        }


@dataclass(frozen=True)
class Returned:
    """What a site returns for its run: the outcome, and with ``SCORED`` the content hash of the dataset, how
    many notes, its nlpbench version and each annotation type's ``{"scores": [rows], "perDocument": [rows]}``."""

    status: str
    content_hash: str | None = None
    notes: int = 0
    nlpbench: str = ""
    reports: Mapping[str, Mapping[str, list[Row]]] | None = None
    #: What the tool said of itself (``GET /tool``, asked before it was sent any note): :data:`TOOL_FIELDS`, names.
    tool: Mapping[str, str] | None = None


@dataclass(frozen=True)
class SiteInfo:
    """A site as ``nlpbench site list`` shows it: its name, its datasets (with their hashes), when last seen."""

    name: str
    key: str
    datasets: dict[str, str | None]
    seen_at: datetime | None


def add_site(session: Session, name: str, datasets: list[str], *, replace: bool = False) -> str | None:
    """Register site ``name`` holding ``datasets``; returns its key (shown once), or None for a known site.

    A known site's datasets are added to it; ``replace`` forgets the content hash each named dataset had, so the
    next result fixes a new one.
    """
    if not NAME.fullmatch(name):
        raise InputError("a site's name is 1 to 60 letters, digits and _.:- (a letter or digit first)", record=name)
    if not datasets:
        raise InputError("a site holds at least one dataset (--dataset NAME)")
    for dataset in datasets:
        if not NAME.fullmatch(dataset):
            raise InputError("not a dataset name (letters, digits and _.:-)", record=dataset)
    site = session.scalars(select(Site).where(Site.name == name)).first()
    key = None
    if site is None:
        prefix, secret_hash, key = new_secret(KEY_PREFIX)
        site = Site(name=name, prefix=prefix, secret_hash=secret_hash)
        session.add(site)
        session.flush()
    for dataset in datasets:
        held = session.scalars(
            select(SiteDataset).where(SiteDataset.site_id == site.id, SiteDataset.dataset == dataset)
        ).first()
        if held is None:
            session.add(SiteDataset(site_id=site.id, dataset=dataset))
        elif replace:
            held.content_hash = None
    session.flush()
    return key


def list_sites(session: Session) -> list[SiteInfo]:
    """Every site, by name; never a key's secret."""
    found = []
    for site in session.scalars(select(Site).order_by(Site.name)):
        held = session.scalars(select(SiteDataset).where(SiteDataset.site_id == site.id).order_by(SiteDataset.dataset))
        datasets = {row.dataset: row.content_hash for row in held}
        found.append(SiteInfo(site.name, f"{KEY_PREFIX}_{site.prefix}", datasets, site.seen_at))
    return found


def site_of(session: Session, key: str | None) -> Site | None:
    """The site whose key ``key`` is; None for anything else."""
    parsed = parse_key(key or "", KEY_PREFIX)
    if parsed is None:
        return None
    site = session.scalars(select(Site).where(Site.prefix == parsed[0])).first()
    return site if site is not None and secret_matches(site.secret_hash, parsed[1]) else None


def next_run(store: Store, site_id: int) -> Job | None:
    """The site's oldest run still to finish (one it started and left first), now ``RUNNING``; None: no work."""
    with store.session() as session:
        site = session.get_one(Site, site_id)
        site.seen_at = queues.now()
        query = (
            select(SiteRun, Submission)
            .join(Submission, Submission.id == SiteRun.submission_id)
            .where(
                SiteRun.site_id == site_id,
                SiteRun.status.in_((WAITING, RUNNING)),
                Submission.status.not_in(FINAL),  # cancelled (or failed elsewhere) meanwhile: not run
            )
            .order_by(case((SiteRun.status == RUNNING, 0), else_=1), SiteRun.id)  # RUNNING before WAITING
            .limit(1)
        )
        found = session.execute(query).first()
        if found is None:
            return None
        run, submission = found
        run.status, run.reason, run.updated_at = RUNNING, f"running at site {site.name}", queues.now()
        if submission.status == RECEIVED:
            queues.move(session, submission, ANNOTATING, "running at its data sites")
        profile = queues.get_queue(session, submission.queue).profile
        return Job(
            run.id,
            submission.id,
            submission.team,
            submission.task,
            submission.dataset,
            submission.dataset_version,
            submission.kind,
            submission.command,
            profile,
        )


def progress(store: Store, site_id: int, run_id: int, done: int, total: int, *, held: bool = False) -> bool:
    """Record the site's progress on its run (``held``: finished there, its result waiting for the site's
    approval); whether it should go on (False once the submission has ended)."""
    with store.session() as session:
        run, submission = _run(session, site_id, run_id)
        session.get_one(Site, site_id).seen_at = queues.now()
        if run.status not in (RUNNING, HELD) or submission.status in FINAL:
            return False
        run.notes_done, run.notes_total, run.updated_at = max(done, 0), max(total, 0), queues.now()
        if held:
            run.status, run.reason = HELD, "finished at its site, waiting for the site's approval"
        return True


def receive(store: Store, site_id: int, run_id: int, returned: Returned) -> str:
    """Take a site's result for its run; the submission's status after it (``SCORED`` once every site is back).

    Refused (:class:`Conflict`, one line): a run that is not running (nor held), and a dataset whose content hash
    is not the one its first result fixed — which also ends the run and its submission FAILED, the refusal their
    reason. A run that ended ``INVALID`` or ``FAILED`` at its site ends the submission so.
    """
    with store.session() as session:
        run, submission = _run(session, site_id, run_id)
        site = session.get_one(Site, site_id)
        site.seen_at = queues.now()
        if run.status not in (RUNNING, HELD) or submission.status in FINAL:
            raise Conflict(f"run {run_id} is {run.status} (submission {submission.status}): it takes no result")
        if returned.status not in SITE_OUTCOMES:
            raise InputError(f"a site's outcome is one of {', '.join(SITE_OUTCOMES)}", record="status")
        if returned.status != SCORED:
            _ended_at_site(session, submission, site, returned.status, f"{returned.status} at data site {site.name}")
            return submission.status
        reports = checked_reports(returned.reports, submission.task)
        tool = checked_tool(returned.tool)
        refused = _changed_hash(session, site, submission.dataset, returned.content_hash)
        if refused is not None:
            _ended_at_site(session, submission, site, FAILED, refused)
        else:
            _returned(session, submission, run, site, returned, reports)
            if tool and submission.tool_meta is None:  # the first site's word; every site ran the same command
                submission.tool_meta = tool
    if refused is not None:
        raise Conflict(refused)
    return submission.status


def _returned(
    session: Session,
    submission: Submission,
    run: SiteRun,
    site: Site,
    returned: Returned,
    reports: dict[str, dict[str, list[Row]]],
) -> None:
    """Keep the site's counts with its run; once every site's are in, pool them."""
    run.status, run.reason, run.updated_at = RETURNED, f"returned by site {site.name}", queues.now()
    run.content_hash = returned.content_hash
    run.reports = {t: dict(report) for t, report in reports.items()}
    totals = all(not report["perDocument"] for report in reports.values())
    run.reproducibility = {
        "contentHash": returned.content_hash,
        "notes": returned.notes,
        "nlpbench": returned.nlpbench,
        "totalsOnly": totals,
    }
    run.intervals = _site_intervals(submission.task, reports, totals)
    run.notes_done = run.notes_total = returned.notes
    session.flush()
    runs = list(session.scalars(select(SiteRun).where(SiteRun.submission_id == submission.id)))
    if all(r.status == RETURNED for r in runs):
        _pool(session, submission, runs)


def _run(session: Session, site_id: int, run_id: int) -> tuple[SiteRun, Submission]:
    run = session.get(SiteRun, run_id)
    if run is None or run.site_id != site_id:  # another site's run is as absent as one that does not exist
        raise NotFound(f"no run {run_id} of this site")
    return run, session.get_one(Submission, run.submission_id)


def _ended_at_site(session: Session, submission: Submission, site: Site, status: str, reason: str) -> None:
    """The submission ends ``status`` (INVALID or FAILED) for ``reason``, as its run at ``site`` did; its other
    runs end too."""
    for run in session.scalars(select(SiteRun).where(SiteRun.submission_id == submission.id)):
        if run.site_id == site.id:
            run.status, run.reason = FAILED, reason
        elif run.status in (WAITING, RUNNING, HELD):
            run.status, run.reason = CANCELLED, f"ended: the submission was {status} at site {site.name}"
    queues.move(session, submission, status, reason)


def _changed_hash(session: Session, site: Site, dataset: str, content_hash: str | None) -> str | None:
    """Why the result is refused when its dataset's content hash is not the one its first result fixed (which a
    first result fixes); None when it is."""
    if content_hash is None or not HASH.fullmatch(content_hash):
        raise InputError("a site's result gives its dataset's content hash (64 hex digits)", record="contentHash")
    held = session.scalars(
        select(SiteDataset).where(SiteDataset.site_id == site.id, SiteDataset.dataset == dataset)
    ).one()
    if held.content_hash is None:
        held.content_hash = content_hash
    elif held.content_hash != content_hash:
        return (
            f"site {site.name}: dataset {dataset} has content hash {content_hash[:12]}…, not {held.content_hash[:12]}… "
            f"as its first result had; refused until an organiser registers it again "
            f"(nlpbench site add {site.name} --dataset {dataset} --replace)"
        )
    return None


def checked_tool(tool: Mapping[str, Any] | None) -> dict[str, str]:
    """The tool's self-description a site sends: :data:`TOOL_FIELDS` only, each a name; one line otherwise."""
    if not tool:
        return {}
    if not isinstance(tool, Mapping) or not set(tool) <= set(TOOL_FIELDS):
        raise InputError(f"a tool is told by {', '.join(TOOL_FIELDS)} only", record="tool")
    for key, value in tool.items():
        if not (isinstance(value, str) and NAME.fullmatch(value)):
            raise InputError(f"the tool's {key} is a name (letters, digits and _.:-)", record="tool")
    return dict(tool)


def checked_reports(reports: Mapping[str, Mapping[str, Any]] | None, task: str) -> dict[str, dict[str, list[Row]]]:
    """A site's reports of ``task``, checked to hold nothing but names and numbers: one line naming the place
    otherwise, never a name that was sent (only the task's own types and the fixed field names are named back).

    At most :data:`MAX_TYPES` annotation types, exactly those ``task`` scores; each maps to
    ``{"scores": [...], "perDocument": [...]}``; a row has at most :data:`MAX_FIELDS` fields, its text fields
    are :data:`TEXT_FIELDS` holding names (:data:`NAME`), its per-document rows name their document ``dN``, and
    every other field is a finite number (or null).
    """
    if not reports:
        raise InputError("a SCORED result has a report of at least one annotation type", record="reports")
    if len(reports) > MAX_TYPES:
        raise InputError(f"a result reports at most {MAX_TYPES} annotation types", record="reports")
    expected = tasks.PHI_TASKS.get(task, (task,))
    if set(reports) != set(expected):
        raise InputError(f"task {task} is reported as its types {', '.join(expected)}, each once", record="reports")
    checked: dict[str, dict[str, list[Row]]] = {}
    for annotation_type, report in reports.items():
        if not isinstance(report, Mapping):
            raise InputError("an annotation type is a name, with its report", record="reports")
        if set(report) != {"scores", "perDocument"}:
            raise InputError("a report has scores and perDocument, nothing else", record=f"reports.{annotation_type}")
        scores = [_checked_row(row, f"reports.{annotation_type}.scores[{i}]") for i, row in enumerate(report["scores"])]
        where = f"reports.{annotation_type}.perDocument"
        documents = [_checked_row(row, f"{where}[{i}]", document=True) for i, row in enumerate(report["perDocument"])]
        checked[annotation_type] = {"scores": scores, "perDocument": documents}
    return checked


def _checked_row(row: Any, where: str, *, document: bool = False) -> Row:
    if not isinstance(row, Mapping) or len(row) > MAX_FIELDS or "metric" not in row:
        raise InputError(f"a row is an object with a metric and at most {MAX_FIELDS} fields", record=where)
    for key, value in row.items():
        if not isinstance(key, str) or not NAME.fullmatch(key):
            raise InputError("a field's name is a name", record=where)
        if key in TEXT_FIELDS:
            if value is not None and not (isinstance(value, str) and NAME.fullmatch(value)):
                raise InputError(f"field {key} is a name (letters, digits and _.:-)", record=where)
        elif value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or not isfinite(value)
        ):
            raise InputError("a field that is not a name holds a finite number", record=where)  # its name: sent
        elif key in pooling.COUNT_COLUMNS and (value is None or value < 0):
            raise InputError(f"field {key} is a count: a number, 0 or more", record=where)
    if document and not (isinstance(row.get("document"), str) and DOCUMENT.fullmatch(row["document"])):
        raise InputError("a per-document row names its document d1, d2, …", record=where)
    if not document and row.get("document") is not None:
        raise InputError("an overall row names no document", record=where)
    return dict(row)


def _reports(task: str, profile: str, reports: Mapping[str, Mapping[str, list[Row]]]) -> dict[str, Report]:
    return {t: Report(task, profile, {}, r["scores"], r["perDocument"]) for t, r in reports.items()}


def _site_intervals(task: str, reports: Mapping[str, Mapping[str, list[Row]]], totals: bool) -> list[dict[str, Any]]:
    """The site's own primary value of each annotation type (and overall), with its interval over its documents
    (none for a site that sent its ``totals`` only): computed here from its counts alone
    (:func:`nlpbench.platform.pooling.pooled` of the one site)."""
    from nlpbench.platform import intervals  # the bootstrap: only when a result comes

    found = intervals.compute(0, pooling.pooled(task, "", {"site": _reports(task, "", reports)}))
    return [
        {
            "annotationType": i.annotation_type,
            "metric": i.metric,
            "field": i.field,
            "value": i.value,
            "low": None if totals else i.low,
            "high": None if totals else i.high,
            "documents": i.documents,
        }
        for i in found
        if i.ranked
    ]


def _pool(session: Session, submission: Submission, runs: list[SiteRun]) -> None:
    """Store the pooled result of every site's counts, stratified by site, and rank the task's columns."""
    from nlpbench.platform import ranks  # ranks reads results through the scoring module

    names = {site_id: name for site_id, name in session.execute(select(Site.id, Site.name))}
    profile = queues.get_queue(session, submission.queue).profile
    by_site = {
        names[run.site_id]: _reports(submission.task, profile, run.reports or {})
        for run in sorted(runs, key=lambda r: names[r.site_id])
    }
    scored = Scored()
    for annotation_type, report in pooling.pooled(submission.task, profile, by_site).items():
        scored.add(annotation_type, report)
    queues.move(session, submission, SCORING, f"every data site returned: {len(runs)}")
    reproduced = {
        "task": submission.task,
        "kind": submission.kind,
        "commandSha256": sha256_of(submission.command),
        "dataset": {"name": submission.dataset, "version": submission.dataset_version},
        "sites": {names[r.site_id]: r.reproducibility for r in runs},
        "profile": profile,
        "pooled": "per-document counts of every site; bootstrap stratified by site",
        "nlpbench": __version__,
    }
    store_result(session, submission, profile, scored, reproduced=reproduced, by_site=True)
    rows = len(scored.per_document)
    queues.move(session, submission, SCORED, f"pooled from {len(runs)} data sites: {rows} per-document rows")
    ranks.rank(session, submission.task)
