"""Folders that travel as blobs (hemra.v1.SentFolder).

A CLI far from its deployment sends a folder (results to import, a dataset, a harness's
folder) as content-addressed blobs, only those the store lacks, plus one blob listing it:
a JSON array of hemra.v1.TreeEntry, the same listing an import keeps of its files. The
service that needs the folder writes it back under its own cache, once per listing. A
listing is input from another machine: its name, every path, type, size and digest in it
and every blob's bytes are checked before anything is written, the tree is written into a
fresh temporary folder, and only a whole, checked tree is moved into place.
"""

import asyncio
import os
import re
import shutil
import tempfile
from pathlib import Path

import msgspec

from hemra.services.common import errors
from hemra.services.digests import sha256
from hemra.services.domain.records import TreeEntry
from hemra.services.domain.tree import MAX_FILE_BYTES, Entry, make_folders, read_tree, tree_json, write_new_file
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_SIZE = re.compile(r"0|[1-9][0-9]{0,11}")
#: Blobs asked for in one GetBlobs call while a folder is written back (their size is bounded
#: by the listing's sizes: a batch stops growing past BATCH_BYTES).
BATCH_BYTES = 32 * 1024 * 1024
#: The most entries a listing may hold (a big Harbor job has some 100,000 files).
MAX_ENTRIES = 1_000_000
#: The longest path in a listing, and the longest name of one file or folder (Linux's limits).
MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255


class FolderProblem(errors.InvalidArgument):
    """A sent folder that cannot be written back as it is (the message says why)."""


