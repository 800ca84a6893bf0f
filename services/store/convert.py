"""Table rows to hemra.v1 messages and back, one function per type."""

import msgspec
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from hemra.services.common.errors import InvalidArgument
from hemra.services.domain import vocabulary
from hemra.services.domain.records import AttemptInfo, CellInfo, TrialInfo
from hemra.services.domain.rewards import reward_problem
from hemra.services.store import runreads, usage
from hemra.services.store import tables as t
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb

#: The instants a Timestamp can hold (0001-01-01 to 9999-12-31 UTC), in epoch seconds.
_MIN_SECONDS, _MAX_SECONDS = -62_135_596_800, 253_402_300_799


def is_showable_time(seconds) -> bool:
    """Whether a stored time is one a Timestamp (and so every reader) can hold."""
    return (
        isinstance(seconds, (int, float))
        and not isinstance(seconds, bool)
        and _MIN_SECONDS <= seconds <= _MAX_SECONDS  # NaN fails this too
    )


def timestamp(seconds: float | None) -> Timestamp | None:
    """A stored time as a Timestamp; None for never, and for a time no Timestamp can hold (a
    row recorded before times were checked): readers show it unset, never fail on it."""
    if seconds is None or not is_showable_time(seconds):
        return None
    ts = Timestamp()
    ts.FromNanoseconds(round(seconds * 1e9))  # round: seconds read back from nanoseconds map to the same ones
    return ts


def seconds(ts: Timestamp) -> float | None:
    return ts.ToNanoseconds() / 1e9 if ts.seconds or ts.nanos else None


def duration_secs(d: Duration) -> float:
    return d.ToNanoseconds() / 1e9


_SCALARS = {
    FieldDescriptor.TYPE_STRING,
    FieldDescriptor.TYPE_BOOL,
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_SINT32,
}
_INT64 = {FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_SINT64}
_FLOATS = {FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT}


def to_dict(message) -> dict:
    """json_format.MessageToDict. Messages of scalars, enums and maps of string to number, which
    imports record by the 100,000 (tree entries, artifacts, scores), take a path in C through
    ListFields; anything else goes to json_format."""
    data = {}
    for field, value in message.ListFields():
        write = _writers.get(field)
        if write is None:
            write = _writers[field] = _writer(field)
        if write is _FALLBACK:
            return json_format.MessageToDict(message)
        data[field.json_name] = write(value)
    return data


_FALLBACK = object()
_writers: dict = {}


def _writer(field: FieldDescriptor):
    """How to_dict writes a field's value as json_format would, or _FALLBACK."""
    if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry:
        key, value = field.message_type.fields
        if key.type == FieldDescriptor.TYPE_STRING and value.type in _FLOATS:
            return lambda entries: {k: _number(v) for k, v in entries.items()}
        return _FALLBACK
    if field.is_repeated:
        return _FALLBACK
    if field.type in _SCALARS:
        return lambda value: value
    if field.type in _INT64:
        return str  # int64 is a string in protobuf's JSON
    if field.type in _FLOATS:
        return _number
    if field.type == FieldDescriptor.TYPE_ENUM:
        names = {v.number: v.name for v in field.enum_type.values}
        return lambda number: names.get(number, number)
    return _FALLBACK


def _number(value: float):
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return value


class _TreeEntry(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=True):
    """hemra.v1.TreeEntry's JSON form, to check a tree without a message per entry."""

    path: str
    blob_digest: str = ""
    is_dir: bool = False
    executable: bool = False
    size_bytes: str = "0"

    def __post_init__(self):
        # `hemra export` writes the tree back under a folder: no path may lead out of it.
        parts = self.path.split("/")
        if self.path.startswith("/") or any(part in ("", ".", "..") for part in parts):
            raise ValueError(f"path {self.path!r} is not a relative path inside the folder")


def tree_from_json(data: bytes) -> list[dict]:
    """A RecordRunRequest.tree_json array, checked, as the JSON rows the store keeps."""
    try:
        return msgspec.to_builtins(msgspec.json.decode(data or b"[]", type=list[_TreeEntry]))
    except msgspec.ValidationError as exc:
        raise InvalidArgument(f"tree_json: {exc}") from None
    except msgspec.DecodeError as exc:
        raise InvalidArgument(f"tree_json: not JSON ({exc})") from None


def checked_tree(rows: list | None) -> list[dict] | None:
    """A tree already decoded (an export's run row), checked as tree_from_json checks."""
    if rows is None:
        return None
    try:
        return msgspec.to_builtins(msgspec.convert(rows, type=list[_TreeEntry]))
    except msgspec.ValidationError as exc:
        raise InvalidArgument(f"tree: {exc}") from None


