"""Each executor process keeps its attempts' folders under HEMRA_HOME/work/<host>-<pid>/;
what a killed executor left behind is removed by the next one to start on the machine."""

import os
import shutil
import socket
from pathlib import Path

from hemra.services.executor.processes import alive


def own_work_root(home: Path) -> Path:
    root = home / "work" / f"{socket.gethostname()}-{os.getpid()}"
    root.mkdir(parents=True, exist_ok=True)
    return root


def remove_orphans(home: Path) -> list[Path]:
    """Folders of executor processes of this host that no longer run."""
    removed = []
    work = home / "work"
    prefix = socket.gethostname() + "-"
    for folder in work.iterdir() if work.is_dir() else []:
        name = folder.name
        if not name.startswith(prefix) or not name[len(prefix) :].isdigit():
            continue
        pid = int(name[len(prefix) :])
        if pid != os.getpid() and not alive(pid):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed
