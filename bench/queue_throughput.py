"""Durable job queue throughput: ClaimJob + CompleteJob through the store's gRPC server,
against the same claim + complete in raw SQL.

    .venv/bin/python bench/queue_throughput.py [--jobs N] [--workers 1,4] [--databases sqlite,postgres]
                                               [--timeout S] [--analyze] [--profile] [--keep]

For each database (a SQLite file in a temp folder; a fresh PostgreSQL database, dropped afterwards):

1. Floor: record a run of N jobs with Store.record_run, then claim and complete every job in
   ONE process with raw SQL (asyncpg on PostgreSQL, the sqlite3 module on SQLite), no gRPC and
   no ORM, one job after another.
2. Floor + one RPC per job (issue 37), for each W in --workers: the same raw SQL, done by a
   server process behind one RPC through HEMRA's transport (transport.new_server on
   127.0.0.1:0 with a token; transport.channel), called by W worker processes: each call
   completes the worker's last job and claims its next. The design's fixed cost (a worker is
   another process than the store) without HEMRA's protobuf, ORM and bookkeeping.
3. HEMRA: for each W in --workers, record a fresh run of N jobs (concurrency N, so the run's
   limit never binds), start the store's gRPC server in its own process (Store.open +
   build_server on 127.0.0.1:0 with a token), then start W worker processes that each call
   ClaimJob (lease 60 s) once, then CompleteJob (completed, scored reward 1.0) with claim_next,
   as the executor does, until no next job comes back. The time runs from the start of the
   workers until the last one exits.
4. After every measurement: every job of the run is done with try_count 1 and lease_token 1,
   every attempt finished (completed, passed) and every job was completed exactly once.

Prints a table and writes bench/results/queue-<timestamp>.json. Exits 1 when a check fails
(targets that are missed are reported, not fatal).

Targets (issue 18): SQLite with 1 worker >= 500 jobs/s and floor jobs/s / HEMRA jobs/s <= 5;
PostgreSQL with 4 workers >= 1,000 jobs/s and floor / HEMRA <= 1.5. Issue 37: HEMRA / (floor +
RPC) <= 2 on both databases.

Internal modes (started by the benchmark itself): `_serve` runs the store server,
`_worker` runs one worker; `_serve_floor` and `_worker_floor` are the floor's.
"""

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

POSTGRES_ADMIN = os.environ.get("HEMRA_BENCH_POSTGRES", "postgresql://root@127.0.0.1:5432/postgres")
TOKEN_ENV = "HEMRA_BENCH_TOKEN"
LEASE_SECS = 60
#: (database, workers) -> (jobs/s at least, floor/HEMRA at most): issue 18's targets.
TARGETS = {("sqlite", 1): (500.0, 5.0), ("postgres", 4): (1000.0, 1.5)}
#: Issue 37: HEMRA within this factor of the floor that includes one RPC per job, every row.
RPC_FLOOR_TARGET = 2.0
#: The score every completion carries, as HEMRA stores it (convert.to_dict of a hemra.v1.Score).
SCORE = {"state": "SCORE_STATE_SCORED", "rewards": {"reward": 1.0}}


class BenchError(Exception):
    pass


# --------------------------------------------------------------------------- databases


class Database:
    """One benchmark database: its SQLAlchemy URL for HEMRA and raw access for floor and checks."""

    def __init__(self, kind: str, url: str, blob_dir: Path, pg_name: str = "", sqlite_path: Path | None = None):
        self.kind, self.url, self.blob_dir = kind, url, blob_dir
        self.pg_name, self.sqlite_path = pg_name, sqlite_path

    @property
    def pg_dsn(self) -> str:
        return f"{POSTGRES_ADMIN.rsplit('/', 1)[0]}/{self.pg_name}"

    async def fetch(self, sql: str, *args) -> list[tuple]:
        """Rows of one query; `?` placeholders (turned into $n on PostgreSQL)."""
        if self.kind == "sqlite":
            conn = sqlite3.connect(self.sqlite_path, timeout=30)
            try:
                return [tuple(r) for r in conn.execute(sql, args).fetchall()]
            finally:
                conn.close()
        import asyncpg

        for n in range(1, len(args) + 1):
            sql = sql.replace("?", f"${n}", 1)
        conn = await asyncpg.connect(self.pg_dsn, timeout=10)
        try:
            return [tuple(r) for r in await conn.fetch(sql, *args)]
        finally:
            await conn.close()


async def admin(sql: str) -> list:
    import asyncpg

    conn = await asyncpg.connect(POSTGRES_ADMIN, timeout=10)
    try:
        return [tuple(r) for r in await conn.fetch(sql)]
    finally:
        await conn.close()


async def create_database(kind: str, scratch: Path) -> Database:
    from hemra.services.store.service import Store

    folder = scratch / kind
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "sqlite":
        path = folder / "hemra.db"
        db = Database(kind, f"sqlite:///{path}", folder / "blobs", sqlite_path=path)
    else:
        name = "hemra_bench_" + secrets.token_hex(6)
        await admin(f"CREATE DATABASE {name}")
        db = Database(kind, "", folder / "blobs", pg_name=name)
        db.url = db.pg_dsn
    store = await Store.open(db.url, db.blob_dir)  # runs the migrations
    await store.close()
    return db


