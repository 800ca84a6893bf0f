"""The model relay: how an agent in a container without a network reaches exactly its
model endpoints, and nothing else.

A harness driver declares the endpoints its agent calls, as (host, port) pairs taken
from the base URLs it hands the agent. For each one:

- on the host, the executor listens on a Unix socket in a folder of the attempt's own,
  bound read-only into the container at /run/hemra-relay/, and pipes every connection,
  byte for byte, to the real host:port (TLS stays end to end: the agent talks to the
  real server, with its name and certificate);
- in the container, a small relay (relay.js, run by the host's node binary, both bound
  read-only at /opt/hemra/relay/) listens on a loopback address at the endpoint's port
  and pipes each connection to that Unix socket. A host name is mapped to its loopback
  address in the container's /etc/hosts, so the agent keeps its real URL.

The container still has no network interface but loopback: a connection to anything
not declared finds nothing listening.

The executor's side also reads the usage in the endpoint's answers as they pass
(relayusage.py): HEMRA's own count of the agent's model calls and tokens (`usage`), kept
apart from what the agent reports. An https endpoint's TLS cannot be read: its
connections count as unreadable.
"""

import asyncio
import contextlib
import ipaddress
import json
import logging
import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from hemra.services.executor.processes import alive
from hemra.services.executor.sandboxes.base import SandboxError
from hemra.services.executor.sandboxes.relayusage import Observed, Watcher

logger = logging.getLogger(__name__)

#: Where the sockets and the relay itself are bound inside the container.
SOCKETS_INSIDE = "/run/hemra-relay"
RELAY_INSIDE = "/opt/hemra/relay"
SCRIPT = Path(__file__).with_name("relay.js")
#: The host's sockets folders: <temp>/hemra-relay-<executor pid>-<random>.
FOLDER_PREFIX = "hemra-relay-"
#: Host names get loopback addresses of their own (127.77.0.1, ...), so two endpoints on one port never collide.
NAMED_NETWORK = ipaddress.ip_network("127.77.0.0/24")
CONNECT_TIMEOUT_SECS = 30.0
READY_TIMEOUT_SECS = 20
_BUFFER = 64 * 1024
#: Starts the relay in the container; its stderr is kept for the readiness check.
_LAUNCH = 'mkdir -p "$0" && exec "$1" "$2" "$3" "$0/ready" 2>"$0/stderr"'
#: Waits until the relay listens ($0 is its run folder); prints why when it does not.
_WAIT = f"""d="$0"; i=0
while [ $i -lt {READY_TIMEOUT_SECS * 20} ]; do
  [ -e "$d/ready" ] && exit 0
  [ -s "$d/stderr" ] && {{ cat "$d/stderr"; exit 1; }}
  sleep 0.05; i=$((i+1))
done
echo "the model relay did not listen within {READY_TIMEOUT_SECS} s"; cat "$d/stderr" 2>/dev/null; exit 1"""


def endpoint_of(url: str) -> tuple[str, int]:
    """(host, port) of a base URL; the port defaults by scheme (https 443, http 80).

    Raises:
      ValueError: when the URL names no host, or an unknown scheme without a port.
    """
    parts = urlsplit(url)
    if not parts.hostname:
        raise ValueError(f"{url!r} names no host")
    port = parts.port or {"https": 443, "http": 80}.get(parts.scheme.lower())
    if port is None:
        raise ValueError(f"{url!r}: no port, and scheme {parts.scheme!r} has no default")
    return parts.hostname, port


def endpoints_of(urls: dict[str, str]) -> list[tuple[str, int]]:
    """The endpoints of named base URLs ({where it comes from: URL}).

    Raises:
      SandboxError: naming the variable whose URL is unusable.
    """
    found = []
    for name, url in urls.items():
        try:
            found.append(endpoint_of(url))
        except ValueError as exc:
            raise SandboxError(f"{name}: the agent's model URL {exc}") from None
    return found


class Unwatched(tuple):
    """An endpoint relayed without reading usage in its answers: HEMRA's own harness protocol,
    which an sdk harness's program reaches from inside the sandbox (its gRPC is no model call)."""


