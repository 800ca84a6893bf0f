"""Engine and sessions for SQLite (embedded default) and PostgreSQL (through asyncpg)."""

import errno
import os
import re
import sqlite3
import time
from pathlib import Path

import msgspec
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine

from hemra.services.common.errors import FailedPrecondition, StoreUnwritable, Unavailable

MIGRATIONS = Path(__file__).parent / "migrations"


def normalize_url(url: str) -> str:
    """Accept the usual spellings and pick the async driver for each database."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        if "sslmode" in parsed.query:  # libpq's spelling (KEDA's too); asyncpg's connect() says ssl
            parsed = parsed.difference_update_query(["sslmode"]).update_query_dict({"ssl": parsed.query["sslmode"]})
        return str(parsed.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False))
    if parsed.get_backend_name() == "sqlite":
        return str(parsed.set(drivername="sqlite+aiosqlite").render_as_string(hide_password=False))
    raise ValueError(f"unsupported database URL {parsed.render_as_string()!r}: use sqlite:/// or postgresql://")


#: What a database URL looks like, as a refusal says it.
URL_FORMS = "sqlite:///PATH or postgresql://USER@HOST:PORT/DATABASE"


def url_problem(url: str) -> str:
    """ "" when `url` is a database URL the store can open, else what is wrong with it (one line,
    never the URL's password)."""
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
        normalize_url(url)
        port = parsed.port
    except (ArgumentError, ValueError):  # ValueError: a port that is no number, another database
        return f"not a database URL the store can open (expected {URL_FORMS})"
    shown = parsed.render_as_string(hide_password=True)
    if parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:"):
        return f"{shown} names no file (expected {URL_FORMS}): a store in memory keeps nothing"
    if port is not None and not 1 <= port <= 65535:
        return f"{shown}: the port must be from 1 to 65535"
    return ""


def asyncpg_dsn(url) -> str:
    """The DSN asyncpg itself takes, for a SQLAlchemy PostgreSQL URL (object or string): its
    DSN parser knows libpq's sslmode (any other query key would become a server setting)."""
    parsed = make_url(url)
    if "ssl" in parsed.query:
        parsed = parsed.difference_update_query(["ssl"]).update_query_dict({"sslmode": parsed.query["ssl"]})
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


def create_engine(url: str, foreign_keys: bool = True) -> AsyncEngine:
    url = normalize_url(url)
    if url.startswith("sqlite"):
        frozen = _on_read_only_media(url)
        options = {"async_creator": lambda: _open_immutable(frozen)} if frozen else {}
        engine = create_async_engine(url, connect_args={"timeout": 30}, json_serializer=json_text, **options)
        _configure_sqlite(engine, foreign_keys, wal=not frozen)
    else:
        # Pre-ping costs a round trip per checkout but survives a database restart
        # without a failed call; the queue's hot path has its own pool (pgqueue.py).
        engine = create_async_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True, json_serializer=json_text)
    _name_place(engine)
    return engine


def _name_place(engine: AsyncEngine) -> None:
    """Every error of `engine`'s statements (and commits) carries where its data lives, so the
    store's error boundary (as_outage) can name the path or database that refused a write. The
    error itself stays SQLAlchemy's: code that may do without a write (settled.keep) catches it."""
    where = place(engine.url)

    @event.listens_for(engine.sync_engine, "handle_error")
    def _on_error(context):
        if context.sqlalchemy_exception is not None:
            context.sqlalchemy_exception.store_place = where


def json_text(value) -> str:
    """JSON columns written by msgspec: an import's tree and attempts hold 100,000s of entries,
    which json.dumps writes ten times slower. Not-a-number becomes null (JSON has no NaN)."""
    return msgspec.json.encode(value).decode()


def _on_read_only_media(url: str) -> str:
    """The SQLite file `url` names when it lives on a read-only file system (a read-only mount),
    else "". SQLite cannot open a WAL database there (it would create its -shm index), but
    nothing can change the file either: it is opened immutable, and reads as it is."""
    path = make_url(url).database
    if not path or path == ":memory:" or not os.path.isfile(path):
        return ""
    return path if _read_only_fs(os.path.dirname(os.path.abspath(path))) else ""


async def _open_immutable(path: str):
    import aiosqlite

    return await aiosqlite.connect(f"{Path(path).absolute().as_uri()}?mode=ro&immutable=1", uri=True, timeout=30)


