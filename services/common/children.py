"""How HEMRA starts a Python process of its own (a warm store today): never importing from the
working directory, which may be a folder someone else made (a cloned repository with a
`services/` or `grpc/` package of its own). Light: imported by the CLI.

- `-P` (Python's safe path): `python -m` does not put the working directory first on the path.
- PYTHONPATH, inherited from the user, keeps its absolute entries only: an empty or relative
  entry names the working directory (or a folder in it), even under -P. An install through an
  absolute PYTHONPATH still finds its code.

The child keeps the working directory itself (relative HEMRA_HOME or SQLite paths keep their
meaning); nothing it imports is looked for there. Task code (a verifier, an agent's commands)
is not started this way: it runs in its sandbox as the benchmark intends.
"""

import os
import sys


def python_module(module: str) -> list[str]:
    """The command line that runs `module` with this interpreter (`-m`, under -P)."""
    return [sys.executable, "-P", "-m", module]


def environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """`environ` (ours by default) with PYTHONPATH cut to its absolute entries (gone when none
    is left)."""
    env = dict(os.environ if environ is None else environ)
    kept = [entry for entry in env.pop("PYTHONPATH", "").split(os.pathsep) if os.path.isabs(entry)]
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    return env