@dataclass(frozen=True)
class Listener:
    """One endpoint as seen inside: the loopback addresses the relay listens on, and its socket."""

    host: str
    port: int
    socket: str  # file name in the sockets folder
    addresses: tuple[str, ...]  # the first must listen; the others may be missing (IPv6)
    named: bool  # a host name, mapped to addresses[0] in /etc/hosts
    watched: bool = True  # its answers are read for usage (relayusage.py)


def plan(endpoints, sandbox: str = "docker") -> list[Listener]:
    """Listeners for the declared endpoints (deduplicated, in order).

    Raises:
      SandboxError: for an address that is neither loopback nor a host name (the
        container has no route to it, and a relay cannot stand in for it).
    """
    listeners, names = [], {}
    endpoints = list(endpoints)
    unwatched = {(str(e[0]).strip("[]").lower(), int(e[1])) for e in endpoints if isinstance(e, Unwatched)}
    for host, port in dict.fromkeys((str(h).strip("[]").lower(), int(p)) for h, p in endpoints):
        if not 0 < port < 65536:
            raise SandboxError(f"model endpoint {host}:{port}: the port is out of range")
        named = False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            address = None
        if host == "localhost":
            addresses = ("127.0.0.1", "::1")
        elif address is not None and address.is_loopback:
            addresses = (str(address),)
        elif address is not None:
            raise SandboxError(
                f"model endpoint {host}:{port}: the {sandbox} sandbox relays host names and loopback "
                "addresses only (name the endpoint by its host name)"
            )
        else:
            if host not in names:
                if len(names) >= NAMED_NETWORK.num_addresses - 2:
                    raise SandboxError("too many model endpoint host names to relay")
                names[host] = str(NAMED_NETWORK[len(names) + 1])
            addresses, named = (names[host],), True
        watched = (host, port) not in unwatched
        listeners.append(Listener(host, port, f"{len(listeners)}.sock", addresses, named, watched))
    return listeners


