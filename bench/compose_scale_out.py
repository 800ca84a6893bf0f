"""Scale-out in the compose stack itself: 1, 4, 8 and 16 executor containers on one PostgreSQL.

    .venv/bin/python bench/compose_scale_out.py [--executors 1,4,8,16] [--jobs 240]
                                                [--baseline-jobs 40] [--sleep 1.0] [--keep]

deploy/build-image.sh's image and deploy/compose.yaml as a user starts them (PostgreSQL in
its container, made from Debian's packages by scripts/setup-docker.sh), each executor a
container with one slot (HEMRA_EXECUTOR_CONCURRENCY=1), scaled with `docker compose up
--scale executor=N`. For each N, one run is submitted through the front door by the `hemra`
CLI on this host, as a user submits one: bench/scale_out.py's 20 trivial tasks, sent from
this host, and its program harness that sleeps --sleep seconds, `--sandbox host` (bubblewrap
inside each executor's container: a Docker sandbox per trial would measure each executor's
engine on 2 cores, not the queue), run concurrency N. The time runs from the submission to
the end of the run's last attempt. N=1 works --baseline-jobs jobs (its throughput is steady),
every other N --jobs.

Reported per N: jobs/s, the speed-up over one executor (measured in the same run), the claim
gap p50/p99 (on each executor, the end of one attempt to the start of its next: completing,
claiming and starting a job; from the jobs' lease owners, read from PostgreSQL in its
container), and CPU per job of the store's container, PostgreSQL's and the executors' (their
cgroups' cpuacct). Checks: every trial finished exactly once.

Target (issue 37, item 1): 16 executors at least 13x one.
"""

import argparse
import datetime as dt
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench")]
from scale_out import TASKS, make_dataset, make_harness, summary  # noqa: E402

DEPLOY = ROOT / "deploy"
HEMRA = str(Path(sys.executable).parent / "hemra")
TARGET_16 = 13.0


def sh(*args: str, env: dict | None = None, timeout: float = 900) -> str:
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:6])}...: exit {done.returncode}\n{done.stderr[-3000:]}")
    return done.stdout


class Stack:
    """deploy/compose.yaml up under a project of its own, with fresh secrets, its executors
    `concurrency` slots each on the host sandbox."""

    def __init__(self, scratch: Path, image: str, concurrency: int = 1):
        self.project = f"hemra-bench-{os.getpid()}"
        token = secrets.token_hex(16)
        folder = scratch / "secrets"
        folder.mkdir()
        for name in ("token", "worker_token", "admin_token", "db_password"):
            (folder / name).write_text((token if name == "token" else secrets.token_hex(16)) + "\n")
            (folder / name).chmod(0o644)  # the services run as uid 10001
        (scratch / "engine-images").mkdir()
        self.front = _free_port()
        settings = {
            "HEMRA_PROJECT": self.project,
            "HEMRA_IMAGE": image,
            "HEMRA_POSTGRES_IMAGE": os.environ.get("HEMRA_POSTGRES_IMAGE", "hemra-postgres:bookworm"),
            "HEMRA_SECRETS_DIR": str(folder),
            "HEMRA_ENGINE_IMAGES": str(scratch / "engine-images"),
            "HEMRA_FRONT_DOOR_PORT": str(self.front),
            "HEMRA_HTTP_PORT": str(_free_port()),
            "HEMRA_SANDBOX": "host",
            "HEMRA_EXECUTOR_CONCURRENCY": str(concurrency),
            "HEMRA_EXECUTOR_MEMORY": "1g",
        }
        self.env_file = scratch / "stack.env"
        self.env_file.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        self.cli = {k: v for k, v in os.environ.items() if not k.startswith("HEMRA_")}
        self.cli.update(
            HEMRA_HOME=str(scratch / "laptop"),
            HEMRA_SERVER=f"http://127.0.0.1:{self.front}",
            HEMRA_TOKEN=token,
            HEMRA_WARM_STORE="0",
        )

    def compose(self, *args: str, timeout: float = 900) -> str:
        base = ["docker", "compose", "-p", self.project, "-f", str(DEPLOY / "compose.yaml")]
        return sh(*base, "--env-file", str(self.env_file), *args, timeout=timeout)

    def scale(self, executors: int) -> None:
        self.compose("up", "-d", "--wait", "--scale", f"executor={executors}")

    def containers(self, service: str) -> list[str]:
        return self.compose("ps", "-q", service).split()

    def sql(self, query: str) -> list[list[str]]:
        (postgres,) = self.containers("postgres")
        out = sh(
            "docker",
            "exec",
            "-u",
            "postgres",
            postgres,
            "psql",
            "-U",
            "hemra",
            "-d",
            "hemra",
            "-At",
            "-F",
            "|",
            "-c",
            query,
        )
        return [line.split("|") for line in out.splitlines() if line]

    def down(self) -> None:
        self.compose("down", "-v", "--remove-orphans", timeout=300)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(containers: list[str]) -> float:
    """CPU seconds the containers' cgroups have used (cgroup v1's cpuacct, else v2's cpu.stat)."""
    total = 0.0
    for container in containers:
        full = sh("docker", "inspect", "-f", "{{.Id}}", container).strip()
        v1 = Path(f"/sys/fs/cgroup/cpuacct/docker/{full}/cpuacct.usage")
        if v1.exists():
            total += int(v1.read_text()) / 1e9
            continue
        for v2 in (Path(f"/sys/fs/cgroup/system.slice/docker-{full}.scope"), Path(f"/sys/fs/cgroup/docker/{full}")):
            if (v2 / "cpu.stat").exists():
                usage = dict(line.split() for line in (v2 / "cpu.stat").read_text().splitlines())
                total += int(usage["usage_usec"]) / 1e6
                break
        else:
            raise SystemExit(f"no cgroup CPU accounting found for container {container}")
    return total


