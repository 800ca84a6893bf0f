"""What an importer reads out of a result set, before it is recorded: plain data."""

from dataclasses import dataclass, field

from hemra.services.domain.vocabulary import (  # noqa: F401  (the words importers use)
    CANCELLED,
    COMPLETED,
    HARNESS_FAILED,
    INFRA_FAILED,
    TIMED_OUT,
)


@dataclass
class ImportedTrial:
    dataset: str
    agent: str
    model: str
    task_name: str
    outcome: str
    #: Official rewards exactly as recorded (ints stay ints); None when nothing graded.
    rewards: dict | None
    #: Why nothing graded (a scorer failure), when rewards is None.
    score_error: str = ""
    error: str = ""
    agent_version: str = ""
    #: A local task folder this trial ran, when known (pairs with HEMRA's own runs).
    task_path: str = ""
    #: The source's own pin of the task (Harbor lock digest or checksum, SWE-bench instance).
    task_pin: str = ""
    #: Identifies the verifier when the task folder is not known.
    verifier_pin: str = ""
    start_time: float | None = None
    end_time: float | None = None
    #: Files of this trial (paths relative to the import root).
    files: list[str] = field(default_factory=list)
    #: The task's own rubric judges, criterion by criterion (hemra.v1.Judgment).
    judgments: list = field(default_factory=list)
    #: The agent's trajectory as events ({"type", "name", "payload", "timestamp"?}), when the
    #: source kept one (services/common/mining.py atif_events).
    events: list = field(default_factory=list)


@dataclass
class ImportedResults:
    format: str
    #: The tool's version as far as the files tell ("0.25", "0.13", "5.0.2", ...).
    version: str
    trials: list[ImportedTrial]
    #: What was noticed but not refused, one line each (ImportResultsResponse.warnings).
    warnings: list[str] = field(default_factory=list)
