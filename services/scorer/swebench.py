"""Grade a SWE-bench task's test log as the SWE-bench harness does: the swebench package's own
`get_eval_report` (its log parser for the repository, FAIL_TO_PASS and PASS_TO_PASS, the
evaluation type), run here in the scorer, never in the sandbox the agent worked in: an agent
cannot change the grader or the Python it runs on, only the log its tests print, and the
harness's checks of that log (markers, the test command's exit status) apply as they do there.

The task says what to grade in tests/swebench.json (services/planner/swebench.py writes it);
the report is the harness's report.json, and the reward `resolved` is 1 when it says so, else 0.
"""

import tempfile
from dataclasses import dataclass

from hemra.services.common import parsing
from hemra.services.common import swebench as package
from hemra.services.domain import blame

SPEC_FILE = blame.SWEBENCH_SPEC
LOG = "/logs/verifier/test_output.txt"
PATCH = "/logs/verifier/model.patch"
#: SWE-bench logs of big suites run to megabytes; past this the log is not one of a test run.
MAX_LOG_BYTES = 64 * 1024 * 1024
MAX_PATCH_BYTES = 16 * 1024 * 1024


class SpecError(Exception):
    """tests/swebench.json is not what the planner writes."""


#: The reward a SWE-bench task's grading gives (SWE-bench's word, as its reports name it).
REWARD_NAMES = blame.SWEBENCH_REWARD_NAMES


@dataclass
class Graded:
    report: dict
    resolved: bool
    #: SWE-bench's reason when the log is unparseable and its signature is the environment's
    #: (in a HEMRA run, the agent's doing: services/domain/blame.py).
    environment_failure: str = ""


def spec_of(data: bytes) -> dict:
    try:
        spec = parsing.load_json(data, SPEC_FILE)
    except parsing.Unbounded as exc:
        raise SpecError(str(exc)) from None
    except ValueError as exc:
        raise SpecError(f"{SPEC_FILE}: not JSON ({exc})") from None
    keys = ("instance_id", "repo", "version", "FAIL_TO_PASS", "PASS_TO_PASS", "log_parser", "eval_type")
    missing = [key for key in keys if key not in spec] if isinstance(spec, dict) else list(keys)
    if missing:
        raise SpecError(f"{SPEC_FILE}: missing {', '.join(missing)}")
    return spec


def grade(spec: dict, log: bytes, patch: bytes | None) -> Graded:
    """The harness's report of `log` for the instance `spec` describes (blocking: file I/O)."""
    grading = package.module("grading")
    test_spec = grading.TestSpec(  # swebench.types.TestSpec, as grading imports it
        instance_id=spec["instance_id"],
        image=spec.get("image", ""),
        eval_script_list=[],
        repo=spec["repo"],
        version=spec["version"],
        FAIL_TO_PASS=list(spec["FAIL_TO_PASS"]),
        PASS_TO_PASS=list(spec["PASS_TO_PASS"]),
        log_parser=spec["log_parser"],
        eval_type=spec["eval_type"],
    )
    prediction = {
        "instance_id": spec["instance_id"],
        "model_name_or_path": "hemra",
        "model_patch": None if patch is None else patch.decode(errors="replace"),
    }
    with tempfile.NamedTemporaryFile(suffix="-test_output.txt") as file:
        file.write(log)
        file.flush()
        report = grading.get_eval_report(test_spec, prediction, file.name, include_tests_status=True)
    result = report[spec["instance_id"]]
    reason = result.get("infra_failure_reason", "") if result.get("infra_failure") else ""
    return Graded(report, bool(result.get("resolved")), reason)
