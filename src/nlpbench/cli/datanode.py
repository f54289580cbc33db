"""``nlpbench datanode``: serve the store as an NLP Sandbox 1.2.0 data node; manage its API keys."""

from __future__ import annotations

import ipaddress

import typer

from nlpbench.cli.common import fail, stderr
from nlpbench.cli.db import DB_OPTION, open_db, store_errors

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
) -> None:
    """Serve the store as an NLP Sandbox 1.2.0 data node under http://HOST:PORT/api/v1 (docs at /api/v1/ui).

    When API keys exist (`nlpbench datanode keys create`) every request but the health check needs one,
    in the X-API-Key header; without any, the node listens on localhost only. Whether keys are required
    is decided when the server starts; a revoked key stops working at once.
    """
    import uvicorn

    from nlpbench.api.datanode import Settings, create_app
    from nlpbench.store import describe
    from nlpbench.store.keys import count_keys

    store = open_db(db)
    with store.session(readonly=True) as session:
        keys = count_keys(session)
    if not keys and not is_loopback(host):
        store.close()
        raise fail(
            f"--host {host}: without an API key the data node only listens on localhost; "
            "create one with `nlpbench datanode keys create`"
        )
    app = create_app(store, Settings(require_keys=keys > 0))
    access = f"{keys} API keys required" if keys else "no API key (localhost only)"
    stderr().print(
        f"data node at http://{host}:{port}/api/v1 on {describe(store.url)} — {access}; Ctrl+C to stop",
        markup=False,
        soft_wrap=True,
    )
    try:
        uvicorn.run(app, host=host, port=port, log_level=log_level)
    finally:
        store.close()


@store_errors
def create(
    scope: str = typer.Option("read", "--scope", help="read (GET only) or write (also create and delete)."),
    label: str = typer.Option("", "--label", help="What the key is for, shown by `keys list`."),
    db: str = DB_OPTION,
) -> None:
    """Create an API key and print it: it is stored hashed and cannot be shown again."""
    from nlpbench.store.keys import create_key

    store = open_db(db)
    try:
        with store.session() as session:
            key = create_key(session, scope, label)
    finally:
        store.close()
    typer.echo(key)
    stderr().print(f"created a {scope} key; keep it now, it is stored only hashed", markup=False)


@store_errors
def list_keys(db: str = DB_OPTION) -> None:
    """List the API keys: prefix, scope, creation time and label (never the secret)."""
    from nlpbench.store.keys import list_keys as listed

    store = open_db(db)
    try:
        with store.session(readonly=True) as session:
            for key in listed(session):
                typer.echo(f"{key.prefix}\t{key.scope}\t{key.created_at:%Y-%m-%dT%H:%M:%SZ}\t{key.label}")
    finally:
        store.close()


@store_errors
def revoke(prefix: str = typer.Argument(..., help="The key's prefix (its second part)."), db: str = DB_OPTION) -> None:
    """Revoke an API key: it stops working at once."""
    from nlpbench.store.keys import revoke_key

    store = open_db(db)
    try:
        with store.session() as session:
            revoke_key(session, prefix)
    finally:
        store.close()
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
