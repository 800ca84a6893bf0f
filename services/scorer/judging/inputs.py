"""What a judge reads of an attempt, gathered from the store: never from its live sandbox.

The task's instruction; the agent's final message and trajectory from its recorded events;
the files judges name, as the executor captured them into the attempt's artifacts when the
agent stopped (and when it started, for the diff) under CAPTURE_ROOT.
"""

import json

from hemra.services.common import mining
from hemra.services.common.judges import CAPTURE_ROOT, Judge
from hemra.services.scorer.judging.prompts import Inputs
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb

#: The most events read of one attempt for its final message and trajectory.
MAX_EVENTS = 50_000
PAGE = 2000


async def gather(store, judges: list[Judge], attempt_id: str, task, artifacts, has_events: bool = True) -> Inputs:
    """`has_events` False: the attempt is known to hold no events (an import's), so none are read."""
    inputs = Inputs(instruction=task.instruction if task is not None and task.instruction else None)
    if has_events and any(j.answer == "final_message" or j.trajectory != "none" for j in judges):
        events = await _events(store, attempt_id)
        inputs.answer = final_message(events)
        kinds = {j.trajectory for j in judges}
        inputs.trajectory = trajectory(events, "full" if "full" in kinds else "messages")
    elif any(j.answer == "final_message" or j.trajectory != "none" for j in judges):
        # An import recorded before its trajectory became events: read it from its files.
        events = await _imported_trajectory(store, artifacts)
        if events:
            inputs.answer = final_message(events)
            kinds = {j.trajectory for j in judges}
            inputs.trajectory = trajectory(events, "full" if "full" in kinds else "messages")
    wanted = {path for j in judges for path in j.files}
    if wanted:
        start, end = await _captured(store, artifacts, wanted)
        inputs.files, inputs.start_files = end, start
    return inputs


async def _events(store, attempt_id: str) -> list:
    events, token = [], ""
    while len(events) < MAX_EVENTS:
        page = await store.ListEvents(spb.ListEventsRequest(parent=attempt_id, page_size=PAGE, page_token=token))
        events += page.events
        token = page.next_page_token
        if not token:
            break
    return events


#: An imported trial's trajectory among its files (Harbor: <trial>/agent/trajectory.json, ATIF).
TRAJECTORY_FILE = "/agent/trajectory.json"
MAX_TRAJECTORY_BYTES = 64 * 1024 * 1024


async def _imported_trajectory(store, artifacts) -> list:
    """The events of an imported trial's trajectory file, when it has one HEMRA reads."""
    digest = next((a.blob_digest for a in artifacts if a.path.endswith(TRAJECTORY_FILE) and a.blob_digest), None)
    if digest is None:
        return []
    blobs = await store.GetBlobs(spb.GetBlobsRequest(digests=[digest]))
    data = next((b.data for b in blobs.blobs if b.digest == digest), b"")
    if not data or len(data) > MAX_TRAJECTORY_BYTES:
        return []
    try:
        found = mining.atif_events(json.loads(data))
    except ValueError:
        return []
    return [
        pb.Event(type=e["type"], name=e["name"], payload_json=json.dumps(e["payload"], ensure_ascii=False))
        for e in found[:MAX_EVENTS]
    ]


def _payload(event) -> dict:
    try:
        payload = json.loads(event.payload_json or "{}")
    except ValueError:
        return {}
    return payload if isinstance(payload, dict) else {}


def final_message(events) -> str | None:
    """The agent's last message (None when it recorded none)."""
    for event in reversed(events):
        payload = _payload(event)
        if event.type == "message" and payload.get("role", event.name) == "assistant":
            return str(payload.get("text", ""))
    return None


def trajectory(events, how: str) -> str | None:
    """The attempt's events as text: its messages only, or every event (type, name, payload)."""
    lines = []
    for event in events:
        payload = _payload(event)
        if event.type == "message":
            lines.append(f"[{payload.get('role', event.name)}] {payload.get('text', '')}")
        elif how == "full":
            lines.append(f"[{event.type} {event.name}] {event.payload_json}")
    return "\n".join(lines) if lines else None


async def _captured(store, artifacts, wanted: set[str]) -> tuple[dict, dict]:
    """(start, end): path -> text, for the wanted files the executor captured."""
    where = {}
    for artifact in artifacts:
        for phase in ("start", "end"):
            prefix = f"{CAPTURE_ROOT}/{phase}"
            if artifact.path.startswith(prefix) and artifact.path[len(prefix) :] in wanted:
                where[(phase, artifact.path[len(prefix) :])] = artifact.blob_digest
    found: dict[str, dict] = {"start": {}, "end": {}}
    if where:
        blobs = await store.GetBlobs(spb.GetBlobsRequest(digests=sorted(set(where.values()))))
        data = {b.digest: b.data for b in blobs.blobs}
        for (phase, path), digest in where.items():
            if digest in data:
                found[phase][path] = data[digest].decode("utf-8", errors="replace")
    return found["start"], found["end"]
