"""A leased job's lease, checked in the one where-clause every call about the job adds, and the
run's concurrency slot the job holds."""

from sqlalchemy import select, update

from hemra.services.common.errors import LeaseLost, NotFound
from hemra.services.store.pinned import JOBS, RUNS, Pinned


def live_lease(job_id: str, token: int, now: float):
    """The token guard: the job is leased under this token and the lease has not expired."""
    return (JOBS.c.id == job_id, JOBS.c.lease_token == token, JOBS.c.state == "leased", JOBS.c.lease_expire_time >= now)


async def free_slot(conn, pinned: Pinned, run_id: str) -> None:
    """The run's lease count, one down (every path that ends a lease runs it).
    Runs that are not limited keep no count (`limited` never changes)."""
    if (await pinned.run(conn, run_id)).limited:
        await conn.execute(
            update(RUNS).where(RUNS.c.id == run_id, RUNS.c.limited, RUNS.c.leased > 0).values(leased=RUNS.c.leased - 1)
        )


async def lease_failure(conn, job_id: str) -> Exception:
    """Why a guarded statement matched nothing: no such job, or the lease is gone."""
    found = (await conn.execute(select(JOBS.c.id).where(JOBS.c.id == job_id))).first()
    return NotFound(f"no job {job_id!r}") if found is None else LeaseLost(f"job {job_id}: lease lost")
