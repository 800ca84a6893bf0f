"""Files of an attempt's folder opened on the agent's behalf, never through a link.

The agent under test owns the files of its folders and may plant symbolic links
in them (`ln -s /etc /logs/artifacts`) or swap a folder for a link while HEMRA
works on it. HEMRA runs as root on many hosts, so following such a link would
read or write the host's files. Every function here takes a trusted root folder
(a path or an open folder fd: HEMRA's own) and a path relative to it, and walks
the path one component at a time with openat(O_NOFOLLOW | O_DIRECTORY) from the
fd of the folder before: a component that is a link is refused (LinkRefused),
never resolved, and a folder swapped for a link after it was opened does not
matter, since HEMRA holds the folder itself, not its name. Leaves are opened
with O_NOFOLLOW, and O_NONBLOCK so that a FIFO never blocks; what was opened is
checked with fstat before its content is used.

Callers that want a link resolved as the agent sees it (a read of a path whose
folder is a link) catch LinkRefused and ask the sandbox itself (`cat` inside).
"""

import errno
import os
import shutil
import stat
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LEAF = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1024 * 1024
#: Folders deeper than this are not walked or copied (each level holds an fd).
MAX_DEPTH = 256

Root = str | Path | int
Owner = tuple[int, int] | None


class LinkRefused(PermissionError):
    """A component of the path is a symbolic link (or not a folder): HEMRA does not follow it."""


