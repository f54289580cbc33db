"""``nlpbench datanode``: serve the store as an NLP Sandbox 1.2.0 data node; manage its API keys."""

from __future__ import annotations

import ipaddress
import os
import re
from datetime import UTC, datetime, timedelta

import typer

from nlpbench.api.limits import BODY_TIMEOUT, HEADER_TIMEOUT
from nlpbench.cli.common import choices, fail, stderr
from nlpbench.cli.db import db_session, open_db
from nlpbench.cli.options import DATANODE_PORT, DB_OPTION, LogLevel, host_option, log_level_option, port_option
from nlpbench.store.vocabulary import SCOPES

LOCAL_NAMES = ("localhost", "localhost.localdomain")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine."""
    if host.lower() in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a name, not an address: not loopback
        return False


def default_base_url(host: str, port: int) -> str:
    """``http://HOST:PORT``, an IPv6 address in brackets: where a client on this machine reaches ``--host``."""
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    return f"http://{shown}:{port}"


def check_base_url(url: str) -> str:
    """``url`` without a trailing slash if it is an http(s) URL of a host with no credentials, query or fragment."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise fail("--base-url: not an http or https URL of a host")  # not repeated: it may hold a password
    if parts.username or parts.password or parts.query or parts.fragment:
        raise fail("--base-url: it starts every links.next, so it holds no credentials, query or fragment")
    return url.rstrip("/")


def serve(
    db: str = DB_OPTION,
    host: str = host_option("Address to listen on; beyond localhost, keys are required."),
    port: int = port_option(DATANODE_PORT),
    base_url: str = typer.Option(
        None,
        "--base-url",
        help="Where clients reach the node, e.g. https://node.example.org (behind a proxy): links.next starts "
        "with it, never with the request's Host header. Default: http://HOST:PORT.",
    ),
    log_level: LogLevel = log_level_option(),
    workers: int = typer.Option(
        1,
        "--workers",
        "-w",
        min=1,
        help="Server processes sharing the port (uvicorn's multi-process mode); about one per CPU core "
        "serves the most reads. Each opens the store itself.",
    ),
    header_timeout: float = typer.Option(
        HEADER_TIMEOUT, "--header-timeout", min=0.1, help="Seconds a client has to send a request's headers."
    ),
    body_timeout: float = typer.Option(
        BODY_TIMEOUT, "--body-timeout", min=0.1, help="Seconds a client has to send a request's body after them."
    ),
) -> None:
    """Serve the store as an NLP Sandbox 1.2.0 data node under http://HOST:PORT/api/v1 (docs at /api/v1/ui).

    Every request but the health check needs an API key (X-API-Key header) as soon as one exists
    (`nlpbench datanode keys create`), checked on every request: a key made, revoked or expired while the
    node runs counts at once. Listening beyond localhost, keys are required from the start, even before
    one exists. A client that does not send its request in time (--header-timeout, --body-timeout)
    is disconnected, so slow clients cannot hold the server's connections.

    With --workers N, N processes accept requests on the same port, so reads use N cores; on SQLite they
    share the file (write-ahead log: readers never wait for the writer, writers queue for the write lock).
    """
    from nlpbench.api.datanode.app import BASE_URL_VARIABLE, REQUIRE_KEYS_VARIABLE
    from nlpbench.api.server import run
    from nlpbench.cli.serve import listen
    from nlpbench.store import describe
    from nlpbench.store.engine import ENV_VARIABLE
    from nlpbench.store.keys import any_key

    store = open_db(db)
    try:
        with store.session(readonly=True) as session:
            keys = any_key(session)
    finally:
        store.close()
    local = is_loopback(host)
    base_url = check_base_url(base_url) if base_url else ""
    sock = listen(host, port)
    bound = sock.getsockname()[1]
    base_url = base_url or default_base_url(host, bound)
    if keys:
        access = "API keys required"
    elif local:
        access = "no API key yet: open to this machine until one is made"
    else:
        access = "API keys required; none exists yet: create one with `nlpbench datanode keys create`"
    processes = f", {workers} worker processes" if workers > 1 else ""
    stderr().print(
        f"data node at {base_url}/api/v1 on {describe(store.url)} — {access}{processes}; Ctrl+C to stop",
        markup=False,
        soft_wrap=True,
    )
    # every worker builds the app itself, from the store this command opened and migrated
    os.environ[ENV_VARIABLE] = store.url
    os.environ[REQUIRE_KEYS_VARIABLE] = "0" if local else "1"
    os.environ[BASE_URL_VARIABLE] = base_url
    with sock:
        run(
            "nlpbench.api.datanode.app:app_from_environment",
            sock,
            factory=True,
            workers=workers,
            log_level=log_level,
            header_timeout=header_timeout,
            body_timeout=body_timeout,
        )


def parse_expiry(text: str, now: datetime | None = None) -> datetime:
    """When a key given ``--expires TEXT`` stops working: ``now`` plus a duration (``90m``, ``12h``, ``30d``,
    ``8w``), or an ISO 8601 date or time (a date means its midnight, a time without a zone is UTC)."""
    now = now or datetime.now(UTC)
    duration = re.fullmatch(r"(\d{1,6})([mhdw])", text.strip())
    if duration:
        unit = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[duration.group(2)]
        return now + timedelta(**{unit: int(duration.group(1))})
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise fail(f"--expires {text!r}: neither a duration (90m, 12h, 30d, 8w) nor an ISO 8601 date or time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def create(
    scope: str = typer.Option(
        "read", "--scope", metavar=choices(SCOPES), help="read (GET only) or write (also create and delete)."
    ),
    label: str = typer.Option("", "--label", help="What the key is for, shown by `keys list`."),
    expires: str = typer.Option(
        None, "--expires", help="When the key stops working: a duration (90m, 12h, 30d, 8w) or an ISO 8601 time."
    ),
    datasets: list[str] = typer.Option(
        None,
        "--dataset",
        help="A dataset the key reaches (repeat for several): it sees no other and may not create one. "
        "Default: every dataset.",
    ),
    db: str = DB_OPTION,
) -> None:
    """Create an API key and print it: it is stored hashed and cannot be shown again."""
    from nlpbench.store.keys import create_key

    expires_at = parse_expiry(expires) if expires else None
    with db_session(db) as session:
        key = create_key(session, scope, label, expires_at=expires_at, datasets=datasets or None)
    typer.echo(key)
    reach = f" for {', '.join(sorted(set(datasets)))} only" if datasets else ""
    until = f", until {_moment(expires_at)}" if expires_at else ""
    stderr().print(
        f"created a {scope} key{reach}{until}; keep it now, it is stored only hashed", markup=False, soft_wrap=True
    )


def _moment(value: datetime | None) -> str:
    return f"{value.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}" if value is not None else "-"


def list_keys(db: str = DB_OPTION) -> None:
    """List the API keys, one a line, tab-separated: prefix, scope, state (active, expired, revoked), created,
    expires, revoked (- when not), datasets (* for every one), label. Never a secret."""
    from nlpbench.store.keys import list_keys as listed

    with db_session(db, readonly=True) as session:
        for key in listed(session):
            datasets = ",".join(key.datasets) if key.datasets is not None else "*"
            moments = (_moment(key.created_at), _moment(key.expires_at), _moment(key.revoked_at))
            typer.echo("\t".join((key.prefix, key.scope, key.state(), *moments, datasets, key.label)))


def revoke(prefix: str = typer.Argument(..., help="The key's prefix (its second part)."), db: str = DB_OPTION) -> None:
    """Revoke an API key: it stops working at once, on running data nodes too; `keys list` still shows it."""
    from nlpbench.store.keys import revoke_key

    with db_session(db, create=False) as session:
        key = revoke_key(session, prefix)
    typer.echo(f"revoked {prefix} at {_moment(key.revoked_at)}")


def add_commands(app: typer.Typer) -> None:
    group = typer.Typer(help="Serve the store as an NLP Sandbox data node; its API keys.", no_args_is_help=True)
    group.command("serve")(serve)
    keys = typer.Typer(help="API keys of the data node (stored hashed).", no_args_is_help=True)
    keys.command("create")(create)
    keys.command("list")(list_keys)
    keys.command("revoke")(revoke)
    group.add_typer(keys, name="keys")
    app.add_typer(group, name="datanode")
