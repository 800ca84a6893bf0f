"""How HEMRA pins things: task digests, verifier (tests/) digests and scorer fingerprints.

One module, because the planner (pinning tasks), the scorer (fingerprinting
scores) and the importer (pairing results made elsewhere with HEMRA's tasks)
must compute exactly the same values.
"""

import hashlib
from collections.abc import Iterable


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def task_digest(files: Iterable[tuple[str, bool, str]]) -> str:
    """sha256 over every (path, executable bit, content digest), in path order."""
    lines = "".join(f"{path}\0{int(executable)}\0{digest}\n" for path, executable, digest in sorted(files))
    return sha256(lines.encode())


def tests_digest(files: Iterable[tuple[str, str]]) -> str:
    """sha256 over the tests/ files (path and content digest) of a task."""
    lines = "".join(f"{path}\0{digest}\n" for path, digest in sorted(files) if path.startswith("tests/"))
    return sha256(lines.encode())


def scorer_fingerprint(verifier_digest: str, reward_names: Iterable[str]) -> str:
    """Identifies a scorer: what graded (the verifier's digest) and the reward names it gave."""
    material = verifier_digest + "\0" + "\0".join(sorted(reward_names))
    return sha256(material.encode())
