"""``nlpbench submit``, ``submissions``, ``worker`` and ``rescore``: the submission queue from the command line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from nlpbench.cli.common import choices, fail, stderr, stopped_by_signal
from nlpbench.cli.db import db_session, open_db
from nlpbench.cli.options import (
    DB_OPTION,
    PLATFORM_PORT,
    LogLevel,
    any_profile_option,
    host_option,
    log_level_option,
    port_option,
)
from nlpbench.cli.sandboxing import DISK_OPTION, RUNTIME_OPTION, SANDBOX_OPTION, SandboxChoice, sandbox_settings
from nlpbench.store.vocabulary import STATUSES, WINDOWS

if TYPE_CHECKING:
    from nlpbench.store import Store
    from nlpbench.store.submissions import Submission

QUEUE_OPTION = typer.Option("default", "--queue", "-q", help="The queue (its settings: `nlpbench submissions queue`).")


class ListFormat(StrEnum):
    table = "table"
    json = "json"


FORMAT_OPTION = typer.Option(ListFormat.table, "--format", "-f", help="table for people, json for scripts.")


def print_json(data: Any) -> None:
    """``data`` as indented JSON on standard output."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def submit(
    task: str = typer.Option(..., "--task", "-T", help="A PHI type, phi, or a file-scored task."),
    dataset: str = typer.Option(..., "--dataset", "-d", help="NAME or NAME@VERSION."),
    team: str = typer.Option(..., "--team", help="The submitting team."),
    tool: str | None = typer.Option(None, "--tool", help="URL of a running NLP Sandbox tool."),
    predictions: Path | None = typer.Option(
        None, "--predictions", help="A prediction file, or a directory of them (i2b2 XML, brat)."
    ),
    command: str | None = typer.Option(
        None, "--command", help="A tool's command, run in the worker's sandbox; with --archive, its start command."
    ),
    archive: Path | None = typer.Option(
        None,
        "--archive",
        help="The tool's source: a folder (packed as a .tar.gz) or an archive, uploaded and unpacked in the "
        "sandbox, where --command starts it.",
        readable=False,
    ),
    image: str | None = typer.Option(
        None,
        "--image",
        help="An OCI image archive (a file, uploaded), an uploaded image's sha256:…, or REGISTRY/NAME@sha256:… "
        "from a registry the queue names; run by podman.",
    ),
    llm: str | None = typer.Option(
        None,
        "--llm",
        help="An OpenAI-compatible endpoint (…/v1) the organisers run: the worker serves it as a PHI annotator "
        "(`nlpbench serve --llm`) with --model and --template, or for --task deid as a de-identifier "
        "(`nlpbench serve --annotator deidentifier --llm`).",
    ),
    model: str | None = typer.Option(
        None,
        "--model",
        help="The model an LLM tool runs, as the queue's price table names it: its cost is priced by it.",
    ),
    template: str | None = typer.Option(
        None,
        "--template",
        help="With --llm: the prompt template (see `nlpbench llm templates`; default phi-entities-v1).",
    ),
    queue: str = QUEUE_OPTION,
    challenge: str | None = typer.Option(
        None, "--challenge", help="The challenge it is made to, with --phase: the phase decides its queue."
    ),
    phase: str | None = typer.Option(
        None,
        "--phase",
        help="The challenge's phase: refused outside its open window, after its freeze, of a kind it does not "
        "accept, or over its quota.",
    ),
    description: str | None = typer.Option(None, "--description", help="What the tool does, shown on its page."),
    paper: str | None = typer.Option(None, "--paper", help="An http(s) link to the paper describing it."),
    code: str | None = typer.Option(None, "--code", help="An http(s) link to its code."),
    db: str = DB_OPTION,
) -> None:
    """Queue a submission: a tool URL, a command, a source archive, an image or a prediction file, for one task
    and dataset.

    Prints the submission's id; a worker (`nlpbench worker`) validates, annotates and scores it.
    """
    from nlpbench.platform.queue import DIGEST, Request, packed, submit, upload
    from nlpbench.platform.submitted import read_submitted

    name, text = read_submitted(predictions) if predictions is not None else (None, None)
    request = Request(
        team=team,
        task=task,
        dataset=dataset,
        queue=queue,
        tool_url=tool,
        command=command,
        image=image,
        predictions=text,
        predictions_name=name,
        archive="sha256:" + "0" * 64 if archive is not None else None,
        challenge=challenge,
        phase=phase,
        description=description,
        paper_url=paper,
        code_url=code,
        model=model,
        llm_url=llm,
        template=template,
    )
    request.kind  # noqa: B018 - one of the kinds, checked before the database is opened
    store = open_db(db)
    try:
        if archive is not None:
            with packed(archive) as stream:
                request.archive = upload(store, stream, "source", team)
        elif image is not None and Path(image).is_file() and not DIGEST.fullmatch(image):
            with open(image, "rb") as stream:
                request.image = upload(store, stream, "image", team)
        typer.echo(submit(store, request))
    finally:
        store.close()


