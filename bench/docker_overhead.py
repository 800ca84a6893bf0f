"""Docker sandbox overhead: `hemra run --sandbox docker` against the plain Docker floor.

    .venv/bin/python bench/docker_overhead.py [--repeat R] [--concurrency C]

1. Warm-up: one `hemra run -H oracle -H nop -d hemra-offline --sandbox docker`, so every
   task image is built and cached (not timed).
2. Floors, for each task and each harness, one trial after another, each a cached
   `docker build -q` of the task's environment/ plus:
   - two containers (the target's floor): one `docker run --rm --network none` for the
     agent's part (oracle: copy the solution in and run solve.sh; nop: nothing), which
     leaves its workspace (the image's WORKDIR) as a tar and its logs in a host folder,
     then one more for the verifier, fresh from the image: the workspace unpacked over
     the image's, the tests copied in, test.sh run, the reward printed. That is the least
     Docker does for HEMRA's guarantee that the agent's processes and anything it left
     outside its workspace cannot touch the verdict;
   - one container (for information: what the performance issue first named): the same
     commands in a single `docker run`, the verifier in the agent's container.
   Oracle must score 1 and nop 0 on every task, in both.
3. HEMRA: `hemra run -H oracle -H nop -d hemra-offline --sandbox docker`, a fresh
   HEMRA_HOME each time; exit status 0 and oracle N/N, nop 0/N are required.
4. Prints seconds per trial and the ratios, the worst round's too; writes
   bench/results/docker-overhead-<timestamp>.json.

Target: HEMRA / the two-container floor <= 1.2 per trial, in every round. A missed target
is reported, not an error; a failed check exits 1.
"""

import argparse
import datetime as dt
import json
import os
import shlex
import shutil
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
TARGET = 1.2
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


MAKE_DIRS = "mkdir -p /logs/agent /logs/verifier /logs/artifacts /tests /solution"


def agent_steps(harness: str) -> list[str]:
    if harness != "oracle":
        return []
    return ["cp -a /task/solution/. /solution/", "chmod +x /solution/*.sh", SOLVE_COMMAND + " || true"]


def verifier_steps() -> list[str]:
    return ["rm -rf /logs/verifier/* /tests/*", "cp -a /task/tests/. /tests/", TEST_COMMAND + " || true", PRINT_REWARD]


def trial_script(harness: str) -> str:
    """One container: the agent's part, then the verifier in the same container."""
    return " && ".join([MAKE_DIRS, *agent_steps(harness), *verifier_steps()])


def agent_script(harness: str) -> str:
    """The first of two containers: the agent's part, its workspace left in /carry as a tar."""
    return " && ".join([MAKE_DIRS, *agent_steps(harness), 'tar -cf /carry/workspace.tar -C "$PWD" .'])


def verifier_script() -> str:
    """The second, fresh container: the agent's workspace replaces the image's, then the verifier."""
    unpack = 'find "$PWD" -mindepth 1 -delete && tar -xf /carry/workspace.tar -C "$PWD"'
    return " && ".join([MAKE_DIRS, unpack, *verifier_steps()])


def reward_values(output: str) -> set[float]:
    text = output.strip()
    if text.startswith("{"):
        return {float(v) for v in json.loads(text).values()}
    return {float(text)}


def docker_run(args: list[str], what: str) -> subprocess.CompletedProcess:
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        raise BenchError(f"{what}: exit {run.returncode}: {run.stderr.strip()[-1000:]}")
    return run


def floor_trial(task: Path, harness: str, containers: int, scratch: Path) -> float:
    """One trial of a floor: a cached build, then one or two containers doing the work
    (see the module's docstring). Seconds."""
    config = tomllib.loads((task / "task.toml").read_text())
    env = {**config.get("verifier", {}).get("env", {}), **config.get("solution", {}).get("env", {})}
    carry, logs = scratch / "carry", scratch / "logs"
    for folder in (carry, logs):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(mode=0o777)
    started = time.perf_counter()
    image = docker_run(["docker", "build", "-q", str(task / "environment")], f"docker build of {task.name}")
    args = ["docker", "run", "--rm", "--network", "none", "-v", f"{task}:/task:ro"]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    what = f"floor ({containers} container(s)) {harness} on {task.name}"
    if containers == 1:
        run = docker_run(args + [image.stdout.strip(), "bash", "-c", trial_script(harness)], what)
    else:
        args += ["-v", f"{carry}:/carry", "-v", f"{logs}:/logs"]
        docker_run(args + [image.stdout.strip(), "bash", "-c", agent_script(harness)], what)
        run = docker_run(args + [image.stdout.strip(), "bash", "-c", verifier_script()], what)
    elapsed = time.perf_counter() - started
    expected = {1.0} if harness == "oracle" else {0.0}
    if reward_values(run.stdout) != expected:
        raise BenchError(f"{what}: rewards {run.stdout!r} (expected {expected}) {run.stderr.strip()}")
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


FLOORS = {"floor": 2, "floor_one_container": 1}


def measure(options, scratch: Path) -> dict[str, list[float]]:
    """Seconds per trial of each floor and of HEMRA, one sample per round."""
    found = tasks()
    trials = 2 * len(found)
    samples: dict[str, list[float]] = {"hemra": [], **{name: [] for name in FLOORS}}
    hemra(scratch / "warm-up", options.concurrency)
    for round_ in range(options.repeat):
        for name, containers in FLOORS.items():
            seconds = sum(
                floor_trial(task, harness, containers, scratch) for task in found for harness in ("oracle", "nop")
            )
            samples[name].append(seconds / trials)
        seconds, _ = hemra(scratch / f"home-{round_}", options.concurrency)
        samples["hemra"].append(seconds / trials)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="measure R times; medians are reported")
    parser.add_argument("--concurrency", type=int, default=1, help="HEMRA's --concurrency (the floor is serial)")
    options = parser.parse_args()
    trials = 2 * len(tasks())
    with tempfile.TemporaryDirectory(prefix="hemra-docker-bench-") as scratch:
        samples = measure(options, Path(scratch))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    ratio = medians["hemra"] / medians["floor"]
    # The target holds in every round: each round's HEMRA against the same round's floor.
    rounds = [ours / floor for ours, floor in zip(samples["hemra"], samples["floor"], strict=True)]
    one = medians["hemra"] / medians["floor_one_container"]
    print(f"{'':<40}{'s/trial':>10}")
    print(f"{'floor: build + 2 docker run (target)':<40}{medians['floor']:>10.3f}")
    print(f"{'info: floor with 1 docker run':<40}{medians['floor_one_container']:>10.3f}")
    print(f"{'hemra --sandbox docker':<40}{medians['hemra']:>10.3f}")
    met = max(rounds) <= TARGET
    print(
        f"ratio {ratio:.2f}x, worst round {max(rounds):.2f}x (target <= {TARGET}x in every round: "
        f"{'met' if met else 'NOT met'}); info: against one docker run {one:.2f}x; {trials} trials, "
        f"concurrency {options.concurrency}, {options.repeat} round(s)"
    )
    RESULTS_DIR.mkdir(exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out = RESULTS_DIR / f"docker-overhead-{stamp}.json"
    result = {
        "trials": trials,
        "concurrency": options.concurrency,
        "samples": samples,
        "floor_s_per_trial": medians["floor"],
        "floor_one_container_s_per_trial": medians["floor_one_container"],
        "hemra_s_per_trial": medians["hemra"],
        "ratio": ratio,
        "round_ratios": rounds,
        "ratio_one_container": one,
        "target": TARGET,
        "met": met,
        "load": os.getloadavg(),
    }
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
