"""Datasets, tasks, harnesses, scorers, judges, the criterion table, attempt filters and huge
events, over the HTTP API and a real store holding a real run."""

import json
import shutil
import sqlite3

from tests.gateway.conftest import LABEL, gateway_client

DATASET = "hemra-offline"


async def test_datasets(client):
    datasets = (await client.get("/api/datasets")).json()["datasets"]
    offline = next(d for d in datasets if d["dataset_name"] == DATASET)
    assert offline["digest"].startswith("sha256:") and offline["name"] == f"datasets/{offline['digest']}"
    assert offline["tasks"] > 2 and offline["runs"] >= 1 and offline["imports"] == 0
    assert {"oracle", "nop"} <= set(offline["harness_names"]) and offline["last_used_time"]


async def test_tasks_paged_by_name_with_verdicts(client):
    whole = (await client.get(f"/api/datasets/{DATASET}/tasks")).json()
    tasks = whole["tasks"]
    assert whole["dataset_name"] == DATASET and whole["next_page_token"] == ""
    names = [t["task_name"] for t in tasks]
    assert names == sorted(names) and len(names) > 2
    assert all(t["passed"] >= 1 and t["failed"] >= 1 for t in tasks)  # oracle passes, nop fails
    assert all(t["scorer_fingerprints"] and {"oracle", "nop"} <= set(t["harness_names"]) for t in tasks)
    seen, token = [], ""
    while True:
        page = (await client.get(f"/api/datasets/{DATASET}/tasks", params={"page_size": 2, "page_token": token})).json()
        assert "tasks" in page, page
        seen += [t["task_name"] for t in page["tasks"]]
        token = page["next_page_token"]
        if not token:
            break
    assert seen == names
    by_digest = (await client.get(f"/api/datasets/{whole['dataset_digest']}/tasks")).json()
    assert [t["task_name"] for t in by_digest["tasks"]] == names
    prefix = whole["dataset_digest"].removeprefix("sha256:")[:8]
    assert (await client.get(f"/api/datasets/{DATASET}@{prefix}/tasks")).status_code == 200
    assert (await client.get("/api/datasets/no-such-dataset/tasks")).status_code == 404
    assert (await client.get(f"/api/datasets/{DATASET}/tasks", params={"page_token": "!!"})).status_code == 422


async def test_harnesses(client):
    harnesses = {h["harness_name"]: h for h in (await client.get("/api/harnesses")).json()["harnesses"]}
    assert {"oracle", "nop"} <= set(harnesses)
    oracle = harnesses["oracle"]
    assert oracle["kind"] == "builtin" and oracle["runs"] >= 1 and oracle["trials"] > 2
    assert DATASET in oracle["dataset_names"]


async def test_scorers_list_the_tasks_they_grade(client):
    scorers = (await client.get("/api/scorers")).json()["scorers"]
    tasks = (await client.get(f"/api/datasets/{DATASET}/tasks")).json()["tasks"]
    assert scorers and all(s["scorer"] == "verifier" and s["fingerprint"].startswith("sha256:") for s in scorers)
    graded = {x["task_digest"] for s in scorers for x in s["tasks"]}
    assert graded == {t["digest"] for t in tasks}
    assert all(s["reward_names"] and s["task_count"] == len(s["tasks"]) for s in scorers)
    assert sum(s["attempts"] for s in scorers) == sum(t["passed"] + t["failed"] for t in tasks)


async def test_judges_empty_with_a_note(client):
    judges = (await client.get("/api/judges")).json()
    assert judges["judges"] == [] and "hemra judge" in judges["note"]


async def test_imports_and_runs_by_kind(client):
    runs = (await client.get("/api/runs", params={"kind": "run"})).json()["runs"]
    assert LABEL in {r["label"] for r in runs} and {r["kind"] for r in runs} == {"run"}
    assert (await client.get("/api/runs", params={"kind": "import"})).json()["runs"] == []
    assert (await client.get("/api/runs", params={"kind": "other"})).status_code == 422


