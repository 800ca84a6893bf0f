"""The `hemra` CLI against a deployment through its gateway's front door (HEMRA_SERVER): every
service its own process on loopback, the CLI with no database it could open. Runs, reports,
compare, export and import through the gateway give what the embedded store gives."""

import asyncio
import json
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from hemra.services.common import errors, transport
from hemra.v1 import store_service_pb2 as spb
from tests.conftest import HEMRA, REPO, clean_env
from tests.e2e.helpers import hemra
from tests.e2e.test_hemra_judges import SCRIPTED, judge_scores, run_file, write_judge
from tests.e2e.test_processes import start
from tests.importer.test_imports import unpack
from tests.modelserver import ModelServer, parse

pytestmark = pytest.mark.slow
TOKEN = "remote-cli-test-token"
TASKS = ["-t", "csv-column-sum", "-t", "reverse-lines"]


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    """Store, planner, scorer, importer, an executor and the gateway; yields the front door's URL."""
    root = tmp_path_factory.mktemp("deployment")
    env = clean_env()
    env.update(HEMRA_TOKEN=TOKEN, HEMRA_HOME=str(root / "home"))
    assert hemra(env, "db", "upgrade").returncode == 0
    processes = []
    model = ModelServer(parse({"judge": [{"judge": "rubric"}]})).start()  # what the deployment's judges call
    try:
        store, store_addr = start("store", env)
        processes.append(store)
        planner, planner_addr = start("planner", env, "--store", store_addr)
        judge_env = {**env, "JUDGE_URL": model.url + "/v1", "JUDGE_KEY": "deployment-key"}
        scorer, scorer_addr = start("scorer", judge_env, "--store", store_addr)
        importer, importer_addr = start("importer", env, "--store", store_addr, "--planner", planner_addr)
        processes += [planner, scorer, importer]
        executor, _ = start("executor", env, "--store", store_addr, "--scorer", scorer_addr, "--concurrency", "2")
        processes.append(executor)
        upstreams = ["--store", store_addr, "--planner", planner_addr, "--importer", importer_addr]
        upstreams += ["--scorer", scorer_addr]
        gateway, front_door = start_gateway(env, *upstreams)
        processes.append(gateway)
        yield f"http://{front_door}", env, upstreams
    finally:
        model.stop()
        for process in processes:
            process.terminate()
        assert [process.wait(timeout=20) for process in processes] == [0] * len(processes)


