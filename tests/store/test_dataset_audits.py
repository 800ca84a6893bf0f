"""Dataset leak audits in the store, on both databases: recorded through the servicer, summed up
for each cell of a run recorded later (the latest audit of each of its tasks), and flagged in
the run's report. Imports, and runs recorded before audits were, are never flagged."""

import pytest

from hemra.services.common.errors import InvalidArgument, NotFound
from hemra.services.store import audits, records
from hemra.services.store.service import Store
from hemra.services.store.servicer import StoreServicer
from hemra.v1 import store_service_pb2 as spb


class Clock:
    now = 1_800_000_000.0

    def __call__(self):
        return self.now


TASKS = {"alpha": "sha256:" + "a" * 64, "beta": "sha256:" + "b" * 64}


def plan(kind: str = "run") -> records.PlannedRun:
    return records.PlannedRun(
        label="audited",
        spec={"label": "audited"},
        concurrency=1,
        max_infra_retries=0,
        datasets=[
            dict(
                digest="sha256:ds",
                dataset_name="shop",
                source="/shop",
                task_digests=list(TASKS.values()),
                create_time=0.0,
            )
        ],
        tasks=[dict(digest=d, task_name=n, record={"taskName": n}) for n, d in TASKS.items()],
        harnesses=[dict(digest="sha256:h", harness_name="h", record={"harnessName": "h", "kind": "builtin"})],
        cells=[("sha256:ds", "shop", "sha256:h", "h", "")],
        trials=[(0, digest, name, 1, None) for name, digest in TASKS.items()],
        kind=kind,
    )


def audit(**verdicts: str) -> spb.DatasetAudit:
    return spb.DatasetAudit(
        dataset_name="shop",
        dataset_digest="sha256:ds",
        verdict="leaks" if "leaks" in verdicts.values() else "clean",
        tasks=[
            spb.TaskAudit(
                task_name=name,
                task_digest=TASKS[name],
                verdict=verdict,
                findings=[spb.AuditFinding(kind="git_ref_ahead", severity="leak", detail="refs/tags/v2")]
                if verdict == "leaks"
                else [],
            )
            for name, verdict in verdicts.items()
        ],
    )


@pytest.fixture
async def store(database_url, tmp_path):
    store = await Store.open(database_url, tmp_path / "blobs", Clock())
    yield store
    await store.close()


async def flags_of_new_run(store: Store, kind: str = "run") -> list[str]:
    run, _ = await store.record_run(plan(kind))
    report = await store.run_report(run.id)
    return [f for d in report.datasets for r in d.rows for f in r.flags if f.startswith("dataset ")]


async def test_audits__a_run_on_a_never_audited_dataset_is_flagged(store):
    assert await flags_of_new_run(store) == ["dataset shop never audited (hemra datasets audit shop)"]


async def test_audits__recorded_then_a_run_records_what_it_found(store):
    await store.record_run(plan())  # the dataset is recorded
    servicer = StoreServicer(store)
    response = await servicer.RecordDatasetAudit(
        spb.RecordDatasetAuditRequest(audit=audit(alpha="clean", beta="leaks")), None
    )
    recorded = response.audit
    assert recorded.name.startswith("audits/") and recorded.audit_time.seconds == int(Clock.now)
    assert [(t.task_name, t.verdict) for t in recorded.tasks] == [("alpha", "clean"), ("beta", "leaks")]
    assert recorded.tasks[1].findings[0].detail == "refs/tags/v2"
    run, cells = await store.record_run(plan())
    assert cells[0].dataset_audit == {
        "audit_time": Clock.now,
        "tasks": 2,
        "unaudited": 0,
        "leaks": 1,
        "errors": 0,
    }
    report = await store.run_report(run.id)
    assert report.datasets[0].rows[0].flags[-1:] == ["dataset shop audit found leaks on 1 tasks"]


async def test_audits__the_latest_audit_of_each_task_counts(store):
    await store.record_run(plan())
    await store.record_dataset_audit(
        dict(dataset_digest="sha256:ds", dataset_name="shop", verdict="leaks", tasks=_rows(alpha="leaks"))
    )
    Clock.now += 10
    try:
        await store.record_dataset_audit(
            dict(dataset_digest="sha256:ds", dataset_name="shop", verdict="clean", tasks=_rows(alpha="clean"))
        )
        assert await flags_of_new_run(store) == ["dataset shop not audited on 1 of 2 tasks (hemra datasets audit shop)"]
        await store.record_dataset_audit(
            dict(dataset_digest="sha256:ds", dataset_name="shop", verdict="error", tasks=_rows(beta="error"))
        )
        assert await flags_of_new_run(store) == ["dataset shop audit could not check 1 tasks"]
        await store.record_dataset_audit(
            dict(dataset_digest="sha256:ds", dataset_name="shop", verdict="clean", tasks=_rows(beta="clean"))
        )
        assert await flags_of_new_run(store) == []
        assert await flags_of_new_run(store, kind="import") == []  # results made elsewhere
    finally:
        Clock.now -= 10


async def test_audits__refused_for_an_unknown_dataset_or_a_bad_verdict(store):
    with pytest.raises(NotFound):
        await store.record_dataset_audit(
            dict(dataset_digest="sha256:nope", dataset_name="x", verdict="clean", tasks=[])
        )
    await store.record_run(plan())
    with pytest.raises(InvalidArgument):
        await store.record_dataset_audit(
            dict(dataset_digest="sha256:ds", dataset_name="shop", verdict="fine", tasks=[])
        )
    with pytest.raises(InvalidArgument):
        await store.record_dataset_audit(
            dict(dataset_digest="sha256:ds", dataset_name="shop", verdict="clean", tasks=_rows(alpha="fine"))
        )


def test_audits__flags_ignore_what_does_not_read_as_a_summary():
    class Cell:
        dataset_name = "shop"
        dataset_audit = None

    cell = Cell()
    for value in (None, {}, {"tasks": "2"}, [1], {"tasks": True, "unaudited": 1, "leaks": 0, "errors": 0}):
        cell.dataset_audit = value
        assert audits.flags(cell) == []


def _rows(**verdicts: str) -> list[dict]:
    return [dict(task_name=n, task_digest=TASKS[n], verdict=v, findings=[]) for n, v in verdicts.items()]
