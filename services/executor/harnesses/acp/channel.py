"""JSON-RPC with the agent: each message a numbered file in the sandbox's channel, fed to its
stdin by a bash relay; its stdout read as it comes."""

import asyncio
import json
import shlex
import time

from hemra.services.executor.events import event, output_events
from hemra.services.executor.harnesses.acp.protocol import (
    CHANNEL,
    INTERNAL,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_LINE_BYTES,
    METHOD_NOT_FOUND,
    TAIL_BYTES,
    AgentExited,
    ChannelBroken,
    Refusal,
    RemoteError,
    json_type,
    last_line,
    raw_json,
    shown,
    valid_id,
)
from hemra.services.executor.harnesses.acp.served import SERVED
from hemra.services.executor.harnesses.cli.base import AGENT_HOME, AGENT_TMP
from hemra.services.executor.sandboxes import SandboxError


def relay_script(argv: list[str]) -> str:
    """Bash that feeds /tmp/hemra-acp/in/<n> to the agent's stdin, in order, until in/close appears.

    A message file counts once it is whole: not empty and ending in a newline
    (each message is one line), so a file caught half-written waits a poll.
    It polls every 20 ms, and every 100 ms after a second without messages."""
    return f"""set -u
CH={CHANNEL}
mkdir -p "$CH/in" {AGENT_HOME} {AGENT_TMP} && mkfifo "$CH/stdin" || exit 125
relay() {{
  local n=1 idle=0 f
  while :; do
    printf -v f '%s/in/%08d' "$CH" "$n"
    if [ -s "$f" ] && [ -z "$(tail -c 1 "$f")" ]; then
      cat "$f" && rm -f "$f" && n=$((n + 1)) && idle=0 || return
    elif [ -e "$CH/in/close" ]; then
      return
    elif [ "$idle" -lt 50 ]; then
      sleep 0.02; idle=$((idle + 1))
    else
      sleep 0.1
    fi
  done
}}
relay > "$CH/stdin" &
relay_pid=$!
{shlex.join(argv)} < "$CH/stdin"
code=$?
kill "$relay_pid" 2>/dev/null
exit "$code"
"""


