"""The latest attempt of each trial of a cell, as reports and compares read it: from the
attempts, or, once every trial of the cell has finished, from one row of settled_cells.

A settled cell's latest attempts cannot change (a retry is queued in the same transaction
that closes the attempt it retries, and finished attempts are final); only judging adds to
them, and judging moves the run's judge_version. So the row is written with the
judge_version its trials were read at, read only while that is still the run's, and
replaced by a later one (or, when it cannot be decoded, by the same one read again). A
50,000-trial cell's row is fetched and decoded in about 30 ms on SQLite, where its attempts
take about 0.17 s to read.

A row is written by the store that records an import (every trial finished at once) and by
the first report or compare that reads a cell once it has settled; one that cannot be
written (a read-only database, a busy one) is only not kept.
"""

import functools
import logging

import msgspec
from sqlalchemy import Text, bindparam, cast, exists, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.orm import aliased

from hemra.services.store import sqlrows
from hemra.services.store import tables as t

logger = logging.getLogger(__name__)


@functools.cache
def _latest():
    """One cell's rows; the scores cast to their JSON text (a JSON column would be decoded row
    by row, on PostgreSQL by the driver), so that equal scores are parsed once. Built once, on
    first use."""
    newer = aliased(t.Attempt)
    return (
        select(
            t.Trial.task_digest,
            t.Trial.task_name,
            t.Trial.repetition,
            t.Attempt.state,
            t.Attempt.outcome,
            t.Attempt.agent_version,
            t.Attempt.agent_name,
            cast(t.Attempt.score, Text),
            cast(t.Attempt.judge_scores, Text),
            t.Attempt.mining_events > 0,
        )
        .join_from(t.Trial, t.Attempt, t.Attempt.trial_id == t.Trial.id)
        .where(
            t.Trial.cell_id == bindparam("cell"),
            ~exists().where(newer.trial_id == t.Attempt.trial_id, newer.number > t.Attempt.number),
        )
    )


class Trials(msgspec.Struct, array_like=True):
    """A cell's latest attempts, each distinct task and each distinct kind of attempt stored
    once: a task repeats once per repetition, and a big cell's attempts differ in little but
    their task (most share a state, an outcome, an agent and a score)."""

    #: (task digest, task name)
    tasks: list[tuple[str, str]]
    #: (state, outcome, agent version, agent name, score, HEMRA judges' scores, mined history):
    #: the scores as their JSON texts (None when there is none), parsed once per kind by the
    #: reader; mined: some event of the attempt mined the repository's history.
    kinds: list[tuple[str, str | None, str | None, str | None, str | None, str | None, bool]]
    #: (task index, repetition, kind index), a trial each
    rows: list[tuple[int, int, int]]

    def is_settled(self) -> bool:
        """Every trial of the cell has finished (each trial has an attempt from the start)."""
        return bool(self.rows) and all(kind[0] == "finished" for kind in self.kinds)


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Trials)


async def from_attempts(conn: AsyncConnection, cell_id: str) -> Trials:
    # Through the connection: a Core statement run by the ORM session pays for ORM row handling.
    # A cell at a time, so its ID need not come back with each of its rows.
    tasks: dict[tuple[str, str], int] = {}
    kinds: dict[tuple, int] = {}
    rows = [
        (
            tasks.setdefault((digest, name), len(tasks)),
            repetition,
            kinds.setdefault((state, outcome, version, agent, score, judged, bool(mined)), len(kinds)),
        )
        for digest, name, repetition, state, outcome, version, agent, score, judged, mined in await conn.execute(
            _latest(), {"cell": cell_id}
        )
    ]
    return Trials(list(tasks), list(kinds), rows)


async def read(conn: AsyncConnection, cell_ids: list[str], judge_version: int) -> dict[str, Trials]:
    """cell ID -> its trials, of the cells kept at this judge_version."""
    found = await conn.execute(
        select(t.SettledCell.cell_id, t.SettledCell.trials).where(
            t.SettledCell.cell_id.in_(cell_ids), t.SettledCell.judge_version == judge_version
        )
    )
    kept = {}
    for cell_id, data in found:
        try:
            kept[cell_id] = _decoder.decode(data)
        except msgspec.MsgspecError as exc:  # of another format: read the attempts, then replace it
            logger.info("settled cell %s not read: %s", cell_id, exc)
    return kept


async def keep(session: AsyncSession, judge_version: int, trials_by_cell: dict[str, Trials]) -> None:
    """Write the trials of settled cells, replacing any kept at an older judge_version or at
    this one (one its reader could not decode; or the same trials, read twice at once)."""
    if not trials_by_cell:
        return
    insert = sqlrows.upsert(session, t.SettledCell)
    await session.execute(
        insert.on_conflict_do_update(
            index_elements=[t.SettledCell.cell_id],
            set_={"judge_version": insert.excluded.judge_version, "trials": insert.excluded.trials},
            where=t.SettledCell.judge_version <= insert.excluded.judge_version,
        ),
        [
            {"cell_id": cell_id, "judge_version": judge_version, "trials": _encoder.encode(trials)}
            for cell_id, trials in trials_by_cell.items()
        ],
    )


async def keep_run(session: AsyncSession, run: t.Run, cell_ids: list[str]) -> None:
    """Keep the trials of each of these cells of `run` that has settled (an import's, as it is
    recorded: all of them)."""
    conn = await session.connection()
    found = {cell_id: await from_attempts(conn, cell_id) for cell_id in cell_ids}
    await keep(
        session, run.judge_version, {cell_id: trials for cell_id, trials in found.items() if trials.is_settled()}
    )
