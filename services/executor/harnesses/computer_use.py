"""kind = "computer-use": HEMRA's own driver loop between a computer-use model and a desktop
inside the attempt's sandbox.

The sandbox's image holds the desktop (hemra-desktop:bookworm, made by
scripts/setup-docker.sh: Xvfb, openbox, xdotool, ImageMagick). The driver starts the X
server and window manager there, opens the harness's `computer.start` programs, then loops:
it asks the model (Anthropic's messages API with the computer tool, or OpenAI's Responses
API with computer_use_preview), carries out each action with xdotool inside the sandbox,
and answers with a screenshot. The loop runs in the executor, which calls the model itself:
the container never reaches the model, so it keeps no network (network_block) and nothing
the agent does inside can see the API key.

The model sees the screen at `computer.model_screen` (screenshots are scaled to it) and its
coordinates are scaled back to the real `computer.screen`. Every screenshot the model got is
kept as an artifact /logs/agent/screenshots/NNNN.png; each action is a tool_call event and
its outcome a tool_result naming its screenshot; each model call's usage is a usage event.
"""

import asyncio
import base64
import shlex
import struct
import time
import tomllib
from pathlib import Path

import httpx

from hemra.services import envtemplate
from hemra.services.common import computer_use
from hemra.services.domain import vocabulary
from hemra.services.executor.events import event
from hemra.services.executor.harnesses.base import (
    COMPLETED,
    HARNESS_FAILED,
    HARNESS_MOUNT,
    TIMED_OUT,
    HarnessDriver,
    HarnessResult,
    TrialContext,
)
from hemra.services.executor.sandboxes import SandboxError
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb

DISPLAY = ":1"
SCREENSHOTS = "/logs/agent/screenshots"
#: The X server's, window manager's and start programs' output (an artifact like the agent's).
DESKTOP_LOG = "/logs/agent/desktop.log"
#: The end of a shell loop that waits until $end.
_UNTIL_END = '[ "$(date +%s)" -ge "$end" ] && break; sleep 0.1; done'
#: The file openbox touches once it manages the screen (its --startup command).
WM_READY = "/tmp/.hemra-wm-ready"
#: Screenshots sent with each request: older ones are replaced by a note (requests stay small).
RECENT_IMAGES = 3
#: How long the desktop and the start programs may take to show a window.
START_SECS = 30.0
#: How long a screenshot waits at most for the screen to stop changing after an action.
SETTLE_SECS = 3
#: The longest `wait` a model may ask for, and the tries of a model call answered 429/5xx.
MAX_WAIT_SECS = 10.0
RETRIES = 3
MAX_TOKENS = 4096
ANTHROPIC_TOOL = "computer_20250124"
ANTHROPIC_BETA = "computer-use-2025-01-24"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: OpenAI's key names (keypress) in xdotool's.
_OPENAI_KEYS = {
    "ENTER": "Return",
    "RETURN": "Return",
    "CTRL": "ctrl",
    "CONTROL": "ctrl",
    "ALT": "alt",
    "SHIFT": "shift",
    "META": "super",
    "CMD": "super",
    "SUPER": "super",
    "ESC": "Escape",
    "ESCAPE": "Escape",
    "TAB": "Tab",
    "BACKSPACE": "BackSpace",
    "DELETE": "Delete",
    "SPACE": "space",
    "UP": "Up",
    "DOWN": "Down",
    "LEFT": "Left",
    "RIGHT": "Right",
    "HOME": "Home",
    "END": "End",
    "PAGEUP": "Prior",
    "PAGEDOWN": "Next",
}


class ActionError(Exception):
    """An action the model asked for that cannot be done (told to the model, not fatal)."""


class Scale:
    """Coordinates between the model's screen and the real one."""

    def __init__(self, model_screen: tuple[int, int], screen: tuple[int, int]):
        self.model_screen, self.screen = model_screen, screen

    def to_screen(self, x, y) -> tuple[int, int]:
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y)):
            raise ActionError(f"coordinate must be two numbers (got {[x, y]!r:.100})")
        (mw, mh), (w, h) = self.model_screen, self.screen
        if not (0 <= x < mw and 0 <= y < mh):
            raise ActionError(f"coordinate {[x, y]} is outside the {mw}x{mh} screen")
        return min(w - 1, round(x * w / mw)), min(h - 1, round(y * h / mh))

    def to_model(self, x: int, y: int) -> tuple[int, int]:
        (mw, mh), (w, h) = self.model_screen, self.screen
        return min(mw - 1, round(x * mw / w)), min(mh - 1, round(y * mh / h))


