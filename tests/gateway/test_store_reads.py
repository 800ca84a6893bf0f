"""The store reads behind the dashboard, on a SQLite file and on the real PostgreSQL server:
catalog lists, the criterion table, usage sums, payloads cut in SQL, batched run progress."""

import json

import pytest
from google.protobuf import json_format

from hemra.services.store import catalog, convert, criteria, eventlog, outputs, runreads
from hemra.services.store.records import PlannedRun
from hemra.services.store.service import Store
from hemra.v1 import common_pb2 as pb

TASKS = [("sha256:" + f"{i:064x}", f"demo/task-{i}") for i in range(1, 4)]
FINGERPRINT = "sha256:" + "f" * 64


def _plan(label: str, rewards: dict[str, list[float]], start: float = 1_800_000_000.0) -> PlannedRun:
    """Two harnesses on three tasks, finished with the given 0/1 rewards per harness."""
    harnesses = [
        dict(
            digest="sha256:" + f"{n:064x}",
            harness_name=name,
            record={
                "harnessName": name,
                "kind": "cli",
                "agent": name,
                "agentVersion": "1.0",
                "model": "m",
                "env": ["API_KEY"],
            },
        )
        for n, name in ((10, "alpha"), (11, "beta"))
    ]
    trials = []
    for cell, harness in enumerate(("alpha", "beta")):
        for (digest, name), reward in zip(TASKS, rewards[harness]):
            trials.append(
                (
                    cell,
                    digest,
                    name,
                    1,
                    dict(
                        outcome="completed",
                        error="",
                        agent_version="1.0",
                        start_time=start,
                        end_time=start + 10 + cell,
                        artifacts=[],
                        score={
                            "state": "SCORE_STATE_SCORED",
                            "rewards": {"reward": reward},
                            "scorer": "verifier",
                            "scorerFingerprint": FINGERPRINT,
                        },
                    ),
                )
            )
    return PlannedRun(
        label=label,
        spec={"label": label, "baseline": "alpha"},
        concurrency=1,
        max_infra_retries=0,
        datasets=[
            dict(
                digest="sha256:" + "d" * 64,
                dataset_name="demo",
                source="/demo",
                task_digests=[d for d, _ in TASKS],
                create_time=0.0,
            )
        ],
        tasks=[dict(digest=d, task_name=n, record={"taskName": n}) for d, n in TASKS],
        harnesses=harnesses,
        cells=[("sha256:" + "d" * 64, "demo", h["digest"], h["harness_name"], "m") for h in harnesses],
        trials=trials,
    )


