"""The HTTP server the gateway and `hemra serve` start (gateway/server.py)."""

import socket

import httpx
from fastapi import FastAPI

from hemra.gateway.server import start_http, stop_http, url_of


async def test_kept_alive_connections_send_at_once():
    """TCP_NODELAY on the listener, inherited by every accepted connection: without it each
    request after the first on a kept-alive connection waited ~45 ms (Nagle's algorithm against
    the client's delayed ACK). bench/gateway.py measures the latency; this checks the cause."""
    app = FastAPI()
    app.get("/ok")(lambda: {"ok": True})
    web = await start_http(app, "127.0.0.1:0")
    try:
        [listener] = web[0].servers[0].sockets
        assert listener.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        async with httpx.AsyncClient(base_url=url_of(web)) as client:  # one kept-alive connection
            assert [(await client.get("/ok")).json() for _ in range(3)] == [{"ok": True}] * 3
    finally:
        await stop_http(web)


def test_serve__http_processes_answer_from_the_store_and_stop_with_it(tmp_path):
    """`hemra serve --http-processes 2`: the API from two processes of their own, each reading
    the serve process's database through a replica of the store; what another process records
    meanwhile is what they answer next; they stop with it."""
    import os
    import re
    import signal
    import subprocess
    import time

    from tests.conftest import HEMRA, clean_env

    env = clean_env() | {"HEMRA_HOME": str(tmp_path / "home")}
    refused = subprocess.run([HEMRA, "serve", "--http-processes", "-1"], env=env, capture_output=True, text=True)
    assert refused.returncode == 2 and "--http-processes must be from 0" in refused.stderr
    log = tmp_path / "serve.log"
    command = [HEMRA, "serve", "--concurrency", "0", "--http-processes", "2", "--listen", "127.0.0.1:0"]
    process = subprocess.Popen(
        [*command, "--store-listen", "127.0.0.1:0"], env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
    )
    try:
        url = None
        for _ in range(300):
            found = re.search(r"http://127\.0\.0\.1:\d+/", log.read_text())
            if found:
                url = found.group(0)
                break
            time.sleep(0.1)
        assert url, log.read_text()
        children = open(f"/proc/{process.pid}/task/{process.pid}/children").read().split()
        assert len(children) == 2
        with httpx.Client(base_url=url) as client:  # new connections: the kernel spreads them
            for _ in range(4):
                assert httpx.get(url + "api/runs").json() == {"runs": [], "next_page_token": ""}
            assert client.get("/api/runs/nope/report").status_code == 404
            assert httpx.get(url + "api/health", headers={"Host": "evil.example"}).status_code == 421
        # Another process records a run into the same store: every HTTP process answers it.
        recorded = subprocess.run(
            [HEMRA, "run", "-H", "oracle", "-d", "hemra-offline", "-t", "hemra/text-stats", "--sandbox", "host"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert recorded.returncode == 0, recorded.stdout[-2000:] + recorded.stderr[-2000:]
        # 16 kept-alive clients: the kernel spreads their connections over both processes.
        before = {pid: sockets_of(pid) for pid in children}
        clients = [httpx.Client(base_url=url) for _ in range(16)]
        try:
            for client in clients:
                runs = client.get("/api/runs").json()["runs"]
                assert len(runs) == 1
                report = client.get(f"/api/runs/{runs[0]['id']}/report").json()
                assert report["datasets"][0]["rows"][0]["passed"] == 1, report
            accepted = {pid: len(sockets_of(pid) - before[pid]) for pid in children}
            assert all(accepted.values()) and sum(accepted.values()) >= 16, accepted
        finally:
            for client in clients:
                client.close()
        # A process that dies takes its socket with it: new connections go to the other one.
        os.kill(int(children[0]), signal.SIGKILL)
        for _ in range(8):
            assert httpx.get(url + "api/runs", timeout=10).json()["runs"] == runs
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0, log.read_text()
    assert not [pid for pid in children if os.path.exists(f"/proc/{pid}")]


def sockets_of(pid: str) -> set[str]:
    """The sockets process `pid` holds open (their inodes)."""
    import os

    found = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:  # closed meanwhile
            continue
        if target.startswith("socket:"):
            found.add(target)
    return found
