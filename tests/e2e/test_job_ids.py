"""Job IDs are printed where a user needs them for `hemra cancel <job>`: when a run is
submitted, and in `hemra runs` while the job is unfinished; every attempt carries its job."""

import json
import re

from tests.e2e.helpers import hemra, runs, show

JOB_LINE = re.compile(r"job (j-[0-9a-z]{18}) queued +hemra-offline/(oracle|nop) (\S+) #1")


def test_job_ids__printed_on_submit_listed_while_open_and_cancellable(hemra_env):
    submitted = hemra(
        hemra_env, "run", "-H", "oracle", "-H", "nop", "-d", "hemra-offline", "-t", "hemra/f*", "--detach"
    )
    assert submitted.returncode == 0, submitted.stderr
    run_id = submitted.stdout.strip()  # stdout stays the run's ID alone, for scripts
    assert re.fullmatch(r"r-[0-9a-z]{18}", run_id), submitted.stdout
    printed = [m.groups() for m in JOB_LINE.finditer(submitted.stderr)]
    assert printed and {h for _, h, _ in printed} == {"oracle", "nop"}, submitted.stderr
    # Every attempt names its job, the same IDs as printed.
    attempts = show(hemra_env, run_id)["attempts"]
    by_job = {a["job_id"]: a for a in attempts}
    assert len(by_job) == len(attempts) and {job for job, _, _ in printed} <= set(by_job)
    # `hemra runs` lists the unfinished jobs, in its table and its JSON.
    [listed] = runs(hemra_env)
    assert {j["id"] for j in listed["open_jobs"]} == set(by_job), listed["open_jobs"]
    table = hemra(hemra_env, "runs")
    assert table.returncode == 0 and printed[0][0] in table.stdout and " job " in table.stdout, table.stdout
    # The job ID is what cancel takes: one trial stops, the rest stay queued.
    job, harness, task = printed[0]
    cancelled = hemra(hemra_env, "cancel", job)
    assert cancelled.returncode == 0 and "cancelled its trial's unfinished attempt" in cancelled.stdout
    assert show(hemra_env, job)["attempt"]["outcome"] == "OUTCOME_CANCELLED"
    [listed] = runs(hemra_env)
    assert job not in {j["id"] for j in listed["open_jobs"]} and len(listed["open_jobs"]) == len(attempts) - 1


def test_job_ids__printed_under_the_run_header(hemra_env):
    result = hemra(hemra_env, "run", "-H", "oracle", "-d", "hemra-offline", "-t", "hemra/reverse-lines")
    assert result.returncode == 0, result.stderr
    header, line = result.stdout.splitlines()[:2]
    assert header.startswith("run r-") and JOB_LINE.search(line), result.stdout
    # A finished run has no open jobs; its attempts still name theirs.
    [listed] = runs(hemra_env)
    assert "open_jobs" not in listed or listed["open_jobs"] == []
    [attempt] = show(hemra_env, listed["id"])["attempts"]
    assert attempt["job_id"] == JOB_LINE.search(line).group(1)
    assert json.loads(hemra(hemra_env, "show", attempt["job_id"]).stdout)["attempt"]["id"] == attempt["id"]
