"""`hemra run` end to end: the real CLI, services on loopback gRPC, real files, real bash."""

import re

import pytest

from tests.e2e.helpers import BUNDLED, copy_task, hemra, peak_concurrency, runs, show

pytestmark = pytest.mark.slow
TASKS = sorted(p.name for p in BUNDLED.iterdir() if (p / "task.toml").exists())


def _oracle_nop(env, *extra):
    result = hemra(env, "run", "-H", "oracle", "-H", "nop", "-d", "hemra-offline", *extra)
    assert result.returncode == 0, result.stderr + result.stdout
    return result


def test_run__oracle_passes_every_task_and_nop_fails_every_one(hemra_env):
    result = _oracle_nop(hemra_env, "--concurrency", "3")
    [run] = runs(hemra_env)
    data = show(hemra_env, run["id"])
    binary = sum(1 for a in data["attempts"] if a["harness_name"] == "oracle" and len(a["score"]["rewards"]) == 1)
    assert 0 < binary < len(TASKS)
    assert re.search(rf"oracle \(baseline\).*{binary}/{binary} \(100\.0%\)", result.stdout)
    assert re.search(rf"nop .*0/{binary} \(0\.0%\).*-100\.0 pts on {binary}", result.stdout)
    assert len(data["attempts"]) == 2 * len(TASKS) >= 16
    for attempt in data["attempts"]:
        rewards = attempt["score"]["rewards"]
        expected = 1.0 if attempt["harness_name"] == "oracle" else 0.0
        assert rewards and set(rewards.values()) == {expected}, attempt
        assert attempt["outcome"] == "OUTCOME_COMPLETED"
        assert attempt["score"]["scorer_fingerprint"].startswith("sha256:")
        paths = {a["path"] for a in attempt["artifacts"]}
        assert "/logs/verifier/test-stdout.txt" in paths
    assert data["report"]["complete"] is True


def test_run__postgres_store(hemra_env, postgres_url):
    env = dict(hemra_env, HEMRA_DATABASE_URL=postgres_url)
    result = hemra(
        env,
        "run",
        "-H",
        "oracle",
        "-H",
        "nop",
        "-d",
        "hemra-offline",
        "-t",
        "hemra/text-*",
        "-t",
        "hemra/json-*",
        "--label",
        "pg",
    )
    assert result.returncode == 0, result.stderr
    data = show(env, "pg")
    assert {a["task_name"] for a in data["attempts"]} == {"hemra/text-stats", "hemra/json-transform"}
    assert hemra(hemra_env, "show", "pg").returncode == 2  # the SQLite store never saw it


def test_run__repetitions_are_separate_trials(hemra_env):
    _oracle_nop(hemra_env, "-k", "2", "-t", "hemra/reverse-lines")
    data = show(hemra_env, runs(hemra_env)[0]["id"])
    reps = sorted((a["harness_name"], a["repetition"], a["number"]) for a in data["attempts"])
    assert reps == [("nop", 1, 1), ("nop", 2, 1), ("oracle", 1, 1), ("oracle", 2, 1)]


def test_show__report_and_events(hemra_env):
    _oracle_nop(hemra_env, "-t", "hemra/fix-median", "--label", "one")
    report = hemra(hemra_env, "show", "one", "--report")
    assert report.returncode == 0 and "oracle (baseline)" in report.stdout
    attempt = next(a for a in show(hemra_env, "one")["attempts"] if a["harness_name"] == "oracle")
    events = show(hemra_env, attempt["id"], "--events")
    names = [e["name"] for e in events["events"]]
    assert names[:2] == ["sandbox_ready", "harness_start"] and "solve.sh" in names and names[-1] == "scored"
    assert [e["seq"] for e in events["events"]] == sorted(e["seq"] for e in events["events"])


def test_run__run_file_with_local_harness_and_dataset(hemra_env, tmp_path):
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "datasets" / "mine").mkdir(parents=True)
    copy_task("reverse-lines", tmp_path / "datasets" / "mine")
    (tmp_path / "harnesses" / "shell.toml").write_text(
        'kind = "program"\ncommand = ["bash", "solve-via-protocol.sh"]\n'
    )
    (tmp_path / "harnesses" / "solve-via-protocol.sh").write_text(
        "set -e\nhemra harness exec 'tac /app/data/steps.txt > /app/reversed.txt'\n"
        'hemra harness event message \'{"text": "done"}\' --name agent\n'
    )
    (tmp_path / "run.toml").write_text(
        'name = "filed"\nharnesses = ["shell", "nop"]\ndatasets = ["mine"]\nattempts = 1\nconcurrency = 2\n'
    )
    result = hemra(hemra_env, "run", str(tmp_path / "run.toml"))
    assert result.returncode == 0, result.stderr + result.stdout
    attempts = show(hemra_env, "filed")["attempts"]
    by_harness = {a["harness_name"]: a for a in attempts}
    assert by_harness["shell"]["score"]["rewards"] == {"reward": 1.0}, by_harness["shell"]
    assert by_harness["nop"]["score"]["rewards"] == {"reward": 0.0}
    events = show(hemra_env, by_harness["shell"]["id"], "--events")["events"]
    assert any(e["type"] == "message" and e["payload"] == {"text": "done"} for e in events)
    assert any(e["type"] == "tool_call" and "tac" in e["payload"]["command"] for e in events)


