"""A large run in the compose stack itself: what grows with the number of trials.

    .venv/bin/python bench/compose_large_run.py [--trials 10000] [--tasks 100] [--executors 2]
                                                [--concurrency 4] [--every 5.0] [--keep]

large_deployment.py's question asked of deploy/compose.yaml as a user starts it (the image
deploy/build-image.sh makes, PostgreSQL in its container, compose_scale_out.py's Stack):
--executors executor containers of --concurrency slots each. One run of --trials trials of
orchestration.py's trivial task (an oracle that sums numbers in bash, a verifier that checks
the sum) over --tasks tasks is submitted through the front door by the `hemra` CLI on the host,
`--sandbox host` (bubblewrap inside the executors' containers), run concurrency executors x
concurrency.

Every --every seconds it samples the resident memory (VmRSS) of each service's HEMRA process,
found on the host in its container's cgroup, and the finished attempts (psql in PostgreSQL's
container). Reported as large_deployment.py reports it: the wall time (the submission to the
end of the last attempt) against the attempts' summed time divided by the slots; the store's
size (PostgreSQL's database and the blob volume) and the bytes per trial the run added; per
process, its RSS at each quarter of the run, its peak and its slope per 1,000 finished trials
over the run's second half. Checks: every trial finished exactly once and passed.

Writes bench/results/compose-large-run-<timestamp>.json. Exits 1 when a check fails.
"""

import argparse
import datetime as dt
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path[:0] = [str(ROOT), str(ROOT / "protos"), str(BENCH_DIR)]

import orchestration  # noqa: E402  (the trivial dataset)
from compose_scale_out import DEPLOY, HEMRA, Stack, sh  # noqa: E402
from large_deployment import print_report, report  # noqa: E402
from large_run import rss_kib  # noqa: E402

SERVICES = ("store", "planner", "scorer", "importer", "gateway", "executor")


def hemra_process(container: str) -> int:
    """The host PID of the HEMRA service a container runs (the Python in its cgroup whose
    command line names hemra; an executor's engine and the container's init are not it)."""
    full = sh("docker", "inspect", "-f", "{{.Id}}", container).strip()
    for procs in (
        Path(f"/sys/fs/cgroup/memory/docker/{full}/cgroup.procs"),
        Path(f"/sys/fs/cgroup/system.slice/docker-{full}.scope/cgroup.procs"),
    ):
        if procs.exists():
            break
    else:
        raise SystemExit(f"no cgroup found for container {container}")
    for pid in procs.read_text().split():
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"python" in command[0] and any(b"hemra" in part for part in command):
            return int(pid)
    raise SystemExit(f"no HEMRA process in container {container}")


def processes(stack: Stack) -> dict[str, int]:
    found = {}
    for service in SERVICES:
        for index, container in enumerate(stack.containers(service)):
            found[service if service != "executor" else f"executor-{index}"] = hemra_process(container)
    return found


def finished(stack: Stack) -> int:
    return int(stack.sql("SELECT count(*) FROM attempts WHERE state = 'finished'")[0][0])


def sample(stack: Stack, pids: dict[str, int], every: float, samples: list, stop: threading.Event) -> None:
    started = time.perf_counter()
    while not stop.is_set():
        rss = {name: rss_kib(pid) for name, pid in pids.items()}
        samples.append({"t": round(time.perf_counter() - started, 1), "finished": finished(stack), "rss_kib": rss})
        stop.wait(every)


def outcome(stack: Stack) -> dict:
    (row,) = stack.sql(
        "SELECT count(*), count(DISTINCT trial_id), count(*) FILTER (WHERE verdict = 'passed'),"
        " sum(end_time - start_time), max(end_time), pg_database_size(current_database())"
        " FROM attempts WHERE state = 'finished'"
    )
    names = ("finished", "trials", "passed", "busy", "last_end", "database_bytes")
    return dict(
        zip(names, (int(row[0]), int(row[1]), int(row[2]), float(row[3] or 0), float(row[4] or 0), int(row[5])))
    )


def blob_bytes(stack: Stack) -> int:
    (store,) = stack.containers("store")
    return int(sh("docker", "exec", store, "du", "-sb", "/var/lib/hemra/blobs").split()[0])


def measure(args, stack: Stack, scratch: Path) -> tuple[dict, dict, int]:
    stack.scale(args.executors)
    empty = outcome(stack)["database_bytes"]  # the migrated schema, before any trial
    dataset = scratch / "dataset"
    orchestration.make_dataset(dataset, args.tasks)
    attempts = max(1, -(-args.trials // args.tasks))
    slots = args.executors * args.concurrency
    samples, stop = [], threading.Event()
    sampler = threading.Thread(target=sample, args=(stack, processes(stack), args.every, samples, stop))
    sampler.start()
    try:
        submitted = time.time()
        command = ["run", "-H", "oracle", "-d", str(dataset), "--sandbox", "host", "--detach"]
        command += ["-k", str(attempts), "--concurrency", str(slots), "--label", "large"]
        sh(HEMRA, *command, env=stack.cli)
        while not samples or samples[-1]["finished"] < attempts * args.tasks:  # the sampler's count
            time.sleep(args.every)
    finally:
        stop.set()
        sampler.join()
    held = outcome(stack)
    measured = {
        "trials": attempts * args.tasks,
        "wall_s": round(held["last_end"] - submitted, 1),
        "samples": samples,
        "names": list(samples[0]["rss_kib"]) if samples else [],
        "empty_database_bytes": empty,
    }
    return measured, held, blob_bytes(stack)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=10000)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--executors", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=4, help="slots per executor")
    parser.add_argument("--every", type=float, default=5.0, help="seconds between samples")
    parser.add_argument("--keep", action="store_true", help="leave the stack up afterwards")
    args = parser.parse_args()
    image = sh("bash", str(DEPLOY / "build-image.sh"), timeout=1800).strip().splitlines()[-1]
    scratch = Path(tempfile.mkdtemp(prefix="hemra-compose-large-"))
    stack = Stack(scratch, image, concurrency=args.concurrency)
    try:
        measured, held, blobs = measure(args, stack, scratch)
    finally:
        if not args.keep:
            stack.down()
            shutil.rmtree(scratch, ignore_errors=True)
    result = report(args, measured, held, blobs)
    ok = print_report(result)
    out = BENCH_DIR / "results" / f"compose-large-run-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"image": image, **result}, indent=1))
    print(f"results: {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
