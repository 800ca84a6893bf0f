"""The bwrap command line of each command: a private root on a tmpfs, the host's /usr and
/etc read-only, the attempt's folders and mounts bound, its own namespaces, and (when the
harness has model endpoints) the relay started in its network namespace before the command."""

import os
import shlex
import shutil
from pathlib import Path

from hemra.services.executor.sandboxes.base import SandboxError
from hemra.services.executor.sandboxes.host.users import PATH, run_as, setpriv
from hemra.services.executor.sandboxes.relay import RELAY_INSIDE, SCRIPT, SOCKETS_INSIDE

#: Where a command's relay writes its ready file and errors: a tmpfs of that command's own.
_RELAY_RUN = "/run/hemra-relay-run"
_RELAY_READY_TRIES = 2000  # x 10 ms


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxError("the host sandbox needs bubblewrap (bwrap): apt-get install bubblewrap")
    return path


class Bwrap:
    """The HostSandbox's command lines (a mixin: HostSandbox holds the state)."""

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
        for key, value in {"PATH": PATH, "HOME": "/root", "LANG": "C.UTF-8", **self.env, **env}.items():
            args += ["--setenv", key, value]
        return args

    def _command(self, command: str, started: int | None) -> list[str]:
        """What bwrap runs: the command, as the sandbox's user without capabilities, after
        the model relay has started in its network namespace when it has endpoints (relaying:
        `started`, a pipe HEMRA reads, is told so, then closed before the command runs)."""
        relaying = started is not None
        if self.owner is None and not relaying:
            return ["bash", "-c", command]  # bwrap's user namespace left it no capability
        user = setpriv(self.owner)
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
