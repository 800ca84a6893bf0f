"""The example harnesses of examples/harnesses/ under the real `hemra run`: the TypeScript
one under node, the Python one on the SDK, both solving every bundled task through the
harness protocol; a task they have no script for; a harness with a wrong token."""

import json

import pytest

from tests.conftest import REPO
from tests.e2e.helpers import copy_task, hemra, show
from tests.harness_clients.conftest import TS_CLIENT, require_node_package

pytestmark = pytest.mark.slow
EXAMPLES = REPO / "examples" / "harnesses"
TS_EXAMPLE = EXAMPLES / "harnesses" / "scripted-ts"
TASKS = sorted(p.name for p in (REPO / "examples" / "hemra-offline").iterdir() if (p / "task.toml").exists())


def _events(env, attempt_id: str) -> list[dict]:
    return show(env, attempt_id, "--events")["events"]


def test_both_examples_solve_every_bundled_task(hemra_env):
    require_node_package(TS_CLIENT)
    require_node_package(TS_EXAMPLE)
    result = hemra(
        hemra_env,
        "run",
        "-H",
        "scripted-ts",
        "-H",
        "scripted-python",
        "-d",
        "hemra-offline",
        "--concurrency",
        "2",
        "--label",
        "scripted",
        cwd=EXAMPLES,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    attempts = show(hemra_env, "scripted")["attempts"]
    assert sorted((a["harness_name"], a["task_name"]) for a in attempts) == sorted(
        (h, f"hemra/{t}") for h in ("scripted-python", "scripted-ts") for t in TASKS
    )
    for attempt in attempts:
        assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt
        assert set(attempt["score"]["rewards"].values()) == {1.0}, attempt
        assert attempt["agent_version"] == "1.0.0", attempt
    ts = next(a for a in attempts if a["harness_name"] == "scripted-ts" and a["task_name"] == "hemra/fix-inventory")
    events = _events(hemra_env, ts["id"])
    kinds = [(e["type"], e["name"]) for e in events]
    assert ("message", "user") in kinds and ("tool_call", "write_file") in kinds
    [read] = [e["payload"] for e in events if e["name"] == "read_file"]
    assert read == {
        "path": "/app/inventory.py",
        "bytes": len(
            (
                REPO / "examples" / "hemra-offline" / "fix-inventory" / "environment" / "src" / "inventory.py"
            ).read_bytes()
        ),
    }
    commands = [e["payload"]["command"] for e in events if e["name"] == "run_command"]
    assert commands == ["python3 /tmp/smoke.py"]


@pytest.mark.parametrize("harness", ["scripted-ts", "scripted-python"])
def test_a_task_without_a_script_fails_with_why(hemra_env, tmp_path, harness):
    if harness == "scripted-ts":
        require_node_package(TS_CLIENT)
        require_node_package(TS_EXAMPLE)
    copy_task("text-stats", tmp_path / "unknown", new_name="word-census")
    result = hemra(hemra_env, "run", "-H", harness, "-d", str(tmp_path / "unknown"), "--label", "unknown", cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr + result.stdout
    [attempt] = show(hemra_env, "unknown")["attempts"]
    assert attempt["outcome"] == "OUTCOME_HARNESS_FAILED"
    assert attempt["error"].startswith("no script for task hemra/word-census (this harness only knows csv-column-sum,")
    assert attempt["score"]["rewards"] == {"reward": 0.0}


def test_a_harness_with_a_wrong_token_is_refused(hemra_env, tmp_path):
    """A TypeScript harness that presents a token other than its attempt's gets UNAUTHENTICATED."""
    require_node_package(TS_CLIENT)
    client = (TS_CLIENT / "dist" / "src" / "index.js").as_uri()
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "wrong_token.mjs").write_text(
        f"import {{ HarnessClient, UnauthenticatedError }} from {json.dumps(client)};\n"
        "const client = new HarnessClient(process.env.HEMRA_HARNESS_ADDRESS, 'not-' + process.env.HEMRA_HARNESS_TOKEN);\n"
        "try { await client.runCommand('echo planted > /app/answer.txt'); }\n"
        "catch (error) { console.error(`${error.name} ${error instanceof UnauthenticatedError}: ${error.message}`); process.exitCode = 3; }\n"
        "finally { client.close(); }\n"
    )
    (tmp_path / "harnesses" / "wrong-token.toml").write_text(
        'kind = "program"\ncommand = ["node", "wrong_token.mjs"]\n'
    )
    result = hemra(
        hemra_env,
        "run",
        "-H",
        "wrong-token",
        "-d",
        "hemra-offline",
        "-t",
        "hemra/text-stats",
        "--label",
        "wrong",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    [attempt] = show(hemra_env, "wrong")["attempts"]
    assert attempt["outcome"] == "OUTCOME_HARNESS_FAILED"
    assert attempt["error"] == (
        "the harness exited 3: UnauthenticatedError true: runCommand: UNAUTHENTICATED: unknown or expired attempt token"
    )
    assert not any(e["name"] == "run_command" for e in _events(hemra_env, attempt["id"]))
