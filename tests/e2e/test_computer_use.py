"""kind = "computer-use" end to end: the example of examples/computer-use (a desktop in the
docker sandbox built on hemra-desktop:bookworm, a tiny Tk command box opened on it) run
through `hemra run`, against the scripted model server on loopback speaking Anthropic's
messages API with the computer tool. The scripted model looks, clicks into the box (at a
point that lands in it only once scaled from its 1024x640 screen to the real 1280x800) and
types the command that solves the task; the task's verifier scores the file it wrote."""

import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import httpx
import pytest

from hemra.services.environments import engine
from tests.conftest import REPO
from tests.e2e.helpers import hemra, show
from tests.gateway.conftest import _live
from tests.gateway.test_browser import BROWSER, CHROMIUM, _skip_or_fail
from tests.modelserver import ModelServer, parse

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600), pytest.mark.usefixtures("docker_engine")]

EXAMPLE = REPO / "examples" / "computer-use"
KEY = "scripted-key-0123"
#: It solves the task, and (as a hostile agent might) leaves an SVG page named like a screenshot.
HOSTILE = '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'
SOLVE = f"tac /app/data/steps.txt > /app/reversed.txt; echo '{HOSTILE}' > /logs/agent/evil.png"
#: The box is at (600, 400)-(1000, 440) on the real screen: (640, 336) * 1.25 = (800, 420).
CLICK = [640, 336]
SCRIPT = [
    {"tool": "computer", "arguments": {"action": "screenshot"}},
    {"tool": "computer", "arguments": {"action": "left_click", "coordinate": CLICK}},
    {"tool": "computer", "arguments": {"action": "type", "text": SOLVE}},
    {"tool": "computer", "arguments": {"action": "key", "text": "Return"}},
    {"tool": "computer", "arguments": {"action": "wait", "duration": 1}},
    {"tool": "computer", "arguments": {"action": "cursor_position"}},
    {"text": "Wrote /app/reversed.txt."},
]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def blob(env: dict, digest: str) -> bytes:
    return (Path(env["HEMRA_HOME"]) / "blobs" / "sha256" / digest[7:9] / digest[9:]).read_bytes()


def _events(env: dict, attempt_id: str) -> list[dict]:
    events = show(env, attempt_id, "--events")["events"]
    for e in events:
        e["data"] = json.loads(e["payload"]) if isinstance(e.get("payload"), str) else e.get("payload", {})
    return events


@pytest.fixture(scope="module")
def desktop_image():
    try:
        engine.client().api.inspect_image("hemra-desktop:bookworm")
    except Exception as exc:  # noqa: BLE001 (any failure: the image is not there)
        reason = f"no hemra-desktop:bookworm image (run scripts/setup-docker.sh): {exc}"
        if os.environ.get("HEMRA_REQUIRE_DOCKER"):  # CI made it: its absence is a failure there
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def solved(desktop_image, tmp_path_factory):
    """One run of the example, shared by the tests of this module."""
    root = tmp_path_factory.mktemp("computer-use")
    shutil.copytree(EXAMPLE, root / "example")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEMRA_")}
    env.update(HEMRA_HOME=str(root / "home"), HEMRA_WARM_STORE="0", ANTHROPIC_API_KEY=KEY)
    with ModelServer(parse(SCRIPT)) as server:
        env["ANTHROPIC_BASE_URL"] = server.url
        result = hemra(env, "run", "run.toml", "--label", "cu", cwd=root / "example", timeout=500)
        requests = server.model_requests()
    assert result.returncode == 0, result.stderr + result.stdout
    [attempt] = show(env, "cu")["attempts"]
    return {"env": env, "attempt": attempt, "events": _events(env, attempt["id"]), "requests": requests}


def _of(events, type_, name=None):
    return [e["data"] for e in events if e["type"] == type_ and (name is None or e["name"] == name)]


