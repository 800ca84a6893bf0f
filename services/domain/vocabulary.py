"""HEMRA's words for what happened to an attempt, defined once from the hemra.v1 enums. The
store, the executor, the importers, the CLI and the HTTP API (gateway/schemas.py) all say
`harness_failed` for OUTCOME_HARNESS_FAILED and name verdicts as VERDICTS does. The dashboard
reads the same words from clients/dashboard/src/vocabulary.js, generated from this module
(scripts/gen_vocabulary.py)."""

from enum import StrEnum

from google.protobuf.descriptor import EnumDescriptor

from hemra.v1 import common_pb2 as pb


def short_name(enum: EnumDescriptor, number: int) -> str:
    """`OUTCOME_HARNESS_FAILED` -> `harness_failed`, `ATTEMPT_STATE_QUEUED` -> `queued`;
    unspecified (0) or unknown -> ``."""
    value = enum.values_by_number.get(number)
    if value is None or value.number == 0:
        return ""
    prefix = value.name.split("_")[0] + "_"
    for candidate in (enum.values[0].name.rsplit("UNSPECIFIED", 1)[0], prefix):
        if value.name.startswith(candidate):
            return value.name[len(candidate) :].lower()
    return value.name.lower()


#: Outcome by its short name: completed, harness_failed, timed_out, infra_failed, cancelled.
OUTCOMES = {short_name(pb.Outcome.DESCRIPTOR, v.number): v.number for v in pb.Outcome.DESCRIPTOR.values if v.number}
COMPLETED = short_name(pb.Outcome.DESCRIPTOR, pb.OUTCOME_COMPLETED)
HARNESS_FAILED = short_name(pb.Outcome.DESCRIPTOR, pb.OUTCOME_HARNESS_FAILED)
TIMED_OUT = short_name(pb.Outcome.DESCRIPTOR, pb.OUTCOME_TIMED_OUT)
INFRA_FAILED = short_name(pb.Outcome.DESCRIPTOR, pb.OUTCOME_INFRA_FAILED)
CANCELLED = short_name(pb.Outcome.DESCRIPTOR, pb.OUTCOME_CANCELLED)
#: Outcomes that leave a trial ungraded: counted apart, never as failures.
UNGRADED = (INFRA_FAILED, CANCELLED)


class State(StrEnum):
    """An attempt's state: hemra.v1.AttemptState by its short name (stored as such in SQL)."""

    QUEUED = short_name(pb.AttemptState.DESCRIPTOR, pb.ATTEMPT_STATE_QUEUED)
    RUNNING = short_name(pb.AttemptState.DESCRIPTOR, pb.ATTEMPT_STATE_RUNNING)
    FINISHED = short_name(pb.AttemptState.DESCRIPTOR, pb.ATTEMPT_STATE_FINISHED)


class Verdict(StrEnum):
    """A finished attempt's verdict (services/domain/rewards.verdict decides it; the API sends
    it as a string: hemra.v1.Attempt.verdict)."""

    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"
    CANCELLED = CANCELLED


#: An attempt's state by its short name: queued, running, finished.
STATES = {s.value: pb.AttemptState.Value(f"ATTEMPT_STATE_{s.name}") for s in State}
FINISHED = State.FINISHED.value

PASSED, FAILED, ERRORED = Verdict.PASSED.value, Verdict.FAILED.value, Verdict.ERRORED.value
VERDICTS = tuple(v.value for v in Verdict)


def outcome_name(number: int) -> str:
    return short_name(pb.Outcome.DESCRIPTOR, number)


#: The event type of the usage HEMRA's model relay read itself in a harness's model calls (one
#: per attempt that used the relay, named "relay"): HEMRA's own, summed apart from the `usage`
#: events harnesses report, and refused from the harness (services/executor/events.py).
USAGE_OBSERVED = "usage_observed"