def list_submissions(
    team: str | None = typer.Option(None, "--team", help="Only this team's."),
    queue: str | None = typer.Option(None, "--queue", "-q", help="Only this queue's."),
    status: str | None = typer.Option(None, "--status", metavar=choices(STATUSES), help="Only those in this status."),
    limit: int = typer.Option(100, "--limit", min=1, max=10000, help="At most this many, newest first."),
    fmt: ListFormat = FORMAT_OPTION,
    db: str = DB_OPTION,
) -> None:
    """List submissions, newest first."""
    from nlpbench.platform.queue import listed
    from nlpbench.platform.views import submission_json

    with db_session(db, readonly=True) as session:
        rows = [
            submission_json(session, s) for s in listed(session, team=team, queue=queue, status=status, limit=limit)
        ]
    if fmt == ListFormat.json:
        return print_json(rows)
    for row in rows:
        progress = f"{row['progress']['done']}/{row['progress']['total']}" if row["progress"]["total"] else "-"
        typer.echo(
            f"{row['id']:>6}  {row['status']:<10} {row['team']:<16} {row['task']:<12} {row['dataset']:<20} "
            f"{progress:>11}  {row['reason']}"
        )
    return None


def show(
    submission: int = typer.Argument(..., help="The submission's id."),
    fmt: ListFormat = FORMAT_OPTION,
    db: str = DB_OPTION,
) -> None:
    """A submission: status and reason, progress, the time of every move, and its results."""
    from nlpbench.platform.queue import get
    from nlpbench.platform.views import submission_json

    with db_session(db, readonly=True) as session:
        data = submission_json(session, get(session, submission), details=True)
    if fmt == ListFormat.json:
        return print_json(data)
    typer.echo(f"submission {data['id']}: {data['status']} — {data['reason']}")
    typer.echo(f"  team {data['team']}, task {data['task']}, dataset {data['dataset']}, queue {data['queue']}")
    if data["progress"]["total"]:
        typer.echo(f"  progress: {data['progress']['done']} of {data['progress']['total']} notes")
    for run in data["sites"]:
        typer.echo(f"  site {run['site']}: {run['status']}, {run['notesDone']} of {run['notesTotal']} notes")
    if data["tool"]:
        tool = data["tool"]
        typer.echo(f"  tool: {tool['name']} {tool['version']} ({tool['type']}, API {tool['apiVersion']})")
    for warning in data["warnings"]:
        typer.echo(f"  warning: {warning}")
    if data["llm"]:
        used = data["llm"]
        cost = f"${used['costUsd']:.4f}" if used["costUsd"] is not None else f"not priced (model {used['model']})"
        typer.echo(
            f"  LLM: {used['notes']} notes ({used['cached']} cached); mentions placed "
            + ", ".join(f"{stage} {n}" for stage, n in used["grounding"].items())
            + f"; tokens {used['tokensIn']} in, {used['tokensOut']} out; latency per note "
            + ", ".join(f"{p} {ms} ms" for p, ms in used["latencyMs"].items())
            + f"; cost {cost}"
        )
    for event in data["events"]:
        typer.echo(f"  {event['at']}  {event['status']:<10} {event['reason']}")
    for result in data["results"]:
        for annotation_type, rows in result["scores"].items():
            overall = [r for r in rows if r.get("label") is None and r.get("average") is None and "f1" in r]
            shown = ", ".join(f"{r['metric']} F1 {r['f1']:.4f}" for r in overall[:4])
            typer.echo(f"  {result['profile']} {annotation_type}: {shown}")
    return None


def _by_organiser(db: str, act: Callable[[Store, str], Submission]) -> Submission:
    """``act(store, by)`` on the store at ``db``, as the organisers' command line: what it moved."""
    store = open_db(db, create=False)
    try:
        return act(store, "organiser (command line)")
    finally:
        store.close()


