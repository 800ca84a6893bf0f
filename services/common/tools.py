"""Where agent CLIs (from npm) and Harbor (from PyPI) are kept, one folder per tool and version: read by the
executors that install them and by the planner, which refuses an offline run (HEMRA_OFFLINE)
whose agent is not there."""

import os
from pathlib import Path

import platformdirs


def tools_dir() -> Path:
    configured = os.environ.get("HEMRA_TOOLS_DIR")
    return Path(configured).expanduser() if configured else platformdirs.user_cache_path("hemra") / "tools"


def installed(agent: str, version: str) -> bool:
    """Whether `agent` at `version` is in the tool cache (an unpinned agent never is: npm picks it)."""
    return bool(version) and (tools_dir() / f"{agent}@{version}").is_dir()
