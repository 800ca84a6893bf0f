"""Folders that travel as blobs (hemra.v1.SentFolder).

A CLI far from its deployment sends a folder (results to import, a dataset, a harness's
folder) as content-addressed blobs, only those the store lacks, plus one blob listing it:
a JSON array of hemra.v1.TreeEntry, the same listing an import keeps of its files. The
service that needs the folder writes it back under its own cache, once per listing. A
listing is input from another machine: every path and digest in it is checked before
anything is written.
"""

import asyncio
import os
import re
import shutil
from pathlib import Path

import msgspec

from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from services.common import errors
from services.digests import sha256
from services.importer import record
from services.importer.tree import read_tree, tree_json, write_tree

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
#: Blobs asked for in one GetBlobs call while a folder is written back (their size is bounded
#: by the listing's sizes: a batch stops growing past BATCH_BYTES).
BATCH_BYTES = 32 * 1024 * 1024


class FolderProblem(errors.InvalidArgument):
    """A sent folder that cannot be written back as it is (the message says why)."""


class _Entry(msgspec.Struct, forbid_unknown_fields=True):
    path: str
    blobDigest: str = ""  # noqa: N815 (the JSON form of hemra.v1.TreeEntry)
    isDir: bool = False  # noqa: N815
    executable: bool = False
    sizeBytes: str = "0"  # noqa: N815


async def send(store, root: Path, ref: str = "", file: str = "") -> pb.SentFolder:
    """Send the folder at `root` through `store` (a transport client): its files' blobs the
    store lacks while it is read, then its listing. `ref` and `file` are what the request
    names (see hemra.v1.SentFolder)."""
    batches: asyncio.Queue = asyncio.Queue()
    upload = asyncio.create_task(record.upload(store, batches))
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
    listing; later calls reuse it), then its `file` when it names one."""
    if not _DIGEST.fullmatch(folder.tree_digest):
        raise FolderProblem(f"sent folder {folder.ref!r}: tree_digest {folder.tree_digest[:80]!r} is not sha256:<hex>")
    name = _safe_part(folder.name or "folder", folder)
    target = cache / folder.tree_digest.removeprefix("sha256:")
    if not (target / name).is_dir():
        entries = _listing(folder, await _blobs(store, [folder.tree_digest], folder))
        await _write_back(store, folder, entries, target, name)
    path = target / name
    if folder.file:
        path = path.joinpath(*(_safe_part(part, folder) for part in folder.file.split("/")))
    return path


def _listing(folder: pb.SentFolder, blobs: dict[str, bytes]) -> list[dict]:
    try:
        rows = msgspec.json.decode(blobs[folder.tree_digest], type=list[_Entry])
    except msgspec.ValidationError as exc:
        raise FolderProblem(f"sent folder {folder.ref!r}: its listing is not a list of TreeEntry: {exc}") from None
    entries = []
    for row in rows:
        for part in row.path.split("/"):
            _safe_part(part, folder)
        if not row.isDir and not _DIGEST.fullmatch(row.blobDigest):
            raise FolderProblem(f"sent folder {folder.ref!r}: {row.path}: blobDigest is not sha256:<hex>")
        entries.append(msgspec.structs.asdict(row))
    return entries


def _safe_part(part: str, folder: pb.SentFolder) -> str:
    """One path component that stays inside the folder it is written under."""
    if part in ("", ".", "..") or "\\" in part or "\0" in part or len(part.encode()) > 255:
        raise FolderProblem(f"sent folder {folder.ref!r}: {part[:80]!r} is not a file or folder name")
    return part


async def _write_back(store, folder: pb.SentFolder, entries: list[dict], target: Path, name: str) -> None:
    """Write the tree into a fresh folder beside `target`, then move it in place (a reader
    never sees half a folder; of two writers racing, one wins and the other's copy goes)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{target.name}-{os.getpid()}-{id(entries)}"
    try:
        files = [e for e in entries if not e["isDir"]]
        blobs: dict[str, bytes] = {}
        for batch in _batches(files):
            blobs.update(await _blobs(store, batch, folder))
        await asyncio.to_thread(write_tree, entries, blobs, staging / name)
        try:
            os.rename(staging, target)
        except OSError:
            if not (target / name).is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _batches(files: list[dict]):
    batch, size, seen = [], 0, set()
    for entry in files:
        if entry["blobDigest"] in seen:
            continue
        seen.add(entry["blobDigest"])
        batch.append(entry["blobDigest"])
        size += int(entry["sizeBytes"] or 0)
        if size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


async def _blobs(store, digests: list[str], folder: pb.SentFolder) -> dict[str, bytes]:
    found = {b.digest: b.data for b in (await store.GetBlobs(spb.GetBlobsRequest(digests=digests))).blobs}
    missing = [d for d in digests if d not in found]
    if missing:
        raise errors.NotFound(f"sent folder {folder.ref!r}: the store lacks {len(missing)} of its blobs ({missing[0]})")
    return found