async def drop_database(db: Database) -> None:
    if db.kind == "postgres":
        await admin(f"DROP DATABASE IF EXISTS {db.pg_name} WITH (FORCE)")


def plan(jobs: int, label: str):
    """A run of `jobs` trials of one task and one harness (as tests/store/test_queue.py's plan())."""
    import typing

    from hemra.services.store import records

    # A planned trial is (cell index, task digest, task name, repetition[, more fields]): pad any
    # later fields (such as an imported result) with None, as tests/store/test_queue.py does.
    try:
        hint = typing.get_type_hints(records.PlannedRun)["trials"]
        width = len(typing.get_args(typing.get_args(hint)[0]))
    except (KeyError, IndexError, TypeError, NameError):
        width = 4
    pad = (None,) * max(width - 4, 0)
    return records.PlannedRun(
        label=label,
        spec={"label": label, "concurrency": jobs},
        concurrency=jobs,
        max_infra_retries=0,
        datasets=[dict(digest="sha256:d", dataset_name="ds", source="/x", task_digests=["sha256:t"], create_time=0.0)],
        tasks=[dict(digest="sha256:t", task_name="task", record={})],
        harnesses=[dict(digest="sha256:h", harness_name="h", record={})],
        cells=[("sha256:d", "ds", "sha256:h", "h", "")],
        trials=[(0, "sha256:t", "task", k + 1, *pad) for k in range(jobs)],
    )


async def record_run(db: Database, jobs: int, label: str, analyze: bool = False) -> str:
    from hemra.services.store.service import Store

    store = await Store.open(db.url, db.blob_dir)
    try:
        run, _ = await store.record_run(plan(jobs, label))
    finally:
        await store.close()
    if analyze and db.kind == "postgres":
        await db.fetch("ANALYZE")  # what autovacuum does by itself, some time after the bulk insert
    return run.id


async def planner_stats(db: Database) -> dict | None:
    """PostgreSQL: whether the jobs table has planner statistics yet, and rows changed since."""
    if db.kind != "postgres":
        return None
    ((last_auto, last_manual, changed),) = await db.fetch(
        "SELECT last_autoanalyze, last_analyze, n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 'jobs'"
    )
    last = max(filter(None, (last_auto, last_manual)), default=None)
    return {
        "analyzed": last is not None,
        "last_analyze": last.isoformat() if last else None,
        "rows_changed_since": changed,
    }


def describe_stats(stats: dict | None) -> str:
    if stats is None:
        return ""
    if not stats["analyzed"]:
        return "; jobs table never analyzed"
    return f"; jobs table analyzed, {stats['rows_changed_since']} rows changed since"


async def verify(db: Database, run_id: str, jobs: int, completed: list[str], owners: set[str], what: str) -> None:
    """Every job done once (try_count 1, lease_token 1), every attempt finished exactly once."""
    rows = await db.fetch(
        "SELECT id, attempt_id, state, try_count, lease_token, lease_owner FROM jobs WHERE run_id = ?", run_id
    )
    attempts = await db.fetch("SELECT id, state, outcome, number, verdict FROM attempts WHERE run_id = ?", run_id)
    problems = []
    if len(rows) != jobs:
        problems.append(f"{len(rows)} jobs in the run, expected {jobs}")
    bad = [r for r in rows if (r[2], r[3], r[4]) != ("done", 1, 1)]
    if bad:
        problems.append(f"{len(bad)} jobs not (done, try_count 1, lease_token 1), e.g. {bad[:3]}")
    strangers = {r[5] for r in rows} - owners
    if strangers:
        problems.append(f"jobs leased by unknown owners {sorted(strangers)[:5]}")
    if len(attempts) != jobs:
        problems.append(f"{len(attempts)} attempts in the run, expected {jobs} (a retry was queued?)")
    if {a[0] for a in attempts} != {r[1] for r in rows}:
        problems.append("the run's attempts are not exactly its jobs' attempts")
    bad = [a for a in attempts if (a[1], a[2], a[3], a[4]) != ("finished", "completed", 1, "passed")]
    if bad:
        problems.append(f"{len(bad)} attempts not (finished, completed, number 1, passed), e.g. {bad[:3]}")
    if len(completed) != jobs or len(set(completed)) != jobs:
        problems.append(
            f"{len(completed)} completions of {len(set(completed))} distinct jobs, expected {jobs} of {jobs}"
        )
    if set(completed) != {r[0] for r in rows}:
        problems.append("the completed job IDs are not the run's jobs")
    if problems:
        raise BenchError(f"{what}: verification failed on run {run_id}:\n  " + "\n  ".join(problems))


# --------------------------------------------------------------------------- floor (raw SQL)