def parts_of(rel: str) -> list[str]:
    """The components of a relative path ('' and '.' dropped). PermissionError for '..'."""
    parts = [p for p in str(rel).split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PermissionError(f"{rel}: '..' is not allowed")
    return parts


def _open_root(root: Root) -> int:
    if isinstance(root, int):
        return os.dup(root)
    return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def _open_child(fd: int, name: str, path: str) -> int:
    try:
        return os.open(name, _DIR, dir_fd=fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
    if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
        raise LinkRefused(f"{path}: {name} is a symbolic link; HEMRA does not follow it")
    raise NotADirectoryError(f"{path}: {name} is not a folder")


def _open_folder(root: Root, parts: list[str], create: bool = False, owner: Owner = None) -> int:
    """An fd of the folder root/parts..., walked without following links; created when asked."""
    fd = _open_root(root)
    try:
        for index, name in enumerate(parts):
            path = "/".join(parts[: index + 1])
            try:
                child = _open_child(fd, name, path)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(name, 0o755, dir_fd=fd)
                    if owner is not None:
                        os.chown(name, *owner, dir_fd=fd, follow_symlinks=False)
                except FileExistsError:  # made meanwhile (perhaps a link: the open below refuses it)
                    pass
                child = _open_child(fd, name, path)
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def make_folders(root: Root, rel: str, owner: Owner = None) -> None:
    """Make the folder root/rel and its parents where missing (made ones owned by `owner`);
    LinkRefused when a component is a link."""
    os.close(_open_folder(root, parts_of(rel), create=True, owner=owner))


def _open_leaf(root: Root, rel: str) -> int:
    """A read-only fd of the regular file root/rel."""
    parts = parts_of(rel)
    if not parts:
        raise IsADirectoryError(f"{rel}: a folder")
    folder = _open_folder(root, parts[:-1])
    try:
        try:
            fd = os.open(parts[-1], os.O_RDONLY | _LEAF, dir_fd=folder)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LinkRefused(f"{rel} is a symbolic link; HEMRA does not follow it") from None
            if exc.errno == errno.ENXIO:  # a socket
                raise FileNotFoundError(f"{rel}: not a regular file") from None
            raise
    finally:
        os.close(folder)
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        return fd
    os.close(fd)
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{rel}: a folder")
    raise FileNotFoundError(f"{rel}: not a regular file")


def read(root: Root, rel: str, limit: int | None = None) -> bytes:
    """The content of the regular file root/rel, at most `limit` bytes (nothing past it is read).

    Raises FileNotFoundError (also for FIFOs, sockets, devices), IsADirectoryError,
    LinkRefused (a PermissionError) when a component is a link."""
    fd = _open_leaf(root, rel)
    try:
        chunks, left = [], (-1 if limit is None else max(int(limit), 0))
        while left != 0:
            chunk = os.read(fd, _CHUNK if left < 0 else min(left, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            if left > 0:
                left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def size(root: Root, rel: str) -> int:
    """The size of the regular file root/rel (errors as `read`)."""
    fd = _open_leaf(root, rel)
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def write(root: Root, rel: str, content: bytes, mode: int = 0o644, owner: Owner = None) -> None:
    """Write root/rel whole (folders created, owned by `owner` when given). An existing leaf
    that is not a regular file (a link, a FIFO, ...) is refused, never written through."""
    parts = parts_of(rel)
    if not parts:
        raise IsADirectoryError(f"{rel}: a folder")
    folder = _open_folder(root, parts[:-1], create=True, owner=owner)
    try:
        try:
            fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | _LEAF, mode & 0o777, dir_fd=folder)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LinkRefused(f"{rel} is a symbolic link; HEMRA does not write through it") from None
            if exc.errno in (errno.ENXIO, errno.EISDIR):
                raise PermissionError(f"{rel}: not a regular file") from None
            raise
    finally:
        os.close(folder)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO with a reader opens: never write to it
            raise PermissionError(f"{rel}: not a regular file")
        os.ftruncate(fd, 0)
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view) :]
        if owner is not None:
            os.fchown(fd, *owner)
        os.fchmod(fd, mode & 0o777)
    finally:
        os.close(fd)


def remove(root: Root, rel: str, keep: bool = False) -> None:
    """Remove root/rel: a file or link is unlinked (a link never followed), a folder removed
    with everything in it. `keep`: a folder is emptied but kept (a mount point). Absent: nothing."""
    parts = parts_of(rel)
    try:
        folder = _open_folder(root, parts[:-1] if parts else [])
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        if not parts:
            _empty(folder)
            return
        try:
            mode = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return
        if not stat.S_ISDIR(mode):
            os.unlink(parts[-1], dir_fd=folder)
        elif keep:
            inner = _open_child(folder, parts[-1], rel)
            try:
                _empty(inner)
            finally:
                os.close(inner)
        else:
            # shutil's fd-based rmtree checks each folder it opens is the one it looked at,
            # and unlinks links: a link swapped in meanwhile is never followed.
            shutil.rmtree(parts[-1], dir_fd=folder)
    finally:
        os.close(folder)


def _entries(fd: int) -> list[os.DirEntry]:
    """The entries of an open folder, listed whole before any is changed."""
    with os.scandir(fd) as entries:
        return list(entries)


def _empty(folder: int) -> None:
    for entry in _entries(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.name, dir_fd=folder)
        else:
            os.unlink(entry.name, dir_fd=folder)


def walk(root: Root, rel: str) -> list[str]:
    """The regular files under root/rel, as sorted paths relative to it; links (to files or
    folders), FIFOs, sockets and devices are skipped. [] when absent, not a folder, or reached
    through a link."""
    try:
        fd = _open_folder(root, parts_of(rel))
    except (FileNotFoundError, NotADirectoryError, LinkRefused):
        return []
    found: list[str] = []
    try:
        _walk(fd, "", found, 0)
    finally:
        os.close(fd)
    return sorted(found)


def _walk(fd: int, prefix: str, found: list[str], depth: int) -> None:
    for entry in _entries(fd):
        if entry.is_file(follow_symlinks=False):
            found.append(prefix + entry.name)
        elif entry.is_dir(follow_symlinks=False) and depth < MAX_DEPTH:
            try:
                child = _open_child(fd, entry.name, prefix + entry.name)
            except (OSError, LinkRefused):  # swapped or removed meanwhile
                continue
            try:
                _walk(child, prefix + entry.name + "/", found, depth + 1)
            finally:
                os.close(child)


def copy_tree(src_root: Root, src_rel: str, dst_root: Root, dst_rel: str, owner: Owner = None) -> None:
    """Make dst_root/dst_rel a copy of src_root/src_rel as plain data: regular files (with their
    permission bits, set-id bits dropped, and times), folders, and symbolic links copied as links
    (never followed); devices, FIFOs and sockets are dropped. Whatever dst held is removed first;
    an absent source leaves it absent. Copies are owned by `owner` when given (else by HEMRA)."""
    src_parts, dst_parts = parts_of(src_rel), parts_of(dst_rel)
    if not src_parts or not dst_parts:
        raise PermissionError("copy_tree copies a folder or file inside the roots, not a root itself")
    remove(dst_root, dst_rel)
    try:
        src = _open_folder(src_root, src_parts[:-1])
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        dst = _open_folder(dst_root, dst_parts[:-1], create=True, owner=owner)
        try:
            _copy_entry(src, src_parts[-1], dst, dst_parts[-1], owner, 0)
        finally:
            os.close(dst)
    finally:
        os.close(src)


def _copy_entry(src: int, name: str, dst: int, new: str, owner: Owner, depth: int) -> None:
    try:
        st = os.stat(name, dir_fd=src, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(name, dir_fd=src), new, dir_fd=dst)
        if owner is not None:
            os.chown(new, *owner, dir_fd=dst, follow_symlinks=False)
    elif stat.S_ISDIR(st.st_mode):
        if depth >= MAX_DEPTH:
            return
        try:
            inner = _open_child(src, name, name)
        except (OSError, LinkRefused):  # swapped meanwhile
            return
        try:
            os.mkdir(new, 0o700, dir_fd=dst)
            out = os.open(new, _DIR, dir_fd=dst)
            try:
                for entry in _entries(inner):
                    _copy_entry(inner, entry.name, out, entry.name, owner, depth + 1)
                if owner is not None:
                    os.fchown(out, *owner)
                os.fchmod(out, stat.S_IMODE(st.st_mode) & 0o777)
            finally:
                os.close(out)
        finally:
            os.close(inner)
    elif stat.S_ISREG(st.st_mode):
        _copy_file(src, name, dst, new, owner)
    # devices, FIFOs and sockets: dropped


def _copy_file(src: int, name: str, dst: int, new: str, owner: Owner) -> None:
    try:
        fd = os.open(name, os.O_RDONLY | _LEAF, dir_fd=src)
    except OSError:  # swapped for a link or a socket meanwhile, or removed
        return
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return
        out = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _LEAF, 0o600, dir_fd=dst)
        try:
            while os.sendfile(out, fd, None, _CHUNK * 8):
                pass
            if owner is not None:
                os.fchown(out, *owner)
            os.fchmod(out, stat.S_IMODE(st.st_mode) & 0o777)
            os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(out)
    finally:
        os.close(fd)


def chown_tree(root: Root, rel: str, owner: tuple[int, int]) -> None:
    """Give root/rel and everything under it to `owner` (links themselves, never their targets)."""
    parts = parts_of(rel)
    folder = _open_folder(root, parts[:-1] if parts else [])
    try:
        if parts:
            os.chown(parts[-1], *owner, dir_fd=folder, follow_symlinks=False)
            try:
                inner = _open_child(folder, parts[-1], rel)
            except (NotADirectoryError, LinkRefused):
                return
        else:
            os.fchown(folder, *owner)
            inner = os.dup(folder)
        try:
            _chown(inner, owner, 0)
        finally:
            os.close(inner)
    finally:
        os.close(folder)


def _chown(fd: int, owner: tuple[int, int], depth: int) -> None:
    for entry in _entries(fd):
        os.chown(entry.name, *owner, dir_fd=fd, follow_symlinks=False)
        if entry.is_dir(follow_symlinks=False) and depth < MAX_DEPTH:
            try:
                child = _open_child(fd, entry.name, entry.name)
            except (OSError, LinkRefused):
                continue
            try:
                _chown(child, owner, depth + 1)
            finally:
                os.close(child)