def test_computer_use__clicks_and_types_into_a_gui_program_and_the_verifier_scores_it(solved):
    attempt, events = solved["attempt"], solved["events"]
    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 1.0}
    calls = _of(events, "tool_call", "computer")
    assert [c["arguments"]["action"] for c in calls] == [t["arguments"]["action"] for t in SCRIPT[:-1]]
    results = _of(events, "tool_result", "computer")
    assert [r["id"] for r in results] == [c["id"] for c in calls]
    assert not any(r["is_error"] for r in results), results
    # The model's point, scaled to the real screen, is where the program saw the click.
    clicks = [a for a in attempt["artifacts"] if a["path"] == "/logs/agent/runbox-clicks.txt"]
    assert blob(solved["env"], clicks[0]["blob_digest"]).decode().split() == ["800", "420"]
    # ... and the pointer's position is told back in the model's own coordinates.
    assert results[-1]["output"] == "X=640,Y=336"
    # Each model call's usage is an event, summed into the attempt's (the script's 100/20 each).
    assert len(_of(events, "usage", "model_call")) == len(SCRIPT)
    usage = attempt["usage"]
    assert (int(usage["input_tokens"]), int(usage["output_tokens"])) == (100 * len(SCRIPT), 20 * len(SCRIPT))
    [observed] = _of(events, "usage_observed", "computer-use")  # what HEMRA read itself
    assert (observed["model_calls"], observed["input_tokens"], observed["unreadable"]) == (len(SCRIPT), 700, 0)
    assert _of(events, "message", "assistant")[-1]["text"] == "Wrote /app/reversed.txt."


def test_computer_use__every_screenshot_is_an_artifact_at_the_model_s_size(solved):
    attempt, events = solved["attempt"], solved["events"]
    shots = sorted(a["path"] for a in attempt["artifacts"] if a["path"].startswith("/logs/agent/screenshots/"))
    results = _of(events, "tool_result", "computer")
    assert shots == [f"/logs/agent/screenshots/{i:04d}.png" for i in range(1, len(results) + 1)]
    assert [r["screenshot"] for r in results] == shots
    for artifact in attempt["artifacts"]:
        if artifact["path"] in shots:
            data = blob(solved["env"], artifact["blob_digest"])
            assert png_size(data) == (1024, 640) and int(artifact["size_bytes"]) == len(data)
            assert data[24] == 8  # 8 bits a channel
    assert {(r["width"], r["height"]) for r in results} == {(1024, 640)}


def test_computer_use__model_gets_the_tool_at_its_screen_size_and_each_screenshot(solved):
    requests = [r for r in solved["requests"] if r.path == "/v1/messages"]
    assert len(requests) == len(SCRIPT)
    first = requests[0].body
    assert first["tools"] == [
        {"type": "computer_20250124", "name": "computer", "display_width_px": 1024, "display_height_px": 640}
    ]
    assert requests[0].headers["x-api-key"] == KEY
    assert "computer-use-2025-01-24" in requests[0].headers["anthropic-beta"]
    last = requests[-1].body["messages"]
    images = [
        part
        for m in last
        if m["role"] == "user" and isinstance(m["content"], list)
        for block in m["content"]
        for part in block.get("content") or []
        if part.get("type") == "image"
    ]
    assert len(images) == 3  # only the most recent screenshots travel with each request
    assert all(i["source"]["media_type"] == "image/png" for i in images)


@pytest.fixture(scope="module")
def gateway(solved):
    yield from _live(Path(solved["env"]["HEMRA_HOME"]))


def test_gateway__serves_screenshots_as_png_images_and_no_other_file_as_one(solved, gateway):
    attempt = solved["attempt"]["id"]
    shot = httpx.get(f"{gateway}/api/attempts/{attempt}/images/logs/agent/screenshots/0001.png")
    assert shot.status_code == 200
    assert shot.headers["content-type"] == "image/png"
    assert shot.headers["x-content-type-options"] == "nosniff"
    assert shot.headers["content-disposition"] == "inline"
    assert png_size(shot.content) == (1024, 640)
    # What the agent left under a .png name is no image: refused, and only ever a download.
    evil = httpx.get(f"{gateway}/api/attempts/{attempt}/images/logs/agent/evil.png")
    assert evil.status_code == 415 and "svg" not in evil.headers["content-type"]
    assert HOSTILE not in evil.text
    download = httpx.get(f"{gateway}/api/attempts/{attempt}/artifacts/logs/agent/evil.png")
    assert download.status_code == 200 and download.content.strip() == HOSTILE.encode()
    assert download.headers["content-type"] == "application/octet-stream"
    assert download.headers["content-disposition"].startswith("attachment;")
    for path in ("logs/agent/nothing.png", "logs/%2e%2e/logs/agent/screenshots/0001.png"):
        assert httpx.get(f"{gateway}/api/attempts/{attempt}/images/{path}").status_code in (400, 404)