def cancel(
    submission: int = typer.Argument(..., help="The submission's id."),
    db: str = DB_OPTION,
) -> None:
    """Cancel a submission that has not ended; a worker running it stops at its next heartbeat."""
    from nlpbench.platform import webhooks
    from nlpbench.platform.queue import cancel as cancel_submission

    def cancelled(store: Store, by: str) -> Submission:
        waited: list[int] = []
        done = cancel_submission(store, submission, by=by, waited=waited)
        for ended in waited:  # cancelled while it waited: no worker posts its webhook; the process waits for it
            webhooks.deliver_later(store, ended, webhooks.slots())
        return done

    done = _by_organiser(db, cancelled)
    typer.echo(f"submission {done.id}: {done.status}")


def logs(
    submission: int = typer.Argument(..., help="The submission's id."),
    fmt: ListFormat = FORMAT_OPTION,
    db: str = DB_OPTION,
) -> None:
    """For organisers: every event of a submission and what a tool nlpbench started printed (may hold PHI)."""
    from nlpbench.platform.queue import get
    from nlpbench.platform.views import logs_json

    with db_session(db, readonly=True) as session:
        data = logs_json(session, get(session, submission))
    if fmt == ListFormat.json:
        return print_json(data)
    for event in data["events"]:
        typer.echo(f"{event['at']}  {event['status']:<10} {event['reason']}")
    if data["reason"] is not None:
        typer.echo(f"--- why it ended, in full (its team reads less)\n{data['reason']}")
    for stream, log in data["tool"].items():
        typer.echo(f"--- tool {stream}{' (truncated)' if log['truncated'] else ''}")
        typer.echo(log["content"], nl=False)
    return None


