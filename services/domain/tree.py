"""A folder read byte for byte: every file and every folder (empty ones too)."""

import errno
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from hemra.services.common import parsing
from hemra.services.domain.importerrors import ImportProblem
from hemra.services.domain.records import TreeEntry


@dataclass(slots=True)
class Entry:
    path: str
    is_dir: bool
    executable: bool = False
    data: bytes = b""
    #: "sha256:<hex>" of data (files only), computed as the file is read.
    digest: str = ""


#: How much file data read_tree gathers before handing it to `batches`.
BATCH_BYTES = 4 * 1024 * 1024
#: The largest file an import keeps: each file travels to the store whole, in one message of at
#: most hemra.services.common.transport.MAX_MESSAGE_BYTES (256 MiB). A larger one is refused by name before it is read.
MAX_FILE_BYTES = 200 * 1024 * 1024


def read_tree(root: Path, batches: Callable[[list[Entry]], None]) -> list[Entry]:
    """Entries in path order: each folder's subfolders, then its files, then what the subfolders
    hold. Every file is read and hashed once. Symlinks are refused: a copy must not depend on
    the machine. `batches` is called with the files read so far every BATCH_BYTES and once at
    the end, so their bytes can be stored while the rest is read."""
    entries: list[Entry] = []
    batch = _Batch(batches)
    _read_folder(str(root), "", entries, batch)
    batch.flush()
    return entries


class _Batch:
    def __init__(self, sink: Callable[[list[Entry]], None]):
        self.sink = sink
        self.files: list[Entry] = []
        self.size = 0

    def add(self, entry: Entry) -> None:
        self.files.append(entry)
        self.size += len(entry.data)
        if self.size >= BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.files:
            self.sink(self.files)
            self.files, self.size = [], 0


def _read_folder(folder: str, prefix: str, entries: list[Entry], batch: _Batch) -> None:
    # os.scandir with plain strings: pathlib costs more than the reads for 100,000s of small files.
    dirs, files = [], []
    with os.scandir(folder) as listing:
        for item in listing:
            try:
                item.name.encode("utf-8")
            except UnicodeEncodeError:
                shown = item.path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                raise ImportProblem(f"{shown}: a file name that is not UTF-8 cannot be imported") from None
            if item.is_symlink():
                raise ImportProblem(f"{item.path}: symbolic links cannot be imported byte for byte")
            if item.is_dir(follow_symlinks=False):
                dirs.append(item.name)
            elif item.is_file(follow_symlinks=False):
                files.append(item)
            else:
                raise ImportProblem(f"{item.path}: only regular files and folders can be imported")
    dirs.sort()
    files.sort(key=lambda item: item.name)
    entries.extend(Entry(prefix + name, True) for name in dirs)
    for item in files:
        data, mode = _read_file(item.path)
        entries.append(
            Entry(prefix + item.name, False, bool(mode & 0o111), data, "sha256:" + hashlib.sha256(data).hexdigest())
        )
        batch.add(entries[-1])
    for name in dirs:
        _read_folder(os.path.join(folder, name), f"{prefix}{name}/", entries, batch)


def _read_file(path: str) -> tuple[bytes, int]:
    """The bytes and mode of a regular file (never a link, a FIFO or a device), read to its end
    but never past MAX_FILE_BYTES."""
    try:
        return parsing.read_regular(path, MAX_FILE_BYTES)
    except parsing.TooLarge as exc:
        if exc.grew:
            raise ImportProblem(f"{path}: grew past {MAX_FILE_BYTES // 1024 // 1024} MiB while read") from None
        raise ImportProblem(
            f"{path}: {exc.size:,} bytes; an import keeps files of at most {MAX_FILE_BYTES // 1024 // 1024} MiB"
        ) from None
    except parsing.NotRegular:
        # A link here was a file when listed: it was swapped for one since, and is refused too.
        raise ImportProblem(f"{path}: only regular files and folders can be imported") from None


def tree_json(entries: list[Entry]) -> bytes:
    """The entries as a JSON array of hemra.v1.TreeEntry in its JSON form (defaults left out)."""
    rows = []
    for entry in entries:
        if entry.is_dir:
            rows.append({"path": entry.path, "isDir": True})
            continue
        row = {"path": entry.path, "blobDigest": entry.digest}
        if entry.executable:
            row["executable"] = True
        if entry.data:
            row["sizeBytes"] = str(len(entry.data))  # int64 is a string in protobuf's JSON
        rows.append(row)
    return msgspec.json.encode(rows)


def write_tree(entries: list[TreeEntry], blobs: dict[str, bytes], root: Path) -> None:
    """Recreate a tree from its entries."""
    make_folders(entries, root)
    write_files(entries, blobs, root)


def make_folders(entries: list[TreeEntry], root: Path) -> None:
    """Every folder of a tree, parents first."""
    root.mkdir(parents=True, exist_ok=True)
    made = {str(root)}  # folders made so far: one mkdir each, not one per file
    for entry in entries:
        target = os.path.join(root, entry.path)
        _make_folder(target if entry.is_dir else os.path.dirname(target), made)


def write_files(entries: list[TreeEntry], blobs: dict[str, bytes], root: Path, kept=None) -> None:
    """The tree's files, into the folders make_folders made. `kept(digest)`: where that blob is
    already written beside the tree, on the same file system; a plain file is then a hard link to
    it rather than a second copy (an executable one stays a copy: a link shares the blob's mode)."""
    for entry in entries:
        if entry.is_dir:
            continue
        target = os.path.join(root, entry.path)
        if kept is not None and not entry.executable and _linked(kept(entry.blob_digest), target):
            continue
        write_new_file(target, blobs[entry.blob_digest], 0o755 if entry.executable else 0o644)


#: Why a hard link may not be made where a copy can: the blob has the file system's most links
#: (ext4: 65,000, reached by one file common to every trial of a big job), or the file system has none.
_NO_LINK = (errno.EMLINK, errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV)


def _linked(blob: Path, target: str) -> bool:
    try:
        os.link(blob, target)
    except OSError as exc:
        if exc.errno in _NO_LINK:
            return False
        raise
    return True


def write_new_file(path: str, data: bytes, mode: int) -> None:
    """Create `path` (it must not exist) holding `data`, with exactly `mode` whatever the umask:
    plain os calls, as a tree of 100,000 files is written this way."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _make_folder(path: str, made: set[str]) -> None:
    if path not in made:
        os.makedirs(path, exist_ok=True)
        made.add(path)
