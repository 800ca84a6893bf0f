"""The HTTP API over a real store holding a real run."""

import json

import pytest

from hemra.gateway.security import CONTENT_SECURITY_POLICY
from hemra.v1 import store_service_pb2 as spb
from tests.conftest import clean_env
from tests.gateway.conftest import LABEL, gateway_client

MISSING_ATTEMPT = "a-00000000000000000000"


def by(attempts, harness):
    return [a for a in attempts if a["harness_name"] == harness]


async def test_health_and_readiness(client):
    response = await client.get("/api/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "store": "not checked"}
    response = await client.get("/api/ready")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "store": "ok"}


async def test_runs_list_and_paging(client, gateway_home):
    response = await client.get("/api/runs")
    assert response.status_code == 200
    runs = response.json()["runs"]
    assert [r["label"] for r in runs] == [LABEL]
    # a second run so pages have something to split

    from tests.e2e.helpers import hemra

    env = clean_env() | {"HEMRA_HOME": str(gateway_home)}
    assert (
        hemra(
            env, "run", "-H", "oracle", "-d", "hemra-offline", "--label", "second", "-t", "hemra/fizzbuzz-limit"
        ).returncode
        == 0
    )
    first = (await client.get("/api/runs", params={"page_size": 1})).json()
    assert len(first["runs"]) == 1 and first["runs"][0]["label"] == "second" and first["next_page_token"]
    second = (await client.get("/api/runs", params={"page_size": 1, "page_token": first["next_page_token"]})).json()
    assert [r["label"] for r in second["runs"]] == [LABEL]


async def test_run_by_label_and_id_has_cells_and_progress(client):
    run = (await client.get(f"/api/runs/{LABEL}")).json()
    assert run["label"] == LABEL and run["id"].startswith("r-")
    assert {c["harness_name"] for c in run["cells"]} == {"oracle", "nop"}
    assert run["progress"]["trials"] == run["progress"]["done"] > 0
    assert all(c["progress"]["trials"] > 0 for c in run["cells"])
    again = (await client.get(f"/api/runs/{run['id']}")).json()
    assert again["id"] == run["id"]


async def test_report(client):
    report = (await client.get(f"/api/runs/{LABEL}/report")).json()
    assert report["complete"] is True and report["baseline"] == "oracle"
    rows = {r["harness_name"]: r for r in report["datasets"][0]["rows"]}
    assert rows["oracle"]["is_baseline"] and rows["oracle"]["passed"] == rows["oracle"]["binary_graded"] > 0
    assert rows["nop"]["passed"] == 0


async def test_attempts_paged(client, attempts):
    assert len(attempts) == len({a["id"] for a in attempts}) > 4
    assert {a["state"] for a in attempts} == {"finished"}
    assert {a["outcome"] for a in attempts} == {"completed"}
    seen, token = [], ""
    while True:
        page = (await client.get(f"/api/runs/{LABEL}/attempts", params={"page_size": 3, "page_token": token})).json()
        assert len(page["attempts"]) <= 3
        seen += [a["id"] for a in page["attempts"]]
        token = page["next_page_token"]
        if not token:
            break
    assert seen == [a["id"] for a in attempts]


async def test_attempt(client, attempts):
    nop = by(attempts, "nop")[0]
    attempt = (await client.get(f"/api/attempts/{nop['id']}")).json()
    assert attempt == nop
    assert attempt["score"]["state"] == "scored" and set(attempt["score"]["rewards"].values()) == {0.0}


async def test_events_paged_by_seq(client, attempts):
    oracle = by(attempts, "oracle")[0]["id"]
    everything = (await client.get(f"/api/attempts/{oracle}/events")).json()
    assert everything["next_page_token"] == ""
    seqs = [e["seq"] for e in everything["events"]]
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) >= 4
    assert all(e["offset"] is not None and e["offset"] >= 0 for e in everything["events"])
    got, token = [], ""
    while True:
        page = (await client.get(f"/api/attempts/{oracle}/events", params={"page_size": 2, "page_token": token})).json()
        got += page["events"]
        token = page["next_page_token"]
        if not token:
            break
    assert got == everything["events"]
    # the page token is a sequence number: start anywhere
    tail = (await client.get(f"/api/attempts/{oracle}/events", params={"page_token": "2"})).json()
    assert [e["seq"] for e in tail["events"]] == seqs[2:]


async def test_event_previews_shorten_long_strings(client, attempts):
    oracle = by(attempts, "oracle")[0]["id"]
    page = (await client.get(f"/api/attempts/{oracle}/events", params={"preview": 5})).json()
    command = next(e for e in page["events"] if e["type"] == "command")
    assert command["truncated"] is True
    assert command["payload"]["command"].endswith("…") and len(command["payload"]["command"]) == 6
    full = (await client.get(f"/api/attempts/{oracle}/events/{command['seq']}")).json()
    assert full["truncated"] is False and len(full["payload"]["command"]) > 6
    assert full["payload_bytes"] == command["payload_bytes"]


