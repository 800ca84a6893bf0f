"""Who an attempt's commands run as: when HEMRA runs as root, an unprivileged uid of the
attempt's own above SANDBOX_UID, locked host-wide while the attempt lives, entered with setpriv
and no capability left; the passwd and group entries the sandbox sees for it."""

import contextlib
import fcntl
import os
import secrets
import shutil
from pathlib import Path

from hemra.services.executor.sandboxes.base import SandboxError

#: The PATH of every command (setpriv is looked up on it, as it must be there inside the sandbox).
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
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


def setpriv_path() -> str:
    path = shutil.which("setpriv", path=PATH)
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
    uid, lock = lock_uid()
    return (uid, uid), lock


def lock_uid() -> tuple[int, int]:
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


def unlock_uid(uid: int, lock: int) -> None:
    with contextlib.suppress(FileNotFoundError):
        (UID_LOCKS / str(uid)).unlink()  # while still locked: no other attempt holds this file
    os.close(lock)


def run_as(owner: tuple[int, int] | None) -> list[str]:
    """What each command runs under: setpriv to the sandbox user (`owner`, when HEMRA is root),
    with no capability left, an empty bounding set and no_new_privs."""
    return [*setpriv(owner), "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def setpriv(owner: tuple[int, int] | None) -> list[str]:
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
