"""HEMRA's own export folders (`hemra export`): recognised and restored as they were."""

import json
from pathlib import Path

from google.protobuf import json_format

from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from services import digests
from services.importer.errors import ImportProblem

MANIFEST = "hemra-export.json"


def looks_like(root: Path) -> bool:
    return (root / MANIFEST).is_file()


async def restore(store, root: Path) -> str:
    """Upload the export's blobs, then restore its rows and events in one store transaction."""
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ImportProblem(f"{root / MANIFEST}: not JSON ({exc})") from None
    blobs = []
    for path in sorted((root / "blobs").rglob("*")) if (root / "blobs").is_dir() else []:
        if path.is_file():
            data = path.read_bytes()
            expected = "sha256:" + path.parent.name + path.name
            if digests.sha256(data) != expected:
                raise ImportProblem(f"{path}: content does not match its name (a damaged export)")
            blobs.append(spb.Blob(digest=expected, data=data))
    for start in range(0, len(blobs), 256):
        await store.PutBlobs(spb.PutBlobsRequest(blobs=blobs[start:start + 256]))
    events = []
    for path in sorted((root / "events").glob("*.jsonl")) if (root / "events").is_dir() else []:
        batch = spb.AttemptEvents(attempt_id=path.stem)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                batch.events.append(json_format.Parse(line, pb.Event()))
            except json_format.ParseError as exc:
                raise ImportProblem(f"{path}: line {number}: {exc}") from None
        events.append(batch)
    response = await store.RestoreRun(spb.RestoreRunRequest(manifest_json=json.dumps(manifest), events=events))
    return response.run.id
