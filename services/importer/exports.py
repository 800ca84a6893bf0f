"""HEMRA's own export folders (`hemra export`): recognised and restored as they were."""

import json
from pathlib import Path

from google.protobuf import json_format

from hemra.services import digests
from hemra.services.domain.exportformat import (
    BLOBS,
    EVENTS,
    MANIFEST,
    BadName,
    blob_digest,
    events_attempt,
)
from hemra.services.domain.importerrors import ImportProblem
from hemra.services.domain.tree import MAX_FILE_BYTES
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb


def _no_links(path: Path) -> None:
    """An export is files and folders: a symbolic link would read from outside it."""
    if path.is_symlink():
        raise ImportProblem(f"{path}: a symbolic link; an export holds none (refused)")


def looks_like(root: Path) -> bool:
    return (root / MANIFEST).is_file()


async def restore(store, root: Path, label: str = "", source: str = "", imported_by: str = "") -> str:
    """Upload the export's blobs, then restore its rows and events in one store transaction, as
    an import labelled `label` (default: the export's own label) read from `source` (default:
    `root`) by `imported_by`."""
    for top in (MANIFEST, BLOBS, EVENTS):
        _no_links(root / top)
    try:
        # Sent as it was read: the store keeps the sha256 of this text as the import's provenance.
        manifest_text = (root / MANIFEST).read_bytes().decode("utf-8")
        manifest = json.loads(manifest_text)
    except (ValueError, RecursionError) as exc:
        raise ImportProblem(f"{root / MANIFEST}: not JSON ({str(exc)[:200] or 'nested too deep'})") from None
    if not isinstance(manifest, dict):
        raise ImportProblem(f"{root / MANIFEST}: not a HEMRA export manifest (a JSON object)")
    blobs = []
    for path in sorted((root / BLOBS).rglob("*")) if (root / BLOBS).is_dir() else []:
        _no_links(path)
        if path.is_file():
            expected = _named(blob_digest, root, path)
            if path.stat().st_size > MAX_FILE_BYTES:
                raise ImportProblem(
                    f"{path}: {path.stat().st_size:,} bytes; an import keeps files of at most "
                    f"{MAX_FILE_BYTES // 1024 // 1024} MiB"
                )
            data = path.read_bytes()
            if digests.sha256(data) != expected:
                raise ImportProblem(f"{path}: content does not match its name (a damaged export)")
            blobs.append(spb.Blob(digest=expected, data=data))
    for start in range(0, len(blobs), 256):
        await store.PutBlobs(spb.PutBlobsRequest(blobs=blobs[start : start + 256]))
    events = []
    for path in sorted((root / EVENTS).glob("*.jsonl")) if (root / EVENTS).is_dir() else []:
        _no_links(path)
        batch = spb.AttemptEvents(attempt_id=_named(events_attempt, path))
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ImportProblem(f"{path}: not UTF-8 text") from None
        for number, line in enumerate(text.splitlines(), 1):
            try:
                batch.events.append(json_format.Parse(line, pb.Event()))
            except (json_format.ParseError, RecursionError) as exc:
                why = (str(exc).splitlines() or ["nested too deep"])[0][:200]  # protobuf's first line
                raise ImportProblem(f"{path}: line {number}: {why}") from None
        events.append(batch)
    response = await store.RestoreRun(
        spb.RestoreRunRequest(
            manifest_json=manifest_text, events=events, label=label, imported_by=imported_by, source=source or str(root)
        )
    )
    return response.run.id


def _named(read, *args) -> str:
    """A name read from the export's file layout (exportformat), refused by path when misshapen."""
    try:
        return read(*args)
    except BadName as exc:
        raise ImportProblem(str(exc)) from None
