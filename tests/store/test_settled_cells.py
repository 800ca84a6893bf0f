"""A settled cell's trials kept in one row (services/store/settled.py), on SQLite and PostgreSQL:
written by an import as it is recorded and by the first report or compare that reads a cell once
it has settled, never before; read instead of the attempts by any store, this one or another
process's; ignored and replaced once the run is judged; and only a shortcut where the database
will not take the write."""

import dataclasses

import pytest
from sqlalchemy import select, text, update

from hemra.services.store import settled
from hemra.services.store import tables as t
from hemra.services.store.service import Store
from tests.store.test_compare_criteria import two_harness_plan
from tests.store.test_compare_kept import PASS, work
from tests.store.test_queue import FakeClock


@pytest.fixture
async def store(database_url, tmp_path):
    store = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    yield store
    await store.close()


@pytest.fixture
async def another(database_url, tmp_path):
    """A second store over the same database: another process, or another store replica."""
    other = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    yield other
    await other.close()


async def kept_rows(store: Store) -> dict[str, int]:
    """cell ID -> judge_version of each settled_cells row."""
    async with store.engine.connect() as conn:
        return dict((await conn.execute(select(t.SettledCell.cell_id, t.SettledCell.judge_version))).all())


@pytest.fixture
def attempts_read(monkeypatch) -> list[str]:
    """The cells whose trials were read from their attempts (not from a settled_cells row)."""
    read: list[str] = []
    original = settled.from_attempts

    async def counted(conn, cell_id):
        read.append(cell_id)
        return await original(conn, cell_id)

    monkeypatch.setattr(settled, "from_attempts", counted)
    return read


def import_plan(score: dict = PASS):
    finished = dict(outcome="completed", error="", agent_version="1.0", start_time=1.0, end_time=2.0, score=score)
    plan = two_harness_plan()
    return dataclasses.replace(
        plan,
        label="imported",
        kind="import",
        import_format="harbor 0.25",
        trials=[(cell, digest, name, repetition, finished) for cell, digest, name, repetition, _ in plan.trials],
    )


async def test_run__kept_by_the_first_read_once_settled_then_read_by_any_store(store, another, attempts_read):
    run, cells = await store.record_run(two_harness_plan())
    await work(store, 2)
    going = await store.compare("judged/a", "judged/b")
    await store.run_report(run.id)
    assert await kept_rows(store) == {}  # still going: nothing kept
    await work(store)
    report = await store.run_report(run.id)  # the run's own report, as `hemra run` prints it
    assert await kept_rows(store) == {cell.id: 0 for cell in cells}

    attempts_read.clear()
    compared = await another.compare("judged/a", "judged/b")
    assert attempts_read == []  # read from the rows, not joined again
    assert (compared.paired_tasks, compared.a_passed, compared.b_passed) == (3, 3.0, 0.0)
    assert going.paired_tasks < 3 and compared == await store.compare("judged/a", "judged/b")
    assert await another.run_report(run.id) == report and attempts_read == []


async def test_import__kept_as_it_is_recorded(store, another, attempts_read):
    run, cells = await store.record_run(import_plan())
    assert await kept_rows(store) == {cell.id: 0 for cell in cells}
    attempts_read.clear()
    compared = await another.compare("imported/a", "imported/b")
    assert attempts_read == [] and (compared.paired_tasks, compared.a_passed, compared.b_passed) == (3, 3.0, 3.0)
    report = await another.run_report(run.id)
    assert [row.trials for row in report.datasets[0].rows] == [3, 3] and attempts_read == []


async def test_judging__rows_of_the_older_version_ignored_then_replaced(store, another, attempts_read):
    run, cells = await store.record_run(import_plan())
    async with store.engine.connect() as conn:
        attempts = (await conn.execute(select(t.Attempt.id).where(t.Attempt.run_id == run.id))).scalars().all()
    judged = {"state": "SCORE_STATE_SCORED", "scorer": "judge:quality", "judge": "quality", "rewards": {"q": 0.5}}
    await another.record_judge_scores([(attempt_id, [judged]) for attempt_id in attempts])
    assert await kept_rows(store) == {cell.id: 0 for cell in cells}  # judging writes no trials

    attempts_read.clear()
    compared = await store.compare("imported/a", "imported/b", judge="quality")
    assert compared.paired_tasks == 3 and sorted(attempts_read) == sorted(cell.id for cell in cells)
    assert await kept_rows(store) == {cell.id: 1 for cell in cells}
    attempts_read.clear()
    assert await another.compare("imported/a", "imported/b", judge="quality") == compared
    assert attempts_read == []


