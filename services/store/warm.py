"""A store kept warm for the read commands on one machine.

A command that only reads (`hemra runs`, `hemra show`, `hemra compare`, `hemra datasets`)
spends most of its time importing and opening the store, not reading. So after one such
command has opened the embedded store in its own process, it leaves a store server behind
in the background: on 127.0.0.1, behind a token of its own, for the same SQLite file. The
next read commands find it through a state file in HEMRA_HOME and only call it. It exits
after HEMRA_WARM_STORE seconds without a call (default 300; 0: never start one).

It is never trusted blindly:
- It is found only while it holds the lock file (a dead one's state file is ignored), and
  only for the same database, blob folder and code (a stamp of the installed modules'
  files; a warm store of older code is told to stop).
- It remembers nothing across another process's writes: before every call it asks SQLite
  whether the file changed (`PRAGMA data_version`) and, if so, forgets its caches.
- A command that cannot reach it opens the store itself, as without it.

This module is imported by the CLI: nothing heavy at import time (SQLAlchemy and the
store are imported only by the process that serves).
"""

import asyncio
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import secrets
import signal
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from hemra.services.common import children

IDLE_ENV = "HEMRA_WARM_STORE"
DEFAULT_IDLE_SECS = 300.0
STATE_FILE = "store-warm.json"
LOCK_FILE = "store-warm.lock"
LOG_FILE = "store-warm.log"
#: After saying it is gone, a warm store still answers this long: a command that read the
#: state file just before finishes its calls.
DRAIN_SECS = 5.0

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Found:
    address: str
    token: str


def idle_secs() -> float:
    """Seconds a warm store waits for its next call; 0 when warm stores are off."""
    value = os.environ.get(IDLE_ENV, "")
    try:
        return max(0.0, float(value)) if value else DEFAULT_IDLE_SECS
    except ValueError:
        return 0.0  # an unreadable setting turns the feature off rather than failing every read


def eligible(database_url: str) -> bool:
    """Only a SQLite file: a PostgreSQL store can be served by `hemra serve` instead, and
    data_version, which keeps a warm store honest, is SQLite's."""
    return database_url.startswith("sqlite") and ":memory:" not in database_url


def key(database_url: str, blob_dir: Path) -> str:
    """What a warm store must share with the command using it: database, blobs and code."""
    digest = hashlib.sha256(f"{database_url}\0{blob_dir}\0".encode())
    digest.update(_code_stamp().encode())
    return digest.hexdigest()


def _code_stamp() -> str:
    """Names, sizes and modification times of the store's and contracts' modules (an upgrade
    or an edit changes them); about a millisecond."""
    import hemra.v1
    from hemra import services

    parts = []
    for root in (Path(services.__path__[0]), Path(hemra.v1.__path__[0])):
        for folder, _dirs, files in os.walk(root):
            for name in files:
                if name.endswith(".py"):
                    info = os.stat(os.path.join(folder, name))
                    parts.append(f"{folder}/{name}:{info.st_size}:{info.st_mtime_ns}")
    return "\n".join(sorted(parts))


