"""The host sandbox: bubblewrap gives each command of an attempt a private root built on a
tmpfs, with the host's /usr and /etc read-only and the task's paths (/app, /logs, /tests,
/solution, /tmp, /root, ...) bound from the attempt's own folder. Concurrent attempts never
see each other's files and nothing reaches the host's real /app.

Against the agent under test (and the verifier: both run the same way):

- Each command is its own bwrap, with its own PID, IPC, UTS, cgroup and network namespaces:
  it sees no process of the host's or of its other commands, and everything it started dies
  with it.
- When HEMRA runs as root, bwrap alone would keep every capability inside (a remount of
  /usr read-write is one `mount` away). So the command runs as an unprivileged user, a uid
  of the attempt's own above SANDBOX_UID (attempt_owner), with no capability left, an empty
  bounding set and no_new_privs (setpriv, from util-linux). The attempt's folders are given
  to that user. As another user, bwrap runs in a user namespace that already drops every
  capability.
- Every command runs under a seccomp filter (sandboxes/seccomp.py): keyrings, ptrace, mounts, new
  namespaces, modules and the like are refused. With keyctl, add_key and request_key
  refused, the kernel keyrings the host's processes share are out of reach.
- A SandboxError (an infrastructure failure) comes from HEMRA's own channels only: bwrap's
  status pipe (it ran the command or not) and the relay launcher's pipe, both closed before
  the command runs. What a command prints or exits with is its result.
- The network is loopback only. The harness's declared model endpoints are relayed (see
  sandboxes/relay.py): relay.js, run by the host's node inside the command's own network namespace,
  listens on the endpoint's loopback address and port and pipes each connection to a Unix
  socket of the executor, which forwards it to the real endpoint. Names resolve to those
  addresses through a generated /etc/hosts. Nothing else is reachable, the host's own
  loopback services included. (`network="host"` shares the host's network instead.)
- Files HEMRA opens on the agent's behalf (read_file, write_files, remove_path, list_files,
  file_size, the copies of `fresh`) are walked inside the attempt's folder with safefs,
  never through a link the agent planted; other paths (/usr, /etc, /proc, a mount, a
  path through a link) are read by `cat` inside the sandbox, as the sandbox's user.

The modules: sandbox.py (the life cycle), users.py (the user commands run as), bwrap.py (each
command's bwrap line and the relay's launch), commands.py (running a command, and its kill),
files.py (the attempt's files).
"""

from hemra.services.executor.sandboxes.host.bwrap import bwrap_path
from hemra.services.executor.sandboxes.host.commands import MAX_OUTPUT_BYTES
from hemra.services.executor.sandboxes.host.sandbox import HostSandbox
from hemra.services.executor.sandboxes.host.users import (
    SANDBOX_UID,
    UID_LOCKS,
    attempt_owner,
    etc_files,
    run_as,
    sandbox_owner,
    setpriv_path,
)

__all__ = [
    "MAX_OUTPUT_BYTES",
    "SANDBOX_UID",
    "UID_LOCKS",
    "HostSandbox",
    "attempt_owner",
    "bwrap_path",
    "etc_files",
    "run_as",
    "sandbox_owner",
    "setpriv_path",
]