def from_dict(data: dict, message):
    """A stored message's JSON form (MessageToDict) back; a key the message lacks is an error."""
    return json_format.ParseDict(data, message)


def message(record: msgspec.Struct, message_type):
    """A typed store record (hemra.services.store.outputs) as `message_type`: the one place the
    store's domain output becomes protos. A field of the record that the message lacks raises
    (TypeError), so a misspelt name fails the first test that reaches it."""
    plan = _plan(type(record), message_type)
    if not plan[0]:  # scalars, lists of scalars and maps only (a compare's tasks, by the 10,000)
        return message_type(**msgspec.structs.asdict(record))
    fields = {}
    for name, kind, sub_type in plan[1]:
        value = getattr(record, name)
        if value is None:
            continue
        if kind is _NESTED:
            value = message(value, sub_type)
        elif kind is _NESTED_LIST:
            value = [message(v, sub_type) for v in value]
        elif kind is _TIME:
            value = timestamp(value)
        fields[name] = value
    return message_type(**fields)


_NESTED, _NESTED_LIST, _TIME, _PLAIN = "nested", "nested list", "time", "plain"
_plans: dict = {}


def _plan(record_type, message_type) -> tuple[bool, list[tuple[str, str, type | None]]]:
    """Per field of `record_type`: how its value becomes `message_type`'s, and whether any field
    needs more than passing on (worked out once per pair)."""
    key = (record_type, message_type)
    if key not in _plans:
        plan = []
        for name in record_type.__struct_fields__:
            field = message_type.DESCRIPTOR.fields_by_name.get(name)
            if field is None:
                raise TypeError(f"{message_type.__name__} has no field {name!r} ({record_type.__name__})")
            plan.append((name, *_kind(field)))
        _plans[key] = (any(kind is not _PLAIN for _, kind, _ in plan), plan)
    return _plans[key]


def _kind(field: FieldDescriptor) -> tuple[str, type | None]:
    if field.type != FieldDescriptor.TYPE_MESSAGE or field.message_type.GetOptions().map_entry:
        return _PLAIN, None
    if field.message_type.full_name == "google.protobuf.Timestamp":
        return _TIME, None
    return (_NESTED_LIST if field.is_repeated else _NESTED), message_factory.GetMessageClass(field.message_type)


#: What building a message of a row a reader cannot read raises (a value of the wrong type, one
#: out of its field's range): the row is then shown by its ID and the problem alone.
_UNREADABLE = (TypeError, ValueError, OverflowError, AttributeError, KeyError, json_format.ParseError)


def run_to_proto(run: t.Run, cells: list[t.Cell], progress: tuple[dict, dict] | None = None) -> pb.Run:
    """A run row as a Run. A value HEMRA would not have written (a row recorded before values
    were checked, or edited by hand) is left unset and named in Run.problem: one bad row never
    fails a list of runs."""
    try:
        return _run_message(run, cells, progress)
    except _UNREADABLE as exc:
        return pb.Run(
            name=f"runs/{run.id}", id=str(run.id), problem=f"run {run.id}: does not read ({_first_line(exc)})"
        )


def _first_line(exc: Exception) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def _run_message(run: t.Run, cells: list[t.Cell], progress: tuple[dict, dict] | None) -> pb.Run:
    total, per_cell = progress if progress is not None else (None, {})
    problems = Problems()
    made = pb.Run(
        name=f"runs/{run.id}",
        id=run.id,
        label=run.label,
        create_time=problems.time("create_time", run.create_time),
        cells=[cell_to_proto(c, per_cell.get(c.id)) for c in cells],
        cancel_requested=bool(run.cancel_requested),
        kind=run.kind,
        import_format=run.import_format,
        source=run.source,
    )
    spec = problems.parsed("spec", run.spec, pb.RunSpec)
    if spec is not None:
        made.spec.CopyFrom(spec)
    if run.kind not in ("run", "import", "loose"):
        problems.add(f"kind {run.kind!r} is not one HEMRA knows")
    if run.kind == "import" or (run.kind == "loose" and run.original_id):  # a loose attempt restored
        made.provenance.CopyFrom(message(runreads.provenance(run), pb.ImportProvenance))
    if total is not None:
        made.progress.CopyFrom(pb.RunProgress(**total))
        if total.get("unreadable"):
            problems.add(
                f"{total['unreadable']} attempts have a state or verdict HEMRA does not know (counted as errored)"
            )
    made.problem = problems.line(f"run {run.id}")
    return made


