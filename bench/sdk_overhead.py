"""Per-trial overhead of `kind = "sdk"` against `kind = "program"` on a trivial task.

    PYTHONPATH=.:protos .venv/bin/python bench/sdk_overhead.py [--trials N] [--sandbox host|docker]

For each harness, one warm-up `hemra run` (the SDK installed into the tools folder, the
task's image built; not timed), then one `hemra run -k N --concurrency 1` of
hemra/reverse-lines, timed: `trivial` (`kind = "program"`, `command = ["true"]`), and
the two example sdk harnesses of examples/harnesses/ (`sdk-openai`, `sdk-claude`), each
against the scripted model server on loopback answering with one text turn (no tool
call). Every attempt must be `completed`. Prints seconds per trial and the overhead
against `trivial`. The tools folder is HEMRA_TOOLS_DIR (default ~/.cache/hemra-test-tools,
the one the tests share).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "protos")]

from tests.conftest import HEMRA, clean_env  # noqa: E402
from tests.modelserver import ModelServer, parse  # noqa: E402

HARNESSES = ("trivial", "sdk-openai", "sdk-claude")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--sandbox", default="host", choices=("host", "docker"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hemra-sdk-bench-"))
    shutil.copytree(REPO / "examples" / "harnesses" / "harnesses" / "sdk", work / "harnesses" / "sdk")
    for name in ("sdk-claude", "sdk-openai"):
        shutil.copy(REPO / "examples" / "harnesses" / "harnesses" / f"{name}.toml", work / "harnesses")
    (work / "harnesses" / "trivial.toml").write_text('kind = "program"\ncommand = ["true"]\n')
    tools = os.environ.get("HEMRA_TOOLS_DIR", str(Path("~/.cache/hemra-test-tools").expanduser()))
    per_trial, failed = {}, False
    with ModelServer() as server:
        server.script = parse([{"text": "Nothing to do."}])
        env = dict(
            clean_env(),
            HEMRA_HOME=str(work / "home"),
            PYTHONPATH=f"{REPO}{os.pathsep}{REPO / 'protos'}",  # this checkout's HEMRA, from any folder
            HEMRA_TOOLS_DIR=tools,
            ANTHROPIC_API_KEY="bench-key-0123",
            ANTHROPIC_BASE_URL=server.url,
            OPENAI_API_KEY="bench-key-0123",
            OPENAI_BASE_URL=server.url + "/v1",
        )
        common = ["-d", "hemra-offline", "-t", "hemra/reverse-lines", "--sandbox", args.sandbox]
        for harness in HARNESSES:
            run = [HEMRA, "run", "-H", harness, *common]
            wall, failure = timed_trials(run, f"{harness}-{args.sandbox}", args.trials, env, work)
            failed |= bool(failure)
            per_trial[harness] = wall / args.trials
            extra = per_trial[harness] - per_trial["trivial"]
            print(
                f"{args.sandbox:6} {harness:10} {args.trials} trials {wall:6.1f} s  {per_trial[harness]:5.2f} s/trial"
                f"  +{extra:4.2f} s over program  {failure or 'ok'}",
                flush=True,
            )
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def timed_trials(run: list[str], label: str, trials: int, env: dict, work: Path) -> tuple[float, str]:
    """`run` once untimed (installs, image builds), then `-k trials --concurrency 1`, timed:
    (wall seconds, "" when every attempt completed, else what went wrong)."""
    subprocess.run([*run, "--label", label + "-warm"], env=env, cwd=work, capture_output=True, check=True)
    timed = [*run, "-k", str(trials), "--concurrency", "1", "--label", label]
    start = time.monotonic()
    done = subprocess.run(timed, env=env, cwd=work, capture_output=True, text=True)
    wall = time.monotonic() - start
    shown = subprocess.run([HEMRA, "show", label], env=env, cwd=work, capture_output=True, text=True)
    outcomes = {a["outcome"] for a in json.loads(shown.stdout or "{}").get("attempts", [])}
    ok = done.returncode == 0 and outcomes == {"OUTCOME_COMPLETED"}
    return wall, "" if ok else f"FAILED {outcomes} {done.stderr[-300:]}"


if __name__ == "__main__":
    sys.exit(main())