CLAIM_SQL = """
UPDATE jobs SET state = 'leased', lease_owner = {p1}, lease_token = lease_token + 1,
       lease_expire_time = {p2}, try_count = try_count + 1
WHERE id = (SELECT id FROM jobs WHERE state = 'queued' ORDER BY create_time, id LIMIT 1{lock})
  AND state = 'queued'
RETURNING id, lease_token, attempt_id
"""
#: Claim batching's prototype (floor only): up to {p3} jobs in one statement.
CLAIM_BATCH_SQL = """
UPDATE jobs SET state = 'leased', lease_owner = {p1}, lease_token = lease_token + 1,
       lease_expire_time = {p2}, try_count = try_count + 1
WHERE id IN (SELECT id FROM jobs WHERE state = 'queued' ORDER BY create_time, id LIMIT {p3}{lock})
  AND state = 'queued'
RETURNING id, lease_token, attempt_id
"""
DONE_JOB_SQL = "UPDATE jobs SET state = 'done' WHERE id = {p1} AND lease_token = {p2} AND state = 'leased'"
DONE_ATTEMPT_SQL = """
UPDATE attempts SET state = 'finished', outcome = 'completed', score = {p1}, verdict = 'passed',
       start_time = {p2}, end_time = {p3}
WHERE id = {p4} AND state <> 'finished'
"""


def _sql(template: str, style: str, lock: str = "") -> str:
    marks = {f"p{n}": (f"${n}" if style == "pg" else "?") for n in range(1, 5)}
    return template.format(lock=lock, **marks).strip()


async def floor_postgres(db: Database) -> tuple[float, list[str]]:
    import asyncpg

    claim = _sql(CLAIM_SQL, "pg", " FOR UPDATE SKIP LOCKED")
    done_job, done_attempt = _sql(DONE_JOB_SQL, "pg"), _sql(DONE_ATTEMPT_SQL, "pg")
    score = json.dumps(SCORE)
    completed = []
    conn = await asyncpg.connect(db.pg_dsn, timeout=10)
    try:
        started = time.perf_counter()
        while True:
            now = time.time()
            row = await conn.fetchrow(claim, "floor", now + LEASE_SECS)  # one statement, its own transaction
            if row is None:
                break
            async with conn.transaction():
                status_job = await conn.execute(done_job, row["id"], row["lease_token"])
                status_attempt = await conn.execute(done_attempt, score, now, time.time(), row["attempt_id"])
            if status_job != "UPDATE 1" or status_attempt != "UPDATE 1":
                raise BenchError(f"floor: completing {row['id']} updated {status_job!r} / {status_attempt!r}")
            completed.append(row["id"])
        return time.perf_counter() - started, completed
    finally:
        await conn.close()


def floor_sqlite(db: Database) -> tuple[float, list[str]]:
    claim = _sql(CLAIM_SQL, "sqlite")  # SQLite has no FOR UPDATE; BEGIN IMMEDIATE serializes writers
    done_job, done_attempt = _sql(DONE_JOB_SQL, "sqlite"), _sql(DONE_ATTEMPT_SQL, "sqlite")
    score = json.dumps(SCORE)
    completed = []
    conn = sqlite3.connect(db.sqlite_path, isolation_level=None, timeout=30)
    try:
        # As services/store/db.py configures every connection.
        for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=30000", "foreign_keys=ON"):
            conn.execute(f"PRAGMA {pragma}")
        started = time.perf_counter()
        while True:
            now = time.time()
            conn.execute("BEGIN IMMEDIATE")
            row = conn.execute(claim, ("floor", now + LEASE_SECS)).fetchone()
            conn.execute("COMMIT")
            if row is None:
                break
            job_id, token, attempt_id = row
            conn.execute("BEGIN IMMEDIATE")
            n_job = conn.execute(done_job, (job_id, token)).rowcount
            n_attempt = conn.execute(done_attempt, (score, now, time.time(), attempt_id)).rowcount
            conn.execute("COMMIT")
            if (n_job, n_attempt) != (1, 1):
                raise BenchError(f"floor: completing {job_id} updated {n_job} job / {n_attempt} attempt rows")
            completed.append(job_id)
        return time.perf_counter() - started, completed
    finally:
        conn.close()


async def measure_floor(db: Database, jobs: int, analyze: bool = False) -> dict:
    run_id = await record_run(db, jobs, f"bench-floor-{db.kind}", analyze)
    stats = await planner_stats(db)
    if db.kind == "postgres":
        seconds, completed = await floor_postgres(db)
    else:
        seconds, completed = floor_sqlite(db)
    await verify(db, run_id, jobs, completed, {"floor"}, f"{db.kind} floor")
    return {"run_id": run_id, "seconds": seconds, "jobs_per_s": jobs / seconds, "planner_stats": stats}


# --------------------------------------------------------------------------- floor + one RPC per job
#
# The design's fixed cost: a worker is another process than the store, so each job costs at
# least one round trip. This floor is the raw SQL above, done by a server process behind one
# echo-like RPC through HEMRA's own transport (transport.new_server, so the same token, readiness
# and error interceptors; transport.channel on the worker's side): per job, a worker sends the
# job it finished, the server completes it and claims the next in raw SQL and sends that back.
# No protobuf and no ORM: what is left of HEMRA's time above it is HEMRA's own code.

#: The floor's RPC answers at CompleteJob's name, with bytes of its own: the token interceptor
#: lets in only the RPCs HEMRA serves, and this is the one a worker calls per job.
FLOOR_SERVICE, FLOOR_RPC = "hemra.v1.StoreService", "CompleteJob"
FLOOR_METHOD = f"/{FLOOR_SERVICE}/{FLOOR_RPC}"


