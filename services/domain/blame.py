"""Whose failure it is: the one place HEMRA decides whether an attempt counts.

The rule (DESIGN rule 5; docs/sandboxes.md, "Whose failure it is"): an attempt is an
infrastructure failure, which leaves the denominator and is retried, only when HEMRA itself
observed an infrastructure fault: the engine refused, the machine ran out, HEMRA's own code
failed. Anything the agent can cause from inside its sandbox (its exit code, its output, the
messages it sends, the files and folders it leaves, a verifier that hangs or crashes on what it
left) is a result: failed, with the reason recorded.

So nothing the agent writes is read as HEMRA's own signal (a `bwrap:` line on stderr, a
SWE-bench environment-failure line in a test log, a reward file written while the verifier
runs), and every path that classifies an attempt asks here:

- `attempt_failure(exc)`: an exception that ended an attempt. HEMRA code that finds what only
  the agent could have caused raises AgentFault; every other exception is HEMRA's own.
- `verifier_failure(...)`: a verifier run that gave no usable reward. Always the agent's
  result (score 0 for the task's reward names), with a fault name the report counts apart, so
  that a broken task, which fails the same way under the oracle, shows instead of hiding among
  the failures.
"""

from dataclasses import dataclass

from hemra.services.domain import vocabulary

#: The verifier ran past its timeout (the agent's program hung when the tests ran it).
VERIFIER_TIMED_OUT = "verifier_timed_out"
#: The verifier ended without writing a reward (it crashed on what the agent left).
VERIFIER_CRASHED = "verifier_crashed"
#: A reward file that is not one: unreadable, too large, not numbers.
REWARD_INVALID = "reward_invalid"
#: reward.txt and reward.json both written in one verifier run: one of them was not the test's.
REWARD_CONFLICT = "reward_conflict"
#: A test log that reads as SWE-bench's environment failure: HEMRA built and started the
#: environment itself before the agent ran, so the log says what the agent's code printed.
ENVIRONMENT_SIGNATURE = "environment_signature"
FAULTS = (VERIFIER_TIMED_OUT, VERIFIER_CRASHED, REWARD_INVALID, REWARD_CONFLICT, ENVIRONMENT_SIGNATURE)
#: Reward names a failed verifier run scores 0 under: Harbor's reward.txt names its one value
#: `reward`; a SWE-bench task (its grading spec among its tests) is graded `resolved`.
DEFAULT_REWARD_NAMES = ("reward",)
SWEBENCH_SPEC, SWEBENCH_REWARD_NAMES = "tests/swebench.json", ("resolved",)


class AgentFault(Exception):
    """Raised by HEMRA code that finds, in what the agent sent or left, something only the agent
    could have caused and that stops the work at hand: the attempt is the agent's result."""


@dataclass(frozen=True)
class Failure:
    """An attempt's outcome (its short name, vocabulary.OUTCOMES) and what happened."""

    outcome: str
    error: str

    @property
    def counts(self) -> bool:
        """Whether the attempt stays in the denominator (the agent's result)."""
        return self.outcome not in vocabulary.UNGRADED


def attempt_failure(exc: BaseException) -> Failure:
    """What an exception that ended an attempt's work makes of it: the agent's failure for an
    AgentFault, else an infrastructure failure (HEMRA observed it: its own code, the engine,
    the machine, a service that did not answer)."""
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, AgentFault):
        return Failure(vocabulary.HARNESS_FAILED, str(exc))
    return Failure(vocabulary.INFRA_FAILED, message)


@dataclass(frozen=True)
class VerifierFailure:
    """A verifier run that gave no usable reward, as the agent's result."""

    fault: str
    error: str
    rewards: dict[str, float]


def reward_names(task_paths) -> tuple[str, ...]:
    """The names a task's verifier scores under when it gives no reward (its paths, e.g. tests/x)."""
    return SWEBENCH_REWARD_NAMES if SWEBENCH_SPEC in task_paths else DEFAULT_REWARD_NAMES


def verifier_failure(fault: str, error: str, reward_names=DEFAULT_REWARD_NAMES) -> VerifierFailure:
    """The agent's failure for a verifier run that ended in `fault`: 0 for each reward name."""
    if fault not in FAULTS:
        raise ValueError(f"unknown verifier fault {fault!r}")
    return VerifierFailure(fault, error, {name: 0.0 for name in reward_names})
