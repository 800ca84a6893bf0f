"""Engine and sessions for SQLite (embedded default) and PostgreSQL (through asyncpg)."""

import re
import time
from pathlib import Path

import msgspec
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine

from services.common.errors import Unavailable

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
        engine = create_async_engine(url, connect_args={"timeout": 30}, json_serializer=json_text)
        _configure_sqlite(engine, foreign_keys)
        return engine
    # Pre-ping costs a round trip per checkout but survives a database restart
    # without a failed call; the queue's hot path has its own pool (pgqueue.py).
    return create_async_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True, json_serializer=json_text)


def json_text(value) -> str:
    """JSON columns written by msgspec: an import's tree and attempts hold 100,000s of entries,
    which json.dumps writes ten times slower. Not-a-number becomes null (JSON has no NaN)."""
    return msgspec.json.encode(value).decode()


def _configure_sqlite(engine: AsyncEngine, foreign_keys: bool) -> None:
    # pysqlite's own transaction handling defers BEGIN and cannot do BEGIN
    # IMMEDIATE; take it over so every write transaction holds the write lock
    # from its first statement (no upgrade deadlocks between workers).
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_conn, _record):
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA busy_timeout=30000")
        _use_wal(cursor)
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE")


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


def session_factory(engine: AsyncEngine) -> async_sessionmaker:
    return async_sessionmaker(engine, expire_on_commit=False)


def _heads() -> set[str]:
    """The newest migration(s), read from the migration files' own `revision` / `down_revision`
    lines (without loading Alembic: a few hundred ms at every command start)."""
    revisions, parents = set(), set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        revisions.update(re.findall(r"^revision = ['\"](\w+)['\"]", text, re.M))
        parents.update(re.findall(r"^down_revision = ['\"](\w+)['\"]", text, re.M))
    return revisions - parents


def head_revision() -> str:
    return ", ".join(sorted(_heads()))


def _schema_state(connection) -> str:
    """ "" when the database records the newest migration, else what it records instead."""
    heads = _heads()
    if not connection.dialect.has_table(connection, "alembic_version"):
        return "the database has no HEMRA schema"
    current = [row[0] for row in connection.exec_driver_sql("SELECT version_num FROM alembic_version")]
    if len(heads) == 1 and current == list(heads):
        return ""
    return f"the schema is at {', '.join(current) or 'nothing'}, the newest migration is {', '.join(sorted(heads))}"


def _is_at_head(connection) -> bool:
    return _schema_state(connection) == ""


def _alembic_config(connection):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = connection
    return cfg


async def migrate(url: str) -> None:
    """Bring the schema to the newest migration (a no-op when it is there).

    On SQLite, Alembic's batch mode rebuilds a table to alter it (copy, drop,
    rename), which foreign keys would refuse while other tables point at it: the
    migration runs on its own connection with them off, and checks them after.
    """

    def upgrade(connection):
        if _is_at_head(connection):
            return  # the common case, without loading Alembic (a few hundred ms at every command start)
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
    finally:
        await engine.dispose()


def as_outage(exc: Exception) -> Exception:
    """A lost or refused database connection as Unavailable, which callers retry (an executor
    rides out a database restart); any other exception as it is (INTERNAL: a bug)."""
    import asyncpg
    from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

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


def ensure_sqlite_parent(url: str) -> None:
    parsed = make_url(normalize_url(url))
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)


__all__ = ["create_engine", "session_factory", "migrate", "schema_state", "normalize_url", "sqlite_url"]
