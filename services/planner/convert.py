"""Resolved datasets to hemra.v1 messages (a task's and a harness's are in services/domain)."""

from hemra.services.domain.tasks import LoadedTask, task_to_proto
from hemra.services.planner.datasets import LoadedDataset
from hemra.v1 import common_pb2 as pb


def dataset_to_proto(dataset: LoadedDataset, tasks: list[LoadedTask]) -> pb.Dataset:
    return pb.Dataset(
        name=f"datasets/{dataset.digest}",
        digest=dataset.digest,
        dataset_name=dataset.name,
        source=dataset.source_text(),
        tasks=[task_to_proto(t) for t in tasks],
    )