def read_state(home: Path) -> dict:
    """What the warm store of `home` wrote of itself (pid, address, token, key); {} when there
    is none (or it is still starting)."""
    try:
        state = json.loads((home / STATE_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def find(home: Path, database_url: str, blob_dir: Path) -> Found | None:
    """The warm store for this database, or None. One of older code or of another database
    is asked to stop (a newer one starts after this command)."""
    state = read_state(home)
    if not state or not _alive(home):
        return None
    if state.get("key") != key(database_url, blob_dir):
        _terminate(state.get("pid"))
        return None
    address, token = state.get("address"), state.get("token")
    if not (isinstance(address, str) and isinstance(token, str) and address and token):
        return None
    return Found(address, token)


def _alive(home: Path) -> bool:
    """Whether a warm store holds the lock (the kernel releases it when the process dies)."""
    try:
        fd = os.open(home / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def stop(home: Path, timeout: float = 30.0) -> bool:
    """Stop the warm store of `home` (one still starting too) and wait until it has let go of
    its lock. Whether one was running."""
    deadline = time.monotonic() + timeout
    signalled = None
    running = _alive(home)
    while _alive(home) and time.monotonic() < deadline:
        pid = read_state(home).get("pid")  # none while it starts: it says who it is once ready
        if pid is not None and pid != signalled:
            _terminate(pid)
            signalled = pid
        time.sleep(0.05)
    return running


def _terminate(pid) -> None:
    # The lock is held, so the PID is the warm store's own, not a recycled one.
    if isinstance(pid, int) and pid > 0:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)


def start(home: Path, database_url: str) -> None:
    """Leave a warm store behind for the next command (returns at once; it may lose a race
    with another one starting, and then exits)."""
    # Never an import from the working directory, which may be anyone's folder (children.py).
    env = dict(children.environment(), HEMRA_HOME=str(home), HEMRA_DATABASE_URL=database_url)
    try:
        subprocess.Popen(
            children.python_module("hemra.services.store.warm"),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # not in the terminal's process group: Ctrl-C there is not for it
            close_fds=True,
        )
    except OSError as exc:
        logger.debug("no warm store: %s", exc)


class Watch:
    """Before each call: note the time (for the idle exit) and forget the store's caches if
    another connection committed to the file since the last call (also the HTTP API's own
    processes' store: services/compose/http_processes.py)."""

    def __init__(self, store, path: str):
        self.store = store
        self.last_call = time.monotonic()
        # Its own connection: data_version changes when any *other* connection commits.
        self._probe = sqlite3.connect(path, check_same_thread=False)
        self._version = self.version()

    def version(self) -> int:
        return self._probe.execute("PRAGMA data_version").fetchone()[0]

    def before_call(self) -> None:
        self.last_call = time.monotonic()
        version = self.version()
        if version != self._version:
            self._version = version
            self.store.forget()

    def close(self) -> None:
        self._probe.close()


def _interceptor(watch: Watch):
    import grpc

    class WatchInterceptor(grpc.aio.ServerInterceptor):
        async def intercept_service(self, continuation, handler_call_details):
            watch.before_call()
            return await continuation(handler_call_details)

    return WatchInterceptor()


async def serve(home: Path, database_url: str, idle: float) -> None:
    """The warm store's life: lock, open, say where it is, serve until idle or told to stop."""
    lock = os.open(home / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    if not await _locked(lock):
        os.close(lock)
        return  # another one is warm already
    from hemra.services.common import transport
    from hemra.services.store.server import build_server
    from hemra.services.store.service import Store
    from hemra.services.store.settings import StoreSettings

    settings = StoreSettings.from_env(database_url, home)
    store = await Store.open(settings.database_url, settings.blob_dir)
    watch = Watch(store, store.engine.url.database)
    token = secrets.token_urlsafe(32)
    server, port = build_server(store, "127.0.0.1:0", token, interceptors=(_interceptor(watch),))
    state = home / STATE_FILE
    try:
        await transport.start(server)
        # What compare alone needs (numpy), loaded now rather than in a command's time.
        import hemra.services.store.compare  # noqa: F401

        _write_state(state, f"127.0.0.1:{port}", token, key(settings.database_url, settings.blob_dir))
        logger.info("warm store %d for %s on 127.0.0.1:%d", os.getpid(), settings.database_url, port)
        await _until_idle(watch, idle, home)
        if _owns(home):
            with contextlib.suppress(OSError):
                state.unlink()
        await asyncio.sleep(DRAIN_SECS)
    finally:
        await transport.stop(server, grace=DRAIN_SECS)
        watch.close()
        await store.close()
        os.close(lock)
        logger.info("warm store %d stopped", os.getpid())


async def _locked(lock: int) -> bool:
    """The lock, waiting a while for one that is going (told to stop, or idle) to let go; a
    second one started at the same moment waits as long, then gives up."""
    deadline = time.monotonic() + DRAIN_SECS + 25
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.2)


def _write_state(path: Path, address: str, token: str, store_key: str) -> None:
    body = json.dumps({"pid": os.getpid(), "address": address, "token": token, "key": store_key})
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # the token is a secret
    with os.fdopen(fd, "w") as out:
        out.write(body)
    os.replace(temporary, path)


async def _until_idle(watch: Watch, idle: float, home: Path) -> None:
    """Until no call came for `idle` seconds, a signal asks it to stop, or its state file is
    gone or another's (HEMRA_HOME removed or replaced: nobody can find it any more)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    while not stop.is_set() and _owns(home):
        left = watch.last_call + idle - time.monotonic()
        if left <= 0:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=min(left, 10.0))


def _owns(home: Path) -> bool:
    return read_state(home).get("pid") == os.getpid()


def main() -> None:
    from hemra.services.common.settings import hemra_home

    home = hemra_home()
    # Its start and stop, and what goes wrong: a line or two a life, not the store's chatter.
    logging.basicConfig(
        filename=home / LOG_FILE, level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    logger.setLevel(logging.INFO)
    try:
        asyncio.run(serve(home, os.environ["HEMRA_DATABASE_URL"], idle_secs() or DEFAULT_IDLE_SECS))
    except Exception:
        logger.exception("the warm store stopped")
        raise


if __name__ == "__main__":
    main()
