"""Task folders materialized from the store's blobs, once per task digest."""

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

from hemra.v1 import store_service_pb2 as spb

#: Fetch task files in batches of this many blobs.
_BATCH = 256


class TaskCache:
    """`root/<digest hex>/` holds a task's files exactly as pinned."""

    def __init__(self, root: Path, store):
        self.root = root
        self.store = store
        self._locks: dict[str, asyncio.Lock] = {}

    async def folder(self, task) -> Path:
        target = self.root / task.digest.removeprefix("sha256:")
        if target.is_dir():
            return target
        lock = self._locks.setdefault(task.digest, asyncio.Lock())
        async with lock:
            if not target.is_dir():
                await self._materialize(task, target)
        return target

    async def _materialize(self, task, target: Path) -> None:
        digests = sorted({f.blob_digest for f in task.files})
        data: dict[str, bytes] = {}
        for start in range(0, len(digests), _BATCH):
            response = await self.store.GetBlobs(spb.GetBlobsRequest(digests=digests[start : start + _BATCH]))
            data.update({b.digest: b.data for b in response.blobs})
        await asyncio.to_thread(_write_tree, task.files, data, target)


def _write_tree(files, data: dict[str, bytes], target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".tmp-"))
    try:
        for f in files:
            path = staging / f.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data[f.blob_digest])
            path.chmod(0o755 if f.executable else 0o644)
        # Another executor process may have won the race; its copy is identical.
        try:
            os.rename(staging, target)
        except OSError:
            if not target.is_dir():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
