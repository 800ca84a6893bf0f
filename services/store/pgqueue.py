"""The queue's hot path on PostgreSQL: claim, heartbeat, events and complete, one statement each.

queue.py says what each operation means, in SQLAlchemy Core, for every database.
On PostgreSQL the same guarded updates fit in one statement apiece (data-modifying
CTEs), sent straight through asyncpg on a connection of our own pool, outside any
explicit transaction: one round trip per call instead of five (pool ping, BEGIN,
two statements, COMMIT), and no SQL building per call. A statement is atomic, so
the guards hold exactly as in queue.py. Anything off the hot path (a repeated or
stale completion or batch of events, an infrastructure failure that may queue a
retry, a pinned row not yet cached) falls back to queue.py.
"""

from types import SimpleNamespace

import asyncpg

from hemra.services.common.errors import Unavailable
from hemra.services.store import completion, db, pinned, queue, usage

#: The claimed job, its attempt (every column), and its trial and cell.
_CLAIM = """
WITH pick AS (
    SELECT j.id, j.run_id, r.limited FROM jobs j JOIN runs r ON r.id = j.run_id
    WHERE j.state = 'queued' AND (NOT r.limited OR r.leased < r.concurrency) {filters}
    ORDER BY j.create_time, j.id LIMIT 1
    FOR UPDATE OF j SKIP LOCKED
), slot AS (
    -- The run's slot: a guarded increment, re-checked on the newest row version
    -- when another claimer updated it first, so concurrency holds across workers.
    UPDATE runs SET leased = runs.leased + 1 FROM pick
    WHERE runs.id = pick.run_id AND pick.limited AND runs.leased < runs.concurrency
    RETURNING runs.id
), leased AS (
    UPDATE jobs SET state = 'leased', lease_owner = $1, lease_token = jobs.lease_token + 1,
                    lease_expire_time = $2::float8 + $3::float8, try_count = jobs.try_count + 1,
                    claimed_after = $4
    FROM pick
    WHERE jobs.id = pick.id AND jobs.state = 'queued' AND (NOT pick.limited OR EXISTS (SELECT 1 FROM slot))
    RETURNING jobs.id, jobs.run_id, jobs.attempt_id, jobs.lease_token, jobs.lease_expire_time
), started AS (
    UPDATE attempts SET state = 'running', start_time = $2 FROM leased
    WHERE attempts.id = leased.attempt_id
    RETURNING attempts.*
)
SELECT leased.id AS job_id, leased.lease_token, leased.lease_expire_time, started.*,
       t.cell_id, t.task_digest, t.task_name, t.repetition, c.position, c.dataset_digest, c.dataset_name,
       c.harness_digest, c.harness_name, c.model
FROM leased JOIN started ON started.id = leased.attempt_id
JOIN trials t ON t.id = started.trial_id JOIN cells c ON c.id = t.cell_id
"""
#: The claim statement for each filter: (only this run, only this pool) -> SQL. The filters'
#: values follow the four common parameters, in that order.
CLAIMS = {
    (False, False): _CLAIM.format(filters=""),
    (True, False): _CLAIM.format(filters="AND j.run_id = $5"),
    (False, True): _CLAIM.format(filters="AND r.pool = $5"),
    (True, True): _CLAIM.format(filters="AND j.run_id = $5 AND r.pool = $6"),
}

HEARTBEAT = """
UPDATE jobs SET lease_expire_time = $4
WHERE id = $1 AND lease_token = $2 AND state = 'leased' AND lease_expire_time >= $3
RETURNING (SELECT cancel_requested FROM runs WHERE runs.id = jobs.run_id)
"""

#: A result (not an infrastructure failure: those may queue a retry, see completion.complete).
COMPLETE = """
WITH closed AS (
    UPDATE jobs SET state = 'done', last_error = ''
    WHERE id = $1 AND lease_token = $2 AND state = 'leased' AND lease_expire_time >= $3
      AND EXISTS (SELECT 1 FROM attempts a WHERE a.id = jobs.attempt_id AND a.state <> 'finished')
    RETURNING attempt_id, run_id
), slot AS (
    UPDATE runs SET leased = runs.leased - 1 FROM closed
    WHERE runs.id = closed.run_id AND runs.limited AND runs.leased > 0
    RETURNING runs.id
), finished AS (
    UPDATE attempts SET state = 'finished', outcome = $4, exit_code = $5, error = $6, artifacts = $7::json,
                        score = $8::json, agent_version = $9, end_time = $10,
                        start_time = COALESCE($11, attempts.start_time), verdict = $12, agent_name = $13,
                        judge_scores = $14::json
    FROM closed WHERE attempts.id = closed.attempt_id
    RETURNING attempts.*
)
SELECT finished.*, (SELECT count(*) FROM slot) AS freed FROM finished
"""

#: queue.append_events' guarded numbering and the batch's rows, in one statement: the count and
#: usage added to the attempt the live lease names (holding `first_seq - 1` events, when the
#: worker numbered the batch), then the events numbered after what it held.
#: Where the parameters after the usage sums start: first_seq, then the event columns.
_FIRST = 5 + len(usage.SUMMED)
APPEND_EVENTS = f"""
WITH bumped AS (
    UPDATE attempts SET event_count = attempts.event_count + $4,
        {", ".join(f"{c} = attempts.{c} + ${n}" for n, c in enumerate(usage.SUMMED, start=5))}
    WHERE attempts.id = (SELECT attempt_id FROM jobs
                         WHERE id = $1 AND lease_token = $2 AND state = 'leased' AND lease_expire_time >= $3)
      AND (${_FIRST}::int = 0 OR attempts.event_count = ${_FIRST}::int - 1)
    RETURNING attempts.id, attempts.event_count
), added AS (
    INSERT INTO events (attempt_id, seq, {", ".join(queue.EVENT_COLUMNS)})
    SELECT bumped.id, bumped.event_count - $4 + e.n, {", ".join(f"e.{c}" for c in queue.EVENT_COLUMNS)}
    FROM bumped, unnest(${_FIRST + 1}::float8[], ${_FIRST + 2}::text[], ${_FIRST + 3}::text[],
                        ${_FIRST + 4}::text[], ${_FIRST + 5}::float8[])
         WITH ORDINALITY AS e({", ".join(queue.EVENT_COLUMNS)}, n)
)
SELECT event_count FROM bumped
"""

