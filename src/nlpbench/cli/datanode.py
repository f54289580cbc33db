"""``nlpbench datanode``: serve the store as an NLP Sandbox 1.2.0 data node; manage its API keys."""

from __future__ import annotations

import ipaddress
import os

import typer

from nlpbench.cli.common import fail, stderr
from nlpbench.cli.db import DB_OPTION, db_session, open_db, store_errors

LOCAL_NAMES = ("localhost", "localhost.localdomain")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine."""
    if host.lower() in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@store_errors
def serve(
    db: str = DB_OPTION,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on; beyond localhost only with API keys."),
    port: int = typer.Option(8080, "--port", "-p", min=0, max=65535, help="Port to listen on."),
    log_level: str = typer.Option("info", "--log-level", help="uvicorn's log level: debug, info, warning, error."),
    workers: int = typer.Option(
        1,
        "--workers",
        "-w",
        min=1,
        help="Server processes sharing the port (uvicorn's multi-process mode); about one per CPU core "
        "serves the most reads. Each opens the store itself.",
    ),
) -> None:
    """Serve the store as an NLP Sandbox 1.2.0 data node under http://HOST:PORT/api/v1 (docs at /api/v1/ui).

    When API keys exist (`nlpbench datanode keys create`) every request but the health check needs one,
    in the X-API-Key header; without any, the node listens on localhost only. Whether keys are required
    is decided when the server starts; a revoked key stops working at once.

    With --workers N, N processes accept requests on the same port, so reads use N cores; on SQLite they
    share the file (write-ahead log: readers never wait for the writer, writers queue for the write lock).
    """
    import uvicorn

    from nlpbench.api.datanode.app import REQUIRE_KEYS_VARIABLE
    from nlpbench.store import describe
    from nlpbench.store.engine import ENV_VARIABLE
    from nlpbench.store.keys import count_keys

    store = open_db(db)
    try:
        with store.session(readonly=True) as session:
            keys = count_keys(session)
    finally:
        store.close()
    if not keys and not is_loopback(host):
        raise fail(
            f"--host {host}: without an API key the data node only listens on localhost; "
            "create one with `nlpbench datanode keys create`"
        )
    access = f"{keys} API keys required" if keys else "no API key (localhost only)"
    processes = f", {workers} worker processes" if workers > 1 else ""
    stderr().print(
        f"data node at http://{host}:{port}/api/v1 on {describe(store.url)} — {access}{processes}; Ctrl+C to stop",
        markup=False,
        soft_wrap=True,
    )
    # every worker builds the app itself, from the store this command opened and migrated
    os.environ[ENV_VARIABLE] = store.url
    os.environ[REQUIRE_KEYS_VARIABLE] = "1" if keys else "0"
    factory = "nlpbench.api.datanode.app:app_from_environment"
    uvicorn.run(factory, factory=True, host=host, port=port, log_level=log_level, workers=workers)


@store_errors
def create(
    scope: str = typer.Option("read", "--scope", help="read (GET only) or write (also create and delete)."),
    label: str = typer.Option("", "--label", help="What the key is for, shown by `keys list`."),
    db: str = DB_OPTION,
) -> None:
    """Create an API key and print it: it is stored hashed and cannot be shown again."""
    from nlpbench.store.keys import create_key

    with db_session(db) as session:
        key = create_key(session, scope, label)
    typer.echo(key)
    stderr().print(f"created a {scope} key; keep it now, it is stored only hashed", markup=False)


@store_errors
def list_keys(db: str = DB_OPTION) -> None:
    """List the API keys: prefix, scope, creation time and label (never the secret)."""
    from nlpbench.store.keys import list_keys as listed

    with db_session(db, readonly=True) as session:
        for key in listed(session):
            typer.echo(f"{key.prefix}\t{key.scope}\t{key.created_at:%Y-%m-%dT%H:%M:%SZ}\t{key.label}")


@store_errors
def revoke(prefix: str = typer.Argument(..., help="The key's prefix (its second part)."), db: str = DB_OPTION) -> None:
    """Revoke an API key: it stops working at once."""
    from nlpbench.store.keys import revoke_key

    with db_session(db) as session:
        revoke_key(session, prefix)
    typer.echo(f"revoked {prefix}")


def add_commands(app: typer.Typer) -> None:
    group = typer.Typer(help="Serve the store as an NLP Sandbox data node; its API keys.", no_args_is_help=True)
    group.command("serve")(serve)
    keys = typer.Typer(help="API keys of the data node (stored hashed).", no_args_is_help=True)
    keys.command("create")(create)
    keys.command("list")(list_keys)
    keys.command("revoke")(revoke)
    group.add_typer(keys, name="keys")
    app.add_typer(group, name="datanode")
