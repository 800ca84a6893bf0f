"""A folder read byte for byte: every file and every folder (empty ones too)."""

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from services.importer.errors import ImportProblem


@dataclass
class Entry:
    path: str
    is_dir: bool
    executable: bool = False
    data: bytes = b""


def read_tree(root: Path) -> list[Entry]:
    """Entries in path order. Symlinks are refused: a copy must not depend on the machine."""
    entries = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        base = Path(folder)
        for name in dirs:
            path = base / name
            if path.is_symlink():
                raise ImportProblem(f"{path}: symbolic links cannot be imported byte for byte")
            entries.append(Entry(path.relative_to(root).as_posix(), True))
        for name in sorted(files):
            path = base / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode) or not stat.S_ISREG(mode):
                raise ImportProblem(f"{path}: only regular files and folders can be imported")
            entries.append(Entry(path.relative_to(root).as_posix(), False, bool(mode & 0o111), path.read_bytes()))
    return entries


def write_tree(entries, blobs: dict[str, bytes], root: Path) -> None:
    """Recreate a tree from (path, is_dir, executable, blob digest) entries."""
    root.mkdir(parents=True, exist_ok=True)
    for entry in entries:
        target = root / entry["path"]
        if entry.get("isDir"):
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blobs[entry["blobDigest"]])
        target.chmod(0o755 if entry.get("executable") else 0o644)
