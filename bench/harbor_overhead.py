"""Per-trial overhead of a `kind = "harbor"` HEMRA run against `harbor run` on its own.

    PYTHONPATH=.:protos .venv/bin/python bench/harbor_overhead.py [--tasks 3] [--repeat 3]

Both run the same Harbor (the version of examples/harnesses/harnesses/harbor-oracle.toml,
from HEMRA's tool cache: HEMRA_TOOLS_DIR, default ~/.cache/hemra-test-tools, which the tests
share), its oracle agent, on the same bundled tasks, all at once (-n tasks), in the local
Docker engine with the same offline compose overlay. A warm-up HEMRA run installs Harbor if
needed and builds the task images (not timed). Then, `--repeat` times each, alternating:

- `harbor run` alone: `python -I -c <harbor's CLI> run -p <tasks> -a oracle -e docker
  --extra-docker-compose <overlay> -n N -k 1 -r 0 -q -y`, as HEMRA starts it;
- `hemra run -H harbor-oracle -d hemra-offline -t ... --sandbox docker --concurrency N`:
  planning, the store, the queue, the supervisor, each trial read and recorded as an attempt,
  the report.

Every trial must score 1 on both sides. Prints the median wall time of each, per trial, and
HEMRA's overhead per trial.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "protos")]

from hemra.services.executor.harbor import toolenv  # noqa: E402
from tests.conftest import HEMRA, clean_env  # noqa: E402

TASKS = ("text-stats", "json-transform", "fix-median", "reverse-lines", "fizzbuzz-limit", "csv-column-sum")
EXAMPLE = REPO / "examples" / "harnesses" / "harnesses" / "harbor-oracle.toml"
OVERLAY = (
    "services:\n  main:\n    network_mode: none\n    init: true\n    build:\n      network: none\n"
    '    labels:\n      hemra.bench: "harbor-overhead"\n'
)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=3, choices=range(1, len(TASKS) + 1))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tasks = TASKS[: args.tasks]
    work = Path(tempfile.mkdtemp(prefix="hemra-harbor-bench-"))
    tools = os.environ.get("HEMRA_TOOLS_DIR", str(Path("~/.cache/hemra-test-tools").expanduser()))
    env = dict(
        clean_env(),
        HEMRA_HOME=str(work / "home"),
        PYTHONPATH=f"{REPO}{os.pathsep}{REPO / 'protos'}",
        HEMRA_TOOLS_DIR=tools,
    )
    (work / "harnesses").mkdir()
    shutil.copy(EXAMPLE, work / "harnesses")
    for name in tasks:
        shutil.copytree(REPO / "examples" / "hemra-offline" / name, work / "tasks" / name)
    (work / "overlay.yaml").write_text(OVERLAY)
    hemra_args = ["run", "-H", "harbor-oracle", "-d", "hemra-offline", "--sandbox", "docker"]
    hemra_args += [x for name in tasks for x in ("-t", f"hemra/{name}")] + ["--concurrency", str(len(tasks))]
    failed = False
    try:
        warm = subprocess.run([HEMRA, *hemra_args, "--label", "warm"], env=env, cwd=work, capture_output=True)
        if warm.returncode != 0:
            print(f"warm-up failed: {warm.stderr.decode()[-500:]}")
            return 1
        version = EXAMPLE.read_text().split('version = "')[1].split('"')[0]
        harbor = toolenv.command(Path(tools) / f"harbor@{version}")
        alone, hemra = [], []
        for round_ in range(args.repeat):
            wall, ok = _harbor_alone(harbor, work, len(tasks), round_)
            alone.append(wall)
            failed |= not ok
            wall, ok = _hemra(hemra_args, env, work, len(tasks), round_)
            hemra.append(wall)
            failed |= not ok
        a, h = statistics.median(alone), statistics.median(hemra)
        n = len(tasks)
        print(f"harbor {version}, oracle, {n} tasks at once, median of {args.repeat}")
        print(f"harbor run alone   {a:6.2f} s  {a / n:5.2f} s/trial")
        print(f"hemra run (harbor) {h:6.2f} s  {h / n:5.2f} s/trial  +{(h - a) / n:4.2f} s/trial over harbor alone")
        print(json.dumps({"tasks": n, "harbor_alone": alone, "hemra": hemra}))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def _harbor_alone(harbor: list[str], work: Path, n: int, round_: int) -> tuple[float, bool]:
    jobs = work / "jobs"
    command = [*harbor, "run", "-p", str(work / "tasks"), "-a", "oracle", "-e", "docker", "-o", str(jobs)]
    command += ["--job-name", f"alone-{round_}", "-n", str(n), "-k", "1", "-r", "0"]
    command += ["--extra-docker-compose", str(work / "overlay.yaml"), "-q", "-y"]
    harbor_env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "DOCKER_HOST")}
    harbor_env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    start = time.monotonic()
    done = subprocess.run(command, env=harbor_env, cwd=work, capture_output=True, stdin=subprocess.DEVNULL)
    wall = time.monotonic() - start
    rewards = [
        json.loads(p.read_text()).get("verifier_result", {}).get("rewards", {}).get("reward")
        for p in (jobs / f"alone-{round_}").glob("*/result.json")
    ]
    ok = done.returncode == 0 and rewards == [1.0] * n
    if not ok:
        print(f"harbor alone: FAILED {done.returncode} {rewards} {done.stdout.decode()[-300:]}")
    return wall, ok


def _hemra(args: list[str], env: dict, work: Path, n: int, round_: int) -> tuple[float, bool]:
    label = f"timed-{round_}"
    start = time.monotonic()
    done = subprocess.run([HEMRA, *args, "--label", label], env=env, cwd=work, capture_output=True, text=True)
    wall = time.monotonic() - start
    shown = subprocess.run([HEMRA, "show", label], env=env, cwd=work, capture_output=True, text=True)
    attempts = json.loads(shown.stdout or "{}").get("attempts", [])
    rewards = [a.get("score", {}).get("rewards", {}).get("reward") for a in attempts]
    ok = done.returncode == 0 and rewards == [1.0] * n
    if not ok:
        print(f"hemra: FAILED {done.returncode} {rewards} {done.stderr[-300:]}")
    return wall, ok


if __name__ == "__main__":
    sys.exit(main())
