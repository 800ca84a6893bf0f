"""The host sandbox: bubblewrap gives each attempt a private root built on a tmpfs,
with the host's /usr and /etc read-only and the task's paths (/app, /logs, /tests,
/solution, ...) bound from the attempt's own folder. Concurrent attempts never see
each other's files and nothing reaches the host's real /app.

It shares the host's network (agents must reach their model APIs), so it does
not enforce network_block; choose a container sandbox for that.
"""

import asyncio
import os
import shutil
import time
from pathlib import Path

from services.executor.processes import feed_stdin
from services.executor.processes import kill_group
from services.executor.sandboxes.base import ENFORCES, ExecResult, Sandbox, SandboxError

#: Folders every attempt gets, bound read-write from the attempt folder.
_BASE_DIRS = ("/logs/agent", "/logs/verifier", "/logs/artifacts", "/tests", "/solution", "/tmp", "/root")
#: Top-level host folders shared read-only; nothing may be written under them.
_SYSTEM = {"usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "proc", "dev", "sys"}
_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: Cap on captured output per command; the rest is dropped (the files stay whole).
MAX_OUTPUT_BYTES = 16 * 1024 * 1024


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxError("the host sandbox needs bubblewrap (bwrap): apt-get install bubblewrap")
    return path


class HostSandbox(Sandbox):
    enforces = ENFORCES["host"]

    def __init__(self, attempt_id: str, task, task_dir: Path, work_root: Path,
                 mounts: dict[str, str] | None = None):
        self.task = task
        self.task_dir = task_dir
        self.folder = work_root / attempt_id
        self.root = self.folder / "root"
        self.workdir = task.environment.workdir or "/"
        self.env = dict(task.environment.env)
        self.mounts = dict(mounts or {})
        self._processes: set[asyncio.subprocess.Process] = set()

    async def prepare(self) -> None:
        await asyncio.to_thread(self._prepare_files)

    def _prepare_files(self) -> None:
        if self.folder.exists():
            shutil.rmtree(self.folder)
        for path in (*_BASE_DIRS, self.workdir):
            self.host_path(path, for_write=True).mkdir(parents=True, exist_ok=True)
        environment = self.task_dir / "environment"
        for copy in self.task.environment.copies:
            _copy_into(environment / copy.source, self.host_path(copy.destination.rstrip("/") or "/", for_write=True),
                       copy.destination.endswith("/"))

    def host_path(self, path: str, for_write: bool = False) -> Path:
        """Where a sandbox path lives on the host. PermissionError for system folders."""
        if not path.startswith("/"):
            path = self.workdir.rstrip("/") + "/" + path
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise PermissionError(f"{path}: '..' is not allowed in sandbox paths")
        if not parts or parts[0] in _SYSTEM:
            if for_write or not parts:
                raise PermissionError(f"{path}: read-only in the host sandbox")
            return Path("/", *parts)
        return self.root.joinpath(*parts)

    def _bwrap_args(self, cwd: str, env: dict[str, str]) -> list[str]:
        args = [bwrap_path(), "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                "--hostname", "hemra", "--tmpfs", "/", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            host = Path("/") / name
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), f"/{name}"]
            elif host.is_dir():
                args += ["--ro-bind", str(host), f"/{name}"]
        args += ["--dev", "/dev", "--proc", "/proc"]
        for top in sorted(os.listdir(self.root)):
            args += ["--bind", str(self.root / top), f"/{top}"]
        for inside, host in sorted(self.mounts.items()):
            args += ["--ro-bind", host, inside]
        args += ["--chdir", cwd or self.workdir, "--clearenv"]
        for key, value in {"PATH": _PATH, "HOME": "/root", "LANG": "C.UTF-8", **self.env, **env}.items():
            args += ["--setenv", key, value]
        return args

    async def exec(self, command, cwd="", env=None, timeout=None, stdin=b"", on_output=None):
        args = self._bwrap_args(cwd, env or {}) + ["--", "bash", "-c", command]
        started = time.monotonic()
        try:
            process = await asyncio.create_subprocess_exec(
                *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise SandboxError(f"cannot start bubblewrap: {exc}") from None
        self._processes.add(process)
        timed_out = False
        try:
            out, err = await asyncio.wait_for(_communicate(process, stdin, on_output), timeout)
        except asyncio.TimeoutError:
            timed_out = True
            kill_group(process)
            out, err = await _communicate(process, b"")
        except asyncio.CancelledError:
            kill_group(process)
            raise
        finally:
            self._processes.discard(process)
        code = await process.wait()
        if code != 0 and not timed_out and err.startswith(b"bwrap:"):
            raise SandboxError(f"bubblewrap failed: {err.decode(errors='replace').strip()}")
        return ExecResult(code, out, err, timed_out, time.monotonic() - started)

    async def read_file(self, path):
        return await asyncio.to_thread(self.host_path(path).read_bytes)

    async def write_files(self, files):
        def write():
            for path, content, executable in files:
                target = self.host_path(path, for_write=True)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
                target.chmod(0o755 if executable else 0o644)
        await asyncio.to_thread(write)

    async def remove_path(self, path):
        target = self.host_path(path, for_write=True)

        def remove():
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)
        await asyncio.to_thread(remove)

    async def list_files(self, folder):
        base = self.host_path(folder)

        def walk():
            if not base.is_dir():
                return []
            return sorted(folder.rstrip("/") + "/" + p.relative_to(base).as_posix()
                          for p in base.rglob("*") if p.is_file() and not p.is_symlink())
        return await asyncio.to_thread(walk)

    async def kill(self):
        for process in list(self._processes):
            kill_group(process)

    async def teardown(self):
        await self.kill()
        await asyncio.to_thread(shutil.rmtree, self.folder, True)


def _copy_into(source: Path, destination: Path, into_folder: bool) -> None:
    """Docker's COPY rules: a folder's contents go into the destination; a file
    goes into it when it ends in '/', else becomes it."""
    if source.is_dir():
        shutil.copytree(source, destination, dirs_exist_ok=True, symlinks=True)
    else:
        target = destination / source.name if into_folder else destination
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


async def _communicate(process: asyncio.subprocess.Process, stdin: bytes,
                       on_output=None) -> tuple[bytes, bytes]:
    async def read(stream, name: str) -> bytes:
        chunks, size = [], 0
        while chunk := await stream.read(65536):
            if on_output is not None:
                await on_output(name, chunk)
            if size < MAX_OUTPUT_BYTES:
                chunks.append(chunk[: MAX_OUTPUT_BYTES - size])
            size += len(chunk)
        return b"".join(chunks)

    _, out, err = await asyncio.gather(feed_stdin(process, stdin), read(process.stdout, "stdout"),
                                         read(process.stderr, "stderr"))
    return out, err