class Problems:
    """What a reader could not read of one row, gathered into one line (Run.problem,
    Attempt.problem) while everything else of it is shown."""

    def __init__(self):
        self.found: list[str] = []

    def add(self, problem: str) -> None:
        self.found.append(problem)

    def line(self, row: str) -> str:
        return f"{row}: {'; '.join(self.found)}" if self.found else ""

    def time(self, key: str, seconds) -> Timestamp | None:
        if seconds is not None and not is_showable_time(seconds):
            self.add(f"{key} {seconds!r} is not a time")
        return timestamp(seconds)

    def int32(self, key: str, value) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31:
            return value
        self.add(f"{key} {str(value)[:40]} is not a 32-bit number")
        return 0

    def parsed(self, key: str, value, message_type, parse=None):
        """A stored message's JSON form as `message_type` (with `parse`, default from_dict), or
        None when it does not read as one."""
        try:
            if parse is not None:
                return parse(value)
            return from_dict(value, message_type())
        except (*_UNREADABLE, RecursionError) as exc:
            self.add(f"{key} does not read as a {message_type.DESCRIPTOR.name} ({_first_line(exc)[:100]})")
            return None


def cell_to_proto(cell: t.Cell, progress: dict | None = None) -> pb.Cell:
    message = pb.Cell(
        id=cell.id,
        dataset_name=cell.dataset_name,
        dataset_digest=cell.dataset_digest,
        harness_name=cell.harness_name,
        harness_digest=cell.harness_digest,
        model=cell.model,
    )
    if progress is not None:
        message.progress.CopyFrom(pb.RunProgress(**progress))
    return message


def with_open_jobs(run: pb.Run, jobs: list[dict]) -> pb.Run:
    """`run` naming its unfinished jobs (runreads.open_jobs)."""
    run.open_jobs.extend(pb.OpenJob(**job) for job in jobs)
    return run


def attempt_to_proto(attempt: AttemptInfo, trial: TrialInfo, cell: CellInfo, job_id: str = "") -> pb.Attempt:
    """An attempt row as an Attempt; what does not read as HEMRA writes it is left unset and
    named in Attempt.problem (see run_to_proto)."""
    try:
        message = _attempt_message(attempt, trial, cell)
        message.job_id = job_id
        return message
    except _UNREADABLE as exc:
        return pb.Attempt(
            name=f"runs/{attempt.run_id}/attempts/{attempt.id}",
            id=str(attempt.id),
            run_id=str(attempt.run_id),
            problem=f"attempt {attempt.id}: does not read ({_first_line(exc)})",
        )


def _attempt_message(attempt: AttemptInfo, trial: TrialInfo, cell: CellInfo) -> pb.Attempt:
    problems = Problems()
    state = vocabulary.STATES.get(attempt.state, 0)
    if not state:
        problems.add(f"state {str(attempt.state)[:40]!r} is not one HEMRA knows")
    outcome = vocabulary.OUTCOMES.get(attempt.outcome or "", 0)
    if attempt.outcome and not outcome:
        problems.add(f"outcome {str(attempt.outcome)[:40]!r} is not one HEMRA knows")
    verdict = (attempt.verdict or "") if attempt.state == vocabulary.FINISHED else ""
    if verdict and verdict not in vocabulary.VERDICTS:
        problems.add(f"verdict {verdict[:40]!r} is not one HEMRA knows")
        verdict = vocabulary.ERRORED  # as progress counts it
    message = pb.Attempt(
        name=f"runs/{attempt.run_id}/attempts/{attempt.id}",
        id=attempt.id,
        run_id=attempt.run_id,
        trial_id=trial.id,
        cell_id=cell.id,
        task_digest=trial.task_digest,
        task_name=trial.task_name,
        repetition=problems.int32("repetition", trial.repetition),
        number=problems.int32("number", attempt.number),
        state=state,
        outcome=outcome,
        exit_code=problems.int32("exit_code", attempt.exit_code),
        error=attempt.error,
        start_time=problems.time("start_time", attempt.start_time),
        end_time=problems.time("end_time", attempt.end_time),
        agent_version=attempt.agent_version,
        model=cell.model,
        harness_name=cell.harness_name,
        dataset_name=cell.dataset_name,
        event_count=attempt.event_count or 0,
        verdict=verdict,
    )
    artifacts = problems.parsed("artifacts", attempt.artifacts or [], pb.Artifact, _artifacts)
    message.artifacts.extend(artifacts or [])
    if attempt.score:
        score = problems.parsed("score", attempt.score, pb.Score, score_from_dict)
        if score is not None:
            message.score.CopyFrom(score)
    _usage_to_proto(attempt, message)
    judged = problems.parsed("judge_scores", getattr(attempt, "judge_scores", None) or [], pb.Score, _judge_scores)
    message.judge_scores.extend(judged or [])
    message.problem = problems.line(f"attempt {attempt.id}")
    return message


