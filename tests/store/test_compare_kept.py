"""compare keeps the trials of settled cells (Store._trials_of), on SQLite and PostgreSQL: kept
once every trial of a cell has finished, never before; judging the run, in any process, replaces
them; forget() drops them all."""

import pytest
from sqlalchemy import delete, select, update

from hemra.services.common.errors import InvalidArgument
from hemra.services.domain import vocabulary
from hemra.services.store import completion
from hemra.services.store import tables as t
from hemra.services.store.service import Store
from tests.store.test_compare_criteria import two_harness_plan
from tests.store.test_queue import FakeClock

PASS = {"state": "SCORE_STATE_SCORED", "rewards": {"reward": 1}, "scorerFingerprint": "sha256:f"}
FAIL = {**PASS, "rewards": {"reward": 0}}


@pytest.fixture
async def store(database_url, tmp_path):
    store = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    yield store
    await store.close()


async def work(store: Store, jobs: int | None = None) -> None:
    """Complete `jobs` jobs (all when None): harness a passes, b fails."""
    while jobs is None or jobs > 0:
        claimed = await store.claim_job("w", 30)
        if claimed is None:
            return
        score = PASS if claimed.cell.harness_name == "a" else FAIL
        await store.complete_job(
            claimed.job.id, claimed.job.lease_token, completion.Completion(vocabulary.COMPLETED, score=score)
        )
        jobs = None if jobs is None else jobs - 1


async def test_compare__keeps_settled_cells_only(store):
    run, cells = await store.record_run(two_harness_plan())
    await work(store, 2)
    going = await store.compare("judged/a", "judged/b")
    assert store._trials == {} and going.paired_tasks < 3  # a run still going: nothing kept
    await work(store)
    first = await store.compare("judged/a", "judged/b")
    assert (first.paired_tasks, first.a_passed, first.b_passed) == (3, 3.0, 0.0)
    assert set(store._trials) == {c.id for c in cells} and store._trials_kept == 6

    # What answers now is what was kept: a change behind the store's back is not seen...
    async with store.engine.begin() as conn:
        await conn.execute(update(t.Attempt).where(t.Attempt.run_id == run.id).values(score=PASS))
        await conn.execute(delete(t.SettledCell))  # nor kept in the database (test_settled_cells.py)
    assert await store.compare("judged/a", "judged/b") == first
    # ...until the store is told to forget (the warm store does, when another process writes).
    store.forget()
    assert (await store.compare("judged/a", "judged/b")).b_passed == 3.0


@pytest.mark.parametrize("judged_by", ["this store", "another store"])
async def test_compare_and_report__judging_anywhere_replaces_what_was_kept(store, database_url, tmp_path, judged_by):
    """Judging moves the run's judge_version in the database, so a store that kept the run's
    trials and report reads them again, whether it judged or another process (or another
    replica of the store service) did."""
    run, _ = await store.record_run(two_harness_plan())
    await work(store)
    with pytest.raises(InvalidArgument, match="no trial on either side was scored by judge 'quality'"):
        await store.compare("judged/a", "judged/b", judge="quality")  # none judged yet
    before = await store.run_report(run.id)
    assert store._trials_kept == 6 and run.id in store._reports and judges_of(before) == set()
    async with store.engine.connect() as conn:
        attempts = (await conn.execute(select(t.Attempt.id).where(t.Attempt.run_id == run.id))).scalars().all()
    judged = {"state": "SCORE_STATE_SCORED", "scorer": "judge:quality", "judge": "quality", "rewards": {"q": 0.5}}
    other = store if judged_by == "this store" else await Store.open(database_url, tmp_path / "blobs", FakeClock())
    try:
        await other.record_judge_scores([(attempt_id, [judged]) for attempt_id in attempts])
    finally:
        if other is not store:
            await other.close()
    assert (await store.compare("judged/a", "judged/b", judge="quality")).paired_tasks == 3
    assert store._trials_kept == 6 and {kept[0] for kept in store._trials.values()} == {1}
    assert judges_of(await store.run_report(run.id)) == {"quality"}


def judges_of(report) -> set[str]:
    return {j.judge for dataset in report.datasets for row in dataset.rows for j in row.judges}


async def test_compare__keeps_at_most_its_bound(store, monkeypatch):
    from hemra.services.store import service

    monkeypatch.setattr(service, "SETTLED_TRIALS_KEPT", 4)  # room for one cell of 3 trials, not two
    await store.record_run(two_harness_plan())
    await work(store)
    await store.compare("judged/a", "judged/b")
    assert len(store._trials) == 1 and store._trials_kept == 3
    assert (await store.compare("judged/a", "judged/b")).paired_tasks == 3
