"""In the embedded default the services call each other in process (services/compose/embedded.py):
the executor the store and the scorer, the scorer the store and the executor's harness protocol.
With every loopback channel of the process closed once the run is planned, the run still works,
scores and records every trial, so none of its calls takes the loopback hop; the servers stay up
for what is outside the process (harness programs, remote workers, hemra serve's callers)."""

from hemra.services.common import auth
from hemra.services.compose import embedded
from hemra.v1 import common_pb2 as pb
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import store_service_pb2 as spb

TASKS = ["hemra/text-stats", "hemra/reverse-lines"]


async def test_a_run_works_and_scores_with_the_loopback_channels_closed(tmp_path):
    async with embedded.services(tmp_path / "home") as services:
        spec = pb.RunSpec(harnesses=["oracle", "nop"], datasets=["hemra-offline"], tasks=TASKS, concurrency=2)
        run = (await services.planner.PlanRun(ppb.PlanRunRequest(spec=spec))).run
        for channel in services._channels:
            await channel.close()
        worker = await services.start_executor(2, run_id=run.id)
        await worker.run(until_idle=True)
        assert set(services.scorer_servicer.local_harnesses) == {worker.deps.harness_address}
        store = services.store_in_process(auth.ADMIN)
        report = (await store.GetRunReport(spb.GetRunReportRequest(run=run.id))).report
        attempts = (await store.ListAttempts(spb.ListAttemptsRequest(parent=f"runs/{run.id}"))).attempts
    assert report.complete
    rewards = {(a.harness_name, a.task_name): dict(a.score.rewards) for a in attempts}
    assert rewards == {
        **{("oracle", task): {"reward": 1.0} for task in TASKS},
        **{("nop", task): {"reward": 0.0} for task in TASKS},
    }
    assert {a.score.state for a in attempts} == {pb.SCORE_STATE_SCORED}
