"""Row writes either database takes alike: insert-or-ignore, insert-or-replace, and rows cut
to their columns' limits (no gRPC here)."""

from sqlalchemy import select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from hemra.services.common.errors import InvalidArgument
from hemra.services.domain.records import AttemptInfo, AttemptRead, CellInfo, TrialInfo
from hemra.services.store import tables as t


async def insert_ignore(session: AsyncSession, table, rows: list[dict]) -> None:
    """INSERT ... ON CONFLICT DO NOTHING on either database (pinned records are immutable)."""
    if not rows:
        return
    await session.execute(upsert(session, table).on_conflict_do_nothing(), rows)


def upsert(session: AsyncSession, table):
    """INSERT for this session's database, with its ON CONFLICT clauses (SQLite or PostgreSQL)."""
    return (postgresql if session.bind.dialect.name == "postgresql" else sqlite).insert(table)


async def datasets_to_record(session: AsyncSession, rows: list[dict]) -> list[dict]:
    """The dataset rows a run records: a row lists the tasks the run selected, so a stored row
    of the same dataset listing more of its tasks (a run without `-t`) is kept, not replaced
    by a selection; any other stored row (a planted one) gives way."""
    if not rows:
        return rows
    stored = dict(
        (
            await session.execute(
                select(t.Dataset.digest, t.Dataset.task_digests).where(
                    t.Dataset.digest.in_([row["digest"] for row in rows])
                )
            )
        ).all()
    )
    return [
        row for row in rows if not (row["digest"] in stored and set(stored[row["digest"]]) > set(row["task_digests"]))
    ]


async def insert_or_replace(session: AsyncSession, table, columns: tuple[str, ...], rows: list[dict]) -> list[str]:
    """Record tasks, harnesses or datasets as the planner read them. A row already stored under
    the same digest whose `columns` differ (an older record format, another run's model, or a
    record an import planted before imports were verified) is replaced: what a run executes
    comes from the user's own files, never from whatever was stored under their digest.
    Returns the digests replaced (their cached copies are stale)."""
    if not rows:
        return []
    inserted = set(
        (
            await session.execute(
                upsert(session, table.__table__).on_conflict_do_nothing().returning(table.digest), rows
            )
        ).scalars()
    )
    wanted = {row["digest"]: row for row in rows}
    replaced = []
    digests = [digest for digest in wanted if digest not in inserted]  # stored before: compare
    for start in range(0, len(digests), 1000):
        query = select(table.digest, *(getattr(table, c) for c in columns)).where(
            table.digest.in_(digests[start : start + 1000])
        )
        for digest, *stored in (await session.execute(query)).all():
            row = wanted[digest]
            if stored != [row[c] for c in columns]:
                await session.execute(
                    update(table).where(table.digest == digest).values(**{c: row[c] for c in columns})
                )
                replaced.append(digest)
    return replaced


def _length(column) -> int | None:
    return getattr(column.type, "length", None)


def check_strings(table, row: dict, what: str) -> None:
    """Refuse what a column cannot hold the same way on both databases: a string longer than
    the column (PostgreSQL refuses it, SQLite would keep it) or one holding NUL (PostgreSQL
    refuses it). One line naming the field."""
    for key, value in row.items():
        column = table.c.get(key)
        if column is None or not isinstance(value, str):
            continue
        length = _length(column)
        if length is not None and len(value) > length:
            raise InvalidArgument(f"{what}: {key} {value[:40]!r}... is {len(value)} characters long; at most {length}")
        if "\0" in value:
            raise InvalidArgument(f"{what}: {key} {value[:40]!r} holds a NUL character")


def fit(table, row: dict) -> dict:
    """A row a worker sent, made to fit its columns on both databases (nothing is refused,
    so nothing it reported is dropped): over-long strings cut to the column, NUL replaced."""
    fitted = {}
    for key, value in row.items():
        if isinstance(value, str):
            if "\0" in value:
                value = value.replace("\0", "\ufffd")
            column = table.c.get(key)
            length = _length(column) if column is not None else None
            if length is not None and len(value) > length:
                value = value[: length - 1] + "\u2026"
        fitted[key] = value
    return fitted


def attempt_read(attempt: t.Attempt, trial: t.Trial, cell: t.Cell) -> AttemptRead:
    """Rows of an attempt, its trial and its cell, as the record every read of attempts returns."""
    return AttemptRead(AttemptInfo.of(attempt), TrialInfo.of(trial), CellInfo.of(cell))