def start_gateway(env: dict, *args: str) -> tuple[subprocess.Popen, str]:
    """python -m hemra.gateway on loopback ports of its own; returns it and its front door's HOST:PORT."""
    gateway = subprocess.Popen(
        [sys.executable, "-m", "gateway", *args, "--listen", "127.0.0.1:0", "--front-door", "127.0.0.1:0"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = gateway.stdout.readline()
    match = re.search(r"front door on (127\.0\.0\.1:\d+)", line)
    assert match, line
    return gateway, match.group(1)


@pytest.fixture
def client_env(deployment, tmp_path):
    """The CLI on a laptop: its own empty home, and a database URL it must never open."""
    env = clean_env()
    env.update(
        HEMRA_HOME=str(tmp_path / "laptop"),
        HEMRA_SERVER=deployment[0],
        HEMRA_TOKEN=TOKEN,
        HEMRA_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none",
    )
    return env


def local_env(tmp_path) -> dict:
    env = clean_env()
    env["HEMRA_HOME"] = str(tmp_path / "embedded")
    return env


def ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


def test_run_detach_then_report_and_compare_through_the_gateway(client_env, tmp_path):
    run_id = ok(hemra(client_env, "run", "--detach", "-H", "oracle", "-H", "nop", "-d", "hemra-offline", *TASKS))
    run_id = run_id.strip()
    assert run_id.startswith("r-")
    # `run` without --detach follows a run to its end: here, wait on the detached one by polling.
    asyncio.run(_wait_done(client_env["HEMRA_SERVER"].removeprefix("http://"), run_id))
    report = ok(hemra(client_env, "show", run_id, "--report"))
    assert re.search(r"oracle .* 2/2 \(100", report), report
    assert re.search(r"nop .* 0/2 \(0", report), report
    remote = json.loads(ok(hemra(client_env, "compare", f"{run_id}/oracle", f"{run_id}/nop", "--json")))

    # The same run on the embedded store compares the same.
    embedded = local_env(tmp_path)
    ok(hemra(embedded, "run", "-H", "oracle", "-H", "nop", "-d", "hemra-offline", *TASKS, "--label", "local"))
    local = json.loads(ok(hemra(embedded, "compare", "local/oracle", "local/nop", "--json")))
    for key in ("paired_tasks", "binary_tasks", "a_passed", "b_passed", "delta", "flipped_to_fail"):
        assert remote[key] == local[key], key
    assert any(r["id"] == run_id for r in json.loads(ok(hemra(client_env, "runs", "--json"))))


def test_run_follows_to_the_end_with_a_dataset_from_this_machine(client_env, tmp_path):
    dataset = tmp_path / "my-tasks"
    shutil.copytree(REPO / "examples" / "hemra-offline" / "reverse-lines", dataset / "reverse-lines")
    out = ok(hemra(client_env, "run", "-H", "oracle", "-d", str(dataset), "--label", "sent"))
    assert "my-tasks" in out and re.search(r"oracle .* 1/1 \(100", out), out


def test_export_and_import_through_the_gateway(client_env, tmp_path):
    job = unpack("harbor-0.25-oracle.tar", tmp_path)
    out = ok(hemra(client_env, "import", str(job), "--label", "harbor-remote"))
    assert out.startswith("import i-"), out
    import_id = out.split()[1]
    exported = tmp_path / "export"
    ok(hemra(client_env, "export", import_id, "--out", str(exported)))

    embedded = local_env(tmp_path)
    local_id = ok(hemra(embedded, "import", str(job), "--label", "harbor-remote")).split()[1]
    local_report = ok(hemra(embedded, "show", local_id, "--report")).replace(local_id, import_id)
    remote_report = ok(hemra(client_env, "show", import_id, "--report"))
    assert _tables(remote_report) == _tables(local_report)
    # Each header says who imported it, as far as the importer could tell.
    assert "by remote caller (folder sent to the server)" in remote_report and "by local user " in local_report
    # The export restores on another store to the same report tables, an import of the same ID.
    ok(hemra(local_env(tmp_path / "other"), "import", str(exported)))
    restored = ok(hemra(local_env(tmp_path / "other"), "show", import_id, "--report"))
    assert restored.startswith(f"import {import_id} (harbor-remote)")
    assert _tables(restored) == _tables(remote_report)


def _tables(report: str) -> str:
    """A report's text from its first dataset table on (its header says how the import came in)."""
    return report[report.index("dataset ") :]


def test_wrong_token_missing_token_and_unreachable_server_are_one_line(client_env):
    wrong = hemra(dict(client_env, HEMRA_TOKEN="not-the-token"), "runs")
    assert wrong.returncode == 2
    assert (
        wrong.stderr.strip()
        == f"error: the server at {client_env['HEMRA_SERVER']} refused the token (check HEMRA_TOKEN or HEMRA_TOKEN_FILE)"
    )
    missing = hemra({k: v for k, v in client_env.items() if k != "HEMRA_TOKEN"}, "runs")
    assert missing.returncode == 2 and "needs the deployment token" in missing.stderr
    gone = hemra(dict(client_env, HEMRA_SERVER="http://127.0.0.1:1"), "runs")
    assert gone.returncode == 2
    assert gone.stderr.startswith("error: cannot reach the HEMRA server at http://127.0.0.1:1")
    assert len(gone.stderr.strip().splitlines()) == 1 and "Traceback" not in gone.stderr
    bad = hemra(dict(client_env, HEMRA_SERVER="127.0.0.1:7800"), "runs")
    assert bad.returncode == 2 and "must be https://HOST:PORT or http://HOST:PORT" in bad.stderr


def test_front_door_never_lets_a_user_write_results(deployment):
    """Claiming jobs or recording results is for services: the front door does not forward them."""
    address = deployment[0].removeprefix("http://")

    async def claim():
        channel = transport.channel(address)
        try:
            return await transport.store(channel, TOKEN).ClaimJob(spb.ClaimJobRequest(worker="intruder"), timeout=5)
        finally:
            await channel.close()

    with pytest.raises(errors.HemraError) as caught:
        asyncio.run(claim())
    assert caught.value.code.name == "PERMISSION_DENIED"


def test_judges_through_the_gateway(client_env, tmp_path):
    """A run naming a judge file on this machine: the judge travels in the run's spec, the
    deployment's scorer judges with its own endpoint and key; then `hemra judge` after the fact."""
    harness = tmp_path / "harness"  # the scripted harness alone (its folder is sent to the deployment)
    harness.mkdir()
    for name in ("scripted-python.toml", "scripted_python.py", "scripts"):
        (shutil.copytree if name == "scripts" else shutil.copy)(SCRIPTED.parent / name, harness / name)
    write_judge(tmp_path / "eval")
    path = run_file(tmp_path / "eval", "judged-remote", [str(harness / "scripted-python.toml")])
    ok(hemra(client_env, "run", str(path)))
    [[score]] = judge_scores(client_env, "judged-remote").values()
    assert score["state"] == "SCORE_STATE_SCORED" and score["rewards"] == {"quality": 1.0}
    write_judge(tmp_path, model="judge-model-2")
    [again] = json.loads(ok(hemra(client_env, "judge", "judged-remote", "--judge", "quality", "--json", cwd=tmp_path)))
    assert again["judged"] == 1 and again["failed"] == 0
    [[newest, first]] = judge_scores(client_env, "judged-remote").values()
    assert (newest["judge_model"], first["judge_model"]) == ("judge-model-2", "judge-model-1")


def test_front_door_never_lets_a_user_record_judgments(deployment):
    """The front door forwards JudgeRun (the scorer records what it judged), never a recording."""
    from hemra.v1 import scorer_service_pb2 as scpb

    address = deployment[0].removeprefix("http://")

    async def call(client_of, method, request):
        channel = transport.channel(address)
        try:
            return await getattr(client_of(channel, TOKEN), method)(request, timeout=5)
        finally:
            await channel.close()

    for client_of, method, request in (
        (transport.store, "RecordJudgeScores", spb.RecordJudgeScoresRequest()),
        (transport.scorer, "JudgeAttempt", scpb.JudgeAttemptRequest()),
    ):
        with pytest.raises(errors.HemraError) as caught:
            asyncio.run(call(client_of, method, request))
        assert caught.value.code.name == "PERMISSION_DENIED", method


async def _wait_done(address: str, run_id: str, timeout: float = 120) -> None:
    channel = transport.channel(address)
    store = transport.store(channel, TOKEN)
    try:
        async with asyncio.timeout(timeout):
            while True:
                p = (await store.GetRun(spb.GetRunRequest(run=run_id))).run.progress
                if p.queued == 0 and p.running == 0:
                    return
                await asyncio.sleep(0.3)
    finally:
        await channel.close()


def test_run_through_the_gateway__ctrl_c_cancels_it_there(client_env, tmp_path):
    harness = tmp_path / "harnesses" / "slow.toml"
    harness.parent.mkdir()
    harness.write_text('kind = "program"\nagent = "slow"\nversion = "1"\ncommand = ["sleep", "60"]\n')
    process = subprocess.Popen(
        [HEMRA, "run", "-H", str(harness), "-d", "hemra-offline", "-t", "reverse-lines", "--label", "interrupted"],
        env=client_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        shown = hemra(client_env, "show", "interrupted")
        if shown.returncode == 0 and json.loads(shown.stdout)["run"]["progress"].get("running"):
            break
        time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=90)
    assert process.returncode == 1, out[-2000:] + err[-2000:]
    assert "cancelling: unfinished attempts will be recorded as cancelled" in err
    progress = json.loads(ok(hemra(client_env, "show", "interrupted")))["run"]["progress"]
    assert progress["cancelled"] == 1 and not progress.get("running")


def test_front_door_over_tls(deployment, client_env, tmp_path):
    _, env, upstreams = deployment
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"]
        + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    gateway, front_door = start_gateway(env, *upstreams, "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        tls = dict(client_env, HEMRA_SERVER=f"https://{front_door}", HEMRA_TLS_CA=str(cert))
        assert isinstance(json.loads(ok(hemra(tls, "runs", "--json"))), list)
        # Plain text to a TLS port, or TLS without trusting its certificate: one line, exit 2.
        plain = hemra(dict(client_env, HEMRA_SERVER=f"http://{front_door}"), "runs")
        untrusted = hemra(dict(client_env, HEMRA_SERVER=f"https://{front_door}"), "runs")
        for result in (plain, untrusted):
            assert result.returncode == 2 and "cannot reach the HEMRA server" in result.stderr, result.stderr
            assert len(result.stderr.strip().splitlines()) == 1
    finally:
        gateway.terminate()
        assert gateway.wait(timeout=20) == 0


def test_resume_and_repair_through_the_gateway(client_env, tmp_path):
    """A cancelled run of a dataset on this machine is resumed through the front door (its folder
    sent again to check it is the one the run pinned); an edited task is then refused by name."""
    dataset = tmp_path / "mine"
    for name in ("reverse-lines", "csv-column-sum"):
        shutil.copytree(REPO / "examples" / "hemra-offline" / name, dataset / name)
    harness = tmp_path / "harnesses" / "held.toml"
    harness.parent.mkdir()
    until = int(time.time()) + 15  # sleeps until then: the cancel finds it running or queued
    harness.write_text(
        f'kind = "program"\ncommand = ["bash", "-c", "while [ $(date +%s) -lt {until} ]; do sleep 0.2; done"]\n'
    )
    ok(hemra(client_env, "run", "--detach", "-H", str(harness), "-d", str(dataset), "--label", "held"))
    ok(hemra(client_env, "cancel", "held"))
    deadline = time.monotonic() + 60
    while json.loads(ok(hemra(client_env, "show", "held")))["run"]["progress"].get("running"):
        assert time.monotonic() < deadline
        time.sleep(0.3)
    while time.time() < until:
        time.sleep(0.3)
    out = ok(hemra(client_env, "resume", "held", cwd=tmp_path))
    assert "resume queued 2 trials" in out and re.search(r"resumed .* by \S+: 2 trials queued again", out), out
    shown = json.loads(ok(hemra(client_env, "show", "held")))
    assert shown["run"]["progress"]["done"] == 2 and not shown["run"]["progress"].get("cancelled")
    assert shown["report"]["trials_by_attempts"] == {"2": 2}
    assert "would queue 0 trials" in ok(hemra(client_env, "repair", "held", "--dry-run", cwd=tmp_path))

    (dataset / "reverse-lines" / "instruction.md").write_text("Edited.\n")
    refused = hemra(client_env, "repair", "held", cwd=tmp_path)
    assert refused.returncode == 2 and "dataset mine changed since the run was planned" in refused.stderr, (
        refused.stdout + refused.stderr
    )