def configure(
    name: str = typer.Argument(..., help="The queue (created when new)."),
    time_budget: float | None = typer.Option(None, "--time-budget", min=0.01, help="Minutes a submission may run."),
    quota: int | None = typer.Option(None, "--quota", min=0, help="Submissions per team and task per window; 0: none."),
    window: str | None = typer.Option(
        None, "--window", metavar=choices(WINDOWS), help="day, week (resets Monday 00:00 UTC) or month."
    ),
    profile: str | None = any_profile_option(None, "The profile results are scored under."),
    api_version_fatal: bool | None = typer.Option(
        None, "--api-version-fatal/--api-version-warn", help="Whether a tool of another apiVersion is INVALID."
    ),
    timeout: float | None = typer.Option(None, "--timeout", min=0.01, help="Seconds per request to a tool."),
    retries: int | None = typer.Option(None, "--retries", min=0, help="Retries of a failed request."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1, help="Requests at once."),
    max_response_bytes: int | None = typer.Option(None, "--max-response-bytes", min=1024, help="Largest response."),
    tool_memory: int | None = typer.Option(None, "--tool-memory", min=1, help="MiB a --command tool may hold."),
    max_attempts: int | None = typer.Option(
        None, "--max-attempts", min=1, help="Claims of one submission (its workers died) before it ends FAILED."
    ),
    tool_hosts: list[str] = typer.Option(
        [],
        "--tool-host",
        help="HOST or HOST:PORT a team's tool URL may name though it is not public, or on a private dataset "
        "(repeat it; the list given replaces the queue's).",
    ),
    no_tool_hosts: bool = typer.Option(False, "--no-tool-hosts", help="Empty the queue's allow-list of tool hosts."),
    registries: list[str] = typer.Option(
        [],
        "--image-registry",
        help="HOST[:PORT] (http://HOST[:PORT] without TLS) a team's REGISTRY/NAME@sha256:… image may come from "
        "(repeat it; the list given replaces the queue's).",
    ),
    no_registries: bool = typer.Option(False, "--no-image-registries", help="Images from uploads only."),
    weak_sandbox: bool | None = typer.Option(
        None,
        "--weak-sandbox/--no-weak-sandbox",
        help="On public datasets only, and only where a worker has no sandbox: run team tools in the unshare "
        "fallback (network and processes isolated, this machine's files visible).",
    ),
    token_budget: int | None = typer.Option(
        None, "--token-budget", min=0, help="Tokens (in and out) an LLM tool's submission may spend; 0: no budget."
    ),
    prices: Path | None = typer.Option(
        None,
        "--prices",
        help='A price table, {"models": {NAME: {"input": …, "output": …}}} in US dollars per million tokens: '
        "the cost of a submission that names a model with --model (it replaces the queue's).",
    ),
    webhook: str | None = typer.Option(
        None, "--webhook", help="URL a worker posts each submission's completion to (signed JSON); '' removes it."
    ),
    webhook_secret: str | None = typer.Option(
        None,
        "--webhook-secret",
        envvar="NLPBENCH_WEBHOOK_SECRET",
        show_envvar=True,
        help="The secret the webhook's X-Nlpbench-Signature is an HMAC-SHA256 with (16+ characters); '' removes it.",
    ),
    deid_steps: Path | None = typer.Option(
        None,
        "--deid-steps",
        help="A JSON list of phi-deidentifier 1.2.0 DeidentificationStep objects (or {deidentificationSteps: "
        "[…]}): what the queue's de-identifiers are asked for and scored against, e.g. a date offset (a "
        "submission keeps the steps of when it was first claimed, for its run and every rescore).",
    ),
    default_deid_steps: bool = typer.Option(
        False, "--default-deid-steps", help="Ask de-identifiers for the default steps (every PHI type's tag)."
    ),
    db: str = DB_OPTION,
) -> None:
    """Show or change a queue's settings (time budget, token budget, prices, de-identification steps, quota,
    profile, request limits, attempts, tool hosts, webhook)."""
    from nlpbench.platform.queue import configure_queue, read_deid_steps
    from nlpbench.toolapi.cost import read_prices

    if tool_hosts and no_tool_hosts:
        raise fail("give --tool-host HOST (the whole list) or --no-tool-hosts, not both")
    if registries and no_registries:
        raise fail("give --image-registry HOST (the whole list) or --no-image-registries, not both")
    if deid_steps is not None and default_deid_steps:
        raise fail("give --deid-steps FILE or --default-deid-steps, not both")
    table = read_prices(prices) if prices is not None else None
    steps = [] if default_deid_steps else read_deid_steps(deid_steps) if deid_steps is not None else None
    store = open_db(db)
    try:
        queue = configure_queue(
            store,
            name,
            time_budget_seconds=time_budget * 60 if time_budget is not None else None,
            quota=quota,
            quota_window=window,
            profile=profile,
            api_version_fatal=api_version_fatal,
            request_timeout=timeout,
            retries=retries,
            concurrency=concurrency,
            max_response_bytes=max_response_bytes,
            tool_memory_bytes=tool_memory * 2**20 if tool_memory is not None else None,
            max_attempts=max_attempts,
            tool_hosts=[] if no_tool_hosts else tool_hosts or None,
            image_registries=[] if no_registries else registries or None,
            weak_sandbox=weak_sandbox,
            token_budget=token_budget,
            prices=table,
            webhook_url=webhook,
            webhook_secret=webhook_secret,
            deid_steps=steps,
        )
    finally:
        store.close()
    quota_text = f"{queue.quota} per team and task per {queue.quota_window}" if queue.quota else "no quota"
    typer.echo(
        f"queue {queue.name}: time budget {queue.time_budget_seconds / 60:g} min, "
        f"token budget {queue.token_budget if queue.token_budget is not None else 'none'}, "
        f"prices for {len(queue.prices)} models, {quota_text}, "
        f"profile {queue.profile}, apiVersion mismatch {'fatal' if queue.api_version_fatal else 'a warning'}, "
        f"timeout {queue.request_timeout:g} s, {queue.retries} retries, concurrency {queue.concurrency}, "
        f"responses up to {queue.max_response_bytes} bytes, "
        f"command tools up to {queue.tool_memory_bytes // 2**20} MiB, "
        f"at most {queue.max_attempts} claims of a submission, "
        f"team tool hosts allowed: {', '.join(queue.tool_hosts) or 'none'}, "
        f"image registries: {', '.join(queue.image_registries) or 'none'}, "
        f"weak sandbox on public data: {'allowed' if queue.weak_sandbox else 'no'}, "
        f"de-identification steps: {_steps_text(queue.deid_steps)}, "
        f"webhook: {_webhook_shown(queue.webhook_url, queue.webhook_secret)}"
    )


