"""Settings of the store service."""

import os
from dataclasses import dataclass
from pathlib import Path

from hemra.services.common import errors
from hemra.services.common.settings import hemra_home


@dataclass
class StoreSettings:
    #: SQLAlchemy URL; HEMRA_DATABASE_URL, else the file HEMRA_DATABASE_URL_FILE names (a
    #: secret: the whole URL, password and all), else a SQLite file under HEMRA_HOME.
    database_url: str
    #: Folder of the content-addressed blob store.
    blob_dir: Path
    #: Where the URL came from, as a refusal names it: --database-url, HEMRA_DATABASE_URL,
    #: HEMRA_DATABASE_URL_FILE=PATH or HEMRA_HOME=PATH.
    source: str = "the database URL"

    @classmethod
    def from_env(cls, database_url: str | None = None, home: Path | None = None) -> "StoreSettings":
        home = home or hemra_home()
        url, source = _url(database_url)
        return cls(
            database_url=_with_password(url or f"sqlite:///{home / 'hemra.db'}"),
            blob_dir=Path(os.environ.get("HEMRA_BLOB_DIR") or home / "blobs"),
            source=source or f"HEMRA_HOME={home}",
        )

    @property
    def in_home(self) -> bool:
        """Whether the database is HEMRA_HOME's own SQLite file (no setting named a URL)."""
        return self.source.startswith("HEMRA_HOME=")

    def check(self) -> "StoreSettings":
        """These settings when their URL is one the store can open; else one InvalidArgument
        naming where the URL came from (before anything is opened or created)."""
        from hemra.services.store import db  # not at import: a read served warm needs no SQLAlchemy

        problem = db.url_problem(self.database_url)
        if problem:
            raise errors.InvalidArgument(f"{self.source}: {problem}")
        return self


def _url(given: str | None) -> tuple[str, str]:
    """The database URL and where it came from ("" for neither: the default)."""
    variable = os.environ.get("HEMRA_DATABASE_URL")
    if given:  # the CLI passes HEMRA_DATABASE_URL through when no option named one
        return given, "HEMRA_DATABASE_URL" if given == variable else "--database-url"
    if variable:
        return variable, "HEMRA_DATABASE_URL"
    from_file = _url_file()
    return from_file, f"HEMRA_DATABASE_URL_FILE={os.environ.get('HEMRA_DATABASE_URL_FILE')}" if from_file else ""


def _url_file() -> str:
    path = os.environ.get("HEMRA_DATABASE_URL_FILE")
    if not path:
        return ""
    try:
        url = Path(path).read_text().strip()
    except OSError as exc:
        reason = exc.strerror or exc
        raise errors.InvalidArgument(f"HEMRA_DATABASE_URL_FILE={path}: cannot read it: {reason}") from None
    if not url:
        raise errors.InvalidArgument(f"HEMRA_DATABASE_URL_FILE={path}: the file is empty")
    return url


def _with_password(url: str) -> str:
    """`url` with the password from HEMRA_DATABASE_PASSWORD_FILE when it has none (a secret
    file: the password never sits in an environment variable or a compose file)."""
    path = os.environ.get("HEMRA_DATABASE_PASSWORD_FILE")
    if not path:
        return url
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return url  # malformed: StoreSettings.check says so, naming where it came from
    if parsed.password:
        return url
    try:
        password = Path(path).read_text().strip()
    except OSError as exc:
        reason = exc.strerror or exc
        raise errors.InvalidArgument(f"HEMRA_DATABASE_PASSWORD_FILE={path}: cannot read it: {reason}") from None
    return parsed.set(password=password).render_as_string(hide_password=False)