class FloorQueue:
    """The raw SQL of one complete + one claim, on one SQLite connection or an asyncpg pool."""

    def __init__(self, db_kind: str, target: str, size: int):
        self.kind, self.target, self.size = db_kind, target, size
        self.score = json.dumps(SCORE)

    async def open(self) -> None:
        if self.kind == "sqlite":
            self.conn = sqlite3.connect(self.target, isolation_level=None, timeout=30)
            for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=30000", "foreign_keys=ON"):
                self.conn.execute(f"PRAGMA {pragma}")
            self.claim_sql = _sql(CLAIM_SQL, "sqlite")
            self.batch_sql = _sql(CLAIM_BATCH_SQL, "sqlite")
            self.done_job, self.done_attempt = _sql(DONE_JOB_SQL, "sqlite"), _sql(DONE_ATTEMPT_SQL, "sqlite")
        else:
            import asyncpg

            self.pool = await asyncpg.create_pool(self.target, min_size=self.size, max_size=self.size)
            self.claim_sql = _sql(CLAIM_SQL, "pg", " FOR UPDATE SKIP LOCKED")
            self.batch_sql = _sql(CLAIM_BATCH_SQL, "pg", " FOR UPDATE SKIP LOCKED")
            self.done_job, self.done_attempt = _sql(DONE_JOB_SQL, "pg"), _sql(DONE_ATTEMPT_SQL, "pg")

    async def close(self) -> None:
        if self.kind == "sqlite":
            self.conn.close()
        else:
            await self.pool.close()

    async def step(self, worker: str, done: list, want: int) -> list:
        """Complete every (job, lease token, attempt) of `done` in one transaction, then claim up
        to `want` jobs in one statement (1: the claim above; more: claim batching's prototype)."""
        now = time.time()
        claim = self.claim_sql if want == 1 else self.batch_sql
        claim_args = (worker, now + LEASE_SECS) if want == 1 else (worker, now + LEASE_SECS, want)
        if self.kind == "sqlite":  # as the in-process floor: BEGIN IMMEDIATE transactions
            conn = self.conn
            if done:
                conn.execute("BEGIN IMMEDIATE")
                for job, token, attempt in done:
                    n_job = conn.execute(self.done_job, (job, token)).rowcount
                    n_attempt = conn.execute(self.done_attempt, (self.score, now, now, attempt)).rowcount
                    if (n_job, n_attempt) != (1, 1):
                        raise BenchError(f"floor+rpc: completing {job} updated {n_job} / {n_attempt} rows")
                conn.execute("COMMIT")
            conn.execute("BEGIN IMMEDIATE")
            rows = conn.execute(claim, claim_args).fetchall()
            conn.execute("COMMIT")
            return [tuple(r) for r in rows]
        async with self.pool.acquire() as conn:
            if done:
                async with conn.transaction():
                    for job, token, attempt in done:
                        status_job = await conn.execute(self.done_job, job, token)
                        status_attempt = await conn.execute(self.done_attempt, self.score, now, now, attempt)
                        if status_job != "UPDATE 1" or status_attempt != "UPDATE 1":
                            raise BenchError(f"floor+rpc: completing {job} updated {status_job} / {status_attempt}")
            rows = await conn.fetch(claim, *claim_args)
            return [(r["id"], r["lease_token"], r["attempt_id"]) for r in rows]


def _encode(worker: str, jobs: list, want: int = 1) -> bytes:
    return json.dumps([worker, [list(j) for j in jobs], want]).encode()


def _decode(data: bytes) -> tuple[str, list, int]:
    worker, jobs, want = json.loads(data)
    return worker, [tuple(j) for j in jobs], want


async def serve_floor(kind: str, target: str, workers: int, lifetime: float) -> None:
    """The floor's server: raw SQL behind one RPC through transport.new_server on 127.0.0.1:0."""
    import grpc

    from hemra.services.common import transport

    queue = FloorQueue(kind, target, workers)
    await queue.open()

    async def complete_and_claim(request: bytes, context) -> bytes:
        worker, done, want = _decode(request)
        return _encode(worker, await queue.step(worker, done, want))

    handler = grpc.method_handlers_generic_handler(
        FLOOR_SERVICE, {FLOOR_RPC: grpc.unary_unary_rpc_method_handler(complete_and_claim)}
    )
    server = transport.new_server(os.environ[TOKEN_ENV])
    server.add_generic_rpc_handlers((handler,))
    port = transport.bind(server, "127.0.0.1:0")
    await transport.start(server)
    await _serve_until_stopped(port, lifetime, None)
    await server.stop(grace=2)
    await queue.close()