async def test_event_raw_download_keeps_recorded_bytes(client, attempts):
    oracle = by(attempts, "oracle")[0]["id"]
    response = await client.get(f"/api/attempts/{oracle}/events/3/raw")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/octet-stream"
    assert response.headers["content-disposition"].startswith("attachment;")
    page = await client.store.ListEvents(spb.ListEventsRequest(parent=oracle, after_seq=2, page_size=1))
    assert response.content == page.events[0].payload_json.encode()


async def test_missing_things_are_404(client, attempts):
    oracle = by(attempts, "oracle")[0]["id"]
    for path in (
        "/api/runs/no-such-run",
        "/api/runs/no-such-run/report",
        "/api/runs/no-such-run/attempts",
        f"/api/attempts/{MISSING_ATTEMPT}",
        f"/api/attempts/{MISSING_ATTEMPT}/events",
        f"/api/attempts/{oracle}/events/999999",
        f"/api/attempts/{oracle}/events/999999/raw",
        f"/api/attempts/{oracle}/artifacts/no/such/file",
        f"/api/attempts/{MISSING_ATTEMPT}/events/stream",
        "/api/nothing-here",
    ):
        response = await client.get(path)
        assert response.status_code == 404, (path, response.text)
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


async def test_artifact_download_headers(client, attempts):
    oracle = by(attempts, "oracle")[0]
    artifact = oracle["artifacts"][0]
    response = await client.get(f"/api/attempts/{oracle['id']}/artifacts/{artifact['path'].lstrip('/')}")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/octet-stream"
    assert response.headers["x-content-type-options"] == "nosniff"
    name = artifact["path"].rsplit("/", 1)[-1]
    assert response.headers["content-disposition"].startswith(f'attachment; filename="{name}"')
    assert len(response.content) == artifact["size_bytes"]
    output = await client.get(f"/api/attempts/{oracle['id']}/verifier-output")
    assert output.status_code == 200 and output.headers["content-disposition"].startswith("attachment;")


@pytest.mark.parametrize(
    "path",
    [
        "../../etc/passwd",
        "logs/../../etc/passwd",
        "%2e%2e/%2e%2e/etc/passwd",
        "logs/%2e%2e/verifier/reward.json",
        "logs//verifier/reward.json",
        "logs/verifier/reward.json%00",
        "..%5c..%5cwindows",
        "logs/%2e/verifier/reward.json",
    ],
)
async def test_artifact_traversal_is_refused(client, attempts, path):
    oracle = by(attempts, "oracle")[0]["id"]
    response = await client.get(f"/api/attempts/{oracle}/artifacts/{path}")
    assert response.status_code in (400, 404), response.text


@pytest.mark.parametrize(
    "path",
    [
        "/api/runs?page_size=0",
        "/api/runs?page_size=100000",
        "/api/runs?page_size=abc",
        "/api/runs?page_token=" + "x" * 500,
        "/api/runs?page_token=%00",
        "/api/runs/" + "r" * 500,
        f"/api/runs/{LABEL}/attempts?page_size=-1",
        "/api/attempts/not-an-id",
        "/api/attempts/a-../events",
        f"/api/attempts/{MISSING_ATTEMPT}/events?page_size=999999",
        f"/api/attempts/{MISSING_ATTEMPT}/events?page_token=-5",
        f"/api/attempts/{MISSING_ATTEMPT}/events?preview=-1",
        f"/api/attempts/{MISSING_ATTEMPT}/events/0",
        f"/api/attempts/{MISSING_ATTEMPT}/events/99999999999999999999999",
        "/api/compare",
        "/api/compare?a=x",
        "/api/compare?a=&b=x",
        "/api/compare?a=" + "x" * 1000 + "&b=y",
        "/api/runs?" + "x=" + "y" * 5000,
    ],
)
async def test_bad_params_are_4xx(client, path):
    response = await client.get(path)
    assert 400 <= response.status_code < 500, (path, response.status_code, response.text)
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


async def test_compare(client):
    response = await client.get("/api/compare", params={"a": f"{LABEL}/oracle", "b": f"{LABEL}/nop"})
    assert response.status_code == 200, response.text
    comparison = response.json()
    assert comparison["paired_tasks"] > 0 and comparison["flipped_to_fail"]
    assert comparison["delta"] < 0
    unknown = await client.get("/api/compare", params={"a": "nope", "b": f"{LABEL}/nop"})
    assert unknown.status_code == 404
    ambiguous = await client.get("/api/compare", params={"a": LABEL, "b": f"{LABEL}/nop"})
    assert ambiguous.status_code == 400


