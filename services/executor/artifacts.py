"""An attempt's artifacts: the files left in the sandbox's ARTIFACT_DIRS, and the harness's own
output HEMRA kept itself, stored as blobs within fixed caps.

The agent controls what the sandbox's folders hold (how many files, how big, what names), so
each file keeps at most MAX_ARTIFACT_BYTES (read no further), the attempt at most
MAX_ARTIFACTS_BYTES and MAX_ARTIFACT_FILES, and blobs travel in PutBlobs batches of at most
BATCH_BYTES (well under the gRPC message limit). A file cut short keeps its first bytes and
its artifact's size_bytes tells its whole size; every file cut, dropped or unreadable gets
a marker event ("artifact_truncated", "artifact_dropped", "artifact_skipped"), and a summary
("artifacts_capped") counts them. Nothing the agent left makes collecting fail.

File names need not be UTF-8 (the sandbox lists them as surrogate-escaped text, from
os.listdir or tar member names). An artifact's path is text, so such a file is kept under
its name with each byte that is not UTF-8 written as \\xNN (Python's backslashreplace of
the name's bytes: b"bad\\xff.txt" is kept as "bad\\\\xff.txt"), read under its real name.
A file whose escaped name another file already has, or that cannot be read under its real
name, is skipped with an "artifact_skipped" marker naming it escaped.

The harness's own stdout and stderr (or stream, or transcript) never pass through the
agent's sandbox: drivers write them into an OwnLog on the executor's side and keep it with
`keep`, which stores it at once and adds it to the attempt's artifacts.
"""

import os
import tempfile

from hemra.services.executor.events import EventLog, escaped_name, event
from hemra.services.executor.sandboxes import SandboxError
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb

#: Folders collected as artifacts after scoring (in the order they are listed).
ARTIFACT_DIRS = ("/logs/agent", "/logs/verifier", "/logs/artifacts")
#: The order the caps are spent in: the verifier's files first, then the agent's.
_PRIORITY = ("/logs/verifier", "/logs/agent", "/logs/artifacts")
#: The most of one file kept ($HEMRA_MAX_ARTIFACT_BYTES).
MAX_ARTIFACT_BYTES = 64 * 1024 * 1024
#: The most of all the sandbox's files kept per attempt ($HEMRA_MAX_ARTIFACTS_BYTES).
MAX_ARTIFACTS_BYTES = 256 * 1024 * 1024
#: The most files kept per attempt, and the longest path (the web API serves up to 1024).
MAX_ARTIFACT_FILES = 10_000
MAX_PATH = 1024
#: Blob bytes per PutBlobs request: services/common/transport.py's MAX_MESSAGE_BYTES is 256 MiB.
BATCH_BYTES = 64 * 1024 * 1024
#: Per-file marker events at most; the summary counts the rest.
MAX_MARKERS = 100
#: The most of one stream of the harness's own output kept as an artifact ($HEMRA_MAX_OWN_LOG_BYTES).
MAX_OWN_LOG_BYTES = 64 * 1024 * 1024


def _setting(name: str, default: int) -> int:
    configured = os.environ.get(name, "")
    return int(configured) if configured.isdigit() else default


def caps() -> tuple[int, int]:
    """(per file, per attempt), each at most BATCH_BYTES per file."""
    per_file = min(_setting("HEMRA_MAX_ARTIFACT_BYTES", MAX_ARTIFACT_BYTES), BATCH_BYTES)
    return per_file, _setting("HEMRA_MAX_ARTIFACTS_BYTES", MAX_ARTIFACTS_BYTES)


class OwnLog:
    """A stream of the harness's output kept on the executor's side (a temporary file, not
    memory): its first `limit` bytes, and how many there were in all."""

    def __init__(self, path: str, limit: int | None = None):
        self.path = path
        self.limit = _setting("HEMRA_MAX_OWN_LOG_BYTES", MAX_OWN_LOG_BYTES) if limit is None else limit
        self.size = 0
        self._file = tempfile.TemporaryFile(prefix="hemra-log-")

    def write(self, data: bytes) -> None:
        room = self.limit - self.size
        if room > 0:
            self._file.write(data[:room])
        self.size += len(data)

    def read(self) -> bytes:
        self._file.flush()
        self._file.seek(0)
        return self._file.read(self.limit)

    def close(self) -> None:
        self._file.close()


async def keep(events: EventLog, log: OwnLog) -> None:
    """Store `log` as one of the attempt's artifacts (with a marker when it was cut)."""
    try:
        data = log.read()
    finally:
        log.close()
    [digest] = (await events.store.PutBlobs(spb.PutBlobsRequest(blobs=[spb.Blob(data=data)]))).digests
    events.artifacts.append(pb.Artifact(path=log.path, size_bytes=log.size, blob_digest=digest))
    if len(data) < log.size:
        await events.emit_own(
            event("status", "artifact_truncated", path=log.path, size_bytes=log.size, kept_bytes=len(data))
        )


