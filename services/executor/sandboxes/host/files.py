"""Files of the attempt: those of its own folders are opened with safefs inside the attempt's
folder, never through a link the agent planted; the system's paths, mounts and paths through
a link are read by `cat` inside the sandbox, as its user. And the host-side copies and
removals of an attempt's folders."""

import asyncio
import shlex
import shutil
import subprocess
from pathlib import Path

from hemra.services.executor.sandboxes import safefs
from hemra.services.executor.sandboxes.host.commands import MAX_OUTPUT_BYTES

#: Top-level host folders shared read-only (or made by bwrap); nothing may be written under them.
_SYSTEM = {"usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "proc", "dev", "sys"}
#: A read through the sandbox (`cat` as its user) of a file that does not end.
_READ_TIMEOUT_SECS = 30.0


class Files:
    """The HostSandbox's files (a mixin: HostSandbox holds the state)."""

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


def copy_into(source: Path, destination: Path, into_folder: bool) -> None:
    """Docker's COPY rules: a folder's contents go into the destination; a file
    goes into it when it ends in '/', else becomes it."""
    if source.is_dir():
        shutil.copytree(source, destination, dirs_exist_ok=True, symlinks=True)
    else:
        target = destination / source.name if into_folder else destination
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def open_to_others(folder: Path) -> None:
    """A mount (an agent's cached tools folder, made by mkdtemp: 0700) must be readable by the
    sandbox's user: add o+rx to its top folder (what is inside keeps its own permissions)."""
    try:
        mode = folder.stat().st_mode
        if folder.is_dir() and mode & 0o005 != 0o005:
            folder.chmod((mode & 0o7777) | 0o005)
    except OSError:
        pass


def remove_folder(folder: Path) -> None:
    try:
        shutil.rmtree(folder, ignore_errors=True)
    except RecursionError:  # folders nested deeper than Python recurses: rm walks them, links unfollowed
        subprocess.run(["rm", "-rf", "--", str(folder)], check=False)
