"""Attempts: the record, its events (paged, previewed, live) and its artifacts."""

import asyncio
import json
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import Response, StreamingResponse

from hemra.gateway.deps import AttemptId, StoreDep
from hemra.gateway.schemas import (
    PREVIEW_CHARS,
    Attempt,
    Event,
    EventsPage,
    JSONResponse,
    Task,
    event_json,
    seconds_of,
    to_json,
)
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb

router = APIRouter(prefix="/api/attempts", tags=["attempts"])

Seq = Annotated[int, Path(ge=1, le=2**62)]
Preview = Annotated[int, Query(ge=0, le=1_000_000, description="Shorten strings longer than this (0: whole).")]
#: How often a live stream asks the store for new events, in seconds.
POLL_SECS = 0.5
STREAM_PAGE = 500
#: Previewed lists read at most this much of each payload from the store; a longer one
#: (a full-context prompt of megabytes) is previewed as the text of its first bytes.
LIST_PAYLOAD_BYTES = 64 * 1024
DOWNLOAD = "application/octet-stream"
PNG = "image/png"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


async def _attempt(store, attempt: str):
    return (await store.GetAttempt(spb.GetAttemptRequest(attempt=attempt))).attempt


@router.get("/{attempt}", response_model=Attempt)
async def get_attempt(store: StoreDep, attempt: AttemptId):
    return JSONResponse(to_json(await _attempt(store, attempt)))


@router.get("/{attempt}/task", response_model=Task)
async def get_attempt_task(store: StoreDep, attempt: AttemptId):
    """The task the attempt worked, as pinned: its name, instruction, tags, timeouts and files
    (paths and blob digests; their contents are never served)."""
    task_digest = (await _attempt(store, attempt)).task_digest
    return JSONResponse(to_json((await store.GetTask(spb.GetTaskRequest(name=task_digest))).task))


@router.get("/{attempt}/events", response_model=EventsPage)
async def list_attempt_events(
    store: StoreDep,
    attempt: AttemptId,
    page_size: Annotated[int, Query(ge=1, le=5000)] = 500,
    page_token: Annotated[str, Query(max_length=19, pattern=r"^[0-9]*$")] = "",
    preview: Preview = PREVIEW_CHARS,
):
    """Events in sequence order; the page token is the last sequence number returned, so
    `page_token=N` starts after event N. Payload strings are shortened to `preview` chars."""
    record = await _attempt(store, attempt)
    # Over HTTP the token is a sequence number (documented, so a link can start anywhere); the
    # store's own tokens stay opaque and the HTTP one is made here from the page's last event.
    page = await store.ListEvents(_events_request(attempt, page_size, int(page_token or 0), preview))
    start = seconds_of(record.start_time)
    return JSONResponse(
        {
            "events": [event_json(e, start, preview or None) for e in page.events],
            "next_page_token": str(page.events[-1].seq) if page.next_page_token else "",
        }
    )


def _events_request(attempt: str, page_size: int, after: int, preview: int) -> spb.ListEventsRequest:
    return spb.ListEventsRequest(
        parent=attempt,
        page_size=page_size,
        after_seq=min(after, _PAST_EVERY_SEQ),
        max_payload_bytes=LIST_PAYLOAD_BYTES if preview else 0,
    )


#: Past any sequence number an event can have, and within int64 (HTTP tokens may be larger).
_PAST_EVERY_SEQ = 2**62