class _Markers:
    def __init__(self, events: EventLog | None):
        self.events = events
        self.counts: dict[str, int] = {}
        self.shown = 0

    async def add(self, name: str, **payload) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1
        if self.events is not None and self.shown < MAX_MARKERS:
            self.shown += 1
            await self.events.emit_own(event("status", name, **payload))


class _Batches:
    """Blobs sent in PutBlobs requests of at most BATCH_BYTES."""

    def __init__(self, store):
        self.store = store
        self._artifacts: list[pb.Artifact] = []
        self._blobs: list[spb.Blob] = []
        self._bytes = 0

    async def add(self, artifact: pb.Artifact, data: bytes) -> None:
        if self._blobs and self._bytes + len(data) > BATCH_BYTES:
            await self.send()
        self._artifacts.append(artifact)
        self._blobs.append(spb.Blob(data=data))
        self._bytes += len(data)

    async def send(self) -> None:
        if not self._blobs:
            return
        digests = (await self.store.PutBlobs(spb.PutBlobsRequest(blobs=self._blobs))).digests
        for artifact, digest in zip(self._artifacts, digests):
            artifact.blob_digest = digest
        self._artifacts, self._blobs, self._bytes = [], [], 0


async def collect(sandbox, store, events: EventLog | None) -> list[pb.Artifact]:
    """The attempt's artifacts: HEMRA's own (events.artifacts), then each file of ARTIFACT_DIRS,
    within the caps. Raises only when the store fails (a sandbox that cannot list or read a
    file is the agent's doing, or not worth the attempt: a marker says so)."""
    own = list(events.artifacts) if events is not None else []
    kept = _Kept(store, events, {a.path for a in own})
    found: dict[str, list[pb.Artifact]] = {folder: [] for folder in ARTIFACT_DIRS}
    for folder in _PRIORITY:
        try:
            paths = await sandbox.list_files(folder)
        except (OSError, SandboxError, ValueError) as exc:
            await kept.markers.add("artifact_skipped", path=folder, message=f"cannot list: {exc}")
            continue
        for real in paths:
            artifact = await kept.take(sandbox, real)
            if artifact is not None:
                found[folder].append(artifact)
    await kept.batches.send()
    await kept.note_caps(events)
    return own + [artifact for folder in ARTIFACT_DIRS for artifact in found[folder]]


class _Kept:
    """The files kept so far, within the caps, and the markers of those that were not."""

    def __init__(self, store, events: EventLog | None, taken: set[str]):
        #: Paths HEMRA keeps files of itself.
        self.taken = taken
        self.paths: set[str] = set()
        self.per_file, self.total = caps()
        self.markers, self.batches = _Markers(events), _Batches(store)
        self.files = self.used = 0

    async def take(self, sandbox, real: str) -> pb.Artifact | None:
        """The artifact of the sandbox's file `real` (its data on its way to the store), or None
        with a marker saying why it is not kept."""
        path = escaped_name(real)  # what is stored; `real` is what is read
        markers = self.markers
        if self.files >= MAX_ARTIFACT_FILES:
            markers.counts["artifact_dropped"] = markers.counts.get("artifact_dropped", 0) + 1
            return None
        if len(path) > MAX_PATH or path in self.taken:
            why = "its path is too long" if len(path) > MAX_PATH else "HEMRA keeps a file of that path itself"
            await markers.add("artifact_dropped", path=path[:MAX_PATH], message=why)
            return None
        if path in self.paths:
            await markers.add(
                "artifact_skipped", path=path, message="another file is kept under the same (escaped) name"
            )
            return None
        try:
            size = await sandbox.file_size(real)
            room = max(min(size, self.per_file, self.total - self.used), 0)
            data = (await sandbox.read_file(real, limit=room))[:room] if room else b""
        except (OSError, SandboxError, ValueError) as exc:  # UnicodeError: a name the engine cannot take
            await markers.add("artifact_skipped", path=path, message=f"cannot read: {type(exc).__name__}: {exc}")
            return None
        if size and not data:
            message = f"the attempt's artifacts reached {self.total} bytes"
            await markers.add("artifact_dropped", path=path, size_bytes=size, kept_bytes=0, message=message)
            return None
        if len(data) < size:
            await markers.add("artifact_truncated", path=path, size_bytes=size, kept_bytes=len(data))
        self.files += 1
        self.used += len(data)
        self.paths.add(path)
        artifact = pb.Artifact(path=path, size_bytes=max(size, len(data)))
        await self.batches.add(artifact, data)
        return artifact

    async def note_caps(self, events: EventLog | None) -> None:
        """One event with what the caps left out, when they left out anything."""
        if self.markers.counts and events is not None:
            await events.emit_own(
                event(
                    "status",
                    "artifacts_capped",
                    **self.markers.counts,
                    kept_files=self.files,
                    kept_bytes=self.used,
                    max_file_bytes=self.per_file,
                    max_total_bytes=self.total,
                    max_files=MAX_ARTIFACT_FILES,
                )
            )
