"""The container's files: bound paths read on the host through safefs, the rest through the engine."""

import asyncio
import io
import posixpath
import shlex
import tarfile
import time

from hemra.services.environments.engine import client, docker_errors
from hemra.services.executor.sandboxes import safefs
from hemra.services.executor.sandboxes.docker.archives import ChunkReader

#: Paths bound read-write from the attempt's folder on the host.
BOUND = ("/logs", "/tests", "/solution")


class Files:
    """DockerSandbox's files."""

    def _absolute(self, path: str) -> str:
        if not path.startswith("/"):
            path = self.workdir.rstrip("/") + "/" + path
        return posixpath.normpath(path).replace("//", "/")

    def _host(self, path: str) -> str | None:
        """The path of a bound path relative to the attempt's folder on the host (opened there
        with safefs, never through a link); None for the container's own paths."""
        for top in BOUND:
            if path == top or path.startswith(top + "/"):
                return path.lstrip("/")
        return None

    async def read_file(self, path, limit=None):
        path = self._absolute(path)
        host = self._host(path)
        if host is not None:
            try:
                return await asyncio.to_thread(safefs.read, self.folder, host, limit)
            except safefs.LinkRefused:  # a link the agent made: resolve it as the container sees it
                pass
        return await asyncio.to_thread(self._read_container, path, limit)

    async def file_size(self, path):
        path = self._absolute(path)
        host = self._host(path)
        if host is not None:
            try:
                return await asyncio.to_thread(safefs.size, self.folder, host)
            except safefs.LinkRefused:
                pass
        return len(await self.read_file(path))

    def _read_container(self, path: str, limit: int | None, depth: int = 0) -> bytes:
        """Read through the engine, which resolves every link inside the container's own root."""
        try:
            chunks, _ = client().api.get_archive(self.container_id, path)
        except docker_errors().NotFound:
            raise FileNotFoundError(path) from None
        with tarfile.open(fileobj=ChunkReader(chunks), mode="r|") as tar:
            member = tar.next()
            if member is None:
                raise FileNotFoundError(path)
            if member.issym():
                if depth > 8:
                    raise FileNotFoundError(path)
                target = posixpath.normpath(posixpath.join(posixpath.dirname(path), member.linkname))
                return self._read_container(target, limit, depth + 1)
            if member.isdir():
                raise IsADirectoryError(path)
            if not member.isreg():
                raise FileNotFoundError(f"{path}: not a regular file")
            return tar.extractfile(member).read(-1 if limit is None else limit)

    async def write_files(self, files):
        inside = []
        for path, content, executable in files:
            path = self._absolute(path)
            host = self._host(path)
            if host is None:
                inside.append((path, content, executable))
            else:
                await asyncio.to_thread(safefs.write, self.folder, host, content, 0o755 if executable else 0o644)
        if inside:
            await asyncio.to_thread(self._put, inside)

    def _put(self, files: list[tuple[str, bytes, bool]]) -> None:
        buffer = io.BytesIO()
        now = time.time()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for path, content, executable in files:
                info = tarfile.TarInfo(path.lstrip("/"))
                info.size, info.mode, info.mtime = len(content), 0o755 if executable else 0o644, now
                tar.addfile(info, io.BytesIO(content))
        try:
            client().api.put_archive(self.container_id, "/", buffer.getvalue())
        except docker_errors().APIError as exc:
            raise PermissionError(f"{files[0][0]}: cannot write into the container: {exc.explanation or exc}") from None

    async def remove_path(self, path):
        path = self._absolute(path)
        host = self._host(path)
        if host is not None:
            await asyncio.to_thread(safefs.remove, self.folder, host, path in BOUND)
            return
        if path == "/":
            raise PermissionError("/: cannot remove the container's root")
        result = await self.exec(f"rm -rf -- {shlex.quote(path)}", cwd="/")
        if result.exit_code != 0:
            raise PermissionError(f"{path}: {result.stderr.decode(errors='replace').strip()}")

    async def list_files(self, folder):
        folder = self._absolute(folder)
        host = self._host(folder)
        if host is not None:
            return [folder.rstrip("/") + "/" + name for name in await asyncio.to_thread(safefs.walk, self.folder, host)]
        return await asyncio.to_thread(self._list_container, folder)

    def _list_container(self, folder: str) -> list[str]:
        try:
            chunks, _ = client().api.get_archive(self.container_id, folder.rstrip("/") + "/.")
        except docker_errors().NotFound:
            return []
        with tarfile.open(fileobj=ChunkReader(chunks), mode="r|") as tar:
            names = [m.name for m in tar if m.isreg()]
        base = folder.rstrip("/")
        return sorted(base + "/" + name.split("/", 1)[1] for name in names if "/" in name)
