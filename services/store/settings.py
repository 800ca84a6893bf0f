"""Settings of the store service."""

import os
from dataclasses import dataclass
from pathlib import Path

from services.common.settings import hemra_home


@dataclass
class StoreSettings:
    #: SQLAlchemy URL; HEMRA_DATABASE_URL, else a SQLite file under HEMRA_HOME.
    database_url: str
    #: Folder of the content-addressed blob store.
    blob_dir: Path

    @classmethod
    def from_env(cls, database_url: str | None = None, home: Path | None = None) -> "StoreSettings":
        home = home or hemra_home()
        url = database_url or os.environ.get("HEMRA_DATABASE_URL") or f"sqlite:///{home / 'hemra.db'}"
        return cls(database_url=url, blob_dir=Path(os.environ.get("HEMRA_BLOB_DIR") or home / "blobs"))
