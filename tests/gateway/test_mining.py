"""The run's mining list over HTTP, as the dashboard reads it: the flagged attempt with the
sequence numbers of its mining events (each a link to the trace viewer's event), none for the
oracle; the report row's count; and a run without mining lists nothing."""

import pytest

from tests.conftest import clean_env
from tests.e2e.helpers import hemra
from tests.e2e.test_history_mining import later_commit, mining_harness
from tests.gateway.conftest import LABEL, gateway_client


@pytest.fixture(scope="module")
def mined_home(tmp_path_factory):
    root = tmp_path_factory.mktemp("mined")
    env = {**clean_env(), "HEMRA_HOME": str(root / "home")}
    harness = mining_harness(root / "miner", later_commit(root / "repo"))
    result = hemra(
        env,
        "run",
        "-d",
        "hemra-offline",
        "-t",
        "hemra/fix-median",
        "-H",
        str(harness),
        "-H",
        "oracle",
        "--label",
        "mined",
    )
    assert result.returncode == 0, result.stderr + result.stdout
    return root / "home"


async def test_mining_list_and_report_count(mined_home):
    async with gateway_client(mined_home) as client:
        report = (await client.get("/api/runs/mined/report")).json()
        rows = {r["harness_name"]: r for r in report["datasets"][0]["rows"]}
        assert rows["miner"]["history_mining"] == 1 and not rows["oracle"].get("history_mining")
        found = (await client.get("/api/runs/mined/mining")).json()
        [attempt] = found["attempts"]
        assert attempt["harness_name"] == "miner" and attempt["patterns"] == ["git_log_all", "git_show_hash"]
        for event in attempt["events"]:  # the events the dashboard links to are the attempt's own
            got = (await client.get(f"/api/attempts/{attempt['attempt_id']}/events/{event['seq']}")).json()
            assert got["type"] == "tool_call" and event["command"].split(" ")[1] in str(got)


async def test_a_run_without_mining_lists_nothing(client):
    assert (await client.get(f"/api/runs/{LABEL}/mining")).json().get("attempts", []) == []
    assert (await client.get("/api/runs/no-such-run/mining")).status_code == 404
