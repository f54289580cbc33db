"""Where the store lives and how to open it: URL, engine, sessions, migrations.

The URL comes from ``--db``, else ``$NLPBENCH_DB``, else a SQLite file in the
per-user data directory (``~/.local/share/nlpbench/nlpbench.db`` on Linux,
``~/Library/Application Support/nlpbench/nlpbench.db`` on macOS,
``%LOCALAPPDATA%\\nlpbench\\nlpbench.db`` on Windows, as ``platformdirs``
says). ``postgresql+psycopg://USER@HOST/DB`` selects PostgreSQL; a
``?options=-csearch_path%3DNAME`` query keeps the tables in one schema.

Opening a store brings an empty or older database up to the newest migration
(Alembic, shipped in ``nlpbench/store/migrations`` and run in process); on
PostgreSQL an advisory lock makes concurrent first uses wait for one another.
A store already at :data:`HEAD_REVISION` is opened without loading Alembic
(0.1 to 0.2 s of CPU, which every platform command paid).
SQLite runs with foreign keys on (for the cascading deletes), write-ahead
logging and a busy timeout, so readers do not block the writer and writers
queue for the write lock. A new SQLite file is private whatever the umask: the
file is made readable and writable by its owner only (0600; SQLite gives its
``-wal`` and ``-shm`` files the same mode) and every folder made for it is 0700,
since it holds notes, gold and key hashes. An existing file keeps its mode.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from nlpbench.errors import InputError

ENV_VARIABLE = "NLPBENCH_DB"
#: The newest migration's revision, which an up-to-date store holds: Alembic's scripts end here
#: (``tests/store/test_repository.py`` checks it against :func:`head_revision`).
HEAD_REVISION = "0380"
#: Where Alembic keeps a store's revision.
_VERSION_TABLE = "alembic_version"
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
#: Any constant: the PostgreSQL advisory lock that serialises migrations.
_MIGRATION_LOCK = 0x6E6C7062
SQLITE_BUSY_SECONDS = 30
#: How long a PostgreSQL connection may take to open.
POSTGRESQL_CONNECT_SECONDS = 10
_READONLY = "nlpbench_readonly"
#: JSON columns (annotation arrays) encoded and decoded by msgspec: several times faster than json.
#: Every engine's options: JSON through msgspec; and no statement's parameters in an error's message (a note's
#: text, an annotation, a key's hash: a database error that reached a log or a problem detail would quote them).
_ENGINE_OPTIONS = {
    "json_serializer": lambda value: msgspec.json.encode(value).decode(),
    "json_deserializer": msgspec.json.decode,
    "hide_parameters": True,
}


def default_path() -> Path:
    """The per-user SQLite file."""
    from platformdirs import user_data_path

    return user_data_path("nlpbench", appauthor=False) / "nlpbench.db"


def resolve_url(url: str | None = None) -> str:
    """``url``, else ``$NLPBENCH_DB``, else the per-user SQLite file."""
    return url or os.environ.get(ENV_VARIABLE) or f"sqlite:///{default_path()}"


def describe(url: str) -> str:
    """The URL without its password, for messages."""
    return make_url(url).render_as_string(hide_password=True)


def make_engine(url: str, *, create: bool = True) -> Engine:
    """The engine of the database at ``url``; a SQLite file (and its folders) is made private first, if it is
    not there and ``create`` says so, else a missing file is :func:`not_a_store`."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise InputError(f"not a database URL: {url!r}", record="--db") from None
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:" and not parsed.query.get("uri"):
            path = Path(parsed.database).expanduser()
            if create:
                make_private_file(path)
            elif not path.is_file():
                raise not_a_store(url)
            parsed = parsed.set(database=str(path))
        engine = create_engine(parsed, connect_args={"timeout": SQLITE_BUSY_SECONDS}, **_ENGINE_OPTIONS)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(connection, _record) -> None:
            connection.isolation_level = None  # transactions are begun below, so that savepoints work
            cursor = connection.cursor()
            cursor.execute("PRAGMA foreign_keys = ON")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(connection) -> None:
            # A writer takes the write lock up front: a deferred transaction that read and then
            # writes fails at once, without waiting, when another writer committed in between.
            readonly = connection.get_execution_options().get(_READONLY, False)
            connection.exec_driver_sql("BEGIN" if readonly else "BEGIN IMMEDIATE")

        return engine
    if parsed.get_backend_name() == "postgresql":
        # A server that does not answer fails a connection in seconds, not after the kernel's minutes of
        # retries: the data node reads notes on its event loop. A timeout in the URL wins.
        connect = {} if "connect_timeout" in parsed.query else {"connect_timeout": POSTGRESQL_CONNECT_SECONDS}
        return create_engine(
            parsed, pool_size=10, max_overflow=60, pool_pre_ping=True, connect_args=connect, **_ENGINE_OPTIONS
        )
    raise InputError(f"unsupported database {parsed.get_backend_name()!r}: use sqlite or postgresql", record="--db")


