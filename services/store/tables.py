"""SQLAlchemy tables of the store. Times are seconds since the epoch (UTC), as floats,
so the queue's expiry tests are plain comparisons on SQLite and PostgreSQL alike."""

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    false,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Blob(Base):
    """A content-addressed file; its bytes live in the blob folder."""

    __tablename__ = "blobs"
    digest: Mapped[str] = mapped_column(String(80), primary_key=True)
    size_bytes: Mapped[int] = mapped_column(Integer)
    create_time: Mapped[float] = mapped_column(Float)


class Task(Base):
    """A pinned task; `record` is the hemra.v1.Task message as JSON."""

    __tablename__ = "tasks"
    digest: Mapped[str] = mapped_column(String(80), primary_key=True)
    task_name: Mapped[str] = mapped_column(String(300))
    record: Mapped[dict] = mapped_column(JSON)


class Dataset(Base):
    """A pinned set of tasks."""

    __tablename__ = "datasets"
    digest: Mapped[str] = mapped_column(String(80), primary_key=True)
    dataset_name: Mapped[str] = mapped_column(String(300), index=True)
    source: Mapped[str] = mapped_column(Text)
    task_digests: Mapped[list] = mapped_column(JSON)
    create_time: Mapped[float] = mapped_column(Float)


class Harness(Base):
    """A pinned harness file; `record` is the hemra.v1.Harness message as JSON."""

    __tablename__ = "harnesses"
    digest: Mapped[str] = mapped_column(String(80), primary_key=True)
    harness_name: Mapped[str] = mapped_column(String(300))
    record: Mapped[dict] = mapped_column(JSON)


class Run(Base):
    __tablename__ = "runs"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    label: Mapped[str] = mapped_column(String(300), index=True)
    create_time: Mapped[float] = mapped_column(Float)
    #: hemra.v1.RunSpec as JSON.
    spec: Mapped[dict] = mapped_column(JSON)
    concurrency: Mapped[int] = mapped_column(Integer)
    max_infra_retries: Mapped[int] = mapped_column(Integer)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    #: Jobs of this run leased now; kept with every lease change so a claim
    #: checks the run's concurrency with one guarded update, across all workers.
    leased: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: False when the run has no more trials than its concurrency, so the limit
    #: can never bind and claims skip the count (and its lock) altogether.
    limited: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    #: run (planned and executed by HEMRA) or import (results made elsewhere: a Harbor job, a
    #: SWE-bench run, a HEMRA export restored). Nothing an imported file says makes it a run.
    kind: Mapped[str] = mapped_column(String(16), default="run", server_default="run")
    #: The executor pool that works its jobs (RunSpec.pool; executors claim their own pool's).
    pool: Mapped[str] = mapped_column(String(63), default="default", server_default="default")
    import_format: Mapped[str] = mapped_column(String(40), default="", server_default="")
    source: Mapped[str] = mapped_column(Text, default="", server_default="")
    #: Imports: [TreeEntry as JSON], the source folder byte for byte.
    tree: Mapped[list | None] = mapped_column(JSON)
    #: One more each time HEMRA judge scores are added to any of its attempts, or a resume or
    #: repair queues its trials again: the only changes a settled run's progress, report and
    #: trials can see, so what a store keeps of them is checked against it (another process, or
    #: another store replica, may have judged or repaired).
    judge_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Imports' provenance (hemra.v1.ImportProvenance): written by the store, never read from a file.
    #: sha256 of an imported HEMRA export's manifest file as it was read ("" for other formats).
    export_digest: Mapped[str] = mapped_column(String(80), default="", server_default="")
    #: Who imported it, as far as the importer can tell ("" when recorded before this was kept).
    imported_by: Mapped[str] = mapped_column(String(300), default="", server_default="")
    #: When this store recorded the import (None for runs, and imports recorded before).
    import_time: Mapped[float | None] = mapped_column(Float)
    #: An imported HEMRA export: the ID, kind and label its manifest gave the run, as it gave them.
    original_id: Mapped[str] = mapped_column(String(32), default="", server_default="")
    original_kind: Mapped[str] = mapped_column(String(16), default="", server_default="")
    original_label: Mapped[str] = mapped_column(String(300), default="", server_default="")
    #: PlanRunRequest.request_id, made by the client that asked for the run (None: it made none):
    #: a repeated request finds the run its first recorded, and a second can never be recorded.
    request_id: Mapped[str | None] = mapped_column(String(64), unique=True, index=True)


class RunRepair(Base):
    """A resume or repair of a run (services/store/repair.py): who asked, when, why, how many
    trials it queued again, and the changed inputs it was allowed to ignore (then the run is
    not a fair comparison). Its attempts are the trials' later attempts, beside the earlier."""

    __tablename__ = "run_repairs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    #: resume or repair.
    kind: Mapped[str] = mapped_column(String(16))
    #: As the caller said it (RepairRunRequest.requested_by).
    requested_by: Mapped[str] = mapped_column(String(300))
    create_time: Mapped[float] = mapped_column(Float)
    #: [infra | scorer | cancelled]
    reasons: Mapped[list] = mapped_column(JSON)
    queued: Mapped[int] = mapped_column(Integer)
    #: [hemra.v1.RunChange as JSON]; empty when nothing changed.
    allowed_changes: Mapped[list] = mapped_column(JSON)


