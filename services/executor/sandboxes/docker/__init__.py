"""The Docker sandbox: each attempt gets a container of its own, from its task's image
(services/environments/images.py), with the task's cpu and
memory limits and no network.

/logs, /tests and /solution are bound from the attempt's folder on the host, so what
the harness logged outlives the container and the verifier's files are read without a
round trip through the engine. Every other path lives in the container's own file
system and is reached through the engine's archive API. Commands run with `docker exec`.

Containers carry labels naming the attempt, the executor's stable identity (its owner)
and its process (host, pid, start time); an executor that starts removes the containers of
its owner's earlier processes that no longer run, never another owner's. The SDK is
blocking, so every call runs in a thread; long streams get threads of their own so they
never hold the event loop's shared pool.

The modules: sandbox.py (the container's life cycle), commands.py (docker exec, and
killing what it started), output.py (reading a command's output), files.py (paths bound
from the host or read through the engine), verifier.py (the verifier's fresh container and
the task's service), network.py (the attempt's own network), cgroups.py, archives.py and
cleanup.py (what killed or finished executors left behind).
"""

from hemra.services.executor.sandboxes.docker.cleanup import remove_orphans, remove_own
from hemra.services.executor.sandboxes.docker.commands import KILL_MARKED, MARKER_VAR
from hemra.services.executor.sandboxes.docker.sandbox import DockerSandbox

__all__ = ["KILL_MARKED", "MARKER_VAR", "DockerSandbox", "remove_orphans", "remove_own"]