def test_run__a_verifier_that_writes_no_reward_fails_the_attempt_and_is_counted_as_a_fault(hemra_env, tmp_path):
    # The agent can make a verifier crash (on what it left), so no reward is its failure, not
    # "not graded"; the report counts it apart, so a broken task shows under the oracle.
    task = copy_task("text-stats", tmp_path / "ds")
    (task / "tests" / "test.sh").write_text("#!/bin/bash\necho no reward written\nexit 0\n")
    result = hemra(hemra_env, "run", "-H", "oracle", "-d", str(tmp_path / "ds"), "--label", "noreward")
    assert result.returncode == 0, result.stderr
    [attempt] = show(hemra_env, "noreward")["attempts"]
    assert attempt["score"]["state"] == "SCORE_STATE_SCORED" and attempt["score"]["fault"] == "verifier_crashed"
    assert attempt["score"]["rewards"] == {"reward": 0.0} and "no reward file" in attempt["score"]["error"]
    row = show(hemra_env, "noreward")["report"]["datasets"][0]["rows"][0]
    assert row["verifier_faults"] == 1 and row["binary_graded"] == 1 and row.get("passed", 0) == 0
    assert row.get("scorer_failed", 0) == 0
    assert any("1 trials failed on a verifier fault" in flag for flag in row["flags"]), row["flags"]
    report = hemra(hemra_env, "show", "noreward", "--report").stdout
    assert "verifier fault" in report


def test_run__planted_reward_is_cleared_before_verifying(hemra_env, tmp_path):
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "cheat.toml").write_text('kind = "program"\ncommand = ["bash", "cheat.sh"]\n')
    (tmp_path / "harnesses" / "cheat.sh").write_text(
        "hemra harness exec 'mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt "
        '&& echo "{\\"reward\\": 1}" > /logs/verifier/reward.json\'\n'
    )
    copy_task("text-stats", tmp_path / "ds")
    result = hemra(hemra_env, "run", "-H", "cheat", "-d", str(tmp_path / "ds"), "--label", "cheat", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [attempt] = show(hemra_env, "cheat")["attempts"]
    assert attempt["score"]["rewards"] == {"reward": 0.0}


def test_run__harness_timeout_is_a_result_and_kills_the_program(hemra_env, tmp_path):
    (tmp_path / "harnesses").mkdir()
    marker = tmp_path / "still-running"
    (tmp_path / "harnesses" / "slow.toml").write_text('kind = "program"\ncommand = ["bash", "slow.sh"]\n')
    (tmp_path / "harnesses" / "slow.sh").write_text(f"(sleep 4; touch {marker}) &\nsleep 60\n")
    copy_task("text-stats", tmp_path / "ds")
    result = hemra(
        hemra_env, "run", "-H", "slow", "-d", str(tmp_path / "ds"), "--timeout", "1", "--label", "slow", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    [attempt] = show(hemra_env, "slow")["attempts"]
    assert attempt["outcome"] == "OUTCOME_TIMED_OUT"
    assert attempt["score"]["state"] == "SCORE_STATE_SCORED"  # scored anyway: a result
    import time

    time.sleep(4.5)
    assert not marker.exists()


def test_run__concurrency_is_honoured(hemra_env, tmp_path):
    (tmp_path / "harnesses").mkdir()
    log = tmp_path / "spans.log"
    (tmp_path / "harnesses" / "span.toml").write_text('kind = "program"\ncommand = ["bash", "span.sh"]\n')
    (tmp_path / "harnesses" / "span.sh").write_text(
        f'echo "start $(date +%s.%N)" >> {log}; sleep 0.4; echo "end $(date +%s.%N)" >> {log}\n'
    )
    result = hemra(
        hemra_env, "run", "-H", "span", "-d", "hemra-offline", "--concurrency", "2", "-t", "hemra/[a-j]*", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert peak_concurrency(log) == 2