class _Entry(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """A listing's row as sent: the JSON form of hemra.v1.TreeEntry, checked before it is used."""

    path: str
    blob_digest: str = ""
    is_dir: bool = False
    executable: bool = False
    size_bytes: str = "0"  # int64 is a string in protobuf's JSON


async def upload_blobs(store, batches: "asyncio.Queue[list[Entry] | None]") -> None:
    """Put the bytes of every file batch from `batches` (until None) in the blob store, each
    distinct blob once. One batch is in flight at a time: on 2 CPUs two store threads creating
    files contend, while the reader fills the next batch."""
    asked: set[str] = set()
    while (files := await batches.get()) is not None:
        fresh = {e.digest for e in files} - asked
        asked |= fresh
        if not fresh:
            continue
        missing = set((await store.FindMissingBlobs(spb.FindMissingBlobsRequest(digests=sorted(fresh)))).missing)
        blobs = []
        for entry in files:
            if entry.digest in missing:
                missing.discard(entry.digest)
                blobs.append(spb.Blob(digest=entry.digest, data=entry.data))
        if blobs:
            await store.PutBlobs(spb.PutBlobsRequest(blobs=blobs))


async def send(store, root: Path, ref: str = "", file: str = "") -> pb.SentFolder:
    """Send the folder at `root` through `store` (a transport client): its files' blobs the
    store lacks while it is read, then its listing. `ref` and `file` are what the request
    names (see hemra.v1.SentFolder)."""
    batches: asyncio.Queue = asyncio.Queue()
    upload = asyncio.create_task(upload_blobs(store, batches))
    loop = asyncio.get_running_loop()
    try:
        entries = await asyncio.to_thread(
            read_tree, root, lambda files: loop.call_soon_threadsafe(batches.put_nowait, files)
        )
    except BaseException:
        upload.cancel()
        await asyncio.gather(upload, return_exceptions=True)
        raise
    finally:
        batches.put_nowait(None)
    await upload
    listing = tree_json(entries)
    digest = sha256(listing)
    await store.PutBlobs(spb.PutBlobsRequest(blobs=[spb.Blob(digest=digest, data=listing)]))
    return pb.SentFolder(ref=ref or str(root), tree_digest=digest, name=root.name, file=file)


async def receive(store, folder: pb.SentFolder, cache: Path) -> Path:
    """The local path `folder` stands for: its tree written back under `cache` (once per
    listing and name; later calls reuse it), then its `file` when it names one. FolderProblem
    (INVALID_ARGUMENT) names what is wrong with a folder that cannot be written back as sent."""
    if not _DIGEST.fullmatch(folder.tree_digest):
        raise _problem(folder, f"tree_digest {folder.tree_digest[:80]!r} is not sha256:<hex>")
    name = _name(folder.name or "folder", folder, "name")
    file = [_name(part, folder, "file") for part in folder.file.split("/")] if folder.file else []
    target = cache / folder.tree_digest.removeprefix("sha256:")
    if not (target / name).is_dir():
        blobs = await _blobs(store, [folder.tree_digest], folder)
        entries = _listing(folder, blobs[folder.tree_digest], "/".join(file))
        await _write_back(store, folder, entries, target, name)
    path = target.joinpath(name, *file)
    if file and not path.is_file():  # a copy written before files were checked against the listing
        raise _problem(folder, f"file {folder.file[:200]!r} is not a file of the folder")
    return path


def _problem(folder: pb.SentFolder, what: str) -> FolderProblem:
    return FolderProblem(f"sent folder {folder.ref[:200]!r}: {what}")


def _name(part: str, folder: pb.SentFolder, field: str) -> str:
    """One file or folder name that stays inside the folder it is written under: never a
    separator, ".", "..", NUL, an absolute path or a name longer than a file system takes."""
    if part in ("", ".", "..") or "/" in part or "\\" in part or "\0" in part or len(part.encode()) > MAX_NAME_BYTES:
        raise _problem(folder, f"{field} {part[:200]!r} is not a file or folder name")
    return part


def _listing(folder: pb.SentFolder, data: bytes, file: str) -> list[TreeEntry]:
    """The listing's entries, every one checked: a relative path of plain names, listed once,
    under a folder the listing holds; a folder, or a file with a digest and a size in bounds."""
    try:
        rows = msgspec.json.decode(data, type=list[_Entry])
    except msgspec.DecodeError as exc:  # not JSON, or not TreeEntry rows
        raise _problem(folder, f"its listing is not a list of TreeEntry: {str(exc)[:200]}") from None
    if len(rows) > MAX_ENTRIES:
        raise _problem(folder, f"its listing holds {len(rows):,} entries; at most {MAX_ENTRIES:,}")
    seen: set[str] = set()
    for row in rows:
        _check_path(row.path, folder)
        if row.path in seen:
            raise _problem(folder, f"{row.path[:200]!r} is listed twice")
        seen.add(row.path)
        if not row.is_dir:
            _check_file(row, folder)
        elif row.blob_digest or row.executable or row.size_bytes != "0":
            raise _problem(folder, f"{row.path[:200]!r} is a folder with a blob, a mode or a size")
    folders = {""} | {row.path for row in rows if row.is_dir}
    for row in rows:  # a listing may name a folder after what it holds: checked once all are known
        parent = row.path.rpartition("/")[0]
        if parent not in folders:
            under = "a file" if parent in seen else "a folder the listing does not hold"
            raise _problem(folder, f"{row.path[:200]!r} is under {under}")
    if file and (file not in seen or file in folders):
        raise _problem(folder, f"file {file[:200]!r} is not a file of the folder")
    return [TreeEntry(r.path, r.is_dir, r.executable, r.blob_digest, int(r.size_bytes)) for r in rows]


def _check_path(path: str, folder: pb.SentFolder) -> None:
    if len(path.encode()) > MAX_PATH_BYTES:
        raise _problem(folder, f"{path[:200]!r}...: a path longer than {MAX_PATH_BYTES} bytes")
    for part in path.split("/"):
        _name(part, folder, f"entry {path[:200]!r}:")


def _check_file(row: _Entry, folder: pb.SentFolder) -> None:
    if not _DIGEST.fullmatch(row.blob_digest):
        raise _problem(folder, f"{row.path[:200]!r}: blobDigest is not sha256:<hex>")
    if not _SIZE.fullmatch(row.size_bytes) or int(row.size_bytes) > MAX_FILE_BYTES:
        raise _problem(
            folder, f"{row.path[:200]!r}: sizeBytes {row.size_bytes[:40]!r} is not a size of at most {MAX_FILE_BYTES:,}"
        )


async def _write_back(store, folder: pb.SentFolder, entries: list[TreeEntry], target: Path, name: str) -> None:
    """Write the tree into a fresh folder beside `target`, a batch of checked blobs at a time,
    then move it in place (a reader never sees half a folder; of two writers racing, one wins
    and the other's copy goes)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
    try:
        await asyncio.to_thread(make_folders, entries, staging / name)
        by_blob: dict[str, list[TreeEntry]] = {}
        for entry in entries:
            if not entry.is_dir:
                by_blob.setdefault(entry.blob_digest, []).append(entry)
        for digests in _batches(by_blob):
            blobs = await _blobs(store, digests, folder)
            files = [entry for digest in digests for entry in by_blob[digest]]
            await asyncio.to_thread(_write_files, files, blobs, staging / name, folder)
        _move(staging, target, name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _move(staging: Path, target: Path, name: str) -> None:
    try:
        os.rename(staging, target)
    except OSError:  # the listing is there already (under another name, or a racing writer's)
        try:
            os.rename(staging / name, target / name)
        except OSError:
            if not (target / name).is_dir():
                raise


def _write_files(files: list[TreeEntry], blobs: dict[str, bytes], root: Path, folder: pb.SentFolder) -> None:
    for entry in files:
        data = blobs[entry.blob_digest]
        if len(data) != entry.size_bytes:
            raise _problem(folder, f"{entry.path[:200]!r}: {len(data):,} bytes, listed as {entry.size_bytes}")
        write_new_file(os.path.join(root, entry.path), data, 0o755 if entry.executable else 0o644)


def _batches(by_blob: dict[str, list[TreeEntry]]):
    """The digests of the blobs to fetch, a batch of about BATCH_BYTES at a time."""
    batch, size = [], 0
    for digest, entries in by_blob.items():
        batch.append(digest)
        size += entries[0].size_bytes
        if size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


async def _blobs(store, digests: list[str], folder: pb.SentFolder) -> dict[str, bytes]:
    """The blobs `digests` names, each checked against its digest: a store's copy that does not
    match is refused before any of it is written."""
    found = {b.digest: b.data for b in (await store.GetBlobs(spb.GetBlobsRequest(digests=digests))).blobs}
    for digest in digests:
        if digest not in found:
            raise errors.NotFound(f"sent folder {folder.ref[:200]!r}: the store lacks its blob {digest}")
        if sha256(found[digest]) != digest:
            which = "its listing" if digest == folder.tree_digest else "blob"
            raise _problem(folder, f"{which} {digest}: the store's bytes do not hash to it")
    return found
