"""Per-trial overhead of `kind = "computer-use"` against `kind = "program"` on a trivial task.

    PYTHONPATH=.:protos .venv/bin/python bench/computer_use_overhead.py [--trials N]

Both in the docker sandbox on the desktop image (hemra-desktop:bookworm, made by
scripts/setup-docker.sh), so that the task image is the same for both. For each harness, one
warm-up `hemra run` (the task's image built; not timed), then one `hemra run -k N
--concurrency 1` of hemra/reverse-lines, timed:

- `trivial`: `kind = "program"`, `command = ["true"]`;
- `desktop`: `kind = "computer-use"` with no start program, against the scripted model server
  on loopback answering with one text turn (the desktop starts, one screenshot is taken and
  sent, the model ends its turn);
- `desktop-xterm`: the same with `start = ["xterm"]` (a program drawn before the first shot).

Every attempt must be `completed`. Prints seconds per trial and the overhead against `trivial`.
"""

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "protos")]

from bench.sdk_overhead import timed_trials  # noqa: E402
from tests.conftest import HEMRA, clean_env  # noqa: E402
from tests.modelserver import ModelServer, parse  # noqa: E402

DESKTOP = """kind = "computer-use"
model = "claude-sonnet-4-5"
env = ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]

[computer]
screen = [1280, 800]
model_screen = [1024, 640]
"""
HARNESSES = {
    "trivial": 'kind = "program"\ncommand = ["true"]\n',
    "desktop": DESKTOP,
    "desktop-xterm": DESKTOP + 'start = ["xterm"]\n',
}
RUN_FILE = """datasets = ["hemra-offline"]
tasks = ["hemra/reverse-lines"]

[sandbox]
kind = "docker"
image = "hemra-desktop:bookworm"
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hemra-cu-bench-"))
    (work / "harnesses").mkdir()
    for name, text in HARNESSES.items():
        (work / "harnesses" / f"{name}.toml").write_text(text)
    per_trial, failed = {}, False
    with ModelServer() as server:
        server.script = parse([{"text": "Nothing to do."}])
        env = dict(
            clean_env(),
            HEMRA_HOME=str(work / "home"),
            PYTHONPATH=f"{REPO}{os.pathsep}{REPO / 'protos'}",  # this checkout's HEMRA, from any folder
            ANTHROPIC_API_KEY="bench-key-0123",
            ANTHROPIC_BASE_URL=server.url,
        )
        for harness in HARNESSES:
            (work / f"{harness}.toml").write_text(f'harnesses = ["{harness}"]\n' + RUN_FILE)
            wall, failure = timed_trials([HEMRA, "run", f"{harness}.toml"], harness, args.trials, env, work)
            failed |= bool(failure)
            per_trial[harness] = wall / args.trials
            extra = per_trial[harness] - per_trial["trivial"]
            print(
                f"{harness:13} {args.trials} trials {wall:6.1f} s  {per_trial[harness]:5.2f} s/trial"
                f"  +{extra:4.2f} s over program  {failure or 'ok'}",
                flush=True,
            )
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