async def work_floor(address: str, name: str, deadline: float, batch: int = 1) -> dict:
    """One floor worker: one RPC per job (or per `batch` jobs: claim batching's prototype), each
    finishing the worker's last jobs and bringing the next."""
    from hemra.services.common import auth, transport

    channel = transport.channel(address)
    call = channel.unary_unary(FLOOR_METHOD)
    metadata = auth.metadata(os.environ[TOKEN_ENV])
    completed, jobs = [], []
    first_call = time.time()
    try:
        while True:
            if time.time() > deadline:
                raise SystemExit(f"{name}: deadline passed after {len(completed)} jobs")
            _, jobs, _ = _decode(await call(_encode(name, jobs, batch), timeout=60, metadata=metadata))
            if not jobs:
                break
            completed.extend(job[0] for job in jobs)
        end = time.time()
    finally:
        await channel.close()
    return {"name": name, "completed": completed, "first_call": first_call, "end": end, "cpu": _cpu_seconds()}


# --------------------------------------------------------------------------- HEMRA (gRPC store)


def _child_env(token: str) -> dict:
    env = {**os.environ, TOKEN_ENV: token, "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "protos"), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _stop(proc: subprocess.Popen, grace: float) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds: only this process, by its PID."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def start_server(
    db: Database, folder: Path, token: str, lifetime: float, profile: Path | None, floor_workers: int = 0
) -> tuple[subprocess.Popen, int]:
    """The store's server; with `floor_workers`, the floor's raw-SQL server instead."""
    out, err = folder / "server.out", folder / "server.err"
    command = [sys.executable, str(Path(__file__).resolve())]
    if floor_workers:
        target = str(db.sqlite_path) if db.kind == "sqlite" else db.pg_dsn
        command += ["_serve_floor", db.kind, target, "--workers", str(floor_workers)]
    else:
        command += ["_serve", db.url, str(db.blob_dir)]
    command += ["--lifetime", str(lifetime)]
    if profile:
        command += ["--profile", str(profile)]
    with open(out, "w") as stdout, open(err, "w") as stderr:
        proc = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=_child_env(token), cwd=REPO)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in out.read_text().splitlines():
            if line.startswith("PORT "):
                return proc, int(line.split()[1])
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    _stop(proc, 5)
    raise BenchError(f"the store server did not start (exit {proc.returncode}):\n{err.read_text()[-3000:]}")


def run_workers(
    port: int, workers: int, folder: Path, token: str, timeout: float, floor: bool = False, batch: int = 1
) -> tuple[float, list[dict]]:
    """Start W worker processes, wait for all; the seconds from the first start to the last exit."""
    procs = []
    env = _child_env(token)
    started_wall, started = time.time(), time.perf_counter()
    try:
        for w in range(workers):
            name = f"bench-w{w}"
            command = [
                sys.executable,
                str(Path(__file__).resolve()),
                "_worker_floor" if floor else "_worker",
                f"127.0.0.1:{port}",
                name,
                "--deadline",
                str(started_wall + timeout),
                *(["--batch", str(batch)] if floor else []),
            ]
            stdout, stderr = open(folder / f"{name}.out", "w"), open(folder / f"{name}.err", "w")
            procs.append(
                (name, subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env, cwd=REPO), stdout, stderr)
            )
        for name, proc, _, _ in procs:
            remaining = started + timeout - time.perf_counter()
            try:
                proc.wait(timeout=max(remaining, 0.1))
            except subprocess.TimeoutExpired:
                raise BenchError(f"worker {name} still running after {timeout:.0f} s") from None
        elapsed = time.perf_counter() - started
    finally:
        for _, proc, stdout, stderr in procs:
            _stop(proc, 2)
            stdout.close()
            stderr.close()
    reports = []
    for name, proc, _, _ in procs:
        if proc.returncode != 0:
            raise BenchError(f"worker {name} exited {proc.returncode}:\n{(folder / f'{name}.err').read_text()[-3000:]}")
        report = json.loads((folder / f"{name}.out").read_text())
        report["spawned"] = started_wall
        reports.append(report)
    return elapsed, reports


async def measure_hemra(
    db: Database,
    jobs: int,
    workers: int,
    scratch: Path,
    timeout: float,
    profile: Path | None = None,
    analyze: bool = False,
    floor: bool = False,
    batch: int = 1,
) -> dict:
    """HEMRA's store and workers; `floor`: the floor's raw-SQL server and workers, one RPC per job
    (per `batch` jobs: claim batching's prototype)."""
    what = (f"floor-rpc-b{batch}" if batch > 1 else "floor-rpc") if floor else "bench"
    run_id = await record_run(db, jobs, f"{what}-{db.kind}-w{workers}", analyze)
    stats = await planner_stats(db)
    folder = Path(tempfile.mkdtemp(prefix=f"{what}-{db.kind}-w{workers}-", dir=scratch))
    token = secrets.token_hex(16)
    server, port = start_server(db, folder, token, timeout + 120, profile, workers if floor else 0)
    try:
        seconds, reports = run_workers(port, workers, folder, token, timeout, floor, batch)
    finally:
        _stop(server, 15)
    if server.returncode not in (0, -signal.SIGTERM):
        raise BenchError(f"the store server exited {server.returncode}:\n{(folder / 'server.err').read_text()[-3000:]}")
    completed = [job for r in reports for job in r["completed"]]
    server_cpu = [
        float(line.split()[1]) for line in (folder / "server.out").read_text().splitlines() if line.startswith("CPU ")
    ]
    await verify(db, run_id, jobs, completed, {r["name"] for r in reports}, f"{db.kind} {what} W={workers}")
    first_call = min(r["first_call"] for r in reports)
    loop_seconds = max(r["end"] for r in reports) - first_call
    return {
        "run_id": run_id,
        "workers": workers,
        "seconds": seconds,
        "jobs_per_s": jobs / seconds,
        "loop_seconds": loop_seconds,
        "loop_jobs_per_s": jobs / loop_seconds,
        "worker_startup_s": first_call - reports[0]["spawned"],
        "jobs_per_worker": {r["name"]: len(r["completed"]) for r in reports},
        "planner_stats": stats,
        "store_cpu_ms_per_job": 1000 * server_cpu[0] / jobs if server_cpu else None,
        "worker_cpu_ms_per_job": 1000 * sum(r["cpu"] for r in reports) / jobs,
        "work_dir": str(folder),
    }


