"""Turn imported results into one RecordRun request: pin what can be pinned, keep every file."""

import datetime
import getpass
import json
import os
import socket
from collections import defaultdict
from pathlib import Path

from hemra.services import digests
from hemra.services.domain import vocabulary
from hemra.services.domain.imported import ImportedResults, ImportedTrial
from hemra.services.domain.tree import Entry, tree_json
from hemra.v1 import common_pb2 as pb
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import store_service_pb2 as spb


def who_imports(sent: bool) -> str:
    """Who imports, as far as the importer can tell (ImportProvenance.imported_by): the OS user
    it runs as, when it reads a folder on its own machine (the user who ran `hemra import` on a
    laptop); only that a remote caller sent the folder, when one did (a caller holds the
    deployment's token, which names nobody; what a client says of itself is not kept)."""
    if sent:
        return "remote caller (folder sent to the server)"
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container's)
        user = f"uid {os.getuid()}"
    return f"local user {user}@{socket.gethostname()}"


async def pin_tasks(planner, results: ImportedResults, root: Path, tasks_dir: Path | None) -> dict[str, ppb.PinnedTask]:
    """Pin the task folders the results name that exist here (at their recorded path, or by
    folder name under `tasks_dir`), as HEMRA pins datasets; point each trial at its folder."""
    located: dict[str, str] = {}  # trials share a few task folders: look each up once
    for trial in results.trials:
        if trial.task_path:
            if trial.task_path not in located:
                located[trial.task_path] = _locate(trial.task_path, root, tasks_dir)
            trial.task_path = located[trial.task_path]
    paths = sorted({p for p in located.values() if Path(p).is_dir()})
    if not paths:
        return {}
    response = await planner.PinTasks(ppb.PinTasksRequest(paths=paths))
    return {p.path: p for p in response.tasks if p.HasField("task")}


def _locate(path: str, root: Path, tasks_dir: Path | None) -> str:
    recorded = _absolute(path, root)
    if Path(recorded).is_dir() or tasks_dir is None:
        return recorded
    moved = tasks_dir / Path(path).name
    return str(moved.resolve()) if moved.is_dir() else recorded


def _absolute(path: str, root: Path) -> str:
    """A task path as the job recorded it: absolute, or relative to where the tool ran
    (the job folder's parent's parent for `jobs/<job>`, or nearer)."""
    candidate = Path(path)
    if candidate.is_absolute():
        return str(candidate)
    for base in (root, root.parent, root.parent.parent):
        if (base / candidate).is_dir():
            return str((base / candidate).resolve())
    return str((root / candidate).resolve())


def build_request(
    results: ImportedResults,
    root: Path,
    label: str,
    entries: list[Entry],
    pinned: dict[str, ppb.PinnedTask],
    source: str = "",
    imported_by: str = "",
) -> spb.RecordRunRequest:
    """The import's rows; `source` is where the results came from (default: `root`), `imported_by`
    who imported them (see who_imports)."""
    by_path = {e.path: e.digest for e in entries if not e.is_dir}
    tasks: dict[str, pb.Task] = {}
    cells: dict[tuple[str, str, str], int] = {}
    planned, repetitions = [], defaultdict(int)
    harness_rows, cell_rows, dataset_tasks = {}, [], defaultdict(list)
    for trial in results.trials:
        task, verifier = _task_of(trial, root, pinned)
        tasks.setdefault(task.digest, task)
        key = (trial.dataset, trial.agent, trial.model)
        if key not in cells:
            cells[key] = len(cells)
            harness = _harness(results, trial)
            harness_rows.setdefault(harness.digest, harness)
            cell_rows.append((trial.dataset, harness))
        dataset_tasks[trial.dataset].append(task.digest)
        repetitions[(key, task.digest)] += 1
        planned.append(
            spb.PlannedTrial(
                cell_index=cells[key],
                task_digest=task.digest,
                repetition=repetitions[(key, task.digest)],
                result=_result(trial, verifier, by_path),
            )
        )
    datasets = {name: _dataset(name, sorted(set(ds)), tasks, results) for name, ds in dataset_tasks.items()}
    spec = pb.RunSpec(
        label=label,
        baseline=cell_rows[0][1].harness_name if cell_rows else "",
        datasets=sorted(datasets),
        harnesses=sorted({h.harness_name for h in harness_rows.values()}),
    )
    return spb.RecordRunRequest(
        spec=spec,
        datasets=list(datasets.values()),
        harnesses=list(harness_rows.values()),
        cells=_cells(cell_rows, datasets),
        trials=planned,
        kind="import",
        import_format=f"{results.format} {results.version}",
        source=source or str(root),
        tree_json=tree_json(entries),
        imported_by=imported_by,
    )