class Relay:
    """The relay of one attempt's sandbox: `open` before its container starts, `launch`
    once it runs (and after each restart), `close` at teardown. No endpoints: does nothing."""

    def __init__(self, endpoints=(), sandbox: str = "docker"):
        self.endpoints = list(endpoints or ())
        #: The sandbox kind it serves, named in its errors.
        self.sandbox = sandbox
        self.listeners: list[Listener] = []
        self.folder: Path | None = None
        self.node = ""
        self._servers: list[asyncio.AbstractServer] = []
        self._connections: set[asyncio.Task] = set()
        #: What the endpoints answered on connections that ended, and the ones still open.
        self._seen = Observed()
        self._watchers: set[Watcher] = set()

    async def open(self) -> None:
        """Plan the listeners and listen on their Unix sockets on the host.

        Raises:
          SandboxError: bad endpoints, or no node on the host to run the relay with.
        """
        self.listeners = plan(self.endpoints, self.sandbox)
        if not self.listeners:
            return
        node = shutil.which("node")
        if node is None:
            raise SandboxError(
                f"the {self.sandbox} sandbox relays model endpoints with node, and this host has none (install Node.js)"
            )
        self.node = os.path.realpath(node)
        # Short: a Unix socket's path is limited to 107 bytes.
        self.folder = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-"))
        self.folder.chmod(0o755)
        for listener in self.listeners:
            path = self.folder / listener.socket
            server = await asyncio.start_unix_server(
                lambda r, w, target=(listener.host, listener.port), watched=listener.watched: self._accept(
                    r, w, target, watched
                ),
                path=str(path),
            )
            path.chmod(0o666)  # whatever user the container runs the relay as may connect
            self._servers.append(server)

    def binds(self) -> dict[str, dict]:
        """Docker binds: the sockets folder and the relay's node and script, all read-only."""
        if not self.listeners:
            return {}
        return {
            str(self.folder): {"bind": SOCKETS_INSIDE, "mode": "ro"},
            self.node: {"bind": f"{RELAY_INSIDE}/node", "mode": "ro"},
            str(SCRIPT): {"bind": f"{RELAY_INSIDE}/relay.js", "mode": "ro"},
        }

    def extra_hosts(self) -> dict[str, str]:
        """Host names the container resolves to their relay's loopback address."""
        return {item.host: item.addresses[0] for item in self.listeners if item.named}

    def sysctls(self) -> dict[str, str]:
        """Kernel settings of the container's network namespace: IPv6 on its loopback (off by
        default where the engine has no IPv6) when an endpoint is served at ::1."""
        if any("::1" in item.addresses for item in self.listeners):
            return {"net.ipv6.conf.lo.disable_ipv6": "0"}
        return {}

    def config(self) -> str:
        """relay.js's argument: every listener as JSON (its sockets as seen inside)."""
        return json.dumps(
            [
                {
                    "address": address,
                    "port": item.port,
                    "socket": f"{SOCKETS_INSIDE}/{item.socket}",
                    "optional": index > 0,
                }
                for item in self.listeners
                for index, address in enumerate(item.addresses)
            ]
        )

    def hosts(self) -> str:
        """An /etc/hosts for a sandbox without the container engine's extra_hosts: loopback,
        and each relayed host name at its relay's address."""
        lines = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback"]
        lines += [f"{address}\t{host}" for host, address in self.extra_hosts().items()]
        return "\n".join(lines) + "\n"

    def launch(self, api, container_id: str) -> None:
        """Start the relay in the running container and wait until it listens (blocking).

        Raises:
          SandboxError: when it does not listen (its error is in the message).
        """
        if not self.listeners:
            return
        config = self.config()
        run = f"/tmp/hemra-relay/{uuid.uuid4().hex[:12]}"  # fresh: a restarted container keeps its files
        started = api.exec_create(
            container_id,
            ["sh", "-c", _LAUNCH, run, f"{RELAY_INSIDE}/node", f"{RELAY_INSIDE}/relay.js", config],
            user="0",
            stdout=False,
            stderr=False,
        )
        api.exec_start(started["Id"], detach=True)
        waited = api.exec_create(container_id, ["sh", "-c", _WAIT, run], user="0")
        said = api.exec_start(waited["Id"]).decode(errors="replace").strip()
        if api.exec_inspect(waited["Id"]).get("ExitCode") != 0:
            raise SandboxError(f"the model relay did not start in the container: {said[-500:]}")

    def usage(self) -> dict | None:
        """The usage the endpoints' answers said so far (relayusage.Observed as a dict: tokens,
        model_calls, unreadable), a response under way counted as far as it was read; None
        when nothing is relayed."""
        if not self.listeners:
            return None
        seen = Observed()
        seen.add(self._seen)
        for watcher in self._watchers:
            seen.add(watcher.current())
        return seen.as_dict()

    async def close(self) -> None:
        """Stop listening, cut open connections and remove the sockets. Safe to call twice."""
        servers, self._servers = self._servers, []
        for server in servers:
            server.close()
        for task in list(self._connections):
            task.cancel()
        for server in servers:
            await server.wait_closed()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    async def _accept(self, reader, writer, target: tuple[str, int], watched: bool = True) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        try:
            await self._forward(reader, writer, target, watched)
        finally:
            self._connections.discard(task)

    async def _forward(self, reader, writer, target: tuple[str, int], watched: bool = True) -> None:
        upstream = None
        try:
            try:
                up_reader, upstream = await asyncio.wait_for(asyncio.open_connection(*target), CONNECT_TIMEOUT_SECS)
            except (TimeoutError, OSError) as exc:
                # The agent sees its connection closed, as if the endpoint refused it.
                logger.warning("model relay: cannot reach %s:%s: %s", *target, exc)
                return
            if not watched:
                await asyncio.gather(_pipe(reader, upstream), _pipe(up_reader, writer))
                return
            watcher = Watcher()
            self._watchers.add(watcher)
            try:
                await asyncio.gather(_pipe(reader, upstream), _pipe(up_reader, writer, watcher.feed))
            finally:
                self._watchers.discard(watcher)
                self._seen.add(watcher.close())
        finally:
            for end in (writer, upstream):
                if end is not None:
                    end.close()
                    with contextlib.suppress(Exception):
                        await end.wait_closed()


def remove_orphans() -> list[Path]:
    """Remove the sockets folders of this host's executors that no longer run (killed ones
    could not close their relays). Returns the removed folders."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*-*"):
        pid = folder.name.removeprefix(FOLDER_PREFIX).split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, watch=None) -> None:
    """Copy until the end of `reader`, then end `writer`'s sending side (half-close). `watch`
    (which never raises) sees each piece once it is on its way."""
    try:
        while data := await reader.read(_BUFFER):
            writer.write(data)
            if watch is not None:
                watch(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.transport.abort()
