"""A large run through the deployment's services: what grows with the number of trials.

    .venv/bin/python bench/large_deployment.py [--trials 10000] [--tasks 100] [--executors 2]
                                               [--concurrency 4] [--every 2.0] [--timeout 3600] [--keep]

large_run.py's question asked of the deployment's shape instead of the embedded default: on a
fresh PostgreSQL database (127.0.0.1:5432, dropped afterwards), `hemra db upgrade`, then the
store, planner and scorer each in its own process, and --executors executor processes of
--concurrency slots each (host sandbox), every one on loopback: the programs the compose
stack's containers run, with the same arguments (scale_out.py starts them the same way). One
run of --trials trials of large_run.py's trivial task (orchestration.py's: an oracle that sums
numbers in bash, a verifier that checks the sum) over --tasks tasks is submitted to the planner,
run concurrency executors x concurrency.

Every --every seconds it samples the resident memory (VmRSS) of each service process and the
finished attempts (from PostgreSQL). Reported: the wall time against the attempts' summed time
divided by the slots; the store's size (PostgreSQL's database and the blob folder) and the bytes
per trial the run added to it; per process, its RSS at each quarter of the run, its peak, and its slope per 1,000
finished trials over the run's second half (0 when nothing grows but the store). Checks: every
trial finished exactly once and passed.

Writes bench/results/large-deployment-<timestamp>.json. Exits 1 when a check fails.
"""

import argparse
import asyncio
import datetime as dt
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path[:0] = [str(ROOT), str(ROOT / "protos"), str(BENCH_DIR)]

import orchestration  # noqa: E402  (the trivial dataset)
import scale_out  # noqa: E402  (the services as processes, the run's submission)
from large_run import quarters, rss_kib, size_of, slope_per_1000  # noqa: E402


async def sample(processes: dict[str, int], url: str, every: float, samples: list, stop: asyncio.Event) -> None:
    """Each process's RSS and the finished attempts, every `every` seconds until `stop`."""
    import asyncpg

    conn = await asyncpg.connect(url, timeout=10)
    started = time.perf_counter()
    try:
        while not stop.is_set():
            finished = await conn.fetchval("SELECT count(*) FROM attempts WHERE state = 'finished'")
            rss = {name: rss_kib(pid) for name, pid in processes.items()}
            samples.append({"t": round(time.perf_counter() - started, 1), "finished": finished, "rss_kib": rss})
            try:
                await asyncio.wait_for(stop.wait(), every)
            except TimeoutError:
                pass
    finally:
        await conn.close()


def memory_of(samples: list[dict], name: str) -> dict:
    """One process's RSS over the run: quarters, peak, slope per 1,000 finished trials."""
    own = [{"finished": s["finished"], "rss_kib": s["rss_kib"][name]} for s in samples if s["rss_kib"].get(name)]
    return {
        "quarters_mib": [round(k / 1024, 1) for k in quarters(own)],
        "peak_mib": round(max((s["rss_kib"] for s in own), default=0) / 1024, 1),
        "slope_kib_per_1000_trials": round(slope_per_1000(own), 1),
    }


async def outcome(url: str) -> dict:
    """What the store holds once the run is over: the attempts' times, the checks, the size."""
    import asyncpg

    conn = await asyncpg.connect(url, timeout=10)
    try:
        row = await conn.fetchrow(
            "SELECT count(*) AS finished, count(DISTINCT trial_id) AS trials,"
            " count(*) FILTER (WHERE verdict = 'passed') AS passed,"
            " sum(end_time - start_time) AS busy FROM attempts WHERE state = 'finished'"
        )
        size = await conn.fetchval("SELECT pg_database_size(current_database())")
    finally:
        await conn.close()
    return {**dict(row), "database_bytes": size}