def test_viewer__timeline_shows_the_screenshots_as_images(solved, gateway):
    if not Path(CHROMIUM).exists() or shutil.which("node") is None:
        _skip_or_fail("needs /usr/bin/chromium and node (apt-get install -y chromium)")
    if not (BROWSER / "node_modules" / "playwright-core").exists():
        _skip_or_fail("needs playwright-core: cd tests/gateway/browser && npm ci")
    env = {**os.environ, "GATEWAY_URL": gateway, "ATTEMPT_ID": solved["attempt"]["id"]}
    result = subprocess.run(
        ["node", "--test", "computer_use.test.mjs"], cwd=BROWSER, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def _copy_example(root: Path, harness: str) -> tuple[Path, dict]:
    shutil.copytree(EXAMPLE, root / "example")
    (root / "example" / "harnesses" / "computer.toml").write_text(harness)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEMRA_")}
    env.update(HEMRA_HOME=str(root / "home"), HEMRA_WARM_STORE="0")
    return root / "example", env


OPENAI_HARNESS = """kind = "computer-use"
model = "computer-use-preview"
env = ["OPENAI_API_KEY", "OPENAI_BASE_URL"]

[computer]
api = "openai"
screen = [1280, 800]
model_screen = [1024, 640]
start = ["python3 /opt/hemra/harness/runbox.py"]
"""


def test_computer_use__openai_responses_api_computer_calls(desktop_image, tmp_path):
    folder, env = _copy_example(tmp_path, OPENAI_HARNESS)
    script = [
        {"tool": "computer", "arguments": {"type": "screenshot"}},
        {"tool": "computer", "arguments": {"type": "click", "button": "left", "x": CLICK[0], "y": CLICK[1]}},
        {"tool": "computer", "arguments": {"type": "type", "text": "tac /app/data/steps.txt > /app/reversed.txt"}},
        {"tool": "computer", "arguments": {"type": "keypress", "keys": ["ENTER"]}},
        {"tool": "computer", "arguments": {"type": "wait"}},
        {"text": "Done."},
    ]
    with ModelServer(parse(script)) as server:
        env.update(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.url + "/v1")
        result = hemra(env, "run", "run.toml", "--label", "cu-openai", cwd=folder, timeout=500)
        requests = server.model_requests()
    assert result.returncode == 0, result.stderr + result.stdout
    [attempt] = show(env, "cu-openai")["attempts"]
    assert attempt["score"]["rewards"] == {"reward": 1.0}, attempt.get("error")
    assert [r.path for r in requests] == ["/v1/responses"] * len(script)
    assert requests[0].body["tools"] == [
        {"type": "computer_use_preview", "display_width": 1024, "display_height": 640, "environment": "linux"}
    ]
    outputs = [i for i in requests[-1].body["input"] if i.get("type") == "computer_call_output"]
    assert len(outputs) == len(script) - 1
    assert outputs[-1]["output"]["image_url"].startswith("data:image/png;base64,iVBOR")
    clicks = [a for a in attempt["artifacts"] if a["path"] == "/logs/agent/runbox-clicks.txt"]
    assert blob(env, clicks[0]["blob_digest"]).decode().split() == ["800", "420"]


ON_HOST = ("-H", "computer", "-d", "hemra-offline")  # flags alone: the host sandbox


@pytest.mark.parametrize(
    ("harness", "args", "said"),
    [
        ('kind = "computer-use"\n[computer]\nscreen = [10, 10]\n', ("run.toml",), "computer.screen must be [width"),
        ('kind = "computer-use"\n', ON_HOST, "a computer-use harness runs in the docker sandbox"),
    ],
)
def test_computer_use__bad_harness_files_one_line_exit_2_nothing_recorded(tmp_path, harness, args, said):
    folder, env = _copy_example(tmp_path, harness)
    result = hemra(env, "run", *args, cwd=folder)
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert said in line
    assert hemra(env, "runs", "--json").stdout.strip() in ("", "[]")
