"""The queue's hot path on SQLite: claim, heartbeat, events and complete, one thread hop each.

queue.py says what each operation means, in SQLAlchemy Core, for every database. Through
the aiosqlite driver every statement, and every fetch of its rows, is a hop to the driver's
thread and back: a claim and a completion took some forty, most of the embedded queue's
time. Here each operation is one transaction run whole on a connection of our own, in one
thread: BEGIN IMMEDIATE (the write lock from the first statement, as the engine takes it),
the same guarded statements as queue.py, COMMIT. Holding the write lock, the pick and the
updates cannot race another claimer, so the guards hold exactly as in queue.py. Anything off
the hot path (a repeated or stale completion or batch of events, an infrastructure failure
that may queue a retry, a pinned row not yet cached) falls back to queue.py, as on PostgreSQL
(pgqueue.py).
"""

import asyncio
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

from hemra.services.common.errors import Unavailable
from hemra.services.store import completion, db, pinned, queue, usage

_PICK = """
SELECT j.id, j.run_id, r.limited FROM jobs j JOIN runs r ON r.id = j.run_id
WHERE j.state = 'queued' AND (NOT r.limited OR r.leased < r.concurrency) {filters}
ORDER BY j.create_time, j.id LIMIT 1
"""
PICKS = {
    (False, False): _PICK.format(filters=""),
    (True, False): _PICK.format(filters="AND j.run_id = ?"),
    (False, True): _PICK.format(filters="AND r.pool = ?"),
    (True, True): _PICK.format(filters="AND j.run_id = ? AND r.pool = ?"),
}
TAKE_SLOT = "UPDATE runs SET leased = leased + 1 WHERE id = ? AND leased < concurrency"
LEASE = """
UPDATE jobs SET state = 'leased', lease_owner = ?, lease_token = lease_token + 1,
                lease_expire_time = ?, try_count = try_count + 1, claimed_after = ?
WHERE id = ? AND state = 'queued'
RETURNING id, run_id, attempt_id, lease_token, lease_expire_time
"""
START = "UPDATE attempts SET state = 'running', start_time = ? WHERE id = ? RETURNING *"
TRIAL = """
SELECT t.run_id, t.cell_id, t.task_digest, t.task_name, t.repetition, c.position, c.dataset_digest,
       c.dataset_name, c.harness_digest, c.harness_name, c.model
FROM trials t JOIN cells c ON c.id = t.cell_id WHERE t.id = ?
"""
HEARTBEAT = """
UPDATE jobs SET lease_expire_time = ?
WHERE id = ? AND lease_token = ? AND state = 'leased' AND lease_expire_time >= ?
RETURNING (SELECT cancel_requested FROM runs WHERE runs.id = jobs.run_id)
"""
CLOSE = """
UPDATE jobs SET state = 'done', last_error = ''
WHERE id = ? AND lease_token = ? AND state = 'leased' AND lease_expire_time >= ?
  AND EXISTS (SELECT 1 FROM attempts a WHERE a.id = jobs.attempt_id AND a.state <> 'finished')
RETURNING attempt_id, run_id
"""
FREE_SLOT = "UPDATE runs SET leased = leased - 1 WHERE id = ? AND limited AND leased > 0"
FINISH = """
UPDATE attempts SET state = 'finished', outcome = ?, exit_code = ?, error = ?, artifacts = ?, score = ?,
                    agent_version = ?, end_time = ?, start_time = COALESCE(?, start_time), verdict = ?,
                    agent_name = ?, judge_scores = ?
WHERE id = ? RETURNING *
"""

#: queue.append_events' guarded numbering: the batch's count and usage added to the attempt
#: the live lease names (holding `first_seq - 1` events, when the worker numbered the batch).
BUMP = f"""
UPDATE attempts SET event_count = event_count + ?, {", ".join(f"{c} = {c} + ?" for c in usage.SUMMED)}
WHERE id = (SELECT attempt_id FROM jobs
            WHERE id = ? AND lease_token = ? AND state = 'leased' AND lease_expire_time >= ?)
  AND (? = 0 OR event_count = ? - 1)
RETURNING id, event_count
"""
INSERT_EVENT = f"INSERT INTO events (attempt_id, seq, {', '.join(queue.EVENT_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?)"


