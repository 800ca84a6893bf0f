"""Settings every service and the CLI share."""

import os
from pathlib import Path


def hemra_home() -> Path:
    """HEMRA_HOME, default ~/.hemra: the embedded database, blobs, caches and logs."""
    return Path(os.environ.get("HEMRA_HOME") or Path.home() / ".hemra").expanduser()