def _configure_sqlite(engine: AsyncEngine, foreign_keys: bool, wal: bool = True) -> None:
    # pysqlite's own transaction handling defers BEGIN and cannot do BEGIN
    # IMMEDIATE; take it over so every write transaction holds the write lock
    # from its first statement (no upgrade deadlocks between workers).
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_conn, _record):
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA busy_timeout=30000")
        if wal:  # an immutable file is read as it is
            _use_wal(cursor)
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn):
        # A reading transaction (reading(engine)) takes no lock: WAL gives it a snapshot while
        # others write. Were it IMMEDIATE, concurrent reads would queue for the one write lock,
        # each loser sleeping in SQLite's busy handler (up to 100 ms a try) while others went
        # ahead: seconds for some requests of a dashboard read by a few clients at once.
        conn.exec_driver_sql("BEGIN" if conn.get_execution_options().get(READING) else "BEGIN IMMEDIATE")


def _use_wal(cursor) -> None:
    """Put the database in WAL mode (it stays so: later connections find it there). Setting the
    mode takes a lock without waiting on the busy handler, so a connection opened while another
    process writes could fail with "database is locked": the mode is read first, and set (with
    retries) only on a database that is not in WAL mode yet."""
    deadline = time.monotonic() + 30
    while True:
        try:
            cursor.execute("PRAGMA journal_mode")
            if cursor.fetchone()[0].lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except Exception as exc:  # the driver's OperationalError, through the async adapter
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


#: The execution option of an engine whose transactions only read (reading()).
READING = "hemra_reading"


def reading(engine: AsyncEngine) -> AsyncEngine:
    """`engine` (the same pool) for transactions that only read: on SQLite they begin deferred,
    not IMMEDIATE, so they neither wait for nor hold up each other or a writer."""
    return engine.execution_options(**{READING: True})


def session_factory(engine: AsyncEngine) -> async_sessionmaker:
    return async_sessionmaker(engine, expire_on_commit=False)


def _revisions() -> tuple[set[str], set[str]]:
    """Every migration this code has, and those a later one follows, read from the migration
    files' own `revision` / `down_revision` lines (without loading Alembic: a few hundred ms
    at every command start)."""
    revisions, parents = set(), set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        revisions.update(re.findall(r"^revision = ['\"](\w+)['\"]", text, re.M))
        parents.update(re.findall(r"^down_revision = ['\"](\w+)['\"]", text, re.M))
    return revisions, parents


def _heads() -> set[str]:
    """The newest migration(s)."""
    revisions, parents = _revisions()
    return revisions - parents


def head_revision() -> str:
    return ", ".join(sorted(_heads()))


def _schema_state(connection) -> str:
    """ "" when the database records the newest migration, else what it records instead."""
    return _schema(connection)[0]


def _schema(connection) -> tuple[str, bool]:
    """(_schema_state, whether a newer HEMRA migrated it: a revision this code does not have,
    so it must neither migrate the store nor use it)."""
    heads = _heads()
    if not connection.dialect.has_table(connection, "alembic_version"):
        return "the database has no HEMRA schema", False
    current = [row[0] for row in connection.exec_driver_sql("SELECT version_num FROM alembic_version")]
    if len(heads) == 1 and current == list(heads):
        return "", False
    unknown = sorted(set(current) - _revisions()[0])
    if unknown:
        return (
            f"the store's schema is at revision {', '.join(unknown)}, newer than this HEMRA knows "
            f"(its newest is {', '.join(sorted(heads))}): use the HEMRA that migrated it, or a newer one"
        ), True
    return (
        f"the schema is at {', '.join(current) or 'nothing'}, the newest migration is {', '.join(sorted(heads))}",
        False,
    )


def _alembic_config(connection):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = connection
    return cfg


def _create_newest(connection) -> bool:
    """Give a database without any of HEMRA's tables the newest schema in one step, stamped at
    the newest migration, and say whether it did. Every migration in turn builds the same
    schema (tests/store/test_migrations.py compares the two on both databases) in several
    times as long, and a new store is every first run's and every test's."""
    from sqlalchemy import inspect, text

    from hemra.services.store.tables import Base

    heads = _heads()
    if len(heads) != 1 or set(inspect(connection).get_table_names()) & set(Base.metadata.tables):
        return False
    Base.metadata.create_all(connection)
    # Alembic's own version table, as its first upgrade would make it.
    connection.exec_driver_sql(
        "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, "
        "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"
    )
    connection.execute(text("INSERT INTO alembic_version (version_num) VALUES (:head)"), {"head": heads.pop()})
    return True


#: The key of the PostgreSQL advisory lock migrations hold ("HEMRA-MG" as a number).
MIGRATION_LOCK = int.from_bytes(b"HEMRA-MG", "big") >> 1