class FastQueue:
    """One connection of our own, used by one thread (opened there on first use)."""

    def __init__(self, path: str):
        self.path = path
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="hemra-sqlite-queue")
        self._conn: sqlite3.Connection | None = None

    async def close(self) -> None:
        await self._in_thread(self._close)
        self._thread.shutdown(wait=True)

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    async def _in_thread(self, function, *args):
        return await asyncio.get_running_loop().run_in_executor(self._thread, function, *args)

    async def _transaction(self, function, *args):
        try:
            return await self._in_thread(self._run, function, args)
        except sqlite3.OperationalError as exc:
            # A full or read-only file system refuses for good; anything else (locked past the
            # busy timeout, the file gone) may pass: workers back off and ask again.
            raise db.unwritable(exc, self.path) or Unavailable(f"the database is unavailable: {exc}") from None

    def _run(self, function, args):
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = function(conn, *args)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLite rolls back by itself after some errors (a full disk)
                conn.execute("ROLLBACK")
            raise
        return result

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            # As the engine's connections are (db._configure_sqlite); the file is in WAL mode already.
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._conn = conn
        return self._conn

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
        """(job, attempt, trial, cell) of each job leased, up to `max_jobs`, in one transaction;
        none when nothing is eligible. Pinned run, task and harness rows are the caller's to
        look up (usually cached)."""
        found = await self._transaction(_claim_many, worker, now + lease_secs, now, run_id, pool, after, max_jobs)
        claimed = []
        for job, attempt, trial in found:
            trial, cell = pinned.put_trial(SimpleNamespace(id=attempt.trial_id, **trial))
            claimed.append((job, attempt, trial, cell))
        return claimed

    async def heartbeat(self, job_id: str, token: int, lease_secs: float, now: float) -> tuple[float, bool] | None:
        """(new expiry, cancel requested), or None when the guard did not match."""
        expire = now + lease_secs
        row = await self._transaction(_fetchone, HEARTBEAT, (expire, job_id, token, now))
        return None if row is None else (expire, bool(row[0]))

    async def complete(self, job_id: str, token: int, done: completion.Completion, now: float):
        """The finished attempt, or None when the guard did not match (the caller finds out why).
        Only for results: an infrastructure failure may queue a retry (completion.complete)."""
        return await self._transaction(_complete, job_id, token, now, completion.finished_row(done, now))

    async def append_events(self, job_id: str, token: int, events: list[dict], now: float, first_seq: int):
        """The attempt's last sequence number once `events` (not empty) are appended, or None when
        the guard did not match: a lost lease, or a batch repeated or out of order (the caller
        finds out which)."""
        return await self._transaction(_append_events, job_id, token, events, now, first_seq)


def _fetchone(conn: sqlite3.Connection, sql: str, params: tuple):
    return conn.execute(sql, params).fetchone()


def _claim_many(conn: sqlite3.Connection, worker: str, expire: float, now: float, run_id, pool, after, max_jobs):
    claimed = []
    for _ in range(max_jobs):
        one = _claim(conn, worker, expire, now, run_id, pool, after)
        if one is None:
            break
        claimed.append(one)
    return claimed


def _claim(conn: sqlite3.Connection, worker: str, expire: float, now: float, run_id: str, pool: str, after: str):
    filters = tuple(value for value in (run_id, pool) if value)
    picked = conn.execute(PICKS[bool(run_id), bool(pool)], filters).fetchone()
    if picked is None:
        return None
    job_id, picked_run, limited = picked
    # The write lock is ours: the pick saw a free slot, and nobody can have taken it since.
    if limited and conn.execute(TAKE_SLOT, (picked_run,)).rowcount != 1:
        return None
    job = conn.execute(LEASE, (worker, expire, after, job_id)).fetchone()
    cursor = conn.execute(START, (now, job[2]))
    attempt = _attempt(cursor.fetchone(), cursor.description)
    trial = dict(zip(queue.TRIAL_KEYS, conn.execute(TRIAL, (attempt.trial_id,)).fetchone(), strict=True))
    leased = SimpleNamespace(id=job[0], run_id=job[1], attempt_id=job[2], lease_token=job[3], lease_expire_time=job[4])
    return leased, attempt, trial


def _complete(conn: sqlite3.Connection, job_id: str, token: int, now: float, finished: tuple):
    closed = conn.execute(CLOSE, (job_id, token, now)).fetchone()
    if closed is None:
        return None
    attempt_id, run_id = closed
    conn.execute(FREE_SLOT, (run_id,))
    cursor = conn.execute(FINISH, (*finished, attempt_id))
    return _attempt(cursor.fetchone(), cursor.description)


def _append_events(conn: sqlite3.Connection, job_id: str, token: int, events: list[dict], now: float, first: int):
    added = usage.of_events(events).summed()
    bumped = conn.execute(
        BUMP, (len(events), *(added[name] for name in usage.SUMMED), job_id, token, now, first, first)
    ).fetchone()
    if bumped is None:
        return None
    attempt_id, last = bumped
    start = last - len(events) + 1
    conn.executemany(
        INSERT_EVENT,
        [(attempt_id, start + i, *queue.event_values(event)) for i, event in enumerate(events)],
    )
    return last


def _attempt(row, description) -> SimpleNamespace:
    return queue.attempt_of({column[0]: value for column, value in zip(description, row, strict=True)})