def png_size(data: bytes) -> tuple[int, int] | None:
    """A PNG's (width, height) from its header; None when `data` is not a PNG."""
    if len(data) < 24 or not data.startswith(PNG_MAGIC) or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


#: Wait (up to {secs} s) for a window to show, then until two screenshots half a second apart
#: are the same: the start programs have drawn themselves. Niced and at a slow pace: the
#: sandbox may have one CPU, which the programs starting need.
_SETTLE = """end=$(( $(date +%s) + {secs} ))
until xdotool search --onlyvisible --name . >/dev/null 2>&1; do
  [ "$(date +%s)" -ge "$end" ] && exit 0; sleep 0.5; done
echo shown
last=""
while [ "$(date +%s)" -lt "$end" ]; do
  now="$(import -window root rgb:- 2>/dev/null | md5sum)"
  [ "$now" = "$last" ] && exit 0
  last="$now"; sleep 0.5; done"""


#: Until two looks at the screen a quarter second apart are the same (at most SETTLE_SECS).
_STILL_TEMPLATE = """end=$(( $(date +%s) + {secs} )); last=""
while [ "$(date +%s)" -lt "$end" ]; do
  now="$(import -window root rgb:- 2>/dev/null | md5sum)"
  [ "$now" = "$last" ] && exit 0
  last="$now"; sleep 0.25; done"""
_STILL = _STILL_TEMPLATE.format(secs=SETTLE_SECS)


class Desktop:
    """The X display inside the sandbox, worked through xdotool and ImageMagick."""

    def __init__(self, trial: TrialContext, computer: computer_use.Computer):
        self.trial, self.computer = trial, computer
        self.scale = Scale(computer.model_screen, computer.screen)
        self.shots = 0
        #: Whether a window of the start programs showed (None: there are none).
        self.window_shown: bool | None = None

    async def sh(self, command: str, timeout: float = 30.0):
        return await self.trial.sandbox.exec(command, env={"DISPLAY": DISPLAY, "HOME": "/root"}, timeout=timeout)

    async def start(self) -> str:
        """Start the X server, window manager and start programs; "" or what went wrong."""
        w, h = self.computer.screen
        missing = await self.sh("for t in Xvfb openbox xdotool import; do command -v $t >/dev/null || echo $t; done")
        if missing.stdout.strip():
            return (
                f"the task's image has no desktop ({missing.stdout.decode().split()[0]} is missing): "
                f"build it on {computer_use.DESKTOP_IMAGE} "
                f'(a run file\'s [sandbox] image = "{computer_use.DESKTOP_IMAGE}")'
            )
        # Detached, with their output in files: the exec returns while they run on.
        # The programs start once the window manager manages the screen: a window mapped
        # before it (a full-screen one above all) may never be shown.
        launch = [
            f"end=$(( $(date +%s) + {int(START_SECS)} )); rm -f {WM_READY}",
            f"Xvfb {DISPLAY} -screen 0 {w}x{h}x24 -nolisten tcp >>{DESKTOP_LOG} 2>&1 &",
            f"until xdotool getdisplaygeometry >/dev/null 2>&1; do {_UNTIL_END}",
            f"openbox --startup 'touch {WM_READY}' >>{DESKTOP_LOG} 2>&1 &",
            f"until [ -e {WM_READY} ]; do {_UNTIL_END}",
            *(f"( {command} ) >>{DESKTOP_LOG} 2>&1 &" for command in self.computer.start),
        ]
        started = await self.sh("\n".join(launch) + "\nxdotool getdisplaygeometry", timeout=START_SECS + 5)
        if started.exit_code != 0:
            return f"the desktop did not start: {started.stderr.decode(errors='replace').strip()[-300:]}"
        if self.computer.start:  # the model's first screenshot should show them, drawn
            settled = await self.sh(
                f"exec nice -n 19 bash -c {shlex.quote(_SETTLE.format(secs=int(START_SECS)))}", timeout=START_SECS + 5
            )
            self.window_shown = b"shown" in settled.stdout
        return ""

    async def screenshot(self, settle: bool = True) -> tuple[bytes, str]:
        """The screen as the model sees it (PNG), kept as an artifact; (data, artifact path).
        With `settle`, first until the screen stops changing (what an action set off has drawn)."""
        w, h = self.computer.model_screen
        resize = "" if self.computer.model_screen == self.computer.screen else f" -resize {w}x{h}!"
        wait = f"nice -n 19 bash -c {shlex.quote(_STILL)}; " if settle else ""
        shot = await self.sh(f"{wait}import -window root{resize} -depth 8 png:-")
        if shot.exit_code != 0 or png_size(shot.stdout) is None:
            raise SandboxError(f"screenshot failed: {shot.stderr.decode(errors='replace').strip()[-300:]}")
        self.shots += 1
        path = f"{SCREENSHOTS}/{self.shots:04d}.png"
        await _keep(self.trial.events, path, shot.stdout)
        return shot.stdout, path

    async def xdotool(self, *args) -> str:
        done = await self.sh(shlex.join(["xdotool", *map(str, args)]))
        if done.exit_code != 0:
            raise ActionError(f"xdotool failed: {done.stderr.decode(errors='replace').strip()[-200:]}")
        return done.stdout.decode(errors="replace")

    async def cursor(self) -> tuple[int, int]:
        said = dict(
            line.split("=", 1) for line in (await self.xdotool("getmouselocation", "--shell")).split() if "=" in line
        )
        return self.scale.to_model(int(said.get("X", 0)), int(said.get("Y", 0)))


