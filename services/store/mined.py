"""The attempts of a run whose events mine the repository's history, with the events that do.

Which attempts: their mining_events count, kept as their events were written
(services/store/usage.py), so only flagged attempts are read again. Which events: those
attempts' tool calls, matched again by services/common/mining.py (a few per attempt), so
the hits name the pattern and the command as the rule now reads them.
"""

import msgspec
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from hemra.services.common import mining
from hemra.services.store import runreads
from hemra.services.store import tables as t
from hemra.services.store.outputs import HistoryMining, MinedAttempt, MiningEvent

#: The most attempts listed, and matching events listed per attempt.
MAX_ATTEMPTS = 1000
MAX_EVENTS = 100
#: Tool-call events read per attempt (a hit later than these is counted, not listed).
MAX_TOOL_CALLS = 20_000


async def history_mining(session: AsyncSession, run_ref: str) -> HistoryMining:
    run = await runreads.find_run(session, run_ref)
    a, newer = t.Attempt, aliased(t.Attempt)
    latest = ~select(newer.id).where(newer.trial_id == a.trial_id, newer.number > a.number).exists()
    rows = (
        await session.execute(
            select(
                a.id,
                a.mining_events,
                latest,
                t.Cell.id,
                t.Cell.harness_name,
                t.Cell.model,
                t.Trial.task_name,
                t.Trial.repetition,
            )
            .join(t.Trial, t.Trial.id == a.trial_id)
            .join(t.Cell, t.Cell.id == t.Trial.cell_id)
            .where(a.run_id == run.id, a.mining_events > 0)
            .order_by(a.id)
            .limit(MAX_ATTEMPTS + 1)
        )
    ).all()
    found = HistoryMining(truncated=len(rows) > MAX_ATTEMPTS)
    for attempt_id, count, is_latest, cell_id, harness, model, task_name, repetition in rows[:MAX_ATTEMPTS]:
        events = await _events(session, attempt_id)
        found.attempts.append(
            MinedAttempt(
                attempt_id=attempt_id,
                cell_id=cell_id,
                harness_name=harness,
                model=model,
                task_name=task_name,
                repetition=repetition,
                latest=bool(is_latest),
                mining_events=count,
                patterns=[p for p in mining.PATTERNS if any(e.pattern == p for e in events)],
                events=events[:MAX_EVENTS],
            )
        )
    return found


async def _events(session: AsyncSession, attempt_id: str) -> list[MiningEvent]:
    query = (
        select(t.Event.seq, t.Event.name, t.Event.payload)
        .where(t.Event.attempt_id == attempt_id, t.Event.type == "tool_call")
        .order_by(t.Event.seq)
        .limit(MAX_TOOL_CALLS)
    )
    found = []
    for seq, name, payload in (await session.execute(query)).all():
        if not mining.worth_reading(payload or ""):
            continue
        try:
            decoded = msgspec.json.decode(payload or "{}")
        except msgspec.DecodeError:
            continue
        found += [
            MiningEvent(seq=seq, pattern=h.pattern, command=h.command, possible=h.possible)
            for h in mining.event_hits("tool_call", name, decoded)
        ]
    return found
