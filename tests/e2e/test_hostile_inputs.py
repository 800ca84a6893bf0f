"""Hostile inputs end to end (issue 12): crafted exports and imports, listeners on every interface.
Each refusal is one line naming the problem, exit 2, and the store unchanged."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HEMRA
from tests.e2e.helpers import hemra

pytestmark = pytest.mark.slow

SERVICES = {
    "store": [],
    "planner": ["--store", "127.0.0.1:1"],
    "executor": ["--store", "127.0.0.1:1"],
    "scorer": ["--store", "127.0.0.1:1"],
    "importer": ["--store", "127.0.0.1:1", "--planner", "127.0.0.1:1"],
}


def one_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    return line


LISTEN = [(name, ["--listen", "0.0.0.0:0"]) for name in SERVICES] + [
    ("store", ["--listen", "[::]:0"]),
    ("store", ["--listen", ":0"]),
    ("scorer", ["--listen=0.0.0.0:0"]),
    ("store", ["--lis", "0.0.0.0:0"]),
]


@pytest.mark.parametrize("name,args", LISTEN)
def test_service_listen_on_every_interface__needs_expose(name, args, hemra_env):
    result = hemra(hemra_env, "service", name, *args, *SERVICES[name], timeout=60)
    listen = args[-1].removeprefix("--listen=")
    assert f"--listen {listen} is not a loopback address; add --expose" in one_line(result)


@pytest.mark.parametrize("module", ["hemra.services.store", "hemra.services.importer"])
def test_service_module_listen_on_every_interface__needs_expose(module, hemra_env):
    args = ["--store", "127.0.0.1:1", "--planner", "127.0.0.1:1"] if module == "hemra.services.importer" else []
    result = subprocess.run(
        [sys.executable, "-m", module, "--listen", "0.0.0.0:0", *args],
        env=hemra_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "0.0.0.0:0 is not a loopback address; add --expose" in one_line(result)


def test_service_store_with_expose__listens(hemra_env):
    env = dict(hemra_env, HEMRA_TOKEN="t" * 32)
    process = subprocess.Popen(
        [HEMRA, "service", "store", "--listen", "0.0.0.0:0", "--expose"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("store listening on 0.0.0.0:"), line + process.stderr.read()
    finally:
        process.terminate()
        process.wait(timeout=30)


# --------------------------------------------------------------------------- SWE-bench instance IDs (item 3)


def _swebench_with(root, iid: str, key: str = "resolved_ids"):
    """A SWE-bench run whose report lists `iid` (submitted and under `key`)."""
    from tests.importer.swebench_fixture import write_run

    folder = write_run(root)
    summary = next(folder.glob("*.json"))
    data = json.loads(summary.read_text())
    data["submitted_ids"].append(iid)
    data.setdefault(key, []).append(iid)
    summary.write_text(json.dumps(data))
    return folder


@pytest.mark.parametrize(
    "iid", ["../../../../tmp/{unique}/x", "/etc", "..", ".", "a__b/../../c", ".hidden__x-1", "django__django-1\n", ""]
)
def test_swebench_instance_id_that_is_a_path__refused(iid, hemra_env, tmp_path):
    outside = tmp_path / "outside" / "x"
    outside.mkdir(parents=True)
    iid = iid.replace("{unique}", str(outside.parent).lstrip("/"))
    (outside / "report.json").write_text(json.dumps({iid: {"resolved": True}}))
    folder = _swebench_with(tmp_path / "run", iid)
    line = one_line(hemra(hemra_env, "import", str(folder), "--swebench-version", "5.0.2"))
    assert "which is not a SWE-bench instance ID" in line
    assert json.loads(hemra(hemra_env, "runs", "--json").stdout) == []


def test_swebench_instance_folder_that_is_a_symlink_out__refused(hemra_env, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "report.json").write_text(json.dumps({"z__z-9": {"resolved": True}}))
    folder = _swebench_with(tmp_path / "run", "z__z-9")
    logs = next(folder.glob("logs/run_evaluation/*/*/"))
    (logs / "z__z-9").symlink_to(outside)
    line = one_line(hemra(hemra_env, "import", str(folder), "--swebench-version", "5.0.2"))
    assert "z__z-9" in line and "leads outside" in line
    assert json.loads(hemra(hemra_env, "runs", "--json").stdout) == []


def test_swebench_real_instance_ids__accepted(hemra_env, tmp_path):
    from hemra.services.importer.swebench import INSTANCE_ID

    for iid in (
        "astropy__astropy-12907",
        "django__django-11099",
        "sympy__sympy-20590",
        "scikit-learn__scikit-learn-25500",
        "Project-MONAI__MONAI-1234",
        "pandas-dev__pandas.95280573.func_pm_op_change__2pd0y8q1",
    ):
        assert INSTANCE_ID.fullmatch(iid), iid


# --------------------------------------------------------------------------- crafted exports (items 1 and 2)

import hashlib  # noqa: E402
import shutil  # noqa: E402

from tests.e2e.helpers import runs, show  # noqa: E402

TASK = "hemra/text-stats"
ALWAYS_PASS = b"#!/bin/sh\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n"


def _exported(env, tmp_path, *harness: str) -> tuple[Path, dict]:
    """A real run of `harness` (default nop) on one bundled task, exported: (folder, manifest)."""
    harness = harness or ("nop",)
    result = hemra(env, "run", "-H", *harness, "-d", "hemra-offline", "-t", TASK, "--label", "theirs")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "export"
    assert hemra(env, "export", "theirs", "--out", str(out)).returncode == 0
    return out, json.loads((out / "hemra-export.json").read_text())


def _save(out: Path, manifest: dict) -> None:
    (out / "hemra-export.json").write_text(json.dumps(manifest))


def _add_blob(out: Path, data: bytes) -> str:
    hexdigest = hashlib.sha256(data).hexdigest()
    (out / "blobs" / hexdigest[:2]).mkdir(parents=True, exist_ok=True)
    (out / "blobs" / hexdigest[:2] / hexdigest[2:]).write_bytes(data)
    return "sha256:" + hexdigest


def _plant_command(manifest: dict, marker: Path) -> None:
    [harness] = manifest["harnesses"]
    harness["record"].update(kind="program", command=["touch", str(marker)])


def _plant_always_pass(out: Path, manifest: dict) -> None:
    [task] = manifest["tasks"]
    digest = _add_blob(out, ALWAYS_PASS)
    for file in task["record"]["files"]:
        if file["path"] == "tests/test.sh":
            file.update(blobDigest=digest, sizeBytes=str(len(ALWAYS_PASS)), executable=True)


def _victim(tmp_path, hemra_env) -> dict:
    return dict(hemra_env, HEMRA_HOME=str(tmp_path / "victim"))


def _program_harness(tmp_path) -> Path:
    path = tmp_path / "harnesses" / "quiet.toml"
    path.parent.mkdir(parents=True)
    path.write_text('kind = "program"\ncommand = ["true"]\n')
    return path


@pytest.mark.parametrize("which", ["nop", "harness file"])
def test_export_with_a_planted_harness_command__refused_and_never_runs(which, hemra_env, tmp_path):
    harness = "nop" if which == "nop" else str(_program_harness(tmp_path))
    out, manifest = _exported(hemra_env, tmp_path, harness)
    marker = tmp_path / "planted-command-ran"
    _plant_command(manifest, marker)
    _save(out, manifest)
    victim = _victim(tmp_path, hemra_env)
    line = one_line(hemra(victim, "import", str(out)))
    assert "does not match its digest" in line or "does not hash to its digest" in line
    assert runs(victim) == []
    result = hemra(victim, "run", "-H", harness, "-d", "hemra-offline", "-t", TASK, "--label", "mine")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()


def test_export_with_a_planted_task_test__refused_and_never_scores(hemra_env, tmp_path):
    out, manifest = _exported(hemra_env, tmp_path)
    _plant_always_pass(out, manifest)
    _save(out, manifest)
    victim = _victim(tmp_path, hemra_env)
    assert "do not hash to its digest" in one_line(hemra(victim, "import", str(out)))
    assert runs(victim) == []


def test_export_with_a_task_record_that_lies_about_its_files__refused(hemra_env, tmp_path):
    out, manifest = _exported(hemra_env, tmp_path)
    [task] = manifest["tasks"]
    task["record"]["environment"]["workdir"] = "/"  # files intact, what they say changed
    _save(out, manifest)
    victim = _victim(tmp_path, hemra_env)
    line = one_line(hemra(victim, "import", str(out)))
    assert "does not match its digest" in line and "environment" in line
    assert runs(victim) == []


def _database_url(env: dict) -> str:
    return env.get("HEMRA_DATABASE_URL") or f"sqlite:///{env['HEMRA_HOME']}/hemra.db"


def _plant_rows(env: dict, tasks: list[dict], harnesses: list[dict]) -> None:
    """Rows as an unverified import left them in a store (before this fix), straight into the database."""
    import asyncio

    from hemra.services.store import db, sqlrows
    from hemra.services.store import tables as t

    async def plant():
        await db.migrate(_database_url(env))
        engine = db.create_engine(_database_url(env))
        async with db.session_factory(engine).begin() as session:
            await sqlrows.insert_ignore(session, t.Task.__table__, tasks)
            await sqlrows.insert_ignore(session, t.Harness.__table__, harnesses)
        await engine.dispose()

    asyncio.run(plant())


def test_planted_records_already_in_a_store__a_run_uses_what_it_read(hemra_env, tmp_path):
    out, manifest = _exported(hemra_env, tmp_path)
    marker = tmp_path / "planted-command-ran"
    _plant_command(manifest, marker)
    _plant_always_pass(out, manifest)
    victim = _victim(tmp_path, hemra_env)
    (tmp_path / "victim").mkdir()
    shutil.copytree(out / "blobs", tmp_path / "victim" / "blobs")  # the planted test.sh is stored too
    _plant_rows(victim, manifest["tasks"], manifest["harnesses"])
    result = hemra(victim, "run", "-H", "nop", "-d", "hemra-offline", "-t", TASK, "--label", "mine")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    [attempt] = show(victim, "mine")["attempts"]
    assert attempt["score"]["rewards"]["reward"] == 0.0  # nop fails the real tests


def _with_attempt_id(manifest: dict, out: Path, new_id: str) -> None:
    [attempt] = manifest["attempts"]
    old = attempt["id"]
    attempt["id"] = new_id
    events = out / "events" / f"{old}.jsonl"
    if events.exists():
        events.unlink()
    attempt["event_count"] = 0


@pytest.mark.parametrize("bad", ["../../x/{id}", "{tmp}/abs/{id}", "{id}/..", "r-0000000000000000", "", "{id}\n"])
def test_export_with_an_attempt_id_that_is_a_path__refused(bad, hemra_env, tmp_path):
    out, manifest = _exported(hemra_env, tmp_path)
    bad = bad.replace("{id}", manifest["attempts"][0]["id"]).replace("{tmp}", str(tmp_path))
    _with_attempt_id(manifest, out, bad)
    _save(out, manifest)
    victim = _victim(tmp_path, hemra_env)
    line = one_line(hemra(victim, "import", str(out)))
    assert "attempts" in line and ("is not a HEMRA attempt ID" in line or "characters long, more than" in line)
    assert runs(victim) == []


def test_export_never_writes_outside_out_even_for_a_stored_path_id(hemra_env, tmp_path):
    """An attempt row already in a store (planted before restores checked IDs) with a path for an ID."""
    out, manifest = _exported(hemra_env, tmp_path)
    import asyncio

    from sqlalchemy import select

    from hemra.services.store import db
    from hemra.services.store import tables as t

    [attempt] = manifest["attempts"]
    evil = "../../escaped/" + attempt["id"]

    async def rename():
        engine = db.create_engine(_database_url(hemra_env))
        async with engine.begin() as conn:
            row = (await conn.execute(select(t.Attempt.__table__).where(t.Attempt.id == attempt["id"]))).one()
            await conn.execute(t.Attempt.__table__.insert(), [dict(row._mapping, id=evil)])
            events = (await conn.execute(select(t.Event.__table__).where(t.Event.attempt_id == attempt["id"]))).all()
            assert events
            await conn.execute(t.Event.__table__.insert(), [dict(e._mapping, attempt_id=evil) for e in events])
        await engine.dispose()

    asyncio.run(rename())
    target = tmp_path / "deep" / "one" / "out"
    result = hemra(hemra_env, "export", "theirs", "--out", str(target))
    assert "is not a HEMRA attempt ID" in one_line(result)
    assert not (tmp_path / "deep").exists()  # nothing written anywhere


# --------------------------------------------------------------------------- rewards and names (items 5 and 6)


@pytest.mark.parametrize("reward", ["1e308", "-1e13", '"1"', "null", "[1]", '{"a": 1}', "true"])
def test_harbor_trial_with_a_reward_out_of_range_or_not_a_number__refused(reward, hemra_env, tmp_path):
    from tests.importer.test_imports import unpack

    job = unpack("harbor-0.25-nop.tar", tmp_path)
    trial = next(p for p in sorted(job.iterdir()) if p.is_dir())
    result = json.loads((trial / "result.json").read_text())
    result["verifier_result"] = {"rewards": {"reward": "__REWARD__"}}
    (trial / "result.json").write_text(json.dumps(result).replace('"__REWARD__"', reward))
    line = one_line(hemra(hemra_env, "import", str(job)))
    assert "result.json: verifier_result.rewards: reward 'reward'" in line
    assert runs(hemra_env) == []


def test_run_label_longer_than_its_column__one_line(hemra_env):
    line = one_line(hemra(hemra_env, "run", "-H", "nop", "-d", "hemra-offline", "-t", TASK, "--label", "x" * 400))
    assert "label" in line and "at most 300" in line
    assert runs(hemra_env) == []


# --------------------------------------------------------------------------- hemra export --out


def test_export_out_where_no_folder_can_be__one_line(hemra_env, tmp_path):
    assert hemra(hemra_env, "run", "-H", "nop", "-d", "hemra-offline", "-t", TASK, "--label", "r").returncode == 0
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "link").symlink_to(empty)
    for out, fragment in (
        (a_file / "out", "cannot create it there"),
        ("/proc/hemra-x", "cannot create it there"),
        ("/sys/hemra/x", "cannot create it there"),
        (tmp_path / "link", "a symbolic link"),
        (a_file, "exists and is not an empty folder"),
    ):
        assert fragment in one_line(hemra(hemra_env, "export", "r", "--out", str(out))), out
    assert a_file.read_text() == "x" and list(empty.iterdir()) == []


def test_a_100000_character_reference__one_line(hemra_env):
    ref = "x" * 100_000
    for args in (["show", ref], ["export", ref, "--out", "unused"], ["compare", ref, "other"], ["cancel", ref]):
        line = one_line(hemra(hemra_env, *args))
        assert "no run or import" in line and "(100000 characters)" in line and len(line) < 1000, args


# --------------------------------------------------------------------------- files an import cannot keep


def _harbor_job(tmp_path) -> Path:
    from tests.importer.test_imports import unpack

    return unpack("harbor-0.25-nop.tar", tmp_path)


def test_import_of_a_file_too_big_to_keep__refused_by_name_before_reading(hemra_env, tmp_path):
    job = _harbor_job(tmp_path)
    trial = next(p for p in sorted(job.iterdir()) if p.is_dir())
    with open(trial / "huge.bin", "wb") as sparse:  # 2 GB on paper, nothing on disk
        sparse.truncate(2 * 1024**3)
    line = one_line(hemra(hemra_env, "import", str(job)))
    assert "huge.bin: 2,147,483,648 bytes; an import keeps files of at most 200 MiB" in line
    assert runs(hemra_env) == []


def test_import_of_a_file_name_that_is_not_utf8__refused(hemra_env, tmp_path):
    job = _harbor_job(tmp_path)
    trial = next(p for p in sorted(job.iterdir()) if p.is_dir())
    with open(os.path.join(os.fsencode(trial), b"caf\xe9.txt"), "wb") as odd:
        odd.write(b"x")
    assert "not UTF-8" in one_line(hemra(hemra_env, "import", str(job)))
    assert runs(hemra_env) == []