async def _keep(events, path: str, data: bytes) -> None:
    """Store a screenshot as an artifact at once (never through the sandbox)."""
    [digest] = (await events.store.PutBlobs(spb.PutBlobsRequest(blobs=[spb.Blob(data=data)]))).digests
    events.artifacts.append(pb.Artifact(path=path, size_bytes=len(data), blob_digest=digest))


# -- Anthropic's computer tool -----------------------------------------------------------------

_BUTTONS = {"left_click": 1, "middle_click": 2, "right_click": 3, "double_click": 1, "triple_click": 1}
_SCROLL = {"up": 4, "down": 5, "left": 6, "right": 7}


async def anthropic_action(desktop: Desktop, arguments: dict) -> str:
    """Carry out one computer-tool action; what to tell the model besides the screenshot."""
    action = arguments.get("action")
    at = arguments.get("coordinate")

    def point(value=at) -> tuple[int, int]:
        if not isinstance(value, list) or len(value) != 2:
            raise ActionError(f"{action} needs coordinate [x, y]")
        return desktop.scale.to_screen(*value)

    modifiers = [k for k in str(arguments.get("text") or "").split("+") if k] if action in _BUTTONS else []
    if action == "screenshot":
        return ""
    if action in _BUTTONS:
        move = ["mousemove", "--sync", *point()] if at is not None else []
        repeat = {"double_click": 2, "triple_click": 3}.get(action, 1)
        down = [a for m in modifiers for a in ("keydown", m)]
        up = [a for m in modifiers for a in ("keyup", m)]
        await desktop.xdotool(*down, *move, "click", "--repeat", repeat, "--delay", 60, _BUTTONS[action], *up)
    elif action == "mouse_move":
        await desktop.xdotool("mousemove", "--sync", *point())
    elif action == "left_click_drag":
        start = point(arguments.get("start_coordinate"))
        await desktop.xdotool(
            "mousemove", "--sync", *start, "mousedown", 1, "mousemove", "--sync", *point(), "mouseup", 1
        )
    elif action in ("left_mouse_down", "left_mouse_up"):
        await desktop.xdotool("mousedown" if action == "left_mouse_down" else "mouseup", 1)
    elif action == "type":
        text = _text(arguments)
        for chunk in (text[i : i + 200] for i in range(0, len(text), 200)):
            await desktop.xdotool("type", "--delay", 12, "--", chunk)
    elif action == "key":
        await desktop.xdotool("key", "--", *_text(arguments).split())
    elif action == "hold_key":
        seconds = _seconds(arguments.get("duration", 1))
        keys = _text(arguments).split()
        await desktop.xdotool("keydown", *keys, "sleep", seconds, "keyup", *keys)
    elif action == "scroll":
        direction = arguments.get("scroll_direction", "down")
        if direction not in _SCROLL:
            raise ActionError(f"scroll_direction must be one of {', '.join(_SCROLL)}")
        amount = arguments.get("scroll_amount", 3)
        if not isinstance(amount, int) or not 0 < amount <= 50:
            raise ActionError("scroll_amount must be a whole number from 1 to 50")
        move = ["mousemove", "--sync", *point()] if at is not None else []
        await desktop.xdotool(*move, "click", "--repeat", amount, "--delay", 30, _SCROLL[direction])
    elif action == "wait":
        await asyncio.sleep(_seconds(arguments.get("duration", 1)))
    elif action == "cursor_position":
        x, y = await desktop.cursor()
        return f"X={x},Y={y}"
    else:
        raise ActionError(f"unknown action {action!r:.60}")
    return ""