# --------------------------------------------------------------------------- child processes


async def serve(url: str, blob_dir: str, lifetime: float, profile: str | None) -> None:
    """The store server alone: Store.open + build_server on 127.0.0.1:0, PORT <n> on stdout."""
    from hemra.services.common import transport
    from hemra.services.store.server import build_server
    from hemra.services.store.service import Store

    store = await Store.open(url, Path(blob_dir))
    server, port = build_server(store, "127.0.0.1:0", os.environ[TOKEN_ENV])
    await transport.start(server)
    await _serve_until_stopped(port, lifetime, profile)
    await server.stop(grace=2)
    await store.close()


async def _serve_until_stopped(port: int, lifetime: float, profile: str | None) -> None:
    """Say PORT <n>, serve until told to stop, then say CPU <seconds>."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    parent, deadline = os.getppid(), time.monotonic() + lifetime
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    print(f"PORT {port}", flush=True)
    # Bounded: stop on SIGTERM, when the benchmark goes away, or after `lifetime` seconds.
    while not stop.is_set() and os.getppid() == parent and time.monotonic() < deadline:
        try:
            await asyncio.wait_for(stop.wait(), timeout=1.0)
        except TimeoutError:
            pass
    if profiler:
        profiler.disable()
        profiler.dump_stats(profile)
    print(f"CPU {_cpu_seconds():.6f}", flush=True)


def _cpu_seconds() -> float:
    """This process's user + system CPU time: unlike wall time, barely moved by a busy machine."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def work(address: str, name: str, deadline: float) -> dict:
    """One worker: ClaimJob once, then CompleteJob with claim_next (the executor's way: each
    completion brings the next job) until no job comes back."""
    from google.protobuf.duration_pb2 import Duration

    from hemra.services.common import transport
    from hemra.v1 import common_pb2 as pb
    from hemra.v1 import store_service_pb2 as spb

    channel = transport.channel(address)
    client = transport.store(channel, os.environ[TOKEN_ENV])
    lease = Duration(seconds=LEASE_SECS)
    score = pb.Score(state=pb.SCORE_STATE_SCORED, rewards=SCORE["rewards"])
    completed = []
    first_call = time.time()
    claim = spb.ClaimJobRequest(worker=name, lease=lease)
    try:
        job = (await client.ClaimJob(claim, timeout=60)).job
        while job.id:
            if time.time() > deadline:
                raise SystemExit(f"{name}: deadline passed after {len(completed)} jobs")
            done = await client.CompleteJob(
                spb.CompleteJobRequest(
                    job=job.id, lease_token=job.lease_token, outcome=pb.OUTCOME_COMPLETED, score=score, claim_next=claim
                ),
                timeout=60,
            )
            completed.append(job.id)
            job = done.next_job
        end = time.time()
    finally:
        await channel.close()
    return {"name": name, "completed": completed, "first_call": first_call, "end": end, "cpu": _cpu_seconds()}


def child_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="queue_throughput.py (internal)")
    sub = parser.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("_serve")
    s.add_argument("url")
    s.add_argument("blob_dir")
    s.add_argument("--lifetime", type=float, default=1800)
    s.add_argument("--profile")
    f = sub.add_parser("_serve_floor")
    f.add_argument("kind")
    f.add_argument("target")
    f.add_argument("--workers", type=int, required=True)
    f.add_argument("--lifetime", type=float, default=1800)
    for mode in ("_worker", "_worker_floor"):
        w = sub.add_parser(mode)
        w.add_argument("address")
        w.add_argument("name")
        w.add_argument("--deadline", type=float, required=True)
        w.add_argument("--batch", type=int, default=1)
    args = parser.parse_args(argv)
    if args.mode == "_serve":
        asyncio.run(serve(args.url, args.blob_dir, args.lifetime, args.profile))
    elif args.mode == "_serve_floor":
        asyncio.run(serve_floor(args.kind, args.target, args.workers, args.lifetime))
    else:
        if args.mode == "_worker_floor":
            report = asyncio.run(work_floor(args.address, args.name, args.deadline, args.batch))
        else:
            report = asyncio.run(work(args.address, args.name, args.deadline))
        json.dump(report, sys.stdout)
    return 0


# --------------------------------------------------------------------------- report


