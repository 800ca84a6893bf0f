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
- Every command runs under a seccomp filter (seccomp.py): keyrings, ptrace, mounts, new
  namespaces, modules and the like are refused. With keyctl, add_key and request_key
  refused, the kernel keyrings the host's processes share are out of reach.
- A SandboxError (an infrastructure failure) comes from HEMRA's own channels only: bwrap's
  status pipe (it ran the command or not) and the relay launcher's pipe, both closed before
  the command runs. What a command prints or exits with is its result.
- The network is loopback only. The harness's declared model endpoints are relayed (see
  relay.py): relay.js, run by the host's node inside the command's own network namespace,
  listens on the endpoint's loopback address and port and pipes each connection to a Unix
  socket of the executor, which forwards it to the real endpoint. Names resolve to those
  addresses through a generated /etc/hosts. Nothing else is reachable, the host's own
  loopback services included. (`network="host"` shares the host's network instead.)
- Files HEMRA opens on the agent's behalf (read_file, write_files, remove_path, list_files,
  file_size, the copies of `fresh`) are walked inside the attempt's folder with safefs,
  never through a link the agent planted; other paths (/usr, /etc, /proc, a mount, a
  path through a link) are read by `cat` inside the sandbox, as the sandbox's user.
"""

import asyncio
import contextlib
import fcntl
import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

from services.environments.capabilities import ENFORCES
from services.executor.processes import feed_stdin, kill_group, running, start_time
from services.executor.sandboxes import safefs, seccomp
from services.executor.sandboxes.base import ExecResult, Sandbox, SandboxError, discard, remove_later
from services.executor.sandboxes.relay import RELAY_INSIDE, SCRIPT, SOCKETS_INSIDE, Relay

#: Folders every attempt gets, bound read-write from the attempt folder.
_BASE_DIRS = ("/logs/agent", "/logs/verifier", "/logs/artifacts", "/tests", "/solution", "/tmp", "/root")
#: Top-level host folders shared read-only (or made by bwrap); nothing may be written under them.
_SYSTEM = {"usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "proc", "dev", "sys"}
_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: Cap on captured output per command; the rest is dropped (the files stay whole).
MAX_OUTPUT_BYTES = 16 * 1024 * 1024
#: The user commands run as when HEMRA runs as root (HEMRA_SANDBOX_UID overrides it; the group
#: is the same number). Not `nobody`: daemons of the host share that one, and an agent must own
#: nothing of the host's, nor anything of the host own its files. Far above the ranges useradd
#: (< 60000) and /etc/subuid (100000 + 65536 per user) hand out, below 2^31 for tools that keep
#: uids signed. It gets a passwd entry inside the sandbox only (home /root). Each HostSandbox
#: runs as a uid of its own above it (see attempt_owner); bench's scripts run as this one.
SANDBOX_UID = 2_000_000_000
#: How many uids attempts draw theirs from: SANDBOX_UID + 1 up to 2^31 - 2.
_UID_SPAN = 2**31 - 2 - SANDBOX_UID
#: The uids of live attempts, locked host-wide: every executor of the host uses this folder,
#: whatever its work root, so two attempts never share a uid while both live.
UID_LOCKS = Path("/run/hemra-sandbox-uids")
#: A read through the sandbox (`cat` as its user) of a file that does not end.
_READ_TIMEOUT_SECS = 30.0
#: How long a killed command's output may take to close (its whole namespace is dead by then).
_DRAIN_SECS = 10.0
#: Where a command's relay writes its ready file and errors: a tmpfs of that command's own.
_RELAY_RUN = "/run/hemra-relay-run"
_RELAY_READY_TRIES = 2000  # x 10 ms


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxError("the host sandbox needs bubblewrap (bwrap): apt-get install bubblewrap")
    return path


def setpriv_path() -> str:
    path = shutil.which("setpriv", path=_PATH)
    if path is None or not path.startswith("/usr/"):  # it must be there inside the sandbox too
        raise SandboxError(
            "the host sandbox needs setpriv (util-linux) in /usr/bin when HEMRA runs as root "
            "(or when it relays model endpoints)"
        )
    return path


def sandbox_owner() -> tuple[int, int] | None:
    """(uid, gid) commands run as, when HEMRA runs as root; None otherwise (bwrap's user
    namespace keeps HEMRA's own uid and drops every capability)."""
    if os.geteuid() != 0:
        return None
    configured = os.environ.get("HEMRA_SANDBOX_UID", "")
    try:
        uid = int(configured) if configured else SANDBOX_UID
    except ValueError:
        raise SandboxError(f"HEMRA_SANDBOX_UID={configured!r} is not a number") from None
    if not 0 < uid < 2**32 - 1:
        raise SandboxError(f"HEMRA_SANDBOX_UID={uid}: the sandbox user must not be root")
    return uid, uid


def attempt_owner() -> tuple[tuple[int, int] | None, int | None]:
    """(uid, gid) an attempt's commands run as, and the lock that keeps them its own (None
    when HEMRA is not root, or when HEMRA_SANDBOX_UID pins one uid for every attempt).

    Each attempt draws a uid at random above SANDBOX_UID and holds an flock on a file named by
    it under UID_LOCKS until its teardown (or until HEMRA's process ends: the kernel drops the
    lock). A uid drawn by a live attempt is drawn again; one 148 million wide range makes it
    unlikely that an ended attempt's uid comes back soon, though nothing of it would remain to
    reach: its processes are killed and its folder is never bound into another attempt."""
    owner = sandbox_owner()
    if owner is None or os.environ.get("HEMRA_SANDBOX_UID"):
        return owner, None
    uid, lock = _lock_uid()
    return (uid, uid), lock


def _lock_uid() -> tuple[int, int]:
    UID_LOCKS.mkdir(mode=0o700, exist_ok=True)
    folder = os.lstat(UID_LOCKS)
    if not os.path.isdir(UID_LOCKS) or os.path.islink(UID_LOCKS) or folder.st_uid != 0:
        raise SandboxError(f"{UID_LOCKS}: not a folder of root's")
    for _ in range(100):
        uid = SANDBOX_UID + 1 + secrets.randbelow(_UID_SPAN)
        path = UID_LOCKS / str(uid)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # The file may have been removed by the attempt that released it, between our open and lock.
            if os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False)):
                return uid, fd
        except (BlockingIOError, FileNotFoundError):
            pass
        os.close(fd)
    raise SandboxError(f"no free sandbox uid found under {UID_LOCKS}")


