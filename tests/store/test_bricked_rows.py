"""A store already holding rows HEMRA would not write (restored before exports were checked, or
edited by hand), on SQLite and PostgreSQL: `hemra runs`, `hemra show`, the HTTP API and
/api/ready keep working, each naming the bad row and showing the rest."""

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from sqlalchemy import update
from typer.testing import CliRunner

from hemra.clients.cli.main import app
from hemra.gateway.app import create_app
from hemra.services.compose import embedded
from hemra.services.store import tables as t
from hemra.services.store.service import Store
from tests.store.test_queue import plan


async def _brick(database_url: str, home: Path) -> dict[str, str]:
    """A sound run and a bricked one; the bricked run's attempts: an unknown state, an unknown
    outcome and verdict with an end time of 1e300, a start time no Timestamp can hold."""
    store = await Store.open(database_url, home / "blobs")
    try:
        sound, _ = await store.record_run(plan(trials=1, label="sound"))
        bricked, _ = await store.record_run(plan(trials=3, label="bricked"))
        rows, _ = await store.list_attempts(bricked.id, 10, "")
        a1, a2, a3 = (row.attempt.id for row in rows)
        async with store.sessions.begin() as session:
            await session.execute(update(t.Run).where(t.Run.id == bricked.id).values(create_time=1e300, spec=[1]))
            await session.execute(update(t.Attempt).where(t.Attempt.id == a1).values(state="pwned"))
            await session.execute(
                update(t.Attempt)
                .where(t.Attempt.id == a2)
                .values(state="finished", outcome="exploded", verdict="hacked", end_time=1e300)
            )
            await session.execute(
                update(t.Attempt)
                .where(t.Attempt.id == a3)
                .values(state="finished", outcome="completed", verdict="errored", start_time=-1e300)
            )
        return dict(sound=sound.id, bricked=bricked.id, a1=a1, a2=a2, a3=a3)
    finally:
        await store.close()


@pytest.fixture
def bricked(database_url, tmp_path, monkeypatch) -> tuple[str, Path, dict[str, str]]:
    home = tmp_path / "home"
    ids = asyncio.run(_brick(database_url, home))
    monkeypatch.setenv("HEMRA_HOME", str(home))
    monkeypatch.setenv("HEMRA_DATABASE_URL", database_url)
    return database_url, home, ids


def _hemra(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def test_hemra_runs__names_the_bricked_run_and_lists_every_run(bricked):
    _, _, ids = bricked
    listed = json.loads(_hemra("runs", "--json").stdout)
    assert [r["id"] for r in listed] == [ids["bricked"], ids["sound"]]  # 1e300 sorts first
    problem = listed[0]["problem"]
    assert problem.startswith(f"run {ids['bricked']}: create_time 1e+300 is not a time")
    assert "spec does not read as a RunSpec" in problem
    assert "2 attempts have a state or verdict HEMRA does not know (counted as errored)" in problem
    assert listed[1]["problem"] == ""  # --json gives every field: the sound run's is empty
    counted = {k: v for k, v in listed[0]["progress"].items() if v}
    assert counted == {"trials": 3, "done": 3, "errored": 3, "unreadable": 2}
    table = _hemra("runs")
    assert ids["sound"] in table.stdout and ids["bricked"] in table.stdout
    assert f"! run {ids['bricked']}: create_time 1e+300 is not a time" in " ".join(table.stdout.split())


def test_hemra_show__a_bricked_run_and_its_attempts_show_what_reads(bricked):
    _, _, ids = bricked
    shown = _hemra("show", ids["bricked"])
    data = json.loads(shown.stdout)
    assert "create_time" not in data["run"]
    by_id = {a["id"]: a for a in data["attempts"]}
    assert by_id[ids["a1"]]["problem"] == f"attempt {ids['a1']}: state 'pwned' is not one HEMRA knows"
    assert by_id[ids["a2"]]["problem"] == (
        f"attempt {ids['a2']}: outcome 'exploded' is not one HEMRA knows; verdict 'hacked' is not one HEMRA knows; "
        "end_time 1e+300 is not a time"
    )
    assert by_id[ids["a2"]]["verdict"] == "errored" and "end_time" not in by_id[ids["a2"]]
    assert by_id[ids["a3"]]["problem"] == f"attempt {ids['a3']}: start_time -1e+300 is not a time"
    assert f"note: attempt {ids['a1']}: state 'pwned'" in shown.stderr
    attempt = json.loads(_hemra("show", ids["a2"]).stdout)["attempt"]
    assert attempt["problem"].startswith(f"attempt {ids['a2']}: outcome 'exploded'")
    report = _hemra("show", ids["bricked"], "--report").stdout
    assert report.startswith(f"run {ids['bricked']} (bricked)")


async def test_api__lists_and_ready_answer_naming_the_bricked_run(bricked):
    database_url, home, ids = bricked
    async with embedded.services(home, database_url, only=("store",)) as services:
        transport = httpx.ASGITransport(app=create_app(services.store))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            ready = await client.get("/api/ready")
            assert (ready.status_code, ready.json()) == (200, {"status": "ok", "store": "ok"})
            runs = (await client.get("/api/runs")).json()["runs"]
            assert [r["id"] for r in runs] == [ids["bricked"], ids["sound"]]
            paged, token = [], ""
            while True:  # a page ending at the bricked run goes on after it
                page = (await client.get("/api/runs", params=dict(page_size=1, page_token=token))).json()
                paged += [r["id"] for r in page["runs"]]
                token = page["next_page_token"]
                if not token:
                    break
            assert paged == [ids["bricked"], ids["sound"]]
            assert runs[0]["problem"].startswith(f"run {ids['bricked']}: create_time 1e+300 is not a time")
            assert runs[0]["create_time"] is None and runs[1]["problem"] == ""
            run = await client.get(f"/api/runs/{ids['bricked']}")
            assert run.status_code == 200 and run.json()["progress"]["unreadable"] == 2
            attempts = (await client.get(f"/api/runs/{ids['bricked']}/attempts")).json()["attempts"]
            assert {a["id"]: a["state"] for a in attempts}[ids["a1"]] == ""
            assert all(a["problem"].startswith(f"attempt {a['id']}:") for a in attempts)
            # Filtered as progress counts them: an unknown state or verdict is errored, not unfinished.
            errored = (await client.get(f"/api/runs/{ids['bricked']}/attempts?verdict=errored")).json()["attempts"]
            assert sorted(a["id"] for a in errored) == sorted(ids[a] for a in ("a1", "a2", "a3"))
            unfinished = (await client.get(f"/api/runs/{ids['bricked']}/attempts?verdict=unfinished")).json()
            assert unfinished["attempts"] == []
            for path in (
                f"/api/runs/{ids['bricked']}/report",
                f"/api/attempts/{ids['a2']}",
                "/api/datasets",
                "/api/harnesses",
            ):
                assert (await client.get(path)).status_code == 200, path
