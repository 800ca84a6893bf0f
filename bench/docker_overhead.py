"""Docker sandbox overhead: `hemra run --sandbox docker` against the plain Docker floor.

    .venv/bin/python bench/docker_overhead.py [--repeat R] [--concurrency C]

1. Warm-up: one `hemra run -H oracle -H nop -d hemra-offline --sandbox docker`, so every
   task image is built and cached (not timed).
2. Floor: for each task and each harness, a cached `docker build -q` of the task's
   environment/ plus one `docker run --rm --network none IMAGE bash -c '...'` doing the
   same work HEMRA does in the sandbox (oracle: copy the solution in and run solve.sh;
   both: copy the tests in and run test.sh, then print the reward). Oracle must score 1
   and nop 0 on every task.
3. HEMRA: `hemra run -H oracle -H nop -d hemra-offline --sandbox docker`, a fresh
   HEMRA_HOME each time; exit status 0 and oracle N/N, nop 0/N are required.
4. Prints seconds per trial for both and their ratio; writes
   bench/results/docker-overhead-<timestamp>.json.

Target: HEMRA / floor <= 1.5 per trial.
"""

import argparse
import datetime as dt
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
DATASET = REPO / "examples" / "hemra-offline"
RESULTS_DIR = BENCH_DIR / "results"
TARGET = 1.5
# The commands HEMRA runs inside the sandbox (harnesses/builtin.py, scorer/verifier.py).
SOLVE_COMMAND = "(/solution/solve.sh) > /logs/agent/oracle.txt 2>&1"
TEST_COMMAND = (
    "mkdir -p /logs/verifier && chmod +x /tests/test.sh && (/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1"
)
PRINT_REWARD = "cat /logs/verifier/reward.json 2>/dev/null || cat /logs/verifier/reward.txt"


class BenchError(Exception):
    pass


def tasks() -> list[Path]:
    return sorted(p for p in DATASET.iterdir() if (p / "task.toml").is_file())


def trial_script(harness: str) -> str:
    steps = ["mkdir -p /logs/agent /logs/verifier /logs/artifacts /tests /solution"]
    if harness == "oracle":
        steps += ["cp -a /task/solution/. /solution/", "chmod +x /solution/*.sh", SOLVE_COMMAND + " || true"]
    steps += [
        "rm -rf /logs/verifier/* /tests/*",
        "cp -a /task/tests/. /tests/",
        TEST_COMMAND + " || true",
        PRINT_REWARD,
    ]
    return " && ".join(steps)


def reward_values(output: str) -> set[float]:
    text = output.strip()
    if text.startswith("{"):
        return {float(v) for v in json.loads(text).values()}
    return {float(text)}


def floor_trial(task: Path, harness: str) -> float:
    """One trial of the floor: a cached build and one container doing the work. Seconds."""
    config = tomllib.loads((task / "task.toml").read_text())
    env = {**config.get("verifier", {}).get("env", {}), **config.get("solution", {}).get("env", {})}
    started = time.perf_counter()
    image = subprocess.run(["docker", "build", "-q", str(task / "environment")], capture_output=True, text=True)
    if image.returncode != 0:
        raise BenchError(f"docker build of {task.name} failed: {image.stderr.strip()}")
    args = ["docker", "run", "--rm", "--network", "none", "-v", f"{task}:/task:ro"]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    run = subprocess.run(
        args + [image.stdout.strip(), "bash", "-c", trial_script(harness)], capture_output=True, text=True
    )
    elapsed = time.perf_counter() - started
    expected = {1.0} if harness == "oracle" else {0.0}
    if run.returncode != 0 or reward_values(run.stdout) != expected:
        raise BenchError(
            f"floor {harness} on {task.name}: exit {run.returncode}, rewards {run.stdout!r} "
            f"(expected {expected}) {run.stderr.strip()}"
        )
    return elapsed


def hemra(home: Path, concurrency: int) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEMRA_")}
    env["HEMRA_HOME"] = str(home)
    args = [
        str(REPO / ".venv" / "bin" / "hemra"),
        "run",
        "-H",
        "oracle",
        "-H",
        "nop",
        "-d",
        "hemra-offline",
        "--sandbox",
        "docker",
        "--concurrency",
        str(concurrency),
    ]
    started = time.perf_counter()
    result = subprocess.run(args, env=env, capture_output=True, text=True, cwd=REPO)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise BenchError(f"{shlex.join(args)} exited {result.returncode}: {result.stderr.strip()[-2000:]}")
    passed = result.stdout.count("(100.0%)"), result.stdout.count("(0.0%)")
    if passed != (1, 1):
        raise BenchError(f"expected oracle 100% and nop 0%, got:\n{result.stdout}")
    return elapsed, result.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="measure R times; medians are reported")
    parser.add_argument("--concurrency", type=int, default=1, help="HEMRA's --concurrency (the floor is serial)")
    options = parser.parse_args()
    found = tasks()
    trials = 2 * len(found)
    samples: dict[str, list[float]] = {"floor": [], "hemra": []}
    with tempfile.TemporaryDirectory(prefix="hemra-docker-bench-") as scratch:
        hemra(Path(scratch) / "warm-up", options.concurrency)
        for round_ in range(options.repeat):
            samples["floor"].append(
                sum(floor_trial(task, harness) for task in found for harness in ("oracle", "nop")) / trials
            )
            seconds, _ = hemra(Path(scratch) / f"home-{round_}", options.concurrency)
            samples["hemra"].append(seconds / trials)
    floor, ours = statistics.median(samples["floor"]), statistics.median(samples["hemra"])
    ratio = ours / floor
    print(f"{'':<28}{'s/trial':>10}")
    print(f"{'floor (docker build+run)':<28}{floor:>10.3f}")
    print(f"{'hemra --sandbox docker':<28}{ours:>10.3f}")
    print(
        f"ratio {ratio:.2f}x (target <= {TARGET}x) over {trials} trials, "
        f"concurrency {options.concurrency}, {options.repeat} round(s)"
    )
    RESULTS_DIR.mkdir(exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out = RESULTS_DIR / f"docker-overhead-{stamp}.json"
    out.write_text(
        json.dumps(
            {
                "trials": trials,
                "concurrency": options.concurrency,
                "samples": samples,
                "floor_s_per_trial": floor,
                "hemra_s_per_trial": ours,
                "ratio": ratio,
                "target": TARGET,
                "load": os.getloadavg(),
            },
            indent=2,
        )
        + "\n"
    )
    print(f"results: {out}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