async def test_only_get(client):
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        response = await client.request(method, "/api/runs")
        assert response.status_code == 405


async def test_csp_on_html_and_api(client):
    for path in ("/", "/app.js", "/app.css", "/api/runs", "/api/health"):
        response = await client.get(path)
        assert response.status_code == 200, path
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
    html = (await client.get("/")).text
    assert "<script>" not in html and "style=" not in html and "<style" not in html


async def test_foreign_host_is_refused(client):
    response = await client.get("/api/runs", headers={"host": "evil.example"})
    assert response.status_code == 421


async def test_ui_dir_replaces_viewer(gateway_home, tmp_path):
    (tmp_path / "index.html").write_text("<!doctype html><title>dash</title>")
    async with gateway_client(gateway_home, ui_dir=tmp_path) as client:
        response = await client.get("/")
        assert response.status_code == 200 and "dash" in response.text
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert (await client.get("/api/health")).status_code == 200


async def test_store_unavailable_is_503(gateway_home):
    import httpx

    from hemra.gateway.app import create_app
    from hemra.services.common import transport

    channel = transport.channel("127.0.0.1:1")
    store = transport.Client(channel, transport.store(channel)._stub, timeout=1, retries=1)
    app = create_app(store)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
        assert (await client.get("/api/runs")).status_code == 503
        assert (await client.get("/api/health")).status_code == 200  # alive, not ready
        ready = await client.get("/api/ready")
        assert ready.status_code == 503 and ready.json()["status"] == "unavailable"
    await channel.close()


async def test_stream_ends_for_finished_attempt(client, attempts):
    oracle = by(attempts, "oracle")[0]["id"]
    expected = (await client.get(f"/api/attempts/{oracle}/events")).json()["events"]
    response = await client.get(f"/api/attempts/{oracle}/events/stream", timeout=20)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    blocks = [b for b in response.text.split("\n\n") if b.strip()]
    events = [json.loads(b.split("data: ", 1)[1]) for b in blocks if "event: event" in b]
    assert [e["seq"] for e in events] == [e["seq"] for e in expected]
    assert "event: end" in blocks[-1]
    later = await client.get(f"/api/attempts/{oracle}/events/stream", headers={"Last-Event-ID": "3"})
    seqs = [json.loads(b.split("data: ", 1)[1])["seq"] for b in later.text.split("\n\n") if "event: event" in b]
    assert seqs == [e["seq"] for e in expected][3:]


def test_serve__serves_the_api_and_refuses_non_loopback_without_expose(tmp_path):
    """`hemra serve` wires the gateway: the viewer and API answer on its --listen address."""
    import os
    import re
    import signal
    import subprocess
    import time

    import httpx

    from tests.conftest import HEMRA

    env = clean_env()
    env["HEMRA_HOME"] = str(tmp_path / "home")
    refused = subprocess.run(
        [HEMRA, "serve", "--listen", "0.0.0.0:0"], env=env, capture_output=True, text=True, timeout=60
    )
    assert refused.returncode == 2 and "add --expose" in refused.stderr
    log = tmp_path / "serve.log"
    # --open opens the URL with the user's browser: $BROWSER here, a script that records it
    browser, opened = tmp_path / "browser.sh", tmp_path / "opened.txt"
    browser.write_text(f'#!/bin/sh\nprintf %s "$1" > {opened}\n')
    browser.chmod(0o755)
    process = subprocess.Popen(
        [HEMRA, "serve", "--open", "--listen", "127.0.0.1:0", "--store-listen", "127.0.0.1:0"],
        env={**env, "BROWSER": str(browser)},
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        url = None
        for _ in range(200):
            found = re.search(r"http://127\.0\.0\.1:\d+/", log.read_text())
            if found:
                url = found.group(0)
                break
            time.sleep(0.1)
        assert url, log.read_text()
        assert httpx.get(url + "api/health").status_code == 200
        for _ in range(100):
            if opened.exists() and opened.read_text():
                break
            time.sleep(0.1)
        assert opened.read_text() == url
        page = httpx.get(url)
        assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
        busy = subprocess.run(
            [HEMRA, "serve", "--listen", url[len("http://") : -1]], env=env, capture_output=True, text=True, timeout=60
        )
        assert busy.returncode == 2 and "Traceback" not in busy.stderr
        assert busy.stderr.strip().splitlines()[-1].startswith(f"error: --listen {url[7:-1]}: cannot listen there")
    finally:
        os.kill(process.pid, signal.SIGTERM)
        assert process.wait(timeout=30) == 0
