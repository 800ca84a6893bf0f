"""kind = "harbor": the real Harbor (PyPI harbor, installed by HEMRA into its tool cache when
missing) supervised by the executor, one `harbor run` per harbor cell, on the bundled tasks
in the local Docker engine. Its trials are the run's attempts, paired with HEMRA's own
oracle by task digest; Ctrl-C stops Harbor and leaves no container; bad files are refused."""

import json
import shutil
import signal
import subprocess
import time

import pytest

from tests.conftest import HEMRA, REPO, clean_env
from tests.e2e.helpers import copy_task, hemra, runs, show
from tests.e2e.test_cli_agents import TOOLS

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("docker_engine")]
#: Two tasks are enough: one reward.txt grader, one reward.json grader with two reward names.
TASKS = ("hemra/text-stats", "hemra/json-transform")
VERSION = "0.25.0"
EXAMPLES = REPO / "examples" / "harnesses" / "harnesses"


def harness(folder, name: str, agent: str, extra: str = "") -> None:
    (folder / "harnesses").mkdir(exist_ok=True)
    (folder / "harnesses" / f"{name}.toml").write_text(
        f'kind = "harbor"\nagent = "{agent}"\nversion = "{VERSION}"\n{extra}'
    )


def environment(tmp) -> dict:
    TOOLS.mkdir(parents=True, exist_ok=True)
    return dict(clean_env(), HEMRA_HOME=str(tmp / "home"), HEMRA_TOOLS_DIR=str(TOOLS))


def containers_of(engine, attempt_ids) -> list[dict]:
    """Containers labelled with one of these attempts (Harbor's are, through HEMRA's overlay)."""
    return [
        c
        for c in engine.api.containers(all=True, filters={"label": "hemra.attempt"})
        if c["Labels"]["hemra.attempt"] in set(attempt_ids)
    ]


@pytest.fixture(scope="module")
def harbor_run(tmp_path_factory):
    """One run: HEMRA's own oracle, and Harbor's oracle and nop, on two bundled tasks."""
    tmp = tmp_path_factory.mktemp("harbor")
    # The documented examples (docs/harnesses.md), as they are; concurrency 1, below a harbor
    # cell's trials: each cell is still one harbor run, its trials one at a time.
    (tmp / "harnesses").mkdir()
    for name in ("harbor-oracle", "harbor-nop"):
        shutil.copy(EXAMPLES / f"{name}.toml", tmp / "harnesses")
    env = environment(tmp)
    args = ["run", "-H", "oracle", "-H", "harbor-oracle", "-H", "harbor-nop", "-d", "hemra-offline"]
    args += [x for t in TASKS for x in ("-t", t)] + ["--sandbox", "docker", "--concurrency", "1"]
    started = time.monotonic()
    result = hemra(env, *args, "--label", "harbored", cwd=tmp, timeout=900)
    assert result.returncode == 0, result.stderr + result.stdout
    return env, tmp, show(env, "harbored"), time.monotonic() - started


def test_harbor__trials_are_the_runs_attempts_oracle_passes_nop_fails(harbor_run, docker_engine):
    env, _, data, _ = harbor_run
    by_harness: dict[str, list] = {}
    for attempt in data["attempts"]:
        by_harness.setdefault(attempt["harness_name"], []).append(attempt)
    assert sorted(by_harness) == ["harbor-nop", "harbor-oracle", "oracle"]
    for name, expected in (("harbor-oracle", 1.0), ("harbor-nop", 0.0)):
        attempts = by_harness[name]
        assert sorted(a["task_name"] for a in attempts) == sorted(TASKS)
        for attempt in attempts:
            assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt
            assert set(attempt["score"]["rewards"].values()) == {expected}, attempt
            assert attempt["score"]["scorer"] == "harbor"
            paths = {a["path"] for a in attempt["artifacts"]}
            # Harbor's own trial folder, byte for byte.
            assert any(p.startswith("/harbor/") and p.endswith("/result.json") for p in paths), paths
            assert any(p.endswith("/verifier/reward.txt") or p.endswith("/verifier/reward.json") for p in paths)
    # json-transform's grader gives two reward names; Harbor's are copied as they are.
    json_transform = next(a for a in by_harness["harbor-oracle"] if a["task_name"] == "hemra/json-transform")
    assert json_transform["score"]["rewards"] == {"reward": 1.0, "format_ok": 1.0}
    # One supervised `harbor run` per cell: every attempt of a cell saw the same start.
    for name in ("harbor-oracle", "harbor-nop"):
        starts = []
        for attempt in by_harness[name]:
            events = show(env, attempt["id"], "--events")["events"]
            starts += [e["payload"] for e in events if e.get("name") == "harbor_start"]
            # Harbor's verifier ran where the agent did: the attempt says so.
            [verifier] = [e["payload"] for e in events if e.get("name") == "verifier_sandbox"]
            assert verifier["isolation"] == "shared" and verifier["by"] == "harbor", verifier
        assert len({s["pid"] for s in starts}) == 1 and starts[0]["jobs"] == len(TASKS), starts
    assert containers_of(docker_engine, [a["id"] for a in data["attempts"]]) == []


