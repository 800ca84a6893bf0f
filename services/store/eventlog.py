"""An attempt's events: appended with the next sequence numbers, read back a page at a time
(no gRPC here)."""

from sqlalchemy import LargeBinary, cast, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from hemra.services.common.errors import InvalidArgument
from hemra.services.store import pagetokens, usage
from hemra.services.store import tables as t


async def append_events(session: AsyncSession, attempt_id: str, events: list[dict]) -> int:
    """Give events the next sequence numbers of their attempt and store them."""
    if not events:
        attempt = await session.get(t.Attempt, attempt_id)
        return attempt.event_count
    result = await session.execute(
        update(t.Attempt)
        .where(t.Attempt.id == attempt_id)
        .values(
            event_count=t.Attempt.event_count + len(events),
            **usage.added(t.Attempt.__table__, usage.of_events(events)),
        )
        .returning(t.Attempt.event_count)
    )
    last = result.scalar_one()
    first = last - len(events) + 1
    rows = [dict(attempt_id=attempt_id, seq=first + i, **event) for i, event in enumerate(events)]
    await session.execute(t.Event.__table__.insert(), rows)
    return last


async def list_events(
    session: AsyncSession,
    attempt_id: str,
    page_size: int,
    page_token: str,
    max_payload_bytes: int = 0,
    after_seq: int = 0,
) -> tuple[list[t.Event], str]:
    """Events after `after_seq`, or where `page_token` (opaque, from an earlier page) says.
    With `max_payload_bytes`, payloads are read only that far (a page of multi-megabyte prompts
    stays small); see payload_columns."""
    page_size = page_size if 0 < page_size <= 10000 else 1000
    if after_seq < 0:
        raise InvalidArgument(f"after_seq {after_seq}: must not be negative")
    after = pagetokens.after_event(page_token) if page_token else after_seq
    if after >= MAX_SEQ:  # after every event there can be: the column holds 32-bit numbers
        return [], ""
    if max_payload_bytes > 0:
        query = (
            select(*payload_columns(session, max_payload_bytes))
            .where(t.Event.attempt_id == attempt_id, t.Event.seq > after)
            .order_by(t.Event.seq)
            .limit(page_size + 1)
        )
        events = [EventPreview(*row) for row in (await session.execute(query)).all()]
    else:
        query = (
            select(t.Event)
            .where(t.Event.attempt_id == attempt_id, t.Event.seq > after)
            .order_by(t.Event.seq)
            .limit(page_size + 1)
        )
        events = list((await session.execute(query)).scalars())
    more = len(events) > page_size
    events = events[:page_size]
    return events, (pagetokens.events_token(events[-1].seq) if more else "")


#: Event sequence numbers are 32-bit integers on both databases.
MAX_SEQ = 2**31 - 1


class EventPreview:
    """An event row whose payload may be cut (payload_cut) to its first bytes."""

    __slots__ = ("seq", "time", "type", "name", "payload", "duration", "payload_bytes", "payload_cut")

    def __init__(self, seq, time, type_, name, payload, duration, payload_bytes):
        self.seq, self.time, self.type, self.name, self.duration = seq, time, type_, name, duration
        self.payload, self.payload_bytes = payload, payload_bytes
        self.payload_cut = len(payload.encode()) < payload_bytes


def payload_columns(session: AsyncSession, max_bytes: int) -> tuple:
    """Event columns with the payload cut in SQL: the database reads the rest of a long
    payload from its overflow pages only to measure it, never hands it over."""
    if session.bind.dialect.name == "postgresql":
        size = func.octet_length(t.Event.payload)
    else:
        size = func.length(cast(t.Event.payload, LargeBinary))
    # substr counts characters: max_bytes characters are at least max_bytes bytes.
    return (
        t.Event.seq,
        t.Event.time,
        t.Event.type,
        t.Event.name,
        func.substr(t.Event.payload, 1, max_bytes),
        t.Event.duration,
        size,
    )