async def test_criterion_table(client):
    table = (await client.get(f"/api/datasets/{DATASET}/criteria", params={"source": "largest"})).json()
    sources = {s["harness_name"]: s for s in table["sources"]}
    assert {"oracle", "nop"} <= set(sources) and table["source"] == "largest"
    assert all(s["run_label"] == LABEL and s["complete"] and s["trials"] > 2 for s in sources.values())
    column = [s["harness_name"] for s in table["sources"]]
    rate, reward = table["rows"][:2]  # hemra-offline has 0/1 tasks and tasks with fractional rewards
    assert (rate["criterion"], rate["unit"], reward["criterion"], reward["unit"]) == (
        "Overall pass rate",
        "rate",
        "Overall mean reward",
        "reward",
    )
    cells = dict(zip(column, rate["cells"]))
    assert cells["oracle"]["value"] == 1.0 and cells["oracle"]["best"] and cells["nop"]["value"] == 0.0
    assert not cells["nop"]["best"] and cells["oracle"]["excluded"] == 0
    samples = sum(dict(zip(column, row["cells"]))["oracle"]["samples"] for row in (rate, reward))
    assert samples == sources["oracle"]["trials"]
    task_rows = [r for r in table["rows"] if r["task_digest"]]
    assert len(task_rows) == sources["oracle"]["trials"]
    assert {r["unit"] for r in task_rows} == {"rate", "reward"}
    wall, tokens, errors = table["rows"][-3:]
    assert wall["unit"] == "seconds" and wall["lower_is_better"] and sum(c["best"] for c in wall["cells"]) >= 1
    assert all(c["samples"] == sources[h]["trials"] for h, c in zip(column, wall["cells"]))
    # a token sample per attempt that reported usage (oracle and nop report none): never a 0 for none
    reported = {u["attempt_id"] for u in (await client.get(f"/api/runs/{LABEL}/usage")).json()["attempts"]}
    by_harness = (await client.get(f"/api/runs/{LABEL}/attempts")).json()["attempts"]
    assert tokens["unit"] == "tokens" and tokens["lower_is_better"]
    for harness, cell in zip(column, tokens["cells"]):
        assert cell.get("samples", 0) == len(
            [a for a in by_harness if a["harness_name"] == harness and a["id"] in reported]
        )
    assert errors["unit"] == "rate" and errors["lower_is_better"]
    assert all(c["samples"] == sources[h]["trials"] and not c.get("value") for h, c in zip(column, errors["cells"]))
    # each cell links to the attempts behind it: the run's attempts filtered by cell and task
    row = task_rows[0]
    behind = (
        await client.get(
            f"/api/runs/{sources['nop']['run_id']}/attempts",
            params={"cell": sources["nop"]["cell_id"], "task": row["task_digest"]},
        )
    ).json()
    assert len(behind["attempts"]) == dict(zip(column, row["cells"]))["nop"]["samples"] >= 1
    assert all(a["task_digest"] == row["task_digest"] and a["harness_name"] == "nop" for a in behind["attempts"])
    newest = (await client.get(f"/api/datasets/{DATASET}/criteria")).json()
    assert newest["source"] == "newest" and {s["harness_name"] for s in newest["sources"]} >= {"oracle", "nop"}
    assert (await client.get(f"/api/datasets/{DATASET}/criteria", params={"source": "x"})).status_code == 422
    assert (await client.get("/api/datasets/nothing/criteria")).status_code == 404


async def test_attempt_filters_and_event_count(client, attempts):
    failed = (await client.get(f"/api/runs/{LABEL}/attempts", params={"verdict": "failed"})).json()["attempts"]
    assert failed and {a["harness_name"] for a in failed} == {"nop"}
    assert len(failed) == len([a for a in attempts if a["harness_name"] == "nop"])
    oracle = (await client.get(f"/api/runs/{LABEL}/attempts", params={"harness": "oracle"})).json()["attempts"]
    assert {a["harness_name"] for a in oracle} == {"oracle"} and len(oracle) + len(failed) == len(attempts)
    assert (await client.get(f"/api/runs/{LABEL}/attempts", params={"verdict": "unfinished"})).json()["attempts"] == []
    for attempt in attempts[:3]:
        events = (await client.get(f"/api/attempts/{attempt['id']}/events")).json()["events"]
        assert attempt["event_count"] == len(events) > 0
    assert (await client.get(f"/api/runs/{LABEL}/attempts", params={"verdict": "nope"})).status_code == 422