def _text(arguments: dict) -> str:
    text = arguments.get("text")
    if not isinstance(text, str) or not text:
        raise ActionError(f"{arguments.get('action')} needs text")
    return text


def _seconds(value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_WAIT_SECS:
        raise ActionError(f"duration must be 0 to {MAX_WAIT_SECS:g} seconds")
    return float(value)


async def openai_action(desktop: Desktop, action: dict) -> str:
    """An OpenAI computer_call's action, as the matching Anthropic one."""
    kind = action.get("type")
    at = [action.get("x"), action.get("y")] if "x" in action else None
    button = {"left": "left_click", "right": "right_click", "wheel": "middle_click"}
    if kind == "click":
        return await anthropic_action(
            desktop, {"action": button.get(action.get("button", "left"), "left_click"), "coordinate": at}
        )
    if kind == "double_click":
        return await anthropic_action(desktop, {"action": "double_click", "coordinate": at})
    if kind == "move":
        return await anthropic_action(desktop, {"action": "mouse_move", "coordinate": at})
    if kind == "type":
        return await anthropic_action(desktop, {"action": "type", "text": action.get("text")})
    if kind == "keypress":
        keys = [_OPENAI_KEYS.get(str(k).upper(), str(k)) for k in action.get("keys") or []]
        return await anthropic_action(desktop, {"action": "key", "text": "+".join(keys)})
    if kind == "scroll":
        dx, dy = action.get("scroll_x", 0) or 0, action.get("scroll_y", 0) or 0
        direction = ("down" if dy > 0 else "up") if dy else ("right" if dx > 0 else "left")
        amount = max(1, min(50, round(abs(dy or dx) / 100) or 1))
        return await anthropic_action(
            desktop, {"action": "scroll", "coordinate": at, "scroll_direction": direction, "scroll_amount": amount}
        )
    if kind == "drag":
        path = action.get("path") or []
        if len(path) < 2:
            raise ActionError("drag needs a path of two points or more")
        first, last = path[0], path[-1]
        return await anthropic_action(
            desktop,
            {
                "action": "left_click_drag",
                "start_coordinate": [first.get("x"), first.get("y")],
                "coordinate": [last.get("x"), last.get("y")],
            },
        )
    if kind == "wait":
        return await anthropic_action(desktop, {"action": "wait", "duration": 2})
    if kind == "screenshot":
        return ""
    raise ActionError(f"unknown action {kind!r:.60}")


# -- the loop ------------------------------------------------------------------------------------


class ModelError(Exception):
    pass


_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


class Loop:
    """One conversation with the model, its turns carried out on the desktop."""

    def __init__(self, trial: TrialContext, desktop: Desktop, computer: computer_use.Computer):
        self.trial, self.desktop, self.computer = trial, desktop, computer
        self.env = envtemplate.pass_through(trial.harness.env)
        self.http = httpx.AsyncClient(timeout=httpx.Timeout(300.0, connect=30.0))
        #: What HEMRA read of the model's usage itself (as the model relay does for the
        #: harnesses that call their models from the sandbox): a usage_observed event.
        self.observed = dict.fromkeys(_USAGE_KEYS, 0) | {"model_calls": 0, "unreadable": 0}

    async def post(self, url: str, headers: dict, body: dict) -> dict:
        started = time.monotonic()
        for attempt in range(RETRIES):
            try:
                answer = await self.http.post(url, headers=headers, json=body)
            except httpx.HTTPError as exc:
                problem = f"the model API at {url} cannot be reached: {exc!r:.200}"
            else:
                if answer.status_code == 200:
                    data = answer.json()
                    await self._usage(data.get("usage") or {}, time.monotonic() - started)
                    return data
                problem = f"the model API answered {answer.status_code}: {answer.text[:300]}"
                if answer.status_code != 429 and answer.status_code < 500:
                    break
            await self.trial.events.emit(event("error", "model_call", message=problem, attempt=attempt + 1))
            await asyncio.sleep(min(8.0, 0.5 * 4**attempt))
        raise ModelError(problem)

    async def _usage(self, usage: dict, seconds: float) -> None:
        counted = {k: usage[k] for k in _USAGE_KEYS if isinstance(usage.get(k), int) and usage[k] >= 0}
        self.observed["model_calls"] += 1
        self.observed["unreadable"] += not counted
        for key, value in counted.items():
            self.observed[key] += value
        await self.trial.events.emit(event("usage", "model_call", seconds, model=self.trial.model, **counted))

    async def act(self, name: str, call_id: str, arguments: dict, do) -> tuple[str, bytes, bool]:
        """Carry out one action: (text for the model, screenshot, failed)."""
        await self.trial.events.emit(event("tool_call", name, id=call_id, arguments=arguments))
        started = time.monotonic()
        try:
            said, failed = await do(self.desktop, arguments), False
        except ActionError as exc:
            said, failed = str(exc), True
        image, path = await self.desktop.screenshot(
            settle=arguments.get("action", arguments.get("type")) != "screenshot"
        )
        w, h = png_size(image)
        await self.trial.events.emit(
            event(
                "tool_result",
                name,
                time.monotonic() - started,
                id=call_id,
                output=said,
                is_error=failed,
                screenshot=path,
                width=w,
                height=h,
            )
        )
        return said, image, failed

    async def said(self, text: str) -> None:
        if text:
            await self.trial.events.emit(event("message", "assistant", role="assistant", text=text))

    async def anthropic(self) -> str:
        base = self.env.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com").rstrip("/")
        key = self.env.get("ANTHROPIC_API_KEY", "")
        headers = {"anthropic-version": "2023-06-01", "anthropic-beta": ANTHROPIC_BETA, "x-api-key": key}
        if "ANTHROPIC_AUTH_TOKEN" in self.env:
            headers["authorization"] = f"Bearer {self.env['ANTHROPIC_AUTH_TOKEN']}"
        w, h = self.computer.model_screen
        tool = {"type": ANTHROPIC_TOOL, "name": "computer", "display_width_px": w, "display_height_px": h}
        messages: list[dict] = [{"role": "user", "content": self.trial.task.instruction}]
        for _ in range(self.computer.max_turns):
            body = {"model": self.trial.model, "max_tokens": MAX_TOKENS, "tools": [tool], "messages": _recent(messages)}
            answer = await self.post(f"{base}/v1/messages", headers, body)
            content = answer.get("content") or []
            messages.append({"role": "assistant", "content": content})
            await self.said("".join(b.get("text", "") for b in content if b.get("type") == "text"))
            calls = [b for b in content if b.get("type") == "tool_use"]
            if not calls:
                return answer.get("stop_reason") or "end_turn"
            results = []
            for call in calls:
                if call.get("name") != "computer":
                    said, image, failed = f"no tool named {call.get('name')!r:.60}", b"", True
                else:
                    said, image, failed = await self.act(
                        "computer", call["id"], call.get("input") or {}, anthropic_action
                    )
                parts = [{"type": "text", "text": said}] if said else []
                if image:
                    parts.append(
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _b64(image)}}
                    )
                results.append({"type": "tool_result", "tool_use_id": call["id"], "content": parts, "is_error": failed})
            messages.append({"role": "user", "content": results})
        return "max_turns"

    async def openai(self) -> str:
        base = self.env.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
        headers = {"authorization": f"Bearer {self.env.get('OPENAI_API_KEY', '')}"}
        w, h = self.computer.model_screen
        tool = {"type": "computer_use_preview", "display_width": w, "display_height": h, "environment": "linux"}
        items: list[dict] = [{"role": "user", "content": self.trial.task.instruction}]
        for _ in range(self.computer.max_turns):
            body = {"model": self.trial.model, "tools": [tool], "input": _recent_items(items), "truncation": "auto"}
            answer = await self.post(f"{base}/responses", headers, body)
            output = answer.get("output") or []
            items.extend(output)
            for item in output:
                if item.get("type") == "message":
                    await self.said(
                        "".join(c.get("text", "") for c in item.get("content") or [] if isinstance(c, dict))
                    )
            calls = [i for i in output if i.get("type") == "computer_call"]
            if not calls:
                return answer.get("status") or "completed"
            for call in calls:
                if call.get("pending_safety_checks"):  # acknowledged: the sandbox is what contains it
                    checks = call["pending_safety_checks"]
                    await self.trial.events.emit(
                        event("status", "safety_checks", id=call.get("call_id", ""), checks=checks)
                    )
                _, image, _ = await self.act(
                    "computer", call.get("call_id", ""), call.get("action") or {}, openai_action
                )
                items.append(
                    {
                        "type": "computer_call_output",
                        "call_id": call.get("call_id", ""),
                        "acknowledged_safety_checks": call.get("pending_safety_checks") or [],
                        "output": {"type": "input_image", "image_url": "data:image/png;base64," + _b64(image)},
                    }
                )
        return "max_turns"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _recent(messages: list[dict]) -> list[dict]:
    """The messages with only the RECENT_IMAGES last screenshots as images."""
    seen, out = 0, []
    for message in reversed(messages):
        content = message["content"]
        if isinstance(content, list) and message["role"] == "user":
            results = []
            for block in content:
                parts = []
                for part in block.get("content") or []:
                    if part.get("type") == "image":
                        seen += 1
                        if seen > RECENT_IMAGES:
                            part = {"type": "text", "text": "(an older screenshot, left out)"}
                    parts.append(part)
                results.append(dict(block, content=parts))
            message = dict(message, content=results)
        out.append(message)
    return list(reversed(out))


