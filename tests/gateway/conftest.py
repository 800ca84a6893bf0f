"""Real data for gateway tests: `hemra run` into a private HEMRA_HOME, then the gateway over
a real in-process store (hemra.services.compose.embedded.services)."""

import os
import socket
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn

from hemra.gateway.app import create_app
from hemra.services.compose import embedded
from tests.conftest import REPO, clean_env
from tests.e2e.helpers import hemra

LABEL = "gw"


@pytest.fixture(scope="session")
def gateway_home(tmp_path_factory):
    """A HEMRA_HOME holding one finished run: oracle (passes) and nop (fails) on hemra-offline."""
    home = tmp_path_factory.mktemp("gateway") / "home"
    env = clean_env()
    env["HEMRA_HOME"] = str(home)
    result = hemra(env, "run", "-H", "oracle", "-H", "nop", "-d", "hemra-offline", "--label", LABEL)
    assert result.returncode == 0, result.stderr
    return home


@asynccontextmanager
async def gateway_client(home, **options):
    async with embedded.services(home) as services:
        app = create_app(services.store, **options)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            client.store = services.store
            yield client


@pytest.fixture
async def client(gateway_home):
    async with gateway_client(gateway_home) as client:
        yield client


@pytest.fixture
async def attempts(client) -> list[dict]:
    response = await client.get(f"/api/runs/{LABEL}/attempts")
    assert response.status_code == 200
    return response.json()["attempts"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _live(home, **options):
    """The gateway on a real uvicorn at 127.0.0.1, in a thread with its own event loop."""
    import asyncio

    port = free_port()
    state = {}

    async def serve():
        async with embedded.services(home) as services:
            server = uvicorn.Server(
                uvicorn.Config(create_app(services.store, **options), host="127.0.0.1", port=port, log_level="warning")
            )
            state["server"] = server
            await server.serve()

    thread = threading.Thread(target=lambda: asyncio.run(serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    else:
        pytest.fail("gateway did not start")
    yield f"http://127.0.0.1:{port}"
    state["server"].should_exit = True
    thread.join(timeout=15)


@pytest.fixture
def live_server(gateway_home):
    yield from _live(gateway_home)


def _dashboard_dist():
    dist = REPO / "clients" / "dashboard" / "dist"
    if not (dist / "index.html").is_file():
        if os.environ.get("HEMRA_REQUIRE_BROWSER"):
            pytest.fail("the dashboard is not built: cd clients/dashboard && npm ci && npm run build")
        pytest.skip("the dashboard is not built (cd clients/dashboard && npm ci && npm run build)")
    return dist


@pytest.fixture
def dashboard_server(gateway_home):
    """The gateway serving the built dashboard (clients/dashboard/dist) at /."""
    yield from _live(gateway_home, ui_dir=_dashboard_dist())


HEMRA_JUDGE = """
[model]
api = "anthropic-messages"
id = "judge-model-1"
base_url_env = "JUDGE_URL"
api_key_env = "JUDGE_KEY"

[input]
trajectory = "full"

[[criterion]]
id = "gives_counts"
description = "The agent reports the counts"
expected = "words:"

[[criterion]]
id = "sandbox_ready"
description = "The sandbox came up"
expected = "sandbox_ready"
"""


def _judge_after_the_fact(env: dict, folder: Path, run: str) -> None:
    """`hemra judge` with HEMRA judge `quality` against the scripted model server: each
    attempt's first answer cannot be read, the re-ask is graded by the rubric."""
    from tests.modelserver import ModelServer, parse

    (folder / "judges").mkdir()
    (folder / "judges" / "quality.toml").write_text(HEMRA_JUDGE)
    with ModelServer(parse({"judge": [{"text": "I would rather not say."}, {"judge": "rubric"}]})) as server:
        judged = hemra(
            {**env, "JUDGE_URL": server.url, "JUDGE_KEY": "k"}, "judge", run, "--judge", "quality", cwd=folder
        )
    assert judged.returncode == 0, judged.stderr


def _add_model_message(home: Path, attempt: str, content: str) -> None:
    """A model's message appended to a finished attempt's events, as a harness would send it."""
    import json
    import sqlite3

    with sqlite3.connect(home / "hemra.db") as db:
        seq = db.execute("SELECT max(seq) FROM events WHERE attempt_id = ?", (attempt,)).fetchone()[0] + 1
        db.execute(
            "INSERT INTO events (attempt_id, seq, time, type, name, payload, duration) "
            "VALUES (?, ?, 0, 'message', 'assistant', ?, 0)",
            (attempt, seq, json.dumps({"role": "assistant", "content": content})),
        )
        db.execute("UPDATE attempts SET event_count = event_count + 1 WHERE id = ?", (attempt,))


@pytest.fixture
def judged_dashboard(tmp_path):
    """(URL, attempt ID): the dashboard over a run of oracle and nop on a task whose verifier
    judges with a rubric (tests/fixtures/rubric/reward-details.json), and oracle's attempt."""
    from tests.e2e.helpers import copy_task, show
    from tests.e2e.test_rubric_judges import VERIFIER
    from tests.scorer.test_rubric import DETAILS

    env = clean_env()
    env["HEMRA_HOME"] = str(tmp_path / "home")
    task = copy_task("text-stats", tmp_path / "rubric", "rubric-stats")
    (task / "tests" / "test.sh").write_text(VERIFIER)
    (task / "tests" / "reward-details.json").write_bytes(DETAILS)
    # mathematics the attempt page typesets (KaTeX), and an expression that does not parse
    with (task / "instruction.md").open("a") as instruction:
        instruction.write(
            "\nThe mean is $\\bar{x} = \\frac{1}{n}\\sum_i x_i$; leave \\(\\nosuchmacro{x}\\) as written.\n"
        )
    run = hemra(env, "run", "-H", "oracle", "-H", "nop", "-d", str(tmp_path / "rubric"), "--label", "judged")
    assert run.returncode == 0, run.stderr
    _judge_after_the_fact(env, tmp_path, "judged")
    [attempt] = [a for a in show(env, "judged")["attempts"] if a["harness_name"] == "oracle"]
    _add_model_message(tmp_path / "home", attempt["id"], "So $$\\sqrt{a^2 + b^2}$$ words, costing $5 or $6.")
    for url in _live(tmp_path / "home", ui_dir=_dashboard_dist()):
        yield url, attempt["id"]