def _artifacts(rows: list) -> list[pb.Artifact]:
    return [artifact_from_dict(a) for a in rows]


def _judge_scores(rows: list) -> list[pb.Score]:
    return [score_from_dict(s) for s in reversed(rows)]


def _usage_to_proto(attempt: t.Attempt, message: pb.Attempt) -> None:
    """The reported and the relay-observed usage, side by side (services/store/usage.py)."""
    reported = {name: getattr(attempt, name, 0) or 0 for name in usage.COLUMNS}
    observed = {name: getattr(attempt, name, 0) or 0 for name in usage.OBSERVED_COLUMNS}
    if reported["usage_events"]:
        message.usage.CopyFrom(pb.ReportedUsage(**reported))
    if observed["usage_observed_events"]:
        message.usage_observed.CopyFrom(
            pb.ObservedUsage(**{name.removeprefix("usage_observed_"): value for name, value in observed.items()})
        )
    message.usage_differs = usage.differs(reported, observed)


_SCORE_KEYS = {"state", "rewards", "scorerFingerprint", "scorer", "error", "stdoutBlobDigest", "duration", "judgeModel"}
_ARTIFACT_KEYS = {"path", "blobDigest", "sizeBytes"}


def score_from_dict(data: dict) -> pb.Score:
    """A stored Score (MessageToDict form), built directly: json_format.ParseDict costs ~100 µs
    an attempt, which a page of attempts pays hundreds of times."""
    rewards, error = data.get("rewards", {}), data.get("error", "")
    problem = reward_problem(rewards)
    if problem:  # recorded before rewards had a range (or by hand): shown, never a failure to show
        rewards = {
            str(k): float(v)
            for k, v in (rewards.items() if isinstance(rewards, dict) else ())
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        }
        error = error or f"not usable: {problem}"
        data = {k: v for k, v in data.items() if k not in ("rewards", "error")}
    if not data.keys() <= _SCORE_KEYS:
        score = from_dict(data, pb.Score())
        score.rewards.update(rewards)
        score.error = error
        return score
    score = pb.Score(
        state=pb.ScoreState.Value(data.get("state", "SCORE_STATE_UNSPECIFIED")),
        rewards=rewards,
        scorer_fingerprint=data.get("scorerFingerprint", ""),
        scorer=data.get("scorer", ""),
        error=error,
        stdout_blob_digest=data.get("stdoutBlobDigest", ""),
        judge_model=data.get("judgeModel", ""),
    )
    if "duration" in data:
        score.duration.FromJsonString(data["duration"])
    return score


def artifact_from_dict(data: dict) -> pb.Artifact:
    if not data.keys() <= _ARTIFACT_KEYS:
        return from_dict(data, pb.Artifact())
    return pb.Artifact(
        path=data.get("path", ""), blob_digest=data.get("blobDigest", ""), size_bytes=int(data.get("sizeBytes", 0))
    )


def event_to_proto(event) -> pb.Event:
    """A t.Event row, or a eventlog.EventPreview (payload maybe cut, size measured by the database)."""
    size = getattr(event, "payload_bytes", None)
    message = pb.Event(
        seq=event.seq,
        time=timestamp(event.time),
        type=event.type,
        name=event.name,
        payload_json=event.payload,
        payload_bytes=size if size is not None else len(event.payload.encode()),
        payload_cut=getattr(event, "payload_cut", False),
    )
    # A duration no Duration can hold (recorded before durations were checked) is left unset.
    if isinstance(event.duration, (int, float)) and abs(event.duration) <= 315_576_000_000:
        message.duration.FromNanoseconds(round(event.duration * 1e9))
    return message


def event_row(event: pb.Event, now: float) -> dict:
    return dict(
        time=seconds(event.time) or now,
        type=event.type or "status",
        name=event.name,
        payload=event.payload_json or "{}",
        duration=duration_secs(event.duration),
    )


def audit_to_proto(row) -> spb.DatasetAudit:
    """A recorded dataset audit (tables.DatasetAudit)."""
    audit = spb.DatasetAudit(
        name=f"audits/{row.id}",
        dataset_name=row.dataset_name,
        dataset_digest=row.dataset_digest,
        audit_time=timestamp(row.audit_time),
        verdict=row.verdict,
    )
    for task in row.tasks:
        audit.tasks.append(json_format.ParseDict(task, spb.TaskAudit()))
    return audit
