"""hemra datasets audit, the planner's part: the dataset resolved as a run's -d resolves it, the
selected tasks audited one by one (services/environments/audit.py), the result as the store
records it. Blocking: the servicer runs it in a thread."""

from hemra.services.common.errors import FailedPrecondition
from hemra.services.domain.planerrors import PlanError
from hemra.services.environments import audit
from hemra.services.environments.engine import client
from hemra.services.environments.errors import SandboxError
from hemra.services.planner import datasets as ds
from hemra.services.planner import plan
from hemra.v1 import store_service_pb2 as spb


def selected(dataset: ds.LoadedDataset, patterns: list[str]) -> list:
    """The dataset's tasks that match any pattern (all when none), as a run's -t selects them."""
    tasks = ds.select_tasks(dataset.tasks, patterns, [])
    if not tasks:
        raise PlanError(f"dataset {dataset.name}: no task matches {', '.join(map(repr, patterns))}")
    return tasks


def check_engine() -> None:
    """A one-line FAILED_PRECONDITION when no Docker engine answers (nothing is audited)."""
    try:
        client()
    except SandboxError as exc:
        raise FailedPrecondition(f"hemra datasets audit needs Docker: {exc}") from None


def run(dataset: ds.LoadedDataset, tasks: list, allow_history=()) -> spb.DatasetAudit:
    """Audit each task (those `allow_history` names as a run keeping their history runs them);
    the dataset's audit as a message (its name and time are the store's)."""
    results = [audit.audit_task(task, keep_history=plan.allows_history(task, allow_history)) for task in tasks]
    return spb.DatasetAudit(
        dataset_name=dataset.name,
        dataset_digest=dataset.digest,
        verdict=audit.dataset_verdict(results),
        tasks=[
            spb.TaskAudit(
                task_name=r.task_name,
                task_digest=r.task_digest,
                verdict=r.verdict,
                findings=[spb.AuditFinding(kind=f.kind, severity=f.severity, detail=f.detail) for f in r.findings],
                error=r.error,
                image=r.image,
                network_mode=r.network_mode,
                seconds=r.seconds,
            )
            for r in results
        ],
    )