def make_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600, and each missing folder above it with mode 0700, whatever the umask;
    an existing file or folder is left as it is. (An empty file is an empty SQLite database.)"""
    for folder in reversed([path.parent, *path.parent.parents]):
        if folder.exists():
            continue
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:  # made meanwhile by another process: its mode is its maker's
            continue
        os.chmod(folder, 0o700)  # the umask may have taken bits away from mkdir's mode
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:  # made before: nothing to create
        return
    os.chmod(path, 0o600)


def _alembic_config(connection: Connection) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest migration's revision, as Alembic reads it from the migration scripts."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None  # the package ships its migrations
    return head


@dataclass
class Store:
    """An open store: the engine and a session factory. Make one with :func:`open_store`."""

    url: str
    engine: Engine

    def __post_init__(self) -> None:
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._readers = sessionmaker(self.engine.execution_options(**{_READONLY: True}), expire_on_commit=False)
        autocommit = {"isolation_level": "AUTOCOMMIT"} if self.dialect == "postgresql" else {}
        self._statements = self.engine.execution_options(**{_READONLY: True}, **autocommit)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def session(self, *, readonly: bool = False) -> Iterator[Session]:
        """One transaction: committed when the block ends, rolled back if it raises.

        On SQLite a writing transaction holds the write lock from its start (other writers wait
        up to 30 s); ``readonly=True`` reads a snapshot without waiting for any writer.
        """
        with (self._readers if readonly else self._sessions).begin() as session:
            yield session

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A connection for reads of one Core statement, without the bookkeeping of an ORM session.

        Each statement reads a snapshot of its own: on PostgreSQL it runs in autocommit mode (no
        ``BEGIN`` and ``ROLLBACK`` round trips); on SQLite in a read transaction, as
        ``session(readonly=True)``, rolled back when the block ends. The data node reads notes
        through it, the hottest path it has.
        """
        with self._statements.connect() as connection:
            yield connection

    def revision(self) -> str | None:
        """The revision the store is at (None: no migration applied yet), read from Alembic's version table."""
        with self._statements.connect() as connection:
            if not inspect(connection).has_table(_VERSION_TABLE):  # as Alembic asks: nothing was ever applied
                return None
            held = connection.execute(text(f"SELECT version_num FROM {_VERSION_TABLE}")).scalars().all()
        if len(held) > 1:  # Alembic's branches: nlpbench's migrations never branch
            raise InputError(f"the store holds {len(held)} revisions: migrations that branch", record="--db")
        return held[0] if held else None

    def upgrade(self) -> tuple[str | None, str]:
        """Apply every migration not yet applied; returns (revision before, revision after).

        The revision is read first without a write lock, so that opening a store that is up to date
        never waits for a writer (on SQLite, a worker storing a large result holds the lock for minutes).
        """
        current = self.revision()
        if current == HEAD_REVISION:
            return current, current
        from alembic import command
        from alembic.runtime.migration import MigrationContext

        with self.engine.begin() as connection:
            if self.dialect == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
            before = MigrationContext.configure(connection).get_current_revision()
            if before != head_revision():
                command.upgrade(_alembic_config(connection), "head")
            return before, head_revision()

    def optimize(self) -> None:
        """Refresh the planner's statistics after a bulk load (and, on PostgreSQL, the visibility map,
        so that counting and skipping rows reads the indexes alone)."""
        if self.dialect == "postgresql":
            with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                for table in ("patients", "notes", "annotations"):
                    connection.exec_driver_sql(f"VACUUM (ANALYZE) {table}")
        else:
            with self.engine.begin() as connection:
                connection.exec_driver_sql("ANALYZE")

    def close(self) -> None:
        self.engine.dispose()


def not_a_store(url: str) -> InputError:
    """What refuses a store that is not there: its URL without the password, and the command that makes one."""
    return InputError(f"no store here: make one with `nlpbench db upgrade --db {describe(url)}`", describe(url))


def open_store(url: str | None = None, *, upgrade: bool = True, create: bool = True) -> Store:
    """Open the store at ``url`` (see :func:`resolve_url`), migrating it to the newest revision unless told not to.

    With ``create=False`` (what a command that only reads asks) nothing is made: a SQLite file that is not
    there, or a database (file or PostgreSQL) that answers but holds no nlpbench tables, is refused
    (:func:`not_a_store`). An unreachable server or unusable file is an :class:`InputError` naming the URL
    without its password.
    """
    url = resolve_url(url)
    store = Store(url, make_engine(url, create=create))
    try:
        if not create and store.revision() is None:
            raise not_a_store(url)
        if upgrade:
            store.upgrade()
    except OperationalError as error:
        store.close()
        reason = str(error.orig).strip().splitlines()[0] if error.orig else type(error).__name__
        raise InputError(f"cannot open the database: {reason}", describe(url)) from None
    except InputError:
        store.close()
        raise
    return store