def git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def targets_of(rows: list[dict]) -> list[dict]:
    targets = []
    for row in rows:
        targets.append(
            dict(
                what=f"hemra/floor+rpc {row['database']} W={row['workers']}",
                value=row["ratio_rpc"],
                target=f"<= {RPC_FLOOR_TARGET:g}",
                met=row["ratio_rpc"] <= RPC_FLOOR_TARGET,
            )
        )
        wanted = TARGETS.get((row["database"], row["workers"]))
        if wanted is None:
            continue
        where = f"{row['database']} W={row['workers']}"
        targets += [
            dict(
                what=f"{where} jobs/s",
                value=row["jobs_per_s"],
                target=f">= {wanted[0]:g}",
                met=row["jobs_per_s"] >= wanted[0],
            ),
            dict(
                what=f"floor/hemra {where}",
                value=row["ratio"],
                target=f"<= {wanted[1]:g}",
                met=row["ratio"] <= wanted[1],
            ),
        ]
    return targets


def print_table(rows: list[dict], targets: list[dict], jobs: int) -> None:
    print()
    print(f"queue throughput: {jobs} jobs per measurement (ClaimJob + CompleteJob through the gRPC store)")
    print(
        f"{'database':<10}{'workers':>8}{'jobs':>7}{'seconds':>9}{'jobs/s':>9}{'floor jobs/s':>14}"
        f"{'floor/hemra':>13}{'floor+rpc jobs/s':>18}{'hemra/floor+rpc':>17}{'CPU/job ratio':>15}"
        f"   {'info: loop jobs/s':>17}"
    )
    for r in rows:
        print(
            f"{r['database']:<10}{r['workers']:>8}{r['jobs']:>7}{r['seconds']:>9.2f}{r['jobs_per_s']:>9.1f}"
            f"{r['floor_jobs_per_s']:>14.1f}{r['ratio']:>13.2f}{r['floor_rpc_jobs_per_s']:>18.1f}"
            f"{r['ratio_rpc']:>17.2f}{r['cpu_ratio_rpc']:>15.2f}   {r['loop_jobs_per_s']:>17.1f}"
        )
    print()
    print(f"{'target':<36}{'value':>9}{'target':>9}{'met':>6}")
    for t in targets:
        print(f"{t['what']:<36}{t['value']:>9.2f}{t['target']:>9}{'yes' if t['met'] else 'NO':>6}")


def print_profile(path: Path, top: int = 25) -> list[str]:
    import io
    import pstats

    lines = []
    for key in ("tottime", "cumulative"):
        buffer = io.StringIO()
        pstats.Stats(str(path), stream=buffer).strip_dirs().sort_stats(key).print_stats(top)
        text = buffer.getvalue()
        print(f"\n--- store server profile, top {top} by {key}\n{text[text.find('   ncalls') :]}")
        lines.append(text)
    return lines


def busy_note() -> tuple[float, str]:
    """The 1-minute load average, and a warning when other work competes for the CPUs."""
    load = os.getloadavg()[0]
    return load, (
        f"; LOAD {load:.1f} on {os.cpu_count()} CPUs: other work competes" if load > (os.cpu_count() or 1) else ""
    )