async def test_huge_event_is_previewed_from_its_first_bytes(gateway_home, tmp_path, attempts):
    """A multi-megabyte event in a list comes back as a short preview; the whole event and its raw
    download keep every byte."""
    home = tmp_path / "home"
    shutil.copytree(gateway_home, home)
    attempt = attempts[0]["id"]
    huge = json.dumps({"role": "user", "content": "x" * 5_000_000 + "END"})
    with sqlite3.connect(home / "hemra.db") as db:
        seq = db.execute("SELECT max(seq) FROM events WHERE attempt_id = ?", (attempt,)).fetchone()[0] + 1
        db.execute(
            "INSERT INTO events (attempt_id, seq, time, type, name, payload, duration) "
            "VALUES (?, ?, 0, 'message', 'prompt', ?, 0)",
            (attempt, seq, huge),
        )
        usage = [
            {"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.0125},
            {"prompt_tokens": 800, "completion_tokens": 100, "cost": 0.0075},
        ]
        for i, payload in enumerate(usage, start=1):
            db.execute(
                "INSERT INTO events (attempt_id, seq, time, type, name, payload, duration) "
                "VALUES (?, ?, 0, 'usage', 'model', ?, 0)",
                (attempt, seq + i, json.dumps(payload)),
            )
        # As the store's writers leave them: usage summed with the events (tests/store/test_usage.py).
        db.execute(
            "UPDATE attempts SET event_count = event_count + 3, input_tokens = 2000, output_tokens = 400, "
            "cost_usd = 0.02, usage_events = 2 WHERE id = ?",
            (attempt,),
        )
    async with gateway_client(home) as client:
        page = (await client.get(f"/api/attempts/{attempt}/events", params={"page_token": str(seq - 1)})).json()
        event = page["events"][0]
        assert event["seq"] == seq and event["payload_cut"] and event["truncated"]
        assert event["payload_bytes"] == len(huge.encode())
        assert len(event["payload"]) < 1000 and event["payload"].startswith('{"role": "user"')
        previewed = (await client.get(f"/api/attempts/{attempt}/events/{seq}", params={"preview": 2000})).json()
        assert previewed["payload"]["role"] == "user" and len(previewed["payload"]["content"]) == 2001
        assert previewed["truncated"] and not previewed["payload_cut"]
        whole = await client.get(f"/api/attempts/{attempt}/events/{seq}")
        assert whole.json()["payload"]["content"].endswith("END") and not whole.json()["payload_cut"]
        raw = await client.get(f"/api/attempts/{attempt}/events/{seq}/raw")
        assert raw.content == huge.encode()
        assert (await client.get(f"/api/attempts/{attempt}")).json()["event_count"] == seq + 2
        usage = (await client.get(f"/api/runs/{LABEL}/usage")).json()["attempts"]
        assert usage == [
            {"attempt_id": attempt, "input_tokens": 2000, "output_tokens": 400, "cost_usd": 0.02, "usage_events": 2}
        ]
        assert (await client.get("/api/runs/no-such-run/usage")).status_code == 404


async def test_report_breaks_pass_rates_down_by_task_tag(client):
    """task.toml keywords and [metadata] difficulty/category are tags; each links to its attempts."""
    [dataset] = (await client.get(f"/api/runs/{LABEL}/report")).json()["datasets"]
    rows = {(r["tag"], r["harness_name"]): r for r in dataset["tag_rows"]}
    oracle, nop = rows["binary-reward", "oracle"], rows["binary-reward", "nop"]
    assert oracle["tasks"] == nop["tasks"] == oracle["binary_graded"] == oracle["passed"] == 7
    assert nop["binary_graded"] == 7 and not nop.get("passed")
    assert rows["difficulty:medium", "oracle"]["tasks"] == 3
    tagged = (await client.get(f"/api/runs/{LABEL}/attempts", params={"tag": "binary-reward", "harness": "nop"})).json()
    assert len(tagged["attempts"]) == 7 and {a["harness_name"] for a in tagged["attempts"]} == {"nop"}
    assert (await client.get(f"/api/runs/{LABEL}/attempts", params={"tag": "no-such-tag"})).json()["attempts"] == []