_CONNECTION_ERRORS = (OSError, asyncpg.InterfaceError, asyncpg.PostgresConnectionError)


async def _keep_session(connection: asyncpg.Connection) -> None:
    """The pool's reset on release. Its default (RESET ALL, UNLISTEN *, CLOSE ALL, unlock all
    advisory locks) is one more round trip per call, for session state these connections never
    make: they run only this module's single statements, outside transactions (an open
    transaction, which they never leave, is still rolled back by the pool itself)."""


async def _fetchrow_on(connection: asyncpg.Connection, sql: str, *args):
    """One statement on a pooled connection. A connection whose statement did not end with
    PostgreSQL's answer (cut, cancelled, or left by asyncpg in a state it cannot leave:
    "another operation is in progress") is closed, not handed out again: _keep_session makes
    no round trip on release that would find it broken, and every later call would fail on it."""
    try:
        return await connection.fetchrow(sql, *args)
    except asyncpg.PostgresError:
        raise  # the statement's own error: the connection is as good as before
    except BaseException:
        connection.terminate()
        raise


class FastQueue:
    """The hot path's own small asyncpg pool, opened on first use."""

    def __init__(self, dsn: str, max_size: int = 8):
        self.dsn = dsn
        self.max_size = max_size
        self._pool: asyncpg.Pool | None = None

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    async def _fetchrow(self, sql: str, *args):
        try:
            if self._pool is None:
                self._pool = await asyncpg.create_pool(
                    self.dsn, min_size=1, max_size=self.max_size, reset=_keep_session
                )
            async with self._pool.acquire() as connection:
                return await _fetchrow_on(connection, sql, *args)
        except _CONNECTION_ERRORS + (asyncpg.InternalClientError,) as exc:
            # The database is away, or a connection was left unusable: workers back off and ask
            # again, on a connection the pool opens anew.
            raise Unavailable(f"the database is unavailable: {type(exc).__name__}: {exc}") from None
        except asyncpg.PostgresError as exc:  # read-only, a full disk, no privilege: for good
            refused = db.unwritable(exc, db.place(self.dsn))
            if refused is None:
                raise
            raise refused from None

    async def claim(
        self,
        pinned: pinned.Pinned,
        worker: str,
        lease_secs: float,
        now: float,
        run_id: str = "",
        pool: str = "",
        after: str = "",
        max_jobs: int = 1,
    ) -> list[tuple]:
        """(job, attempt, trial, cell) of each job leased, up to `max_jobs`; none when nothing is
        eligible. Pinned run, task and harness rows are the caller's to look up (usually cached).
        One statement per job, each atomic on its own: every job has its own lease, so a batch
        cut short (the database gone midway) leaves leases that expire as a lost answer's do."""
        filters = [value for value in (run_id, pool) if value]
        claimed = []
        for _ in range(max_jobs):
            row = await self._fetchrow(CLAIMS[bool(run_id), bool(pool)], worker, now, lease_secs, after, *filters)
            if row is None:
                break
            claimed.append(_claimed(pinned, row))
        return claimed

    async def heartbeat(self, job_id: str, token: int, lease_secs: float, now: float) -> tuple[float, bool] | None:
        """(new expiry, cancel requested), or None when the guard did not match."""
        expire = now + lease_secs
        row = await self._fetchrow(HEARTBEAT, job_id, token, now, expire)
        return None if row is None else (expire, bool(row[0]))

    async def complete(self, job_id: str, token: int, done: completion.Completion, now: float):
        """The finished attempt, or None when the guard did not match (the caller finds out why).
        Only for results: an infrastructure failure may queue a retry (completion.complete)."""
        row = await self._fetchrow(COMPLETE, job_id, token, now, *completion.finished_row(done, now))
        return None if row is None else queue.attempt_of(row)

    async def append_events(self, job_id: str, token: int, events: list[dict], now: float, first_seq: int):
        """The attempt's last sequence number once `events` (not empty) are appended, or None when
        the guard did not match: a lost lease, or a batch repeated or out of order (the caller
        finds out which)."""
        added = usage.of_events(events).summed()
        columns = [list(column) for column in zip(*map(queue.event_values, events))]
        row = await self._fetchrow(
            APPEND_EVENTS, job_id, token, now, len(events), *(added[c] for c in usage.SUMMED), first_seq, *columns
        )
        return None if row is None else row["event_count"]


def _claimed(pinned: pinned.Pinned, row) -> tuple:
    job = SimpleNamespace(
        id=row["job_id"],
        run_id=row["run_id"],
        attempt_id=row["id"],
        lease_token=row["lease_token"],
        lease_expire_time=row["lease_expire_time"],
    )
    trial, cell = pinned.put_trial(SimpleNamespace(id=row["trial_id"], **{k: row[k] for k in queue.TRIAL_KEYS}))
    return job, queue.attempt_of(row), trial, cell
