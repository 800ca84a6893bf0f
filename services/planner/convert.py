"""Resolved datasets, tasks and harnesses to hemra.v1 messages."""

from hemra.v1 import common_pb2 as pb
from services.planner.datasets import LoadedDataset
from services.planner.harnesses import LoadedHarness
from services.planner.tasks import LoadedTask, harbor_content_hash, task_tags


def task_to_proto(task: LoadedTask) -> pb.Task:
    env = task.environment
    message = pb.Task(
        name=f"tasks/{task.digest}",
        digest=task.digest,
        task_name=task.task_name,
        instruction=task.instruction,
        files=[
            pb.TaskFile(path=f.path, blob_digest=f.digest, size_bytes=len(f.data), executable=f.executable)
            for f in task.files
        ],
        verifier_env=task.verifier_env,
        solution_env=task.solution_env,
        has_solution=task.has_solution,
        verifier_isolation=task.verifier_isolation,
        origin=task.origin,
        tags=task_tags(task.config),
        harbor_digest=harbor_content_hash(task.files),
        environment=pb.Environment(
            base_image=env.base_image,
            workdir=env.workdir,
            env=env.env,
            copies=[pb.CopyStep(source=c.source, destination=c.destination, line=c.line) for c in env.copies],
            cpus=float(task.config.get("environment", {}).get("cpus") or 0),
            memory_mb=int(task.config.get("environment", {}).get("memory_mb") or 0),
            host_unsupported=env.host_unsupported,
            base_commit=env.base_commit,
        ),
    )
    message.agent_timeout.FromNanoseconds(int(task.agent_timeout * 1e9))
    message.verifier_timeout.FromNanoseconds(int(task.verifier_timeout * 1e9))
    return message


def dataset_to_proto(dataset: LoadedDataset, tasks: list[LoadedTask]) -> pb.Dataset:
    return pb.Dataset(
        name=f"datasets/{dataset.digest}",
        digest=dataset.digest,
        dataset_name=dataset.name,
        source=dataset.source_text(),
        tasks=[task_to_proto(t) for t in tasks],
    )


def harness_to_proto(harness: LoadedHarness, run_model: str) -> pb.Harness:
    return pb.Harness(
        name=f"harnesses/{harness.digest}",
        digest=harness.digest,
        harness_name=harness.harness_name,
        kind=harness.kind,
        source_text=harness.source_text,
        agent=harness.agent,
        agent_version=harness.agent_version,
        model=harness.model or run_model,
        env=harness.env,
        command=harness.command,
        source_path=harness.source_path,
    )
