"""`[verifier] network = "bridge"` end to end: the real CLI and engine, a task whose image runs
a small HTTP service and whose verifier asks it for the agent's answer. It passes with the
network (run file or task.toml) and fails without it; the network and the task's containers
are gone after every attempt, failed ones included; other sandboxes refuse it by name."""

import pytest

from tests.e2e.helpers import hemra, runs, show

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("docker_engine")]

SERVE = """import http.server, pathlib
class Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = pathlib.Path("/app/answer.txt")
        body = path.read_bytes() if path.exists() else b"no answer"
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)
http.server.ThreadingHTTPServer(("0.0.0.0", 8080), Answer).serve_forever()
"""
#: Asks the task's service (reached as `task` on the attempt's network) for the answer, for up
#: to 10 s while it starts; 1 when it is 42.
TEST_SH = """#!/bin/bash
python3 - <<'EOF'
import time, urllib.request
answer = "unreachable"
for _ in range(50):
    try:
        answer = urllib.request.urlopen("http://task:8080/", timeout=2).read().decode()
        break
    except OSError as exc:
        answer = f"unreachable: {exc}"
        time.sleep(0.2)
print("the service answered:", answer)
open("/logs/verifier/reward.txt", "w").write("1" if answer.strip() == "42" else "0")
EOF
"""


def make_served(folder, name: str, verifier_network: str = ""):
    """A task whose image's command serves /app/answer.txt on port 8080; its solution writes 42."""
    task = folder / name
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "solution").mkdir()
    network = f'network = "{verifier_network}"\n' if verifier_network else ""
    (task / "task.toml").write_text(
        f'[task]\nname = "hemra/{name}"\n[verifier]\ntimeout_sec = 60.0\n{network}'
        "[agent]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 256\n"
    )
    (task / "instruction.md").write_text("Write 42 into /app/answer.txt.\n")
    (task / "environment" / "Dockerfile").write_text(
        'FROM hemra-base:bookworm\nWORKDIR /app\nCOPY serve.py /srv/serve.py\nCMD ["python3", "/srv/serve.py"]\n'
    )
    (task / "environment" / "serve.py").write_text(SERVE)
    (task / "tests" / "test.sh").write_text(TEST_SH)
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\necho 42 > /app/answer.txt\n")
    return task


def left_behind(docker_engine, attempt_ids: list[str]) -> list[str]:
    """Networks and containers of these attempts still in the engine."""
    names = [n["Name"] for n in docker_engine.api.networks(filters={"label": "hemra.attempt"})]
    names += [c["Names"][0] for c in docker_engine.api.containers(all=True, filters={"label": "hemra.attempt"})]
    return [name for name in names if any(attempt in name for attempt in attempt_ids)]


def run_file(folder, name: str, dataset, harnesses: list[str], verifier_network: str = "") -> str:
    path = folder / f"{name}.toml"
    network = f'network = "{verifier_network}"\n' if verifier_network else ""
    path.write_text(
        f'name = "{name}"\ndatasets = ["{dataset}"]\nharnesses = {harnesses!r}\nconcurrency = 2\n'.replace("'", '"')
        + f'[sandbox]\nkind = "docker"\n[verifier]\n{network}'
    )
    return str(path)


def test_bridge__the_verifier_reaches_the_tasks_service_with_it_and_not_without(hemra_env, tmp_path, docker_engine):
    dataset = tmp_path / "served"
    make_served(dataset, "served")
    with_it = hemra(hemra_env, "run", run_file(tmp_path, "bridged", dataset, ["oracle", "nop"], "bridge"))
    assert with_it.returncode == 0, with_it.stderr + with_it.stdout
    without = hemra(hemra_env, "run", run_file(tmp_path, "closed", dataset, ["oracle"]))
    assert without.returncode == 0, without.stderr + without.stdout
    bridged, closed = show(hemra_env, "bridged")["attempts"], show(hemra_env, "closed")["attempts"]
    rewards = {a["harness_name"]: a["score"]["rewards"] for a in bridged}
    assert rewards == {"oracle": {"reward": 1.0}, "nop": {"reward": 0.0}}
    assert [a["score"]["rewards"] for a in closed] == [{"reward": 0.0}]
    oracle = next(a for a in bridged if a["harness_name"] == "oracle")
    events = show(hemra_env, oracle["id"], "--events")["events"]
    [note] = [e for e in events if e["name"] == "verifier_sandbox"]
    assert note["payload"]["network"] == "bridge" and note["payload"]["service"] == "task"
    assert note["payload"]["command"] == ["python3", "/srv/serve.py"]
    # What the service printed (http.server logs each request on stderr) is kept as output events.
    served = "".join(e["payload"]["text"] for e in events if e["type"] == "output" and e["name"] == "service")
    assert '"GET / HTTP/1.1" 200' in served
    # Gone after each attempt: the passed one and the failed one (nop) alike.
    assert left_behind(docker_engine, [a["id"] for a in bridged + closed]) == []


def test_bridge__a_task_file_asks_for_it_and_a_run_can_close_it(hemra_env, tmp_path, docker_engine):
    dataset = tmp_path / "asks"
    make_served(dataset, "asks", verifier_network="bridge")
    asked = hemra(hemra_env, "run", run_file(tmp_path, "asked", dataset, ["oracle"]))
    assert asked.returncode == 0, asked.stderr + asked.stdout
    closed = hemra(hemra_env, "run", run_file(tmp_path, "closed", dataset, ["oracle"], "none"))
    assert closed.returncode == 0, closed.stderr + closed.stdout
    [passed], [failed] = show(hemra_env, "asked")["attempts"], show(hemra_env, "closed")["attempts"]
    assert passed["score"]["rewards"] == {"reward": 1.0} and failed["score"]["rewards"] == {"reward": 0.0}
    assert left_behind(docker_engine, [passed["id"], failed["id"]]) == []


def test_bridge__refused_by_name_where_it_cannot_be_had(hemra_env, tmp_path):
    dataset = tmp_path / "asks"
    make_served(dataset, "asks", verifier_network="bridge")
    for sandbox, message in (
        ("host", "the host sandbox cannot give a verifier a network of its own (only docker can)"),
        ("modal", "the modal sandbox cannot give a verifier a network of its own (only docker can)"),
    ):
        path = tmp_path / f"{sandbox}.toml"
        path.write_text(
            f'datasets = ["{dataset}"]\nharnesses = ["oracle"]\n[sandbox]\nkind = "{sandbox}"\n'
            '[verifier]\nnetwork = "bridge"\n'
        )
        refused = hemra(hemra_env, "run", str(path))
        assert refused.returncode == 2, refused.stderr
        [line] = refused.stderr.strip().splitlines()
        assert f"verifier.network = 'bridge': {message}" in line
        # The task's own ask is refused the same way, naming its task.toml.
        refused = hemra(hemra_env, "run", "-H", "oracle", "-d", str(dataset), "--sandbox", sandbox)
        assert refused.returncode == 2, refused.stderr
        [line] = refused.stderr.strip().splitlines()
        assert f'{dataset / "asks" / "task.toml"}: [verifier] network is "bridge"' in line and message in line
    path = tmp_path / "shared.toml"
    path.write_text(
        f'datasets = ["{dataset}"]\nharnesses = ["oracle"]\n[sandbox]\nkind = "docker"\n[verifier]\nisolation = "shared"\n'
    )
    refused = hemra(hemra_env, "run", str(path))
    assert refused.returncode == 2, refused.stderr
    assert "cannot have it: the verifier must run in a fresh sandbox of its own" in refused.stderr
    assert runs(hemra_env) == []  # nothing recorded