def test_harbor__pairs_with_hemras_own_oracle_by_task_digest(harbor_run):
    env, _, data, _ = harbor_run
    compared = hemra(env, "compare", "harbored/oracle", "harbored/harbor-oracle", "--json")
    assert compared.returncode == 0, compared.stderr
    report = json.loads(compared.stdout)
    assert report["paired_tasks"] == len(TASKS), report
    assert not report.get("not_comparable"), report
    # The run's own report is HEMRA's, from the trials: Harbor's oracle passes everything.
    rows = {row["harness_name"]: row for row in data["report"]["datasets"][0]["rows"]}
    oracle, nop = rows["harbor-oracle"], rows["harbor-nop"]
    assert oracle["graded"] == nop["graded"] == len(TASKS), rows
    assert oracle["binary_graded"] >= 1 and oracle["passed"] == oracle["binary_graded"], oracle
    assert oracle["mean_rewards"] == {"reward": 1.0, "format_ok": 1.0}, oracle
    assert nop.get("passed", 0) == 0 and nop["mean_rewards"]["reward"] == 0.0, nop
    assert oracle["vs_baseline"]["paired_tasks"] == len(TASKS), oracle


@pytest.mark.parametrize("stop", ["ctrl-c", "hemra cancel"])
def test_harbor__ctrl_c_or_cancel_stops_harbor_and_counts_its_trials_cancelled(tmp_path, docker_engine, stop):
    # A solution that sleeps: Ctrl-C lands while Harbor's trials run.
    for name in ("text-stats", "fix-median"):
        task = copy_task(name, tmp_path / "slow")
        solve = task / "solution" / "solve.sh"
        solve.write_text(solve.read_text().replace("set -euo pipefail", "set -euo pipefail\nsleep 120", 1))
    harness(tmp_path, "harbor-oracle", "oracle")
    env = environment(tmp_path)
    process = subprocess.Popen(
        [
            HEMRA,
            "run",
            "-H",
            "harbor-oracle",
            "-d",
            "./slow",
            "--sandbox",
            "docker",
            "--concurrency",
            "2",
            "--label",
            "stopped",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ids: list[str] = []
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and process.poll() is None:
            listed = hemra(env, "show", "stopped")
            if listed.returncode == 0:
                ids = [a["id"] for a in json.loads(listed.stdout)["attempts"]]
                if len(containers_of(docker_engine, ids)) >= 2:  # both trials' containers are up
                    break
            time.sleep(0.5)
        assert len(containers_of(docker_engine, ids)) >= 2, process.poll()
        started = time.monotonic()
        if stop == "ctrl-c":
            process.send_signal(signal.SIGINT)
        else:  # from another process, as a user in another terminal
            cancelled = hemra(env, "cancel", "stopped")
            assert cancelled.returncode == 0, cancelled.stderr
        _, err = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            process.kill()
    assert time.monotonic() - started < 45
    assert process.returncode == 1, err
    data = show(env, "stopped")
    assert {a["outcome"] for a in data["attempts"]} == {"OUTCOME_CANCELLED"}, data["attempts"]
    row = data["report"]["datasets"][0]["rows"][0]
    assert row["cancelled"] == 2 and row.get("failed", 0) == 0 and row.get("errored", 0) == 0, row
    assert containers_of(docker_engine, ids) == []
    left = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert "harbor.cli.main" not in left or all(f"hemra-{i}" not in left for i in ids)


@pytest.mark.parametrize(
    ("text", "message"),
    [  # every key's refusal: tests/planner/test_harbor_harness.py
        ('kind = "harbor"\nagent = "oracle"\nversion = "0.25.0"\nflavour = 1\n', "unknown key 'flavour'"),
        ('kind = "harbor"\nagent = "oracle"\nversion = "0.25"\n', "needs version"),
    ],
)
def test_harbor__bad_harness_files_are_refused_with_one_line(tmp_path, text, message):
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "h.toml").write_text(text)
    env = environment(tmp_path)
    result = hemra(env, "run", "-H", "h", "-d", "hemra-offline", "--sandbox", "docker", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert runs(env) == []


def test_harbor__refused_outside_the_docker_sandbox(tmp_path):
    harness(tmp_path, "h", "oracle")
    env = environment(tmp_path)
    result = hemra(env, "run", "-H", "h", "-d", "hemra-offline", cwd=tmp_path)
    assert result.returncode == 2 and "run it with --sandbox docker" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert runs(env) == []