class Cell(Base):
    """run/dataset/harness."""

    __tablename__ = "cells"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    dataset_digest: Mapped[str] = mapped_column(ForeignKey("datasets.digest"))
    dataset_name: Mapped[str] = mapped_column(String(300))
    harness_digest: Mapped[str] = mapped_column(ForeignKey("harnesses.digest"))
    harness_name: Mapped[str] = mapped_column(String(300))
    model: Mapped[str] = mapped_column(String(300))
    #: The leak audits of the cell's tasks when the run was planned (services/store/audits.py):
    #: {audit_time, tasks, unaudited, leaks, errors}; None for imports and runs recorded before
    #: audits were.
    dataset_audit: Mapped[dict | None] = mapped_column(JSON)


class DatasetAudit(Base):
    """A leak audit of a dataset's tasks (hemra datasets audit). `tasks` is a list of
    hemra.v1.TaskAudit as JSON (field names as in the proto)."""

    __tablename__ = "dataset_audits"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    dataset_digest: Mapped[str] = mapped_column(ForeignKey("datasets.digest"), index=True)
    dataset_name: Mapped[str] = mapped_column(String(300))
    audit_time: Mapped[float] = mapped_column(Float)
    #: clean, leaks or error.
    verdict: Mapped[str] = mapped_column(String(16))
    tasks: Mapped[list] = mapped_column(JSON)


class SettledCell(Base):
    """The latest attempt of each trial of a cell whose trials have all finished, in one row
    (services/store/settled.py): what reports and compares read of a big cell, without joining
    its attempts again. Derived, never exported: any row can be dropped and is made again."""

    __tablename__ = "settled_cells"
    cell_id: Mapped[str] = mapped_column(ForeignKey("cells.id"), primary_key=True)
    #: The run's judge_version the trials were read at: only judging changes them, so a row of
    #: another version is not read (and is replaced).
    judge_version: Mapped[int] = mapped_column(Integer)
    trials: Mapped[bytes] = mapped_column(LargeBinary)


class Trial(Base):
    """One harness on one task, the k-th repetition."""

    __tablename__ = "trials"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    cell_id: Mapped[str] = mapped_column(ForeignKey("cells.id"), index=True)
    task_digest: Mapped[str] = mapped_column(ForeignKey("tasks.digest"))
    task_name: Mapped[str] = mapped_column(String(300))
    repetition: Mapped[int] = mapped_column(Integer)


class Attempt(Base):
    """One try of a trial. `outcome` and `score_*` are set when it finishes."""

    __tablename__ = "attempts"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    trial_id: Mapped[str] = mapped_column(ForeignKey("trials.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16))
    outcome: Mapped[str | None] = mapped_column(String(32))
    exit_code: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str] = mapped_column(Text, default="")
    create_time: Mapped[float] = mapped_column(Float)
    start_time: Mapped[float | None] = mapped_column(Float)
    end_time: Mapped[float | None] = mapped_column(Float)
    agent_version: Mapped[str] = mapped_column(String(100), default="")
    #: The agent the attempt says it ran ("" when it did not say); the report flags
    #: one that differs from the harness's pinned agent.
    agent_name: Mapped[str] = mapped_column(String(300), default="", server_default="")
    #: hemra.v1.Score as JSON, when scored.
    score: Mapped[dict | None] = mapped_column(JSON)
    #: [hemra.v1.Score as JSON] of HEMRA judges, oldest first; re-judging appends.
    judge_scores: Mapped[list | None] = mapped_column(JSON)
    #: [hemra.v1.Artifact as JSON].
    artifacts: Mapped[list] = mapped_column(JSON, default=list)
    event_count: Mapped[int] = mapped_column(Integer, default=0)
    #: Its `usage` events' tokens and cost, summed as they are written (services/store/usage.py).
    input_tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    output_tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    usage_events: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: The usage HEMRA's model relay read itself (its `usage_observed` events), summed apart.
    usage_observed_input_tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    usage_observed_output_tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    usage_observed_cache_read_input_tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    usage_observed_cache_creation_input_tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    usage_observed_model_calls: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    usage_observed_unreadable: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    usage_observed_events: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: Its events that mine the repository's history (services/common/mining.py), counted as
    #: they are written: the report counts such attempts from the rows, never from the events.
    mining_events: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: passed, failed, errored or cancelled once finished (see services/domain/rewards.verdict):
    #: kept on the row so progress is one aggregate query.
    verdict: Mapped[str | None] = mapped_column(String(16))
    #: Closed because its worker shut down and handed the job back (not the
    #: infrastructure's fault): its retry does not use up max_infra_retries.
    released: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class Job(Base):
    """The queue row that works one attempt (see queue.py for the lease protocol)."""

    __tablename__ = "jobs"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    attempt_id: Mapped[str] = mapped_column(ForeignKey("attempts.id"), unique=True)
    #: queued, leased or done.
    state: Mapped[str] = mapped_column(String(16))
    lease_owner: Mapped[str] = mapped_column(String(200), default="")
    lease_token: Mapped[int] = mapped_column(Integer, default=0)
    lease_expire_time: Mapped[float] = mapped_column(Float, default=0.0)
    try_count: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str] = mapped_column(Text, default="")
    #: The job whose completion claimed this one (CompleteJob's claim_next), else "": a repeated
    #: completion whose first answer was lost hands back this job instead of leasing another.
    claimed_after: Mapped[str] = mapped_column(String(32), default="", server_default="")
    create_time: Mapped[float] = mapped_column(Float)

    __table_args__ = (Index("ix_jobs_state_create_time", "state", "create_time"),)


class Event(Base):
    """One entry of an attempt's event log."""

    __tablename__ = "events"
    attempt_id: Mapped[str] = mapped_column(ForeignKey("attempts.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    time: Mapped[float] = mapped_column(Float)
    type: Mapped[str] = mapped_column(String(40))
    name: Mapped[str] = mapped_column(String(300))
    payload: Mapped[str] = mapped_column(Text)
    duration: Mapped[float] = mapped_column(Float, default=0.0)