@router.get(
    "/{attempt}/events/stream",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def stream_attempt_events(
    request: Request,
    store: StoreDep,
    attempt: AttemptId,
    after: Annotated[int, Query(ge=0, le=2**62)] = 0,
    preview: Preview = PREVIEW_CHARS,
):
    """Server-sent events: each event after `after` (or Last-Event-ID) as `event: event`,
    then `event: end` once the attempt is finished and every event was sent."""
    record = await _attempt(store, attempt)  # 404 before the stream starts
    last = request.headers.get("last-event-id", "")
    if last.isascii() and last.isdigit() and len(last) < 19:  # "²" is a digit to isdigit, not to int
        after = max(after, int(last))

    async def events():
        nonlocal after, record
        start = seconds_of(record.start_time)
        while True:
            finished = record.state == pb.ATTEMPT_STATE_FINISHED
            page = await store.ListEvents(_events_request(attempt, STREAM_PAGE, after, preview))
            for event in page.events:
                after = event.seq
                data = json.dumps(event_json(event, start, preview or None), ensure_ascii=False)
                yield f"id: {event.seq}\nevent: event\ndata: {data}\n\n"
            if page.next_page_token:
                continue
            if finished:
                yield f"event: end\ndata: {json.dumps({'state': 'finished', 'last_seq': after})}\n\n"
                return
            if await request.is_disconnected():
                return
            yield ": waiting\n\n"
            await asyncio.sleep(POLL_SECS)
            record = await _attempt(store, attempt)
            start = seconds_of(record.start_time)

    return StreamingResponse(
        events(), media_type="text/event-stream", headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    )


async def _event(store, attempt: str, seq: int):
    page = await store.ListEvents(spb.ListEventsRequest(parent=attempt, page_size=1, after_seq=seq - 1))
    if not page.events or page.events[0].seq != seq:
        raise HTTPException(404, f"attempt {attempt} has no event {seq}")
    return page.events[0]


@router.get("/{attempt}/events/{seq}", response_model=Event)
async def get_attempt_event(store: StoreDep, attempt: AttemptId, seq: Seq, preview: Preview = 0):
    """One event, whole by default (`preview` shortens it like the list does)."""
    record = await _attempt(store, attempt)
    event = await _event(store, attempt, seq)
    return JSONResponse(event_json(event, seconds_of(record.start_time), preview or None))


@router.get("/{attempt}/events/{seq}/raw", response_class=Response, responses={200: {"content": {DOWNLOAD: {}}}})
async def download_attempt_event(store: StoreDep, attempt: AttemptId, seq: Seq):
    """The event's payload JSON exactly as recorded, as a download."""
    event = await _event(store, attempt, seq)
    return _download(event.payload_json.encode(), f"{attempt}-event-{seq}.json")


def _clean(path: str) -> str:
    parts = path.split("/")
    if (
        len(path) > 1024
        or any(p in ("", ".", "..") for p in parts)
        or any(c in path for c in "\\\x00")
        or any(ord(c) < 32 for c in path)
    ):
        raise HTTPException(400, "bad artifact path")
    return path


@router.get("/{attempt}/artifacts/{path:path}", response_class=Response, responses={200: {"content": {DOWNLOAD: {}}}})
async def download_attempt_artifact(store: StoreDep, attempt: AttemptId, path: str):
    """An artifact as a download, by its path in the sandbox (without the leading /)."""
    path = _clean(path)
    record = await _attempt(store, attempt)
    artifact = next((a for a in record.artifacts if a.path.lstrip("/") == path), None)
    if artifact is None:
        raise HTTPException(404, f"attempt {attempt} has no artifact {path!r}")
    blob = (await store.GetBlobs(spb.GetBlobsRequest(digests=[artifact.blob_digest]))).blobs[0]
    return _download(blob.data, path.rsplit("/", 1)[-1])


@router.get(
    "/{attempt}/images/{path:path}",
    response_class=Response,
    responses={200: {"content": {PNG: {}}}, 415: {"description": "The artifact is not a PNG image."}},
)
async def get_attempt_image(store: StoreDep, attempt: AttemptId, path: str):
    """An artifact that is a PNG image (a computer-use harness's screenshot), to show inline.

    Served as image/png only when its bytes are a PNG (its signature and header chunk), with
    nosniff: whatever a harness left under a .png name, it can never be taken for a page or
    an SVG. Any other artifact: 415 (its download is /artifacts/{path})."""
    path = _clean(path)
    record = await _attempt(store, attempt)
    artifact = next((a for a in record.artifacts if a.path.lstrip("/") == path), None)
    if artifact is None:
        raise HTTPException(404, f"attempt {attempt} has no artifact {path!r}")
    data = (await store.GetBlobs(spb.GetBlobsRequest(digests=[artifact.blob_digest]))).blobs[0].data
    if not (data.startswith(PNG_MAGIC) and data[12:16] == b"IHDR"):
        raise HTTPException(415, f"artifact {path!r} is not a PNG image")
    return Response(
        data,
        media_type=PNG,
        headers={
            "Content-Disposition": "inline",
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "private, no-cache",
        },
    )


@router.get("/{attempt}/verifier-output", response_class=Response, responses={200: {"content": {DOWNLOAD: {}}}})
async def download_verifier_output(store: StoreDep, attempt: AttemptId):
    """The verifier's combined output, as a download."""
    record = await _attempt(store, attempt)
    digest = record.score.stdout_blob_digest if record.HasField("score") else ""
    if not digest:
        raise HTTPException(404, f"attempt {attempt} has no verifier output")
    blob = (await store.GetBlobs(spb.GetBlobsRequest(digests=[digest]))).blobs[0]
    return _download(blob.data, f"{attempt}-verifier-output.txt")


@router.get("/{attempt}/judge-calls/{digest}", response_class=Response, responses={200: {"content": {DOWNLOAD: {}}}})
async def download_judge_call(store: StoreDep, attempt: AttemptId, digest: str):
    """A HEMRA judge's request or response body, byte for byte, by the digest its call record
    names (only the attempt's own judge calls are served)."""
    record = await _attempt(store, attempt)
    named = {
        d: f"{score.judge}-sample{call.sample}-try{call.retry}-{kind}"
        for score in record.judge_scores
        for call in score.judge_calls
        for d, kind in ((call.request_blob_digest, "request"), (call.response_blob_digest, "response"))
        if d
    }
    if digest not in named:
        raise HTTPException(404, f"attempt {attempt} has no judge call {digest[:80]!r}")
    blob = (await store.GetBlobs(spb.GetBlobsRequest(digests=[digest]))).blobs[0]
    return _download(blob.data, f"{attempt}-{named[digest]}.txt")


def _download(data: bytes, filename: str) -> Response:
    ascii_name = "".join(c if c.isalnum() or c in "._-" else "_" for c in filename)[:200] or "download"
    return Response(
        data,
        media_type=DOWNLOAD,
        headers={
            "Content-Disposition": f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename)}",
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "private, no-cache",
        },
    )