async def test_trials__read_back_as_the_attempts_give_them(store):
    run, cells = await store.record_run(import_plan())
    async with store.engine.connect() as conn:
        for cell in cells:
            trials = await settled.from_attempts(conn, cell.id)
            assert trials.is_settled() and len(trials.rows) == 3 and len(trials.kinds) == 1
            assert (await settled.read(conn, [cell.id], 0))[cell.id] == trials
            assert await settled.read(conn, [cell.id], 1) == {}  # another judge_version: not read


async def test_a_row_that_cannot_be_decoded__read_from_the_attempts_and_replaced(store, another, attempts_read):
    run, cells = await store.record_run(import_plan())
    async with store.engine.begin() as conn:
        await conn.execute(update(t.SettledCell).values(trials=b"\x93not msgpack of trials"))
    attempts_read.clear()
    compared = await another.compare("imported/a", "imported/b")
    assert (compared.paired_tasks, compared.a_passed) == (3, 3.0)
    assert sorted(attempts_read) == sorted(cell.id for cell in cells)
    attempts_read.clear()
    assert await store.compare("imported/a", "imported/b") == compared and attempts_read == []


@pytest.mark.postgres
async def test_read_only_database__answers_without_keeping(postgres_url, tmp_path):
    """A store over a database that takes no write (PostgreSQL's default_transaction_read_only)
    still compares and reports a settled run: the rows are only not kept."""
    url = postgres_url
    writer = await Store.open(url, tmp_path / "blobs", FakeClock())
    try:
        run, cells = await writer.record_run(two_harness_plan())
        await work(writer)
        name = url.rsplit("/", 1)[1]
        async with writer.engine.begin() as conn:
            await conn.execute(text(f"ALTER DATABASE {name} SET default_transaction_read_only = on"))
    finally:
        await writer.close()
    reader = await Store.open(url, tmp_path / "blobs", FakeClock(), migrate=False)
    try:
        compared = await reader.compare("judged/a", "judged/b")
        assert (compared.paired_tasks, compared.a_passed, compared.b_passed) == (3, 3.0, 0.0)
        assert [row.trials for row in (await reader.run_report(run.id)).datasets[0].rows] == [3, 3]
        assert await kept_rows(reader) == {}
    finally:
        await reader.close()


async def test_attempts_pages__kept_shaped_once_seen_settled_and_renewed_by_judging(store, another):
    """Store.list_attempts keeps a settled run's shaped pages (ListAttempts' answers) per
    judge_version, never a page of a run still going, and judging in another process renews them."""
    shaped = []

    def shape(rows, token, jobs):
        shaped.append(len(rows))
        attempts = [row.attempt for row in rows]
        return [(a.id, a.state, len(a.judge_scores or [])) for a in attempts], token

    run, _ = await store.record_run(two_harness_plan())
    await work(store, 2)
    await store.get_run(run.id)  # seen going
    first = await store.list_attempts(run.id, 4, "", shape=shape)
    assert await store.list_attempts(run.id, 4, "", shape=shape) == first and shaped == [4, 4]
    await work(store)
    await store.get_run(run.id)  # seen settled
    page = await store.list_attempts(run.id, 4, "", shape=shape)
    assert {state for _, state, _ in page[0]} == {"finished"}
    assert await store.list_attempts(run.id, 4, "", shape=shape) is page and shaped == [4, 4, 4]
    assert await store.list_attempts(run.id, 4, "", {"harness_name": "b"}, shape=shape) != page
    rows, token = await store.list_attempts(run.id, 4, "")  # unshaped: rows, as they were
    assert [row.attempt.id for row in rows] == [a for a, _, _ in page[0]] and token == page[1]

    judged = {"state": "SCORE_STATE_SCORED", "scorer": "judge:quality", "judge": "quality", "rewards": {"q": 0.5}}
    await another.record_judge_scores([(attempt_id, [judged]) for attempt_id, _, _ in page[0]])
    renewed = await store.list_attempts(run.id, 4, "", shape=shape)
    assert [n for _, _, n in renewed[0]] == [1, 1, 1, 1]