def _cells(cell_rows: list[tuple[str, pb.Harness]], datasets: dict[str, pb.Dataset]) -> list[pb.Cell]:
    """The run's cells, in the order their first trial came: (dataset, harness) each."""
    return [
        pb.Cell(
            dataset_name=name,
            dataset_digest=datasets[name].digest,
            harness_name=h.harness_name,
            harness_digest=h.digest,
            model=h.model,
        )
        for name, h in cell_rows
    ]


def _task_of(trial: ImportedTrial, root: Path, pinned: dict[str, ppb.PinnedTask]) -> tuple[pb.Task, str]:
    """HEMRA's pinned task when the folder is here and is the one that ran; else a task named by
    the source's own pin. Returns the task and its verifier digest."""
    found = pinned.get(trial.task_path) if trial.task_path else None
    ran_this_folder = found is not None and _same_task(trial, found)
    if ran_this_folder:
        task = found.task
        return task, digests.tests_digest((f.path, f.blob_digest) for f in task.files)
    digest = digests.sha256(f"imported task\0{trial.task_pin}".encode())
    # Harbor's content digest (lock.json) proves which folder ran: compare pairs on it.
    harbor = trial.task_pin if trial.task_pin.startswith("sha256:") else ""
    task = pb.Task(name=f"tasks/{digest}", digest=digest, task_name=trial.task_name, harbor_digest=harbor)
    return task, digests.sha256(f"imported verifier\0{trial.verifier_pin}".encode())


def _same_task(trial: ImportedTrial, found: ppb.PinnedTask) -> bool:
    """The folder found is the task the trial ran: Harbor's digest of it matches the job's, or it
    is the task HEMRA made of the same SWE-bench instance."""
    if trial.task_pin.startswith("sha256:"):
        return trial.task_pin == found.harbor_digest
    if trial.task_pin.startswith("swebench:"):
        return found.task.task_name == f"swebench/{trial.task_name}"
    return True


def _harness(results: ImportedResults, trial: ImportedTrial) -> pb.Harness:
    digest = digests.sha256(
        f"imported agent\0{results.format}\0{trial.agent}\0{trial.agent_version}\0{trial.model}".encode()
    )
    return pb.Harness(
        name=f"harnesses/{digest}",
        digest=digest,
        harness_name=trial.agent,
        kind="import",
        agent=trial.agent,
        agent_version=trial.agent_version,
        model=trial.model,
    )


def _dataset(name: str, task_digests: list[str], tasks: dict[str, pb.Task], results: ImportedResults) -> pb.Dataset:
    digest = digests.sha256(("imported dataset\0" + name + "\0" + "\0".join(task_digests)).encode())
    return pb.Dataset(
        name=f"datasets/{digest}",
        digest=digest,
        dataset_name=name,
        source=f"{results.format} import",
        tasks=[tasks[d] for d in task_digests],
    )


def _event(event: dict, start: float | None) -> pb.Event:
    """An imported trajectory's event (its step's time, else the trial's start)."""
    message = pb.Event(
        type=event["type"], name=event["name"], payload_json=json.dumps(event["payload"], ensure_ascii=False)
    )
    when = _seconds(event.get("timestamp")) or start
    if when:
        message.time.FromNanoseconds(int(when * 1e9))
    return message


def _seconds(value) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        return (parsed if parsed.tzinfo else parsed.astimezone()).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


def _result(trial: ImportedTrial, verifier: str, by_path: dict[str, str]) -> spb.ImportedResult:
    result = spb.ImportedResult(
        outcome=vocabulary.OUTCOMES[trial.outcome],
        error=trial.error,
        agent_version=trial.agent_version,
        agent_name=trial.agent,
        artifacts=[pb.Artifact(path=p, blob_digest=by_path[p]) for p in trial.files if p in by_path],
        events=[_event(e, trial.start_time) for e in trial.events],
    )
    if trial.start_time:
        result.start_time.FromNanoseconds(int(trial.start_time * 1e9))
    if trial.end_time:
        result.end_time.FromNanoseconds(int(trial.end_time * 1e9))
    if trial.outcome in vocabulary.UNGRADED:
        return result
    if trial.rewards is None:
        result.score.CopyFrom(
            pb.Score(
                state=pb.SCORE_STATE_SCORER_FAILED,
                scorer="imported",
                scorer_fingerprint=digests.scorer_fingerprint(verifier, []),
                error=trial.score_error or "nothing graded this trial",
            )
        )
        return result
    numbers = {k: float(v) for k, v in trial.rewards.items() if isinstance(v, (int, float))}
    result.score.CopyFrom(
        pb.Score(
            state=pb.SCORE_STATE_SCORED,
            rewards=numbers,
            scorer="imported",
            scorer_fingerprint=digests.scorer_fingerprint(verifier, trial.rewards),
            judgments=trial.judgments,
        )
    )
    result.rewards_json = json.dumps(trial.rewards)
    return result