async def bench(args, scratch: Path) -> dict:
    rows, floors, extra = [], {}, {}
    for kind in args.databases:
        db = await create_database(kind, scratch)
        try:
            if kind == "postgres":
                extra["postgres"] = {
                    k: (await admin(f"SHOW {k}"))[0][0]
                    for k in ("server_version", "synchronous_commit", "fsync", "shared_buffers")
                }
            load, note = busy_note()
            floor = await measure_floor(db, args.jobs, args.analyze)
            floor["load_before"] = load
            floors[kind] = floor
            print(
                f"{kind:<9} floor       {floor['seconds']:7.2f} s {floor['jobs_per_s']:8.1f} jobs/s"
                f"{describe_stats(floor['planner_stats'])}{note}",
                flush=True,
            )
            for workers in args.workers:
                load, note = busy_note()
                rpc = await measure_hemra(
                    db, args.jobs, workers, scratch, args.timeout, analyze=args.analyze, floor=True
                )
                print(
                    f"{kind:<9} floor+rpc W={workers:<3} {rpc['seconds']:7.2f} s {rpc['jobs_per_s']:8.1f} jobs/s "
                    f"(raw SQL behind one RPC per job; CPU per job: server {rpc['store_cpu_ms_per_job']:.2f} ms, "
                    f"workers {rpc['worker_cpu_ms_per_job']:.2f} ms){note}",
                    flush=True,
                )
                load, note = busy_note()
                m = await measure_hemra(db, args.jobs, workers, scratch, args.timeout, analyze=args.analyze)
                m["load_before"] = load
                row = {
                    "database": kind,
                    "jobs": args.jobs,
                    **m,
                    "floor_jobs_per_s": floor["jobs_per_s"],
                    "ratio": floor["jobs_per_s"] / m["jobs_per_s"],
                    "floor_rpc": rpc,
                    "floor_rpc_jobs_per_s": rpc["jobs_per_s"],
                    "ratio_rpc": rpc["jobs_per_s"] / m["jobs_per_s"],
                    # CPU per job, store and workers together: barely moved by other work on the machine.
                    "cpu_ratio_rpc": (m["store_cpu_ms_per_job"] + m["worker_cpu_ms_per_job"])
                    / (rpc["store_cpu_ms_per_job"] + rpc["worker_cpu_ms_per_job"]),
                }
                rows.append(row)
                print(
                    f"{kind:<9} W={workers:<9} {m['seconds']:7.2f} s {m['jobs_per_s']:8.1f} jobs/s "
                    f"(workers' start-up {m['worker_startup_s']:.2f} s; jobs per worker "
                    f"{list(m['jobs_per_worker'].values())}; CPU per job: store {m['store_cpu_ms_per_job']:.2f} ms, "
                    f"workers {m['worker_cpu_ms_per_job']:.2f} ms{describe_stats(m['planner_stats'])}){note}",
                    flush=True,
                )
                if args.claim_batch > 1:
                    b = await measure_hemra(
                        db,
                        args.jobs,
                        workers,
                        scratch,
                        args.timeout,
                        analyze=args.analyze,
                        floor=True,
                        batch=args.claim_batch,
                    )
                    row["floor_rpc_batched"] = b
                    row["batch_over_rpc"] = b["jobs_per_s"] / rpc["jobs_per_s"]
                    row["batch_over_hemra"] = b["jobs_per_s"] / m["jobs_per_s"]
                    print(
                        f"{kind:<9} prototype: floor+rpc claiming {args.claim_batch} jobs a call, W={workers}: "
                        f"{b['jobs_per_s']:.1f} jobs/s, {row['batch_over_rpc']:.2f}x the floor+rpc, "
                        f"{row['batch_over_hemra']:.2f}x HEMRA",
                        flush=True,
                    )
            if args.profile and (kind == "postgres" or "postgres" not in args.databases):
                workers = max(args.workers)
                prof = scratch / f"store-{kind}-w{workers}.prof"
                m = await measure_hemra(
                    db, args.jobs, workers, scratch, args.timeout, profile=prof, analyze=args.analyze
                )
                print(
                    f"\nprofiled {kind} W={workers} (cProfile slows the store; not in the table): "
                    f"{m['seconds']:.2f} s, {m['jobs_per_s']:.1f} jobs/s"
                )
                extra["profile"] = {
                    "database": kind,
                    "workers": workers,
                    "jobs_per_s": m["jobs_per_s"],
                    "stats": print_profile(prof),
                }
        finally:
            await drop_database(db)
    return {"rows": rows, "floors": floors, **extra}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] in ("_serve", "_worker", "_serve_floor", "_worker_floor"):
        return child_main(sys.argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2000, help="jobs per measurement (default 2000)")
    parser.add_argument("--workers", default="1,4", help="worker process counts, comma-separated (default 1,4)")
    parser.add_argument("--databases", default="sqlite,postgres", help="sqlite, postgres or both (default both)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds allowed per measurement (default 300)")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="one extra measurement (PostgreSQL, most workers) with the store under cProfile",
    )
    parser.add_argument(
        "--analyze",
        action="store_true",
        help="PostgreSQL: ANALYZE after recording each run (steady state; default: leave "
        "planner statistics to autovacuum, as HEMRA does)",
    )
    parser.add_argument(
        "--claim-batch",
        type=int,
        default=0,
        help="also measure claim batching's prototype: the floor+rpc with each call completing and "
        "claiming up to B jobs (default: not measured)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp folder (SQLite files, process logs)")
    args = parser.parse_args()
    args.workers = [int(w) for w in args.workers.split(",") if w.strip()]
    args.databases = [d.strip() for d in args.databases.split(",") if d.strip()]
    if args.jobs < 1 or not args.workers or min(args.workers) < 1:
        parser.error("--jobs and every --workers count must be at least 1")
    if not set(args.databases) <= {"sqlite", "postgres"} or not args.databases:
        parser.error("--databases takes sqlite and/or postgres")

    scratch = Path(tempfile.mkdtemp(prefix="hemra-bench-queue-"))
    try:
        result = asyncio.run(bench(args, scratch))
    except BenchError as exc:
        print(f"\nBENCHMARK FAILED: {exc}", file=sys.stderr)
        print(f"temp folder kept: {scratch}", file=sys.stderr)
        return 1
    targets = targets_of(result["rows"])
    print_table(result["rows"], targets, args.jobs)

    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = {
        "benchmark": "queue_throughput",
        "timestamp": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "jobs": args.jobs,
        "workers": args.workers,
        "databases": args.databases,
        "lease_secs": LEASE_SECS,
        "analyze": args.analyze,
        "method": "HEMRA: W worker processes loop ClaimJob + CompleteJob over gRPC against the store server in "
        "its own process; seconds from the workers' start to the last exit (includes their start-up). "
        "loop_* counts from the first ClaimJob to the last exit. Floor: one process, raw SQL "
        "(asyncpg / sqlite3), sequential claim transaction + complete transaction per job.",
        **result,
        "targets": targets,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
        },
        "hemra_commit": git_commit(),
        "temp_dir": str(scratch) if args.keep else None,
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"queue-{stamp}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nresults: {path}")
    if args.keep:
        print(f"temp folder kept: {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
