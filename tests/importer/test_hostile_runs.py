"""Run folders made to hurt the importer (issue 31): nesting deep enough to exhaust the
parser's recursion, FIFOs and links where its probes read, instance IDs listed twice. Each is
refused by `hemra import` in one line naming the file (exit 2, nothing recorded), or, where
the file only explains a result, imported with the reason kept."""

import json
import os
from pathlib import Path

import pytest

from tests.e2e.helpers import hemra, runs, show
from tests.importer.swebench_fixture import MODEL, RUN_ID, write_run
from tests.importer.test_imports import unpack

pytestmark = pytest.mark.slow
#: Far deeper than Python's recursion limit; small on disk.
DEEP = "[" * 100_000 + "]" * 100_000
LOGS = Path("logs") / "run_evaluation" / RUN_ID / MODEL.replace("/", "__")


def _summary(run: Path) -> Path:
    return run / f"{MODEL.replace('/', '__')}.{RUN_ID}.json"


def _harbor(tmp: Path) -> tuple[Path, Path]:
    job = unpack("harbor-0.25-nop.tar", tmp)
    return job, next(p for p in sorted(job.iterdir()) if p.is_dir())


def deep_trial_result(tmp: Path) -> Path:
    job, trial = _harbor(tmp)
    (trial / "result.json").write_text(DEEP)
    return job


def deep_job_config(tmp: Path) -> Path:
    job, _ = _harbor(tmp)
    (job / "lock.json").write_text('{"trials": ' + DEEP + "}")
    return job


def deep_summary(tmp: Path) -> Path:
    run = write_run(tmp / "r")
    summary = json.loads(_summary(run).read_text())
    summary["unstopped_containers"] = json.loads("[" * 500 + "]" * 500)  # deep, yet a report in every key
    _summary(run).write_text(json.dumps(summary))
    return run


def deep_instance_report(tmp: Path) -> Path:
    run = write_run(tmp / "r")
    (run / LOGS / "a__a-1" / "report.json").write_text('{"a__a-1": ' + DEEP + "}")
    return run


def deep_run_json(tmp: Path) -> Path:
    run = write_run(tmp / "r")
    (run / "logs" / "run_evaluation" / RUN_ID / "run.json").write_text(DEEP)
    return run


def fifo_probe(tmp: Path) -> Path:
    """A FIFO among the *.json files a probe reads first (nobody ever writes to it)."""
    run = write_run(tmp / "r")
    os.mkfifo(run / "0-pending.json")
    return run


def fifo_report(tmp: Path) -> Path:
    run = write_run(tmp / "r")
    report = run / LOGS / "a__a-1" / "report.json"
    report.unlink()
    os.mkfifo(report)
    return run


def zero_probe(tmp: Path) -> Path:
    """A link to /dev/zero among the *.json files (read whole, it never ends)."""
    run = write_run(tmp / "r")
    os.symlink("/dev/zero", run / "0-zero.json")
    return run


def duplicate_submitted(tmp: Path) -> Path:
    run = write_run(tmp / "r")
    summary = json.loads(_summary(run).read_text())
    summary["submitted_ids"].insert(0, "a__a-1")
    summary["resolved_ids"].insert(0, "a__a-1")
    _summary(run).write_text(json.dumps(summary, indent=4) + "\n")
    return run


def duplicate_error(tmp: Path) -> Path:
    run = write_run(tmp / "r")
    summary = json.loads(_summary(run).read_text())
    summary["error_ids"].append("e__e-5")
    _summary(run).write_text(json.dumps(summary, indent=4) + "\n")
    return run


REFUSED = {
    "harbor trial result.json nested deep": (deep_trial_result, ["result.json: nested more than 64 levels deep"]),
    "harbor lock.json nested deep": (deep_job_config, ["lock.json: nested more than 64 levels deep"]),
    "swebench run report nested deep": (deep_summary, [".nightly.json: nested more than 64 levels deep"]),
    "swebench report.json nested deep": (deep_instance_report, ["a__a-1/report.json: nested more than 64 levels"]),
    "swebench run.json nested deep": (deep_run_json, ["run.json: nested more than 64 levels deep"]),
    "a FIFO where the probe reads": (fifo_probe, ["0-pending.json: only regular files and folders can be imported"]),
    "a FIFO as an instance's report.json": (fifo_report, ["report.json: only regular files and folders"]),
    "a link to /dev/zero where the probe reads": (zero_probe, ["0-zero.json: symbolic links cannot be imported"]),
    "an instance submitted twice": (duplicate_submitted, ["submitted_ids lists a__a-1 twice"]),
    "an instance in error_ids twice": (duplicate_error, ["error_ids lists e__e-5 twice"]),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_hostile_run_folder__one_line_exit_2_nothing_recorded(case, hemra_env, tmp_path):
    make, fragments = REFUSED[case]
    result = hemra(hemra_env, "import", str(make(tmp_path)), timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    for fragment in fragments:
        assert fragment in line, line
    assert runs(hemra_env) == []


def test_harbor_reward_details_nested_deep__the_reward_stands_the_details_say_why(hemra_env, tmp_path):
    job, trial = _harbor(tmp_path)
    (trial / "verifier" / "reward-details.json").write_text(DEEP)
    result = hemra(hemra_env, "import", str(job), "--label", "deep")
    assert result.returncode == 0, result.stderr
    attempt = next(a for a in show(hemra_env, "deep")["attempts"] if a["task_name"].endswith(trial.name.split("__")[0]))
    [judgment] = attempt["score"]["judgments"]
    assert judgment["error"] == "reward-details.json: nested more than 64 levels deep"
    assert attempt["outcome"] != "OUTCOME_INFRA_FAILED"
