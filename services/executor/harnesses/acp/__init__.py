"""kind = "acp": any Agent Client Protocol agent, driven over its stdio with JSON-RPC.

The agent runs inside the attempt's sandbox, so whatever tools of its own it
uses (Claude Code's Bash, Read, Edit, ...) act on the sandbox: an npm package
(`agent`, pinned by `version`) from the cached tools folder mounted read-only
at /opt/hemra/tools, or a `command` of the harness file's folder, mounted
read-only at /opt/hemra/harness. Sandboxes only run commands to completion,
so the two directions of the pipe travel differently: the agent's stdout is
read as it arrives (exec's on_output), and each message to the agent is
written as a numbered file into /tmp/hemra-acp/in, which a small bash relay
inside the sandbox feeds to the agent's stdin in order.

The exchange: initialize (with the fs and terminal client capabilities),
session/new (cwd: the task's working folder), session/prompt (the
instruction). session/update notifications become events;
session/request_permission is answered by the harness file's `permission`
policy; fs/* and terminal/* requests are served from the sandbox. At the
attempt's timeout the driver sends session/cancel, waits a few seconds for
the prompt to end, then kills the agent. The whole JSON-RPC transcript is
kept as the artifact /logs/agent/acp.jsonl (standard error as acp-stderr.txt),
stored by HEMRA directly, never written into the agent's sandbox. The agent
shares the sandbox with the message channel: a channel it broke ends the
attempt as a harness failure, never an infrastructure one. A stdout line longer
than MAX_LINE_BYTES is split into output, never parsed.

Whatever the agent sends is its doing, never an infrastructure failure. A message
that is not one HEMRA can take (not JSON, not an object, a response to an id HEMRA
never sent, a notification or request whose params are not of the schema's shape,
an over-long line) is recorded as an "error" event named "protocol" with the raw
line (escaped, cut at MAX_RAW_BYTES; the first MAX_BAD_MESSAGES, then a count),
and the conversation goes on: a request with bad params is answered with a
JSON-RPC error. An answer to HEMRA's own request outside the schema
(`session/new` without a string sessionId, a `session/prompt` result that is not
an object with a string stopReason, ...) ends the attempt as a harness failure
with that reason; the verifier still scores it.

The modules: driver.py (the harness kind: mounts, endpoints, the agent's program),
session.py (one agent process and its conversation), channel.py (JSON-RPC over the sandbox's
channel), served.py (what HEMRA serves to the agent: permissions, files, terminals) and
protocol.py (the protocol's constants, errors and the checks of the agent's values).
"""

from hemra.services.executor.harnesses.acp.driver import AcpDriver

__all__ = ["AcpDriver"]
