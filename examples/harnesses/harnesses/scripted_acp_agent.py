"""A scripted Agent Client Protocol agent: JSON-RPC 2.0 over stdio, Python standard library only.

It has no model. On session/prompt it picks the script of scripts/ whose
"recognise" phrase appears in the prompt, and plays its steps through the
client's own methods: "say" as agent_message_chunk updates, "read" with
fs/read_text_file, "write" with fs/write_text_file, "run" with terminal/create and terminal/wait_for_exit,
each command announced as a tool_call and first put to the client with
session/request_permission. A refused command is skipped; a failed one ends
the turn. session/cancel kills the running command and ends the turn with
stopReason "cancelled".

    python3 scripted_acp_agent.py [--scripts DIR]
"""

import itertools
import json
import sys
import threading
from pathlib import Path

VERSION = "1.0.0"
SCRIPTS = Path(__file__).resolve().parent / "scripts"


class Connection:
    """Newline-delimited JSON-RPC on stdin/stdout; requests to the client wait for their answers."""

    def __init__(self):
        self._ids = itertools.count(1)
        self._answers: dict[int, dict] = {}
        self._arrived = threading.Condition()
        self._write = threading.Lock()
        self.cancelled = threading.Event()

    def send(self, message: dict) -> None:
        with self._write:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            sys.stdout.flush()

    def request(self, method: str, params: dict) -> dict:
        request_id = next(self._ids)
        self.send({"id": request_id, "method": method, "params": params})
        with self._arrived:
            self._arrived.wait_for(lambda: request_id in self._answers)
            answer = self._answers.pop(request_id)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error'].get('message')}")
        return answer.get("result") or {}

    def update(self, session_id: str, update: dict) -> None:
        self.send({"method": "session/update", "params": {"sessionId": session_id, "update": update}})

    def answered(self, message: dict) -> None:
        with self._arrived:
            self._answers[message["id"]] = message
            self._arrived.notify_all()


def pick_script(scripts: Path, prompt: str) -> dict | None:
    for path in sorted(scripts.glob("*/steps.json")):
        script = json.loads(path.read_text(encoding="utf-8"))
        if script.get("recognise") and script["recognise"] in prompt:
            return dict(script, folder=path.parent)
    return None


def play(conn: Connection, session_id: str, prompt: str, scripts: Path) -> str:
    """One turn; its stopReason."""
    def say(text: str) -> None:
        conn.update(session_id, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})

    script = pick_script(scripts, prompt)
    if script is None:
        say("I have no script for this task.")
        return "end_turn"
    for number, step in enumerate(script["steps"], 1):
        if conn.cancelled.is_set():
            return "cancelled"
        if "say" in step:
            say(step["say"])
        if "read" in step:
            call = f"read-{number}"
            conn.update(session_id, {"sessionUpdate": "tool_call", "toolCallId": call, "title": f"Read {step['read']}",
                                     "kind": "read", "status": "in_progress", "rawInput": {"path": step["read"]}})
            content = conn.request("fs/read_text_file", {"sessionId": session_id, "path": step["read"]})["content"]
            conn.update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed",
                                     "content": [{"type": "content", "content": {"type": "text", "text": content}}]})
        if "write" in step:
            call = f"write-{number}"
            content = (script["folder"] / step["from"]).read_text(encoding="utf-8")
            conn.update(session_id, {"sessionUpdate": "tool_call", "toolCallId": call, "title": f"Write {step['write']}",
                                     "kind": "edit", "status": "in_progress",
                                     "rawInput": {"path": step["write"], "chars": len(content)}})
            conn.request("fs/write_text_file", {"sessionId": session_id, "path": step["write"], "content": content})
            conn.update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed"})
        if "run" in step:
            stop = run(conn, session_id, f"run-{number}", step["run"])
            if stop:
                return stop
    return "end_turn"


def run(conn: Connection, session_id: str, call: str, command: str) -> str | None:
    """Run one command in a client terminal, after asking; a stopReason when the turn must end."""
    tool = {"toolCallId": call, "title": command[:80], "kind": "execute", "rawInput": {"command": command}}
    conn.update(session_id, {"sessionUpdate": "tool_call", "status": "pending", **tool})
    answer = conn.request("session/request_permission", {"sessionId": session_id, "toolCall": tool, "options": [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"}]})
    if answer.get("outcome", {}).get("optionId") != "allow":
        conn.update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "failed",
                                 "content": [{"type": "content", "content": {"type": "text", "text": "refused"}}]})
        return None
    terminal = conn.request("terminal/create", {"sessionId": session_id, "command": "bash", "args": ["-c", command]})
    terminal_id = terminal["terminalId"]
    waiter = threading.Thread(target=lambda: conn.cancelled.wait() and conn.request(
        "terminal/kill", {"sessionId": session_id, "terminalId": terminal_id}), daemon=True)
    waiter.start()
    status = conn.request("terminal/wait_for_exit", {"sessionId": session_id, "terminalId": terminal_id})
    output = conn.request("terminal/output", {"sessionId": session_id, "terminalId": terminal_id})["output"]
    conn.request("terminal/release", {"sessionId": session_id, "terminalId": terminal_id})
    ok = status.get("exitCode") == 0
    conn.update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": call,
                             "status": "completed" if ok else "failed", "rawOutput": {"exit": status},
                             "content": [{"type": "content", "content": {"type": "text", "text": output[-2000:]}}]})
    if conn.cancelled.is_set():
        return "cancelled"
    return None if ok else "end_turn"


def serve(scripts: Path) -> None:
    conn = Connection()
    sessions = itertools.count(1)

    def prompt(message: dict) -> None:
        params = message["params"]
        text = "".join(block.get("text", "") for block in params["prompt"] if block.get("type") == "text")
        try:
            stop = play(conn, params["sessionId"], text, scripts)
            conn.send({"id": message["id"], "result": {"stopReason": stop}})
        except Exception as exc:  # the turn fails; the agent lives on
            conn.send({"id": message["id"], "error": {"code": -32603, "message": str(exc)}})

    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method = message.get("method")
        if method is None:
            conn.answered(message)
        elif method == "initialize":
            conn.send({"id": message["id"], "result": {
                "protocolVersion": 1, "agentCapabilities": {"loadSession": False}, "authMethods": [],
                "agentInfo": {"name": "hemra-scripted-acp", "title": "Scripted ACP agent", "version": VERSION}}})
        elif method == "session/new":
            conn.send({"id": message["id"], "result": {"sessionId": f"session-{next(sessions)}"}})
        elif method == "session/prompt":
            conn.cancelled.clear()
            threading.Thread(target=prompt, args=(message,), daemon=True).start()
        elif method == "session/cancel":
            conn.cancelled.set()
        elif "id" in message:
            conn.send({"id": message["id"], "error": {"code": -32601, "message": f"method not found: {method}"}})


if __name__ == "__main__":
    folder = Path(sys.argv[sys.argv.index("--scripts") + 1]) if "--scripts" in sys.argv else SCRIPTS
    serve(folder)