async def test_store_reads(database_url, tmp_path):
    store = await Store.open(database_url, tmp_path / "blobs")
    clock = iter(range(1_800_000_000, 1_800_001_000, 10))
    store.clock = lambda: float(next(clock))
    try:
        old, _ = await store.record_run(_plan("old", {"alpha": [1, 1, 1], "beta": [0, 0, 0]}))
        new, _ = await store.record_run(_plan("new", {"alpha": [1, 0, 1], "beta": [1, 1, 0]}))

        datasets = await store.list_datasets()
        assert [(d.dataset_name, d.tasks, d.runs) for d in datasets] == [("demo", 3, 2)]
        page = await store.list_tasks("demo", 2, "")
        assert [t.task_name for t in page.tasks] == ["demo/task-1", "demo/task-2"] and page.next_page_token
        rest = await store.list_tasks("demo", 2, page.next_page_token)
        assert [t.task_name for t in rest.tasks] == ["demo/task-3"] and rest.next_page_token == ""
        assert page.tasks[0].attempts == 4 and page.tasks[0].passed == 3
        harnesses = {h.harness_name: h for h in await store.list_harnesses()}
        assert harnesses["alpha"].runs == 2 and harnesses["alpha"].trials == 6
        assert harnesses["alpha"].env == ["API_KEY"] and harnesses["alpha"].agent_version == "1.0"
        [scorer] = await store.list_scorers()
        assert scorer.fingerprint == FINGERPRINT and scorer.attempts == 12 and scorer.task_count == 3
        assert scorer.reward_names == ["reward"]
        assert await store.list_judges() == ([], catalog.JUDGES_NOTE)
        assert {new.id, old.id} <= set(store._facts)  # settled: kept
        async with store.sessions() as session:  # the kept facts sum to what the domain code counts afresh
            fresh = await catalog.list_scorers(session), await catalog.list_tasks(session, "demo", 10, "")
        assert fresh == (await store.list_scorers(), await store.list_tasks("demo", 10, ""))

        newest = await store.criterion_table("demo")
        assert [s.run_id for s in newest.sources] == [new.id, new.id]
        assert all(s.other_cells == 1 and s.complete for s in newest.sources)
        overall = newest.rows[0]
        assert overall.criterion == "Overall pass rate"
        assert [round(c.value, 4) for c in overall.cells] == [0.6667, 0.6667]
        assert [c.best for c in overall.cells] == [False, False]  # equal values: nothing to beat
        task2 = next(r for r in newest.rows if r.criterion == "demo/task-2")
        assert [(c.value, c.best, c.samples) for c in task2.cells] == [(0.0, False, 1), (1.0, True, 1)]
        async with store.sessions() as session:  # the domain code alone counts the same
            alone = await criteria.criterion_table(session, "demo")
        assert alone == newest
        largest = await store.criterion_table("demo", "largest")
        assert [s.trials for s in largest.sources] == [3, 3]
        wall = next(r for r in newest.rows if r.criterion == "Wall time per attempt")
        assert wall.lower_is_better and [c.best for c in wall.cells] == [True, False]

        # usage sums and payloads cut in SQL
        attempt_id = (await store.list_attempts(new.id, 1, ""))[0][0].attempt.id
        huge = json.dumps({"content": "é" * 300_000})
        async with store.sessions.begin() as session:
            await eventlog.append_events(
                session,
                attempt_id,
                [
                    dict(
                        time=1.0,
                        type="usage",
                        name="m",
                        payload=json.dumps({"input_tokens": 10, "cost_usd": 0.5}),
                        duration=0.0,
                    ),
                    dict(
                        time=2.0,
                        type="usage",
                        name="m",
                        payload=json.dumps({"prompt_tokens": 5, "cost": 0.25}),
                        duration=0.0,
                    ),
                    dict(time=3.0, type="message", name="prompt", payload=huge, duration=0.0),
                ],
            )
        assert await store.attempt_usage(new.id) == [
            outputs.AttemptUsage(attempt_id=attempt_id, input_tokens=15, output_tokens=0, cost_usd=0.75, usage_events=2)
        ]
        cut, _ = await store.list_events(attempt_id, 10, "", 1000)
        assert [e.payload_cut for e in cut] == [False, False, True]
        assert cut[2].payload_bytes == len(huge.encode()) and huge.startswith(cut[2].payload)
        assert convert.event_to_proto(cut[2]).payload_cut and convert.event_to_proto(cut[0]).payload_bytes > 0
        whole, _ = await store.list_events(attempt_id, 10, "")
        assert whole[2].payload == huge

        # batched progress, the same as one run at a time, and remembered once settled
        runs, _ = await store.list_runs(10, "")
        assert [r[0].id for r in runs] == [new.id, old.id]
        async with store.sessions() as session:
            for run, cells, progress in runs:
                assert progress == await runreads.run_progress(session, run.id)
                assert [c.id for c in cells] == [c.id for c in await runreads.cells_of(session, run.id)]
        assert runs[0][2][0]["passed"] == 4 and {new.id, old.id} <= set(store._settled)
        report = await store.run_report(new.id)
        assert await store.run_report("new") is report
    finally:
        await store.close()


def test_fast_score_and_artifact_conversion_match_json_format():
    scores = [
        {
            "state": "SCORE_STATE_SCORED",
            "rewards": {"reward": 1.0, "x": 0.5},
            "scorer": "verifier",
            "scorerFingerprint": FINGERPRINT,
            "duration": "1.250s",
            "stdoutBlobDigest": "sha256:b",
            "judgeModel": "m",
        },
        {},
        json_format.MessageToDict(pb.Score(state=pb.SCORE_STATE_SCORER_FAILED, error="boom")),
    ]
    for score in scores:
        assert convert.score_from_dict(score) == convert.from_dict(score, pb.Score())
    with pytest.raises(json_format.ParseError, match="unknownKey"):  # a misspelt key is an error, not dropped
        convert.score_from_dict({"state": "SCORE_STATE_SCORED", "rewards": {"reward": 1}, "unknownKey": 1})
    for artifact in ({"path": "/x", "blobDigest": "sha256:c", "sizeBytes": "2048"}, {"path": "/y"}):
        assert convert.artifact_from_dict(artifact) == convert.from_dict(artifact, pb.Artifact())