class Channel:
    """Session's JSON-RPC connection."""

    async def _send(self, message: dict) -> None:
        line = (
            json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "backslashreplace") + b"\n"
        )
        self._log("client->agent", message)
        async with self._send_lock:  # numbered files must appear in order
            try:
                await self.trial.sandbox.write_files([(f"{CHANNEL}/in/{next(self._sent):08d}", line, False)])
            except (OSError, SandboxError) as exc:  # the agent shares the folder: it may have broken it
                raise ChannelBroken(f"cannot write a message into the agent's channel {CHANNEL}: {exc}") from None

    async def request(self, method: str, params: dict) -> dict:
        return await self._wait(await self.start_request(method, params), method)

    async def start_request(self, method: str, params: dict) -> asyncio.Future:
        """Send a request; its answer's future (a RemoteError when the agent answers with an error)."""
        request_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (method, future)
        future.add_done_callback(lambda _: self._pending.pop(request_id, None))
        await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return future

    async def notify(self, method: str, params: dict) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def _wait(self, future: asyncio.Future, method: str) -> dict:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        done, _ = await asyncio.wait({future, self.process}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        if future in done:
            return future.result()
        if self.process in done:
            code = self._exit_code()
            said = last_line(bytes(self._stderr_tail).decode(errors="replace"))
            raise AgentExited(f"the agent exited {code} before answering {method}" + (f": {said}" if said else ""))
        raise TimeoutError

    async def _on_output(self, stream: str, chunk: bytes) -> None:
        if stream != "stdout":
            self._stderr.write(chunk)
            self._stderr_tail += chunk[-TAIL_BYTES:]
            del self._stderr_tail[:-TAIL_BYTES]
            await self.trial.events.emit(*output_events("stderr", chunk))
            return
        for line, whole in self._lines.feed(chunk):
            await self._receive(line, whole)

    async def _receive(self, line: bytes, whole: bool = True) -> None:
        if not whole:  # a piece of an over-long line: output, and one error for the line
            if not self._long_line:
                await self.bad.add(f"a line longer than {MAX_LINE_BYTES} bytes (kept as output, not read)", line)
            self._long_line = not line.endswith(b"\n")
        if not line.strip():
            return
        message, problem = None, "not JSON"
        if whole:
            try:
                message = json.loads(line)
            except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
                message, problem = None, f"not JSON ({type(exc).__name__}: {str(exc)[:200]})"
        if not isinstance(message, dict):
            self._log("agent->client", {"unparsed": line.decode(errors="replace"), "split": not whole})
            await self.trial.events.emit(*output_events("stdout", line.rstrip(b"\n")))
            if whole:
                why = problem if message is None else f"not a JSON object ({json_type(message)})"
                await self.bad.add(f"a message that is {why}", line.rstrip(b"\r\n"))
            return
        self._log("agent->client", message)
        try:
            await self._dispatch(message)
        except (KeyError, TypeError, AttributeError, ValueError, RecursionError) as exc:
            # Data of shapes the schema does not allow, wherever it was read.
            await self.bad.add(f"a message outside the ACP schema: {type(exc).__name__}: {exc}"[:500], line)

    async def _dispatch(self, message: dict) -> None:
        method = message.get("method")
        if "method" not in message:
            request_id = message.get("id")
            known = isinstance(request_id, int) and not isinstance(request_id, bool)
            method, future = self._pending.get(request_id, ("", None)) if known else ("", None)
            if future is None:
                await self.bad.add(f"a response to id {shown(request_id)}, which HEMRA never sent", raw_json(message))
                return
            if future.done():
                return
            if "error" in message:
                error = message["error"] if isinstance(message["error"], dict) else {}
                future.set_exception(
                    RemoteError(
                        f"the agent answered {method} with an error: "
                        f"{shown(error.get('message', ''))} (code {shown(error.get('code'))})"
                    )
                )
            else:
                future.set_result(message.get("result"))
            return
        if not isinstance(method, str):
            await self.bad.add(f"a message whose method is {json_type(method)}, not a string", raw_json(message))
            if "id" in message:
                await self._refuse(message.get("id"), INVALID_REQUEST, "method must be a string")
            return
        if "id" not in message:
            if method == "session/update":
                params = message.get("params")
                update = params.get("update") if isinstance(params, dict) else None
                if not isinstance(update, dict):
                    await self.bad.add("a session/update whose params.update is not an object", raw_json(message))
                    return
                await self._update(update)
            return
        if not valid_id(message["id"]):
            await self.bad.add(f"a request whose id is {json_type(message['id'])}", raw_json(message))
            await self._refuse(None, INVALID_REQUEST, "id must be a string, a number or null")
            return
        handler = asyncio.create_task(self._answer(message))
        self._handlers.add(handler)
        handler.add_done_callback(self._handlers.discard)

    async def _answer(self, message: dict) -> None:
        method, params = message["method"], message.get("params")
        params = {} if params is None else params
        serve = SERVED.get(method)
        try:
            if serve is None:
                raise Refusal(METHOD_NOT_FOUND, f"method not found: {method}")
            if not isinstance(params, dict):
                raise Refusal(INVALID_PARAMS, f"invalid params for {method}: an object is required")
            result = await serve(self, params)
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        except Refusal as refusal:
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": refusal.code, "message": str(refusal)}}
            if refusal.code == INVALID_PARAMS:
                await self.bad.add(str(refusal), raw_json(message))
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
            problem = f"invalid params for {method}: {exc!r}"[:500]
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": INVALID_PARAMS, "message": problem}}
            await self.bad.add(problem, raw_json(message))
        except Exception as exc:  # whatever broke, the agent must not wait for an answer forever
            reply = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": INTERNAL, "message": f"{method} failed: {exc}"},
            }
        try:
            await self._send(reply)
        except ChannelBroken as exc:  # the conversation notices when its own messages fail
            await self.trial.events.emit(event("error", "acp", message=str(exc)))

    async def _refuse(self, request_id, code: int, message: str) -> None:
        try:
            await self._send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})
        except ChannelBroken as exc:
            await self.trial.events.emit(event("error", "acp", message=str(exc)))

    def _log(self, direction: str, message: dict) -> None:
        entry = {"t": round(time.monotonic() - self.started, 3), "dir": direction, "msg": message}
        try:
            line = json.dumps(entry, ensure_ascii=False)
        except (ValueError, RecursionError):  # too deeply nested to write back
            line = json.dumps({**entry, "msg": {"unwritable": True}})
        for name, value in self._hidden.items():  # the MCP servers' variables, by name only
            line = line.replace(json.dumps(value, ensure_ascii=False)[1:-1], "${" + name + "}")
        # Lone surrogates (JSON's "\ud800") as \udXXX: still the same JSON string.
        self._transcript.write(line.encode("utf-8", "backslashreplace") + b"\n")
