"""Databases a command cannot use (issue 31, item 9), through the real `hemra` command: a
malformed URL, a schema newer than the code, a read-only PostgreSQL user, a read command given a
SQLite file that is not there. Each is one line and a non-zero exit, and the store is left as it
was (each ended in a traceback, or created folders and an empty database)."""

import asyncio
import json
import os
import secrets

import asyncpg
import pytest
from typer.testing import CliRunner

from hemra.clients.cli.main import app
from hemra.services.store import db
from tests.e2e.helpers import hemra


def one_line(result, code: int) -> str:
    assert result.returncode == code, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.fixture
def cli(hemra_env, monkeypatch):
    """`hemra ARGS` in this process (typer's runner) with hemra_env's settings: (exit, output)."""
    for name in [n for n in os.environ if n.startswith("HEMRA_")]:
        monkeypatch.delenv(name)
    for name, value in hemra_env.items():
        monkeypatch.setenv(name, value)

    def invoke(*args: str, **env: str) -> tuple[int, str]:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        result = CliRunner().invoke(app, list(args))
        return result.exit_code, result.output

    return invoke


@pytest.mark.parametrize(
    "url",
    [
        "notaurl",
        "postgresql://hemra:s3cret@db:abc/hemra",
        "mysql://hemra:s3cret@db/hemra",
        "postgresql://hemra:s3cret@db:99999/hemra",
        "sqlite://",
    ],
)
def test_malformed_database_url__one_line_naming_where_it_came_from(cli, url):
    for args in (["runs"], ["run", "-H", "oracle", "-d", "hemra-offline", "--detach"], ["db", "upgrade"]):
        code, output = cli(*args, HEMRA_DATABASE_URL=url)
        assert code == 2 and output.count("\n") == 1 and output.startswith("error: HEMRA_DATABASE_URL: "), output
        assert "s3cret" not in output
    code, output = cli("db", "upgrade", "--database-url", url, HEMRA_DATABASE_URL="")
    assert code == 2 and output.count("\n") == 1 and output.startswith("error: --database-url: "), output
    assert "s3cret" not in output


def test_malformed_database_url_in_a_secret_file__named_by_its_variable(cli, tmp_path):
    (tmp_path / "url").write_text("postgresql://hemra:s3cret@db:abc/hemra\n")
    code, output = cli("runs", HEMRA_DATABASE_URL_FILE=str(tmp_path / "url"))
    assert code == 2 and output == (
        f"error: HEMRA_DATABASE_URL_FILE={tmp_path / 'url'}: not a database URL the store can open "
        "(expected sqlite:///PATH or postgresql://USER@HOST:PORT/DATABASE)\n"
    )