async def run(args, scratch: Path, url: str, env: dict) -> dict:
    """The services, the run, and what was sampled during it."""
    from hemra.v1 import common_pb2 as pb

    subprocess.run([sys.executable, "-m", "hemra.clients.cli.main", "db", "upgrade"], cwd=ROOT, env=env, check=True)
    empty = (await outcome(url))["database_bytes"]  # the migrated schema, before any trial
    store, store_addr = scale_out.start("hemra.services.store", env)
    processes = {"store": store}
    try:
        await scale_out.until_serving([store_addr])
        processes["planner"], planner_addr = scale_out.start("hemra.services.planner", env, "--store", store_addr)
        processes["scorer"], scorer_addr = scale_out.start("hemra.services.scorer", env, "--store", store_addr)
        slots = ["--store", store_addr, "--scorer", scorer_addr, "--concurrency", str(args.concurrency)]
        for k in range(args.executors):
            processes[f"executor-{k}"] = scale_out.start("hemra.services.executor", env, *slots)[0]
        dataset = scratch / "dataset"
        orchestration.make_dataset(dataset, args.tasks)
        attempts = max(1, -(-args.trials // args.tasks))
        spec = pb.RunSpec(
            harnesses=["oracle"],
            datasets=[str(dataset)],
            attempts=attempts,
            concurrency=args.executors * args.concurrency,
            label="large",
            sandbox="host",
        )
        samples, stop = [], asyncio.Event()
        sampler = asyncio.create_task(sample({n: p.pid for n, p in processes.items()}, url, args.every, samples, stop))
        _, seconds = await asyncio.wait_for(scale_out.submit_and_wait(planner_addr, store_addr, spec), args.timeout)
        stop.set()
        await sampler
        return {
            "trials": attempts * args.tasks,
            "wall_s": round(seconds, 1),
            "samples": samples,
            "names": list(processes),
            "empty_database_bytes": empty,
        }
    finally:
        for process in processes.values():
            process.terminate()
        for process in processes.values():
            process.wait(timeout=60)


def report(args, measured: dict, held: dict, blobs: int) -> dict:
    slots = args.executors * args.concurrency
    busy = float(held["busy"] or 0.0)
    trials, samples = measured["trials"], measured["samples"]
    return {
        "trials": trials,
        "tasks": args.tasks,
        "executors": args.executors,
        "concurrency": args.concurrency,
        "wall_s": measured["wall_s"],
        "trials_per_s": round(trials / measured["wall_s"], 2),
        "attempt_seconds_sum": round(busy, 1),
        "wall_over_sum_div_slots": round(measured["wall_s"] / (busy / slots), 2) if busy else None,
        "finished_attempts": held["finished"],
        "distinct_trials": held["trials"],
        "passed": held["passed"],
        "database_bytes": held["database_bytes"],
        "empty_database_bytes": measured["empty_database_bytes"],
        "blob_bytes": blobs,
        # What the run added: the migrated schema's own size left out.
        "store_bytes_per_trial": round(
            (held["database_bytes"] - measured["empty_database_bytes"] + blobs) / max(trials, 1)
        ),
        "memory": {name: memory_of(samples, name) for name in measured["names"]},
        "samples": samples,
    }


def print_report(result: dict) -> bool:
    slots = result["executors"] * result["concurrency"]
    print(
        f"\n{result['trials']} trials, {result['executors']} executors x {result['concurrency']} slots:"
        f" wall {result['wall_s']} s, attempts' time summed {result['attempt_seconds_sum']} s"
        f" (/{slots} = {result['attempt_seconds_sum'] / slots:.1f} s):"
        f" wall / that = {result['wall_over_sum_div_slots']}"
    )
    print(
        f"store: {result['database_bytes'] / 1e6:.1f} MB database ({result['empty_database_bytes'] / 1e6:.1f} MB"
        f" before the run) + {result['blob_bytes'] / 1e6:.2f} MB blobs ({result['store_bytes_per_trial']} B/trial)"
    )
    print(f"{'process':<12} {'RSS at quarters (MiB)':<32} {'peak':>7} {'KiB per 1,000 trials (2nd half)':>32}")
    for name, memory in result["memory"].items():
        quarters_text = ", ".join(f"{q:.1f}" for q in memory["quarters_mib"])
        print(f"{name:<12} {quarters_text:<32} {memory['peak_mib']:>7} {memory['slope_kib_per_1000_trials']:>32}")
    trials = result["trials"]
    ok = result["finished_attempts"] == result["distinct_trials"] == result["passed"] == trials
    print(
        f"checks: {result['finished_attempts']}/{trials} attempts finished, {result['passed']} passed, "
        f"{result['distinct_trials']} trials: {'ok' if ok else 'FAILED'}"
    )
    return ok


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=10000)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--executors", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=4, help="slots per executor")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between memory samples")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--keep", action="store_true", help="keep the database and the scratch folder")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="hemra-large-deploy-"))
    name = "hemra_large_" + secrets.token_hex(6)
    url = scale_out.POSTGRES_ADMIN.rsplit("/", 1)[0] + "/" + name
    await scale_out.admin(f"CREATE DATABASE {name}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEMRA_")}
    env.update(HEMRA_TOKEN=scale_out.TOKEN, HEMRA_DATABASE_URL=url, HEMRA_HOME=str(scratch / "home"))
    try:
        measured = await run(args, scratch, url, env)
        result = report(args, measured, await outcome(url), size_of(scratch / "home" / "blobs"))
    finally:
        if not args.keep:
            await scale_out.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            subprocess.run(["rm", "-rf", str(scratch)])
    ok = print_report(result)
    out = BENCH_DIR / "results" / f"large-deployment-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    if args.keep:
        print(f"kept: {scratch} and database {name}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
