"""Settings of the store service."""

import os
from dataclasses import dataclass
from pathlib import Path

from services.common import errors
from services.common.settings import hemra_home


@dataclass
class StoreSettings:
    #: SQLAlchemy URL; HEMRA_DATABASE_URL, else the file HEMRA_DATABASE_URL_FILE names (a
    #: secret: the whole URL, password and all), else a SQLite file under HEMRA_HOME.
    database_url: str
    #: Folder of the content-addressed blob store.
    blob_dir: Path

    @classmethod
    def from_env(cls, database_url: str | None = None, home: Path | None = None) -> "StoreSettings":
        home = home or hemra_home()
        url = database_url or os.environ.get("HEMRA_DATABASE_URL") or _url_file() or f"sqlite:///{home / 'hemra.db'}"
        return cls(database_url=_with_password(url), blob_dir=Path(os.environ.get("HEMRA_BLOB_DIR") or home / "blobs"))


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

    parsed = make_url(url)
    if parsed.password:
        return url
    try:
        password = Path(path).read_text().strip()
    except OSError as exc:
        reason = exc.strerror or exc
        raise errors.InvalidArgument(f"HEMRA_DATABASE_PASSWORD_FILE={path}: cannot read it: {reason}") from None
    return parsed.set(password=password).render_as_string(hide_password=False)