def _unlock_uid(uid: int, lock: int) -> None:
    with contextlib.suppress(FileNotFoundError):
        (UID_LOCKS / str(uid)).unlink()  # while still locked: no other attempt holds this file
    os.close(lock)


def run_as(owner: tuple[int, int] | None) -> list[str]:
    """What each command runs under: setpriv to the sandbox user (`owner`, when HEMRA is root),
    with no capability left, an empty bounding set and no_new_privs."""
    return [*_setpriv(owner), "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def _setpriv(owner: tuple[int, int] | None) -> list[str]:
    user = [setpriv_path()]
    if owner is not None:
        uid, gid = owner
        user += [f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
    return user


def etc_files(owner: tuple[int, int]) -> dict[str, str]:
    """The passwd and group files bound over the host's: the host's entries, with the sandbox
    user's own in place of any of its number."""
    uid, gid = owner
    files = {}
    for name, line, number in (
        ("passwd", f"hemra:x:{uid}:{gid}:HEMRA sandbox:/root:/bin/bash", uid),
        ("group", f"hemra:x:{gid}:", gid),
    ):
        try:
            lines = Path("/etc", name).read_text().splitlines()
        except OSError:
            lines = []
        kept = [entry for entry in lines if entry.split(":")[2:3] != [str(number)]]
        files[name] = "\n".join([*kept, line]) + "\n"
    return files


class HostSandbox(Sandbox):
    enforces = ENFORCES["host"]

    def __init__(
        self,
        attempt_id: str,
        task,
        task_dir: Path,
        work_root: Path,
        mounts: dict[str, str] | None = None,
        endpoints=None,
        network: str = "",
    ):
        self.attempt_id = attempt_id
        self.task = task
        self.task_dir = task_dir
        self.work_root = work_root
        self.folder = work_root / attempt_id
        self.root = self.folder / "root"
        #: Files bound over the host's /etc ones (passwd, group, hosts); outside the agent's reach.
        self.etc = self.folder / "etc"
        self.workdir = task.environment.workdir or "/"
        self.env = dict(task.environment.env)
        self.mounts = dict(mounts or {})
        #: "host": the commands share the host's network (no relay needed, no network_block).
        self.network = network or "none"
        if self.network == "host":
            self.enforces = ENFORCES["host"] - {"network_block"}
        self.relay = Relay(endpoints if self.network != "host" else (), "host")
        #: The model relay serves the harness phase only; stop_processes ends it.
        self._relay_allowed = True
        self.owner, self._uid_lock = attempt_owner()
        self._processes: set[asyncio.subprocess.Process] = set()
        self.not_carried: list[str] = []
        #: The verifier's sandbox (reserve_fresh): True until prepare starts making it.
        self._spare: bool | asyncio.Future | None = None

    # --- life cycle -------------------------------------------------------
    async def prepare(self) -> None:
        await self.relay.open()  # first: /etc/hosts names its listeners
        await asyncio.to_thread(self._prepare_all)
        if self._spare is not None:  # the verifier's sandbox is made while the harness works
            self._spare = asyncio.ensure_future(self._spare_sandbox())

    def reserve_fresh(self, carry: list[str]) -> None:
        self._spare = True  # what to carry is copied over by fresh()

    async def _spare_sandbox(self) -> "HostSandbox":
        # A uid of its own: nothing the agent's user left running or made may touch the verifier's.
        other = HostSandbox(
            f"{self.attempt_id}-verifier", self.task, self.task_dir, self.work_root, network=self.network
        )
        try:
            await other.prepare()
        except BaseException:
            await other.teardown()
            raise
        return other

    def _prepare_all(self) -> None:
        self._prepare_files()
        self._write_etc()

    def _prepare_files(self) -> None:
        if self.folder.exists():
            shutil.rmtree(self.folder)
        self.root.mkdir(parents=True)
        self.folder.chmod(0o700)  # no other user of the host walks into an attempt's files
        self.etc.mkdir()
        self._make_dirs()
        environment = (self.task_dir / "environment").resolve()
        for copy in self.task.environment.copies:
            source = (environment / copy.source).resolve()
            # A task's copy reads its own folder, never a host path through '..' or a link.
            if source != environment and environment not in source.parents:
                raise SandboxError(f"task copy {copy.source!r}: outside the task's environment folder")
            _copy_into(
                source,
                self.host_path(copy.destination.rstrip("/") or "/", for_write=True),
                copy.destination.endswith("/"),
            )
        if self.owner is not None:
            for top in os.listdir(self.root):
                safefs.chown_tree(self.root, top, self.owner)
            for host in self.mounts.values():
                _open_to_others(Path(host))

    def _make_dirs(self) -> None:
        for path in (*_BASE_DIRS, self.workdir):
            try:
                safefs.make_folders(self.root, path, self.owner)
            except (safefs.LinkRefused, NotADirectoryError):  # a carried link stays one
                pass

    def _write_etc(self) -> None:
        if self.relay.extra_hosts():
            (self.etc / "hosts").write_text(self.relay.hosts())
        if self.owner is None:
            return
        for name, text in etc_files(self.owner).items():
            (self.etc / name).write_text(text)

    async def kill(self):
        for process in list(self._processes):
            _kill_command(process)

    async def stop_processes(self) -> None:
        """Each command is a PID namespace of its own, whose processes the kernel kills when its
        init (bwrap's) dies: kill every command still running, and wait until each namespace's
        init is gone."""
        self._relay_allowed = False
        processes = list(self._processes)
        inits = [init for process in processes for init in _children(process.pid)]
        for process in processes:
            _kill_command(process)
        deadline = time.monotonic() + 10
        for process in processes:
            try:
                await asyncio.wait_for(process.wait(), max(deadline - time.monotonic(), 0.1))
            except TimeoutError:
                raise SandboxError(f"sandbox {self.attempt_id}: bubblewrap {process.pid} survived its kill") from None
        while any(running(*init) for init in inits):
            if time.monotonic() > deadline:
                raise SandboxError(f"sandbox {self.attempt_id}: a command's processes survived the kill")
            await asyncio.sleep(0.01)
        await self.relay.close()

    async def fresh(self, carry: list[str]) -> "HostSandbox":
        spare, self._spare = self._spare, None
        other = await (spare if isinstance(spare, asyncio.Future) else self._spare_sandbox())

        def copy():
            for path in carry:
                rel = self._own(path)
                if rel is None:
                    raise SandboxError(f"{path}: not a folder of the attempt's own to carry over")
                try:
                    safefs.copy_tree(self.root, rel, other.root, rel, other.owner)
                except (safefs.LinkRefused, NotADirectoryError):  # a folder on its way is the agent's link
                    other.not_carried.append(path)
            other._make_dirs()  # a carried folder that was gone leaves none; the workdir must be

        try:
            await asyncio.to_thread(copy)
        except BaseException:
            await other.teardown()
            raise
        return other

    async def teardown(self):
        spare, self._spare = self._spare, None
        if isinstance(spare, asyncio.Future):  # made for a verifier that never ran
            await discard(spare)
        await self.kill()
        await self.relay.close()
        remove_later(_remove_folder, self.folder, name="hemra-host-rm")
        lock, self._uid_lock = self._uid_lock, None
        if lock is not None:
            _unlock_uid(self.owner[0], lock)

    # --- commands ---------------------------------------------------------
    async def exec(self, command, cwd="", env=None, timeout=None, stdin=b"", on_output=None):
        return await self._run(command, cwd, env or {}, timeout, stdin, on_output)

    def _relaying(self, relay: bool) -> bool:
        return relay and self._relay_allowed and bool(self.relay.listeners)

    def _bwrap_args(self, cwd: str, env: dict[str, str], relaying: bool = False) -> list[str]:
        args = [
            bwrap_path(),
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]
        if self.network != "host":
            args.append("--unshare-net")
        args += ["--hostname", "hemra", "--tmpfs", "/", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for name in ("passwd", "group", "hosts"):
            if (self.etc / name).is_file():
                args += ["--ro-bind", str(self.etc / name), f"/etc/{name}"]
        for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            host = Path("/") / name
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), f"/{name}"]
            elif host.is_dir():
                args += ["--ro-bind", str(host), f"/{name}"]
        args += ["--dev", "/dev", "--proc", "/proc"]
        for top in sorted(os.listdir(self.root)):
            path = self.root / top
            if path.is_symlink():  # a task copy's link: made again inside, never followed on the host
                args += ["--symlink", os.readlink(path), f"/{top}"]
            else:
                args += ["--bind", str(path), f"/{top}"]
        targets = sorted(self.mounts) + ([SOCKETS_INSIDE, f"{RELAY_INSIDE}/node", _RELAY_RUN] if relaying else [])
        for folder in dict.fromkeys(str(p) for t in targets for p in reversed(Path(t).parents) if str(p) != "/"):
            # bwrap would make a mount point's missing parents 0700: the sandbox's user could not pass
            args += ["--perms", "0755", "--dir", folder]
        for inside, host in sorted(self.mounts.items()):
            args += ["--ro-bind", host, inside]
        if relaying:
            args += [
                "--ro-bind",
                str(self.relay.folder),
                SOCKETS_INSIDE,
                "--ro-bind",
                self.relay.node,
                f"{RELAY_INSIDE}/node",
                "--ro-bind",
                str(SCRIPT),
                f"{RELAY_INSIDE}/relay.js",
                "--perms",
                "0777",
                "--tmpfs",
                _RELAY_RUN,
            ]
            if self.owner is None:
                # In bwrap's user namespace: the relay may listen on ports < 1024, and setpriv
                # (CAP_SETPCAP) then empties the bounding set of the relay and of the command.
                args += ["--cap-add", "CAP_NET_BIND_SERVICE", "--cap-add", "CAP_SETPCAP"]
        args += ["--chdir", cwd or self.workdir, "--clearenv"]
        for key, value in {"PATH": _PATH, "HOME": "/root", "LANG": "C.UTF-8", **self.env, **env}.items():
            args += ["--setenv", key, value]
        return args

    def _command(self, command: str, started: int | None) -> list[str]:
        """What bwrap runs: the command, as the sandbox's user without capabilities, after
        the model relay has started in its network namespace when it has endpoints (relaying:
        `started`, a pipe HEMRA reads, is told so, then closed before the command runs)."""
        relaying = started is not None
        if self.owner is None and not relaying:
            return ["bash", "-c", command]  # bwrap's user namespace left it no capability
        user = _setpriv(self.owner)
        drop = run_as(self.owner)
        # The relay only keeps what listening on the endpoint's port needs (it may be below 1024).
        relay_as = [
            *user,
            "--inh-caps=-all,+net_bind_service",
            "--ambient-caps=-all,+net_bind_service",
            "--bounding-set=-all,+net_bind_service",
            "--no-new-privs",
            "--",
        ]
        if not relaying:
            return [*drop, "bash", "-c", command]
        run = _RELAY_RUN
        launch = f"""{shlex.join(relay_as)} /usr/bin/env -i {RELAY_INSIDE}/node {RELAY_INSIDE}/relay.js \\
  {shlex.quote(self.relay.config())} {run}/ready 2>{run}/stderr </dev/null >/dev/null {started}>&- &
i=0
until [ -e {run}/ready ]; do
  if [ -s {run}/stderr ] || [ $i -ge {_RELAY_READY_TRIES} ]; then
    echo "the model relay did not start: $(head -c 500 {run}/stderr)" >&2; exit 125
  fi
  sleep 0.01; i=$((i + 1))
done
echo started >&{started}
exec {shlex.join(drop)} bash -c "$1" {started}>&-
"""
        return ["bash", "-c", launch, "hemra-relay", command]

    async def _run(
        self,
        command: str,
        cwd: str,
        env: dict[str, str],
        timeout: float | None,
        stdin: bytes,
        on_output=None,
        relay: bool = True,
        cap: int = MAX_OUTPUT_BYTES,
    ) -> ExecResult:
        relaying = self._relaying(relay)
        with contextlib.ExitStack() as pipes:
            status, status_end = _pipe(pipes)
            started, started_end = _pipe(pipes) if relaying else (None, None)
            program = _pipe_of(pipes, seccomp.program())
            args = [
                *self._bwrap_args(cwd, env, relaying),
                *("--json-status-fd", str(status_end), "--seccomp", str(program)),
                "--",
                *self._command(command, started_end),
            ]
            keep = (status_end, program) if started_end is None else (status_end, program, started_end)
            return await self._start(args, keep, timeout, stdin, on_output, cap, status, started)

    async def _start(self, args, pass_fds, timeout, stdin, on_output, cap, status: int, started: int | None):
        """Run bwrap; a SandboxError only when HEMRA's own channels say the command never ran:
        bwrap reports `{"exit-code": N}` on its status pipe once it ran the command (never when
        its setup failed), the relay's launcher writes `started` before the command runs.
        The agent can write neither: bwrap closes its status pipe and reads the seccomp program
        before the command runs, the launcher closes `started` before it does."""
        begun = time.monotonic()
        try:
            # An empty environment: bwrap's own (PID 1 inside) must not carry HEMRA's secrets.
            process = await asyncio.create_subprocess_exec(
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                env={},
                pass_fds=pass_fds,
            )
        except OSError as exc:
            raise SandboxError(f"cannot start bubblewrap: {exc}") from None
        self._processes.add(process)
        timed_out = False
        try:
            out, err = await asyncio.wait_for(_communicate(process, stdin, on_output, cap), timeout)
        except TimeoutError:
            timed_out = True
            _kill_command(process)
            try:
                out, err = await asyncio.wait_for(_communicate(process, b"", None, cap), _DRAIN_SECS)
            except TimeoutError:
                raise SandboxError(
                    f"sandbox {self.attempt_id}: a timed-out command's output stayed open after its kill"
                ) from None
        except asyncio.CancelledError:
            _kill_command(process)
            raise
        finally:
            self._processes.discard(process)
        code = await process.wait()
        said = err.decode(errors="replace").strip()
        if code > 0 and not timed_out:  # a negative code: bwrap was killed (by HEMRA's kill)
            if not _ran(_available(status)):
                raise SandboxError(f"bubblewrap failed: {said}")
            if started is not None and not _available(started):
                raise SandboxError(said or "the model relay did not start")
        return ExecResult(code, out, err, timed_out, time.monotonic() - begun)

    # --- files ------------------------------------------------------------
    def _absolute(self, path: str) -> str:
        if not path.startswith("/"):
            path = self.workdir.rstrip("/") + "/" + path
        return "/" + "/".join(safefs.parts_of(path))

    def _mounted(self, path: str) -> bool:
        return any(path == inside or path.startswith(inside.rstrip("/") + "/") for inside in self.mounts)

    def _own(self, path: str) -> str | None:
        """The path relative to the attempt's root when it is in a folder of the attempt's own
        (opened there with safefs); None for the system's paths, mounts and what does not exist."""
        absolute = self._absolute(path)
        parts = safefs.parts_of(absolute)
        if not parts or parts[0] in _SYSTEM or self._mounted(absolute):
            return None
        top = self.root / parts[0]
        if top.is_symlink() or not top.exists():
            return None
        return "/".join(parts)

    def _writable(self, path: str) -> str:
        """The path relative to the attempt's root; PermissionError outside its own folders."""
        absolute = self._absolute(path)
        parts = safefs.parts_of(absolute)
        if not parts or parts[0] in _SYSTEM or self._mounted(absolute) or (self.root / parts[0]).is_symlink():
            raise PermissionError(f"{path}: read-only in the host sandbox")
        return "/".join(parts)

    def host_path(self, path: str, for_write: bool = False) -> Path:
        """Where a path of the attempt's own folders lives on the host (HEMRA's own use, before
        the agent runs: it follows links). PermissionError for the system's folders."""
        return self.root / self._writable(path)

    async def read_file(self, path, limit=None):
        rel = self._own(path)
        if rel is not None:
            try:
                return await asyncio.to_thread(safefs.read, self.root, rel, limit)
            except safefs.LinkRefused:  # a link the agent made: resolved as the agent sees it
                pass
        if limit is None:
            data = await self._inside(path, "cat", MAX_OUTPUT_BYTES + 1)
            if len(data) > MAX_OUTPUT_BYTES:
                raise PermissionError(f"{path}: over {MAX_OUTPUT_BYTES} bytes, read through the sandbox: give a limit")
            return data
        return await self._inside(path, f"head -c {int(limit)}", int(limit))

    async def file_size(self, path):
        rel = self._own(path)
        if rel is not None:
            try:
                return await asyncio.to_thread(safefs.size, self.root, rel)
            except safefs.LinkRefused:
                pass
        return int(await self._inside(path, "stat -L -c %s", 64))

    async def _inside(self, path: str, action: str, cap: int) -> bytes:
        """Run `action file` inside the sandbox as its user, so that permissions, links and
        /proc are the sandbox's own, never the host's."""
        absolute = self._absolute(path)
        quoted = shlex.quote(absolute)
        script = (
            f'f={quoted}; if [ -d "$f" ]; then exit 21; elif [ ! -e "$f" ]; then exit 2; '
            f'elif [ ! -f "$f" ]; then exit 19; elif [ ! -r "$f" ]; then exit 13; fi; '
            f'exec {action} -- "$f"'
        )
        result = await self._run(script, "/", {}, _READ_TIMEOUT_SECS, b"", relay=False, cap=cap)
        if result.exit_code == 0 and not result.timed_out:
            return result.stdout
        if result.exit_code == 2:
            raise FileNotFoundError(f"{path}: no such file")
        if result.exit_code == 21:
            raise IsADirectoryError(f"{path}: a folder")
        if result.exit_code == 19:
            raise FileNotFoundError(f"{path}: not a regular file")
        said = result.stderr.decode(errors="replace").strip()[-200:]
        raise PermissionError(f"{path}: not readable in the sandbox" + (f": {said}" if said else ""))

    async def write_files(self, files):
        targets = [(self._writable(path), content, executable) for path, content, executable in files]

        def write():
            for rel, content, executable in targets:
                safefs.write(self.root, rel, content, 0o755 if executable else 0o644, self.owner)

        await asyncio.to_thread(write)

    async def remove_path(self, path):
        rel = self._writable(path)
        # A top folder is a mount point of every command: emptied, kept.
        await asyncio.to_thread(safefs.remove, self.root, rel, "/" not in rel)

    async def list_files(self, folder):
        base = self._absolute(folder).rstrip("/")
        rel = self._own(folder)
        if rel is not None:  # a link in the way lists nothing: it is never followed
            return [f"{base}/{name}" for name in await asyncio.to_thread(safefs.walk, self.root, rel)]
        script = f"[ -d {shlex.quote(base or '/')} ] && find -P {shlex.quote(base or '/')} -type f -print0"
        result = await self._run(script, "/", {}, _READ_TIMEOUT_SECS, b"", relay=False)
        return sorted(name for name in result.stdout.decode(errors="replace").split("\0") if name)


def _pipe(pipes: contextlib.ExitStack) -> tuple[int, int]:
    """A pipe (read end, write end), both closed when `pipes` closes."""
    ends = os.pipe()
    for fd in ends:
        pipes.callback(os.close, fd)
    return ends


def _pipe_of(pipes: contextlib.ExitStack, data: bytes) -> int:
    """The read end of a pipe that holds `data` (at most a pipe's buffer) and then ends."""
    read, write = os.pipe()
    pipes.callback(os.close, read)
    try:
        os.write(write, data)
    finally:
        os.close(write)
    return read


def _available(fd: int) -> bytes:
    """What a pipe holds now, without waiting for more."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return b""


def _ran(status: bytes) -> bool:
    """Whether bwrap's JSON status says it ran the command (its setup done, its exec made)."""
    for line in status.decode(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            if "exit-code" in json.loads(line):
                return True
    return False


def _copy_into(source: Path, destination: Path, into_folder: bool) -> None:
    """Docker's COPY rules: a folder's contents go into the destination; a file
    goes into it when it ends in '/', else becomes it."""
    if source.is_dir():
        shutil.copytree(source, destination, dirs_exist_ok=True, symlinks=True)
    else:
        target = destination / source.name if into_folder else destination
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def _open_to_others(folder: Path) -> None:
    """A mount (an agent's cached tools folder, made by mkdtemp: 0700) must be readable by the
    sandbox's user: add o+rx to its top folder (what is inside keeps its own permissions)."""
    try:
        mode = folder.stat().st_mode
        if folder.is_dir() and mode & 0o005 != 0o005:
            folder.chmod((mode & 0o7777) | 0o005)
    except OSError:
        pass


def _kill_command(process: asyncio.subprocess.Process) -> None:
    """SIGKILL a command: bubblewrap's group and, by its own PID, the init of the command's PID
    namespace, whose death takes every process of the namespace with it (even one that left
    the group, and whatever the order in which bubblewrap's parent-death signal lands)."""
    inits = _children(process.pid)
    kill_group(process)
    for pid, start in inits:
        if running(pid, start):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _children(pid: int) -> list[tuple[int, str]]:
    """(pid, start time) of a process's children: bwrap's, the init of its PID namespace."""
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split():
                start = start_time(int(child))
                if start:
                    found.append((int(child), start))
    except OSError:
        pass
    return found


def _remove_folder(folder: Path) -> None:
    try:
        shutil.rmtree(folder, ignore_errors=True)
    except RecursionError:  # folders nested deeper than Python recurses: rm walks them, links unfollowed
        subprocess.run(["rm", "-rf", "--", str(folder)], check=False)


async def _communicate(
    process: asyncio.subprocess.Process, stdin: bytes, on_output=None, cap: int = MAX_OUTPUT_BYTES
) -> tuple[bytes, bytes]:
    async def read(stream, name: str) -> bytes:
        chunks, size = [], 0
        while chunk := await stream.read(65536):
            if on_output is not None:
                await on_output(name, chunk)
            if size < cap:
                chunks.append(chunk[: cap - size])
            size += len(chunk)
        return b"".join(chunks)

    _, out, err = await asyncio.gather(
        feed_stdin(process, stdin), read(process.stdout, "stdout"), read(process.stderr, "stderr")
    )
    return out, err