async def migrate(url: str) -> None:
    """Bring the schema to the newest migration (a no-op when it is there).

    On SQLite, Alembic's batch mode rebuilds a table to alter it (copy, drop,
    rename), which foreign keys would refuse while other tables point at it: the
    migration runs on its own connection with them off, and checks them after.
    """

    def upgrade(connection):
        state, newer = _schema(connection)
        if not state:
            return  # the common case, without loading Alembic (a few hundred ms at every command start)
        if connection.dialect.name == "postgresql":
            # Commands started at once on a fresh database would each create the tables, and all
            # but one fail: one migrates while the others wait here, then find it done.
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            state, newer = _schema(connection)
            if not state:
                return
        if newer:
            raise FailedPrecondition(state)
        if _create_newest(connection):
            return
        from alembic import command

        command.upgrade(_alembic_config(connection), "head")
        if connection.dialect.name == "sqlite":
            broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise RuntimeError(f"migration left {len(broken)} rows with broken references: {broken[:3]}")

    engine = create_engine(url, foreign_keys=False)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(upgrade)
    except SQLAlchemyError as exc:  # a store opened in this process (no error boundary between)
        refused = unwritable(exc, place(url))
        if refused is None:
            raise
        raise refused from None
    finally:
        await engine.dispose()


