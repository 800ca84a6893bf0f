"""Shared fixtures: real databases (a SQLite file and the PostgreSQL server), real gRPC servers."""

import asyncio
import contextlib
import os
import secrets
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEMRA = str(Path(sys.executable).parent / "hemra")
#: An administrative URL of the PostgreSQL server tests may create databases on.
POSTGRES_ADMIN = os.environ.get("HEMRA_TEST_DATABASE_URL", "postgresql://root@127.0.0.1:5432/postgres")


async def _admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(POSTGRES_ADMIN.replace("postgresql+asyncpg://", "postgresql://"), timeout=5)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def postgres_available() -> str | None:
    """None when the server answers, else why not."""
    try:
        asyncio.run(_admin("SELECT 1"))
        return None
    except Exception as exc:  # any failure to reach it is a reason to skip (or fail in CI)
        return f"{type(exc).__name__}: {exc}"


@pytest.fixture(scope="session")
def postgres_server():
    problem = postgres_available()
    if problem:
        if os.environ.get("HEMRA_REQUIRE_POSTGRES"):
            pytest.fail(f"PostgreSQL at {POSTGRES_ADMIN} is required here but unreachable: {problem}")
        pytest.skip(f"PostgreSQL at {POSTGRES_ADMIN} is unreachable: {problem}")
    return POSTGRES_ADMIN


@contextlib.contextmanager
def new_postgres_database(server: str):
    """The URL of a fresh, empty database on `server`, dropped afterwards."""
    name = "hemra_test_" + secrets.token_hex(6)
    asyncio.run(_admin(f"CREATE DATABASE {name}"))
    try:
        yield f"{server.rsplit('/', 1)[0]}/{name}"
    finally:
        asyncio.run(_admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


@pytest.fixture
def postgres_url(postgres_server):
    """A fresh, empty database on the real server, dropped afterwards."""
    with new_postgres_database(postgres_server) as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request, tmp_path):
    """The same tests on a SQLite file and on the real PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'hemra.db'}"
    return request.getfixturevalue("postgres_url")


def clean_env() -> dict[str, str]:
    """This process's environment without HEMRA's settings, and with no warm store: a read
    command must not leave a server behind for minutes after a test (tests/cli/test_warm.py
    covers the warm store, and stops the ones it starts)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEMRA_")}
    env["HEMRA_WARM_STORE"] = "0"
    return env


def pytest_configure(config):
    # In-process commands (typer's CliRunner) read the setting from this process.
    os.environ.setdefault("HEMRA_WARM_STORE", "0")


@pytest.fixture
def hemra_env(tmp_path):
    """Environment for running the `hemra` command against a private HEMRA_HOME."""
    env = clean_env()
    env["HEMRA_HOME"] = str(tmp_path / "home")
    return env


def docker_available() -> str | None:
    """None when the Docker engine answers and has the bundled tasks' base image, else why not."""
    try:
        from hemra.services.environments import engine as sandbox

        sandbox.client().api.inspect_image("debian:bookworm-slim")
        return None
    except Exception as exc:  # any failure to reach it is a reason to skip (or fail in CI)
        return f"{type(exc).__name__}: {exc} (run scripts/setup-docker.sh)"


@pytest.fixture(scope="session")
def docker_engine():
    problem = docker_available()
    if problem:
        if os.environ.get("HEMRA_REQUIRE_DOCKER"):
            pytest.fail(f"the Docker engine is required here but unusable: {problem}")
        pytest.skip(f"no usable Docker engine: {problem}")
    from hemra.services.environments import engine as sandbox

    return sandbox.client()