def test_malformed_database_url__the_store_service_alone_says_one_line(tmp_path):
    """`python -m hemra.services.store` (a deployment's store) ended in a ValueError traceback."""
    import subprocess
    import sys

    env = {"PATH": os.environ["PATH"], "HEMRA_HOME": str(tmp_path), "HEMRA_TOKEN": "t" * 32}
    result = subprocess.run(
        [sys.executable, "-m", "hemra.services.store", "--listen", "127.0.0.1:0"],
        env={
            **env,
            "HEMRA_DATABASE_URL": "postgresql://hemra:s3cret@[::1/hemra",
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    errors = [line for line in result.stderr.splitlines() if "WARNING" not in line and "one token" not in line]
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert errors == [
        "error: HEMRA_DATABASE_URL: not a database URL the store can open "
        "(expected sqlite:///PATH or postgresql://USER@HOST:PORT/DATABASE)"
    ], result.stderr


def test_read_command_on_a_sqlite_file_that_is_not_there__refused_nothing_created(cli, tmp_path, monkeypatch):
    missing = tmp_path / "no" / "such" / "dir" / "x.db"
    monkeypatch.chdir(tmp_path)
    for args in (["runs"], ["show", "some-run"], ["compare", "a", "b"], ["export", "some-run", "--out", "out"]):
        code, output = cli(*args, HEMRA_DATABASE_URL=f"sqlite:///{missing}")
        assert code == 2 and output == (
            f"error: HEMRA_DATABASE_URL: no store at {missing}: nothing has been recorded there yet "
            "(this command creates none; hemra run or hemra import records the first)\n"
        )
    assert not (tmp_path / "no").exists() and not (tmp_path / "out").exists()


def test_read_command_on_the_homes_own_store__lists_nothing(hemra_env):
    # HEMRA_HOME's own store is another matter: a first `hemra runs` lists nothing.
    listed = hemra(hemra_env, "runs", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == [], listed.stderr


async def _set_revision(url: str, revision: str) -> None:
    from sqlalchemy import text

    engine = db.create_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("UPDATE alembic_version SET version_num = :r"), {"r": revision})
    finally:
        await engine.dispose()


async def _tables_and_revision(url: str) -> tuple[list[str], list[str]]:
    from sqlalchemy import inspect, text

    engine = db.create_engine(url)
    try:
        async with engine.connect() as conn:
            tables = sorted(await conn.run_sync(lambda c: inspect(c).get_table_names()))
            revision = [r[0] for r in await conn.execute(text("SELECT version_num FROM alembic_version"))]
    finally:
        await engine.dispose()
    return tables, revision


def test_schema_newer_than_the_code__one_line_and_the_store_untouched(hemra_env, database_url):
    env = dict(hemra_env, HEMRA_DATABASE_URL=database_url)
    assert hemra(env, "db", "upgrade").returncode == 0
    asyncio.run(_set_revision(database_url, "9999_from_a_newer_hemra"))
    before = asyncio.run(_tables_and_revision(database_url))
    expected = (
        "error: the store's schema is at revision 9999_from_a_newer_hemra, newer than this HEMRA knows "
        f"(its newest is {db.head_revision()}): use the HEMRA that migrated it, or a newer one"
    )
    for args in (["runs"], ["run", "-H", "oracle", "-d", "hemra-offline", "--detach"], ["db", "upgrade"]):
        assert one_line(hemra(env, *args), 2) == expected
    assert asyncio.run(_tables_and_revision(database_url)) == before


@pytest.fixture
def read_only_user(postgres_url):
    """postgres_url's database, at head, with one run, and a user who may only read it."""
    role = "hemra_reader_" + secrets.token_hex(4)
    admin = db.asyncpg_dsn(db.normalize_url(postgres_url))

    async def sql(*statements: str) -> None:
        conn = await asyncpg.connect(admin)
        try:
            for statement in statements:
                await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(sql(f"CREATE ROLE {role} LOGIN"))
    try:
        yield role, sql
    finally:
        asyncio.run(sql(f"DROP OWNED BY {role}", f"DROP ROLE {role}"))


@pytest.mark.postgres
def test_read_only_postgresql_user__reads_and_one_line_for_a_write(hemra_env, postgres_url, read_only_user, tmp_path):
    role, sql = read_only_user
    env = dict(hemra_env, HEMRA_DATABASE_URL=postgres_url)
    recorded = hemra(env, "run", "-H", "oracle", "-d", "hemra-offline", "-t", "hemra/text-stats", "--label", "kept")
    assert recorded.returncode == 0, recorded.stderr
    asyncio.run(sql(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}"))
    reader = dict(env, HEMRA_DATABASE_URL=postgres_url.replace("://root@", f"://{role}@"))
    database = postgres_url.rsplit("/", 1)[1]
    listed = hemra(reader, "runs", "--json")
    assert listed.returncode == 0 and [r["label"] for r in json.loads(listed.stdout)] == ["kept"], listed.stderr
    for args in (["run", "-H", "oracle", "-d", "hemra-offline", "--detach"], ["cancel", "kept"]):
        line = one_line(hemra(reader, *args), 1)
        assert line.startswith(
            f"error: the store cannot use the PostgreSQL database {database} on 127.0.0.1:5432: "
            "HEMRA's database user lacks a privilege (permission denied for table "
        )
    assert [r["label"] for r in json.loads(hemra(env, "runs", "--json").stdout)] == ["kept"]