def place(url) -> str:
    """Where a database URL's data lives, as an error names it (never with its password): a
    SQLite file's path, or a PostgreSQL database and its server."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return parsed.database or ":memory:"
    return f"the PostgreSQL database {parsed.database or ''} on {parsed.host or 'localhost'}:{parsed.port or 5432}"


#: SQLite's primary result codes for a write the file refused (the extended code's low byte).
SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN = 8, 10, 13, 14
#: PostgreSQL's SQLSTATEs of a write refused for good: a read-only transaction (a standby, or
#: default_transaction_read_only), a full disk, a user without the privilege.
PG_READ_ONLY, PG_DISK_FULL, PG_NO_PRIVILEGE = "25006", "53100", "42501"
#: Free bytes below which a file system counts as full (SQLite needs a few pages to go on).
FULL_BELOW_BYTES = 1 << 20


def unwritable(exc: BaseException, where: str = "") -> StoreUnwritable | None:
    """StoreUnwritable when `exc` says the store cannot write at `where` (a SQLite file's or a
    blob folder's path, or `place()` of a PostgreSQL URL; "" when not known); else None. One
    line, naming the path whose file system is full or read-only, or the database refusing."""
    if isinstance(exc, StoreUnwritable):
        return exc
    for cause in _chain(exc):
        if isinstance(cause, sqlite3.Error):
            return _sqlite_unwritable(cause, where)
        if isinstance(cause, OSError) and not isinstance(cause, ConnectionError):
            return _os_unwritable(cause, where or "the store")
    state = _sqlstate(exc)
    first = _server_message(exc)
    where = where or "the store's database"
    if state == PG_READ_ONLY:
        return StoreUnwritable(f"the store cannot write: {where} refuses writes (read-only: {first})")
    if state == PG_DISK_FULL:
        return StoreUnwritable(f"the store cannot write: the disk of {where} is full ({first})")
    if state == PG_NO_PRIVILEGE:
        return StoreUnwritable(f"the store cannot use {where}: HEMRA's database user lacks a privilege ({first})")
    return None


def _server_message(exc: BaseException) -> str:
    """The first line of what PostgreSQL said, without the wrappers' class names."""
    import asyncpg

    said = next((c for c in _chain(exc) if isinstance(c, asyncpg.PostgresError)), exc)
    return (str(said).splitlines() or [""])[0][:200]


def _chain(exc: BaseException):
    """`exc`, the driver's error SQLAlchemy wrapped, and what caused each (a few deep)."""
    seen, todo = [], [exc]
    while todo and len(seen) < 6:
        current = todo.pop(0)
        if current is None or any(current is s for s in seen):
            continue
        seen.append(current)
        todo += [getattr(current, "orig", None), current.__cause__]
    return seen


def _sqlite_unwritable(exc: sqlite3.Error, path: str) -> StoreUnwritable | None:
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    text = str(exc)
    known = path not in ("", ":memory:")
    folder = os.path.dirname(os.path.abspath(path)) if known else "the store's database"
    full = f"the store cannot write: the file system holding {folder} is full ({text})"
    read_only = f"the store cannot write: the file system holding {folder} is read-only ({text})"
    if code == SQLITE_FULL or "database or disk is full" in text:
        return StoreUnwritable(full)
    if code == SQLITE_READONLY or "readonly database" in text:
        if not known or _read_only_fs(folder):
            return StoreUnwritable(read_only)
        return StoreUnwritable(f"the store cannot write: {path} is read-only, or its folder ({text})")
    if known and code in (SQLITE_IOERR, SQLITE_CANTOPEN) and _full(folder):  # the WAL or its index
        return StoreUnwritable(full)
    if known and code == SQLITE_CANTOPEN and _read_only_fs(folder):
        return StoreUnwritable(read_only)
    return None


def _os_unwritable(exc: OSError, where: str) -> StoreUnwritable | None:
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StoreUnwritable(f"the store cannot write: the file system holding {where} is full ({reason})")
    if exc.errno == errno.EROFS:
        return StoreUnwritable(f"the store cannot write: the file system holding {where} is read-only ({reason})")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return StoreUnwritable(f"the store cannot write: {exc.filename or where} is not writable ({reason})")
    return None


def _statvfs(folder: str):
    try:
        return os.statvfs(folder)
    except OSError:
        return None


def _full(folder: str) -> bool:
    found = _statvfs(folder)
    return found is not None and found.f_bavail * found.f_frsize < FULL_BELOW_BYTES


def _read_only_fs(folder: str) -> bool:
    found = _statvfs(folder)
    return found is not None and bool(found.f_flag & os.ST_RDONLY)


def as_outage(exc: Exception) -> Exception:
    """A lost or refused database connection as Unavailable, which callers retry (an executor
    rides out a database restart); a write the store's file system or database refuses for good
    as StoreUnwritable, naming where; any other exception as it is (INTERNAL: a bug)."""
    import asyncpg
    from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

    refused = unwritable(exc, getattr(exc, "store_place", ""))
    if refused is not None:
        return refused

    gone = isinstance(exc, (OSError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError, InterfaceError))
    gone = gone or (isinstance(exc, OperationalError) and _is_postgres_outage(exc))
    gone = gone or (isinstance(exc, DBAPIError) and exc.connection_invalidated)
    gone = gone or _sqlstate(exc)[:2] in OUTAGE_SQLSTATE_CLASSES
    if not gone:
        return exc
    first_line = (str(exc).splitlines() or [""])[0][:200]
    return Unavailable(f"the database is unavailable: {type(exc).__name__}: {first_line}")


#: PostgreSQL's error classes that mean the server, not the statement: 08 connection exception,
#: 57 operator intervention (57P01 admin shutdown, 57P02 crash shutdown, 57P03 "the database
#: system is shutting down" or starting up).
OUTAGE_SQLSTATE_CLASSES = ("08", "57")


def _sqlstate(exc) -> str:
    """The SQLSTATE of a PostgreSQL error, raised by asyncpg itself (the queue's own pool) or
    wrapped by SQLAlchemy (its adapted error, caused by asyncpg's); "" for anything else."""
    for candidate in (exc, getattr(exc, "orig", None), getattr(getattr(exc, "orig", None), "__cause__", None)):
        code = getattr(candidate, "sqlstate", None) or getattr(candidate, "pgcode", None)
        if isinstance(code, str) and code:
            return code
    return ""


def _is_postgres_outage(exc) -> bool:
    # SQLite's OperationalErrors are about the statement or the file; PostgreSQL's about the server.
    return type(exc.orig).__module__.startswith(("asyncpg", "sqlalchemy.dialects.postgresql"))


async def schema_state(url: str) -> str:
    """ "" when the schema is at head, else why not (the store serves only then in a deployment,
    where `hemra db upgrade` alone migrates); a database it cannot reach says so too."""
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(_schema_state)
    except (OSError, SQLAlchemyError) as exc:
        return f"the database cannot be read: {type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"
    finally:
        await engine.dispose()


def missing_sqlite_file(url: str) -> str:
    """The path of the SQLite file `url` names when there is none yet, else "" (PostgreSQL, or
    a file that exists): what opening it would create."""
    parsed = make_url(normalize_url(url))
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return ""
    return "" if os.path.exists(parsed.database) else parsed.database


def ensure_sqlite_parent(url: str) -> None:
    parsed = make_url(normalize_url(url))
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        folder = Path(parsed.database).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            refused = unwritable(exc, str(folder))
            if refused is None:
                raise
            raise refused from None


__all__ = ["create_engine", "reading", "session_factory", "migrate", "schema_state", "normalize_url", "sqlite_url"]