def _steps_text(steps: list[dict[str, Any]] | None) -> str:
    """A queue's de-identification steps in a few words: ``default``, or each step's strategy and types."""
    if not steps:
        return "default"
    described = []
    for step in steps:
        key = next(key for key in step if key.endswith("Config"))
        strategy = key.removesuffix("Config")
        if key == "dateOffsetConfig":
            strategy += f" {step[key]['offsetDays']:+d} days"
        types = ",".join(t.removeprefix("text_") for t in step["annotationTypes"])
        described.append(f"{strategy} ({types})")
    return "; ".join(described)


def _webhook_shown(url: str | None, secret: str | None) -> str:
    """The webhook as the settings line shows it: its URL without credentials, whether it is signed, never the
    secret."""
    if url is None:
        return "none"
    from nlpbench.runner.client import checked_url  # httpx and pydantic load only for a webhook to show

    return f"{checked_url(url)} ({'signed' if secret is not None else 'unsigned'})"


def _pairs(values: list[str], what: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, equals, rest = value.partition("=")
        if not equals or not key:
            raise fail(f"{what} {value!r}: give NAME=VALUE")
        pairs[key] = rest
    return pairs


def gold(
    task: str = typer.Argument(..., help="timelines, codiesp, coref, ner, linking, relations or i2b2."),
    dataset: str = typer.Argument(..., help="The dataset's name submissions give."),
    files: list[str] = typer.Option(..., "--file", help="ARGUMENT=PATH: gold=…, all_ids=…, valid_codes=…, key=…"),
    options: list[str] = typer.Option([], "--option", help="ARGUMENT=VALUE fixed for scoring: track=D, mode=…"),
    version: str = typer.Option("1", "--version", help="The gold's version (NAME@VERSION in submissions)."),
    db: str = DB_OPTION,
) -> None:
    """Register the gold of a file-scored task on a dataset, so that --predictions submissions can be scored."""
    from nlpbench.platform.golds import register_gold

    paths = {key: Path(value) for key, value in _pairs(files, "--file").items()}
    store = open_db(db)
    try:
        row = register_gold(store, task, dataset, paths, _pairs(options, "--option"), version)
    finally:
        store.close()
    typer.echo(f"gold of {row.task} for {row.dataset}@{row.version}: {len(row.files)} files, sha256 {row.content_hash}")


def create_key(
    team: str | None = typer.Option(None, "--team", help="A key for this team (sees its own submissions)."),
    organiser: bool = typer.Option(False, "--organiser", help="An organiser's key (sees all, and the logs)."),
    label: str = typer.Option("", "--label", help="What the key is for, shown in the key list."),
    expires: str | None = typer.Option(
        None, "--expires", help="DAYS from now, or an ISO date or time (UTC unless it says) from which it is refused."
    ),
    db: str = DB_OPTION,
) -> None:
    """Make a platform API key and print it (it is stored hashed: this is the only time it is shown)."""
    from nlpbench.platform.keys import create_key as make

    if (team is None) == (not organiser):
        raise fail("give exactly one of --team NAME or --organiser")
    expires_at = future_moment(expires) if expires is not None else None
    with db_session(db) as session:
        typer.echo(make(session, team=team, label=label, expires_at=expires_at))


def future_moment(value: str, option: str = "--expires") -> datetime:
    """``--expires`` (or ``option``): a whole number of days from now, or an ISO date (its midnight) or date and
    time, in UTC unless it says."""
    if value.strip().isdigit():
        return datetime.now(UTC) + timedelta(days=int(value))
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise fail(f"{option} {value[:40]!r}: give DAYS, or a date like 2026-12-31 (or 2026-12-31T18:00)") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def list_keys(
    team: str | None = typer.Option(None, "--team", help="Only this team's."),
    fmt: ListFormat = FORMAT_OPTION,
    db: str = DB_OPTION,
) -> None:
    """List the platform API keys by their public part (never a secret): whose, label, made, expiry, state."""
    from nlpbench.platform.keys import list_keys as listed_keys

    with db_session(db, readonly=True) as session:
        found = listed_keys(session, team=team)
    moment = datetime.now(UTC)
    rows = [
        {
            "key": key.name,
            "role": key.role,
            "team": key.team,
            "label": key.label,
            "createdAt": _when(key.created_at),
            "expiresAt": _when(key.expires_at),
            "revokedAt": _when(key.revoked_at),
            "state": key.state(moment),
        }
        for key in found
    ]
    if fmt == ListFormat.json:
        return print_json(rows)
    for row in rows:
        typer.echo(
            f"{row['key']:<17} {row['state']:<8} {row['team'] or '(organiser)':<20} "
            f"expires {row['expiresAt'] or 'never':<20}  {row['label']}"
        )
    return None


def _when(moment: datetime | None) -> str | None:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z") if moment is not None else None


def revoke_key(
    key: str = typer.Argument(..., help="The key's public part nbp_<prefix> (as listed), or the whole key."),
    db: str = DB_OPTION,
) -> None:
    """Revoke a platform API key: every request with it is refused from now on, as an unknown key is."""
    from nlpbench.platform.keys import revoke_key as revoke

    with db_session(db, create=False) as session:
        revoked = revoke(session, key)
    typer.echo(f"{revoked.name}: revoked")


def serve(
    db: str = DB_OPTION,
    host: str = host_option(),
    port: int = port_option(PLATFORM_PORT),
    log_level: LogLevel = log_level_option(),
) -> None:
    """Serve the platform API (submissions) under http://HOST:PORT/api/v1; every request needs an API key."""
    from nlpbench.api.platform import create_app
    from nlpbench.api.server import run
    from nlpbench.cli.serve import listen

    store = open_db(db, create=False)
    try:
        with listen(host, port) as sock:  # a busy port is one line before anything is printed
            bound = sock.getsockname()[1]
            stderr().print(
                f"platform API at http://{host}:{bound}/api/v1; Ctrl+C to stop", markup=False, soft_wrap=True
            )
            run(create_app(store), sock, log_level=log_level)
    finally:
        store.close()


def worker(
    db: str = DB_OPTION,
    queue: str = QUEUE_OPTION,
    until_idle: bool = typer.Option(False, "--until-idle", help="Exit once nothing in the queue waits or runs."),
    lease: float = typer.Option(60.0, "--lease", min=0.5, help="Seconds a claim lasts without a heartbeat."),
    poll: float = typer.Option(1.0, "--poll", min=0.05, help="Seconds between looks at an empty queue."),
    name: str | None = typer.Option(None, "--name", help="This worker's name (default HOST-PID)."),
    scheduler: str | None = typer.Option(
        None,
        "--scheduler",
        help="A Dask scheduler, e.g. tcp://10.0.0.5:8786: its workers send the notes to --tool URLs "
        "(a --command tool is still annotated from here).",
    ),
    sandbox: SandboxChoice = SANDBOX_OPTION,
    runtime: list[Path] = RUNTIME_OPTION,
    disk: int = DISK_OPTION,
) -> None:
    """Claim submissions of a queue and run them: validate, annotate under the time budget, score.

    A team's tool (a --command submission) runs in a sandbox: bubblewrap unless --sandbox says otherwise; it
    reads nothing of this machine but its runtime (--runtime and the system's libraries), reaches no network
    and never the store. With --sandbox unshare (or no sandbox here) team tools run only on public datasets of
    queues whose organiser allowed the weaker fallback; elsewhere they end FAILED, saying why.

    SIGTERM (or Ctrl+C) stops the worker: the tool it started ends, and the submission in hand goes back to
    the queue at once, for the next worker to take over where it stands. A worker killed outright takes its
    tools with it; the next one on this machine removes what it left.
    """
    from nlpbench.platform.worker import Worker, default_name

    store = open_db(db)

    def said(submission_id: int, status: str) -> None:
        stderr().print(f"submission {submission_id}: {status}", markup=False)

    settings = sandbox_settings(sandbox, runtime, disk)
    running = Worker(store, queue, name or default_name(), lease, poll, said, scheduler=scheduler, sandbox=settings)

    def stopped(cause: BaseException) -> str:
        given = f"; submission {running.given_back} given back to the queue" if running.given_back else ""
        return f"worker: stopped by {cause or 'Ctrl+C'}{given}"

    try:
        with stopped_by_signal(stopped):
            done = running.run(until_idle=until_idle)
    finally:
        store.close()
    stderr().print(f"worker: {done} submissions claimed; queue {queue} is idle", markup=False)


def rescore(
    submission: int = typer.Argument(..., help="The submission's id."),
    profile: str = any_profile_option(..., "The profile to score under."),
    db: str = DB_OPTION,
) -> None:
    """Score a submission's stored predictions again under another profile, without running its tool."""
    from nlpbench.platform.scoring import rescore as rescore_submission

    store = open_db(db, create=False)
    try:
        rows = rescore_submission(store, submission, profile)
    finally:
        store.close()
    typer.echo(f"submission {submission}: scored under profile {profile}: {rows} per-document rows")


REASON_OPTION = typer.Option(..., "--reason", help="Why, in one line: kept in the store and shown to the team.")


def disqualify(submission: int = typer.Argument(..., help="The submission's id."), reason: str = REASON_OPTION,
               db: str = DB_OPTION) -> None:  # fmt: skip
    """Disqualify a submission (it broke the rules): off every leaderboard, the reason kept and shown to its team."""
    _removed(submission, "disqualified", reason, db)


def hide(submission: int = typer.Argument(..., help="The submission's id."), reason: str = REASON_OPTION,
         db: str = DB_OPTION) -> None:  # fmt: skip
    """Hide a submission (a duplicate, a test, a team's request): off every leaderboard, the reason kept."""
    _removed(submission, "hidden", reason, db)


def _removed(submission: int, removal: str, reason: str, db: str) -> None:
    from nlpbench.platform.moderation import remove

    done = _by_organiser(db, lambda store, by: remove(store, submission, removal, reason, by=by))
    typer.echo(f"submission {done.id}: {done.removal} — {done.removal_reason}")


def rerun(submission: int = typer.Argument(..., help="The submission's id.", show_default=False),
          db: str = DB_OPTION) -> None:  # fmt: skip
    """Run a FAILED submission again from the start, without spending its team's quota."""
    from nlpbench.platform.moderation import rerun as run_again

    done = _by_organiser(db, lambda store, by: run_again(store, submission, by=by))
    typer.echo(f"submission {done.id}: {done.status} — {done.reason}")


def requeue(submission: int = typer.Argument(..., help="The submission's id.", show_default=False),
            db: str = DB_OPTION) -> None:  # fmt: skip
    """Take a stuck submission (running past twice its time budget) from its worker and queue it again, without
    spending its team's quota."""
    from nlpbench.platform.admin import requeue as queue_again

    done = _by_organiser(db, lambda store, by: queue_again(store, submission, by=by))
    typer.echo(f"submission {done.id}: {done.status} — {done.reason}")


def workers(
    queue: str | None = typer.Option(None, "--queue", "-q", help="Only this queue's."),
    fmt: ListFormat = FORMAT_OPTION,
    db: str = DB_OPTION,
) -> None:
    """The queue as organisers watch it: each worker's leases, and the submissions stuck past twice their time
    budget (re-queue one with `nlpbench submissions requeue ID`)."""
    from nlpbench.platform.admin import overview
    from nlpbench.platform.queue import now

    with db_session(db, readonly=True) as session:
        view = overview(session, now(), queue)
    if fmt == ListFormat.json:
        return print_json(view)
    for worker in view["workers"]:
        for lease in worker["leases"]:
            state = "expired" if lease["leaseExpired"] else "held"
            stuck = "  STUCK" if lease["stuck"] else ""
            typer.echo(
                f"{worker['name']:<24} {lease['submission']:>6}  {lease['status']:<10} lease {state} "
                f"{lease['leaseExpiresAt']}  {lease['runningSeconds']:g}/{lease['budgetSeconds']:g} s{stuck}"
            )
    if not view["workers"]:
        typer.echo("no worker holds a submission")
    return None


def add_commands(app: typer.Typer) -> None:
    app.command("submit")(submit)
    app.command("worker")(worker)
    app.command("rescore")(rescore)
    group = typer.Typer(
        help="Submissions: list, show, cancel, logs, disqualify, hide, rerun, requeue, workers; queues, golds, "
        "API keys, the API."
    )
    group.command("list")(list_submissions)
    group.command("show")(show)
    group.command("cancel")(cancel)
    group.command("logs")(logs)
    group.command("disqualify")(disqualify)
    group.command("hide")(hide)
    group.command("rerun")(rerun)
    group.command("requeue")(requeue)
    group.command("workers")(workers)
    group.command("queue")(configure)
    group.command("gold")(gold)
    keys = typer.Typer(help="Platform API keys: create, list, revoke.")
    keys.command("create")(create_key)
    keys.command("list")(list_keys)
    keys.command("revoke")(revoke_key)
    group.add_typer(keys, name="keys", no_args_is_help=True)
    group.command("key", help="The same as `submissions keys create`.")(create_key)
    group.command("serve")(serve)
    app.add_typer(group, name="submissions", no_args_is_help=True)