def _recent_items(items: list[dict]) -> list[dict]:
    """OpenAI's input items with only the RECENT_IMAGES last screenshots (older outputs are
    given a 1x1 image: a computer_call needs its output)."""
    seen, out = 0, []
    for item in reversed(items):
        if item.get("type") == "computer_call_output":
            seen += 1
            if seen > RECENT_IMAGES:
                item = dict(item, output={"type": "input_image", "image_url": "data:image/png;base64," + _b64(_DOT)})
        out.append(item)
    return list(reversed(out))


#: A 1x1 transparent PNG.
_DOT = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")


class ComputerUseDriver(HarnessDriver):
    async def mounts(self, harness) -> dict[str, str]:
        # The harness's folder: its start programs may be scripts of it.
        folder = Path(harness.source_path).parent if harness.source_path else None
        return {HARNESS_MOUNT: str(folder)} if folder is not None and folder.is_dir() else {}

    async def run(self, trial: TrialContext) -> HarnessResult:
        try:
            computer = computer_use.settings(tomllib.loads(trial.harness.source_text))
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            return HarnessResult(HARNESS_FAILED, -1, f"harness {trial.harness.harness_name}: {exc}")
        await trial.events.emit(
            event(
                "status",
                "agent",
                api=computer.api,
                model=trial.model,
                screen=list(computer.screen),
                model_screen=list(computer.model_screen),
                start=list(computer.start),
                env_names=sorted(envtemplate.pass_through(trial.harness.env)),
            )
        )
        desktop = Desktop(trial, computer)
        started = time.monotonic()
        problem = await desktop.start()
        await trial.events.emit_own(
            event("status", "desktop", time.monotonic() - started, problem=problem, window_shown=desktop.window_shown)
        )
        if problem:
            return HarnessResult(HARNESS_FAILED, -1, problem)
        loop = Loop(trial, desktop, computer)
        try:
            work = loop.anthropic() if computer.api == "anthropic" else loop.openai()
            ended = await asyncio.wait_for(work, max(0.1, trial.timeout - (time.monotonic() - started)))
        except TimeoutError:
            return HarnessResult(TIMED_OUT, -1, f"the computer-use harness timed out after {trial.timeout:g} s")
        except ModelError as exc:
            return HarnessResult(HARNESS_FAILED, -1, str(exc))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            return HarnessResult(HARNESS_FAILED, -1, f"the model answered outside its API's schema: {exc!r:.300}")
        finally:
            await loop.http.aclose()
            if loop.observed["model_calls"]:
                await trial.events.emit_own(event(vocabulary.USAGE_OBSERVED, "computer-use", **loop.observed))
        await trial.events.emit(
            event("status", "stop", time.monotonic() - started, stop_reason=ended, screenshots=desktop.shots)
        )
        return HarnessResult(COMPLETED, 0)


__all__ = ["ComputerUseDriver", "Scale", "png_size"]