def measure(stack: Stack, executors: int, jobs: int, dataset: Path, harness: Path) -> dict:
    stack.scale(executors)
    groups = {who: stack.containers(who) for who in ("store", "postgres", "executor")}
    if len(groups["executor"]) != executors:
        raise SystemExit(f"{len(groups['executor'])} executors up, {executors} asked")
    before = {who: cpu_seconds(ids) for who, ids in groups.items()}
    submitted = time.time()
    out = sh(
        HEMRA, "run", "-H", str(harness), "-d", str(dataset), "--sandbox", "host", "--detach",
        "-k", str(max(1, -(-jobs // TASKS))), "--concurrency", str(executors), "--label", f"scale-{executors}",
        env=stack.cli,
    )  # fmt: skip
    run_id = out.strip().splitlines()[-1]
    while True:
        progress = json.loads(sh(HEMRA, "show", run_id, env=stack.cli))["run"]["progress"]
        if not progress.get("queued") and not progress.get("running"):
            break
        time.sleep(1)
    after = {who: cpu_seconds(ids) for who, ids in groups.items()}
    rows = [
        {"trial_id": t, "worker": w, "outcome": o, "start_time": float(s or 0), "end_time": float(e or 0)}
        for t, w, o, s, e in stack.sql(
            "SELECT a.trial_id, j.lease_owner, a.outcome, a.start_time, a.end_time FROM attempts a "
            f"JOIN jobs j ON j.attempt_id = a.id WHERE a.run_id = '{run_id}'"
        )
    ]
    seconds = max(row["end_time"] for row in rows) - submitted
    return summary(executors, rows, seconds, {who: after[who] - before[who] for who in groups})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--executors", default="1,4,8,16")
    parser.add_argument("--jobs", type=int, default=240)
    parser.add_argument("--baseline-jobs", type=int, default=40)
    parser.add_argument("--sleep", type=float, default=1.0)
    parser.add_argument("--keep", action="store_true", help="leave the stack up afterwards")
    args = parser.parse_args()
    counts = [int(n) for n in args.executors.split(",")]
    image = sh("bash", str(DEPLOY / "build-image.sh"), timeout=1800).strip().splitlines()[-1]
    scratch = Path(tempfile.mkdtemp(prefix="hemra-compose-scale-"))
    stack = Stack(scratch, image)
    rows = []
    try:
        dataset, harness = make_dataset(scratch), make_harness(scratch, args.sleep)
        for n in counts:
            row = measure(stack, n, args.baseline_jobs if n == 1 else args.jobs, dataset, harness)
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        if not args.keep:
            stack.down()
            shutil.rmtree(scratch, ignore_errors=True)
    base = next((r["jobs_per_s"] for r in rows if r["executors"] == 1), None)
    header = f"{'executors':>9} {'jobs':>5} {'jobs/s':>7} {'speed-up':>8} {'gap p50/p99 ms':>16}"
    print(f"\n{header}   CPU ms/job store / postgres / executors")
    for r in rows:
        r["speed_up"] = round(r["jobs_per_s"] / base, 2) if base else None
        print(
            f"{r['executors']:>9} {r['jobs']:>5} {r['jobs_per_s']:>7.2f} {r['speed_up'] or 0:>7.2f}x "
            f"{r['claim_gap_p50_ms']:>7.1f} / {r['claim_gap_p99_ms']:<7.1f}  "
            f"{r['store_cpu_ms_per_job']} / {r['postgres_cpu_ms_per_job']} / {r['executor_cpu_ms_per_job']}"
        )
    sixteen = next((r for r in rows if r["executors"] == 16), None)
    met = bool(sixteen and sixteen["speed_up"] and sixteen["speed_up"] >= TARGET_16)
    once = all(r["every_trial_once"] for r in rows)
    print(f"16 executors >= {TARGET_16:g}x one: {'met' if met else 'not met'}; every trial once: {once}")
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    path = results / f"compose-scale-out-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps({"sleep": args.sleep, "image": image, "rows": rows}, indent=2))
    print(f"results: {path}")
    return 0 if once else 1


if __name__ == "__main__":
    raise SystemExit(main())
