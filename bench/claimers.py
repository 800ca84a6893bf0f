"""Simulated claimers: how many workers one PostgreSQL queue serves, through one store or several.

    .venv/bin/python bench/claimers.py [--claimers 64,256] [--stores 1,3] [--jobs 1000]
                                       [--work 1.0] [--clients 4] [--slots 1] [--jitter 0]
                                       [--timeout 300] [--keep]

On a fresh PostgreSQL database (127.0.0.1:5432, dropped afterwards; the schema migrated once,
as `hemra db upgrade` does), for each store count S in --stores: S store processes
(`python -m hemra.services.store`, as a deployment runs them: the same database, the same blob
folder), then for each C in --claimers a fresh run of --jobs queued jobs (run concurrency
= jobs, so the run's limit never binds) and C claimers spread over --clients processes, each
claimer a coroutine with its own gRPC channel to one store (round robin, as a Service balances
connections). A claimer speaks the worker protocol without a sandbox: ClaimJob (lease 60 s),
then --work seconds of "work" (a sleep), then CompleteJob (completed, scored), until ClaimJob
brings nothing. Every job costs two round trips (the executor saves one with claim_next; the
simulated claimers do not, so the claim is timed alone).

Reported per (S, C): jobs/s (from the first claim to the last answer) against the offered
load (C / --work jobs/s), ClaimJob latency p50/p99/max (each claimer's first claim apart: it
meets the start burst of every other), CompleteJob p50/p99, the stores' and
PostgreSQL's CPU per job (the store processes' user+system time; the PostgreSQL backends
connected to the database, from /proc), errors retried. Checks: every job done exactly once
(try_count 1, lease_token 1), every completion answered, no job completed twice: no job lost
or duplicated.

Target (issue 37): 256 claimers with claim p99 under 100 ms and no lost or duplicated job.
Writes bench/results/claimers-<timestamp>.json. Exits 1 when a check fails.

Internal mode: `_clients` runs one process of claimers.
"""

import argparse
import asyncio
import datetime as dt
import json
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path[:0] = [str(ROOT), str(ROOT / "protos"), str(BENCH_DIR)]

import queue_throughput as qt  # noqa: E402  (the run planner, the database and the checks)
from scale_out import CpuMeter, start, until_serving  # noqa: E402

TOKEN = "claimers-" + secrets.token_hex(8)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# --------------------------------------------------------------------------- the claimers


async def claimer(address: str, name: str, hold, deadline: float, out: dict) -> None:
    """One worker without a sandbox: claim, sleep, complete, until nothing is queued."""
    import grpc
    from google.protobuf.duration_pb2 import Duration

    from hemra.services.common import transport
    from hemra.v1 import common_pb2 as pb
    from hemra.v1 import store_service_pb2 as spb

    channel = transport.channel(address)
    client = transport.store(channel, os.environ["HEMRA_TOKEN"])
    claim = spb.ClaimJobRequest(worker=name, lease=Duration(seconds=60))
    score = pb.Score(state=pb.SCORE_STATE_SCORED, rewards={"reward": 1.0})
    try:
        await channel.channel_ready()  # connected before the clock runs, as a worker long up is
        out["start"].append(time.time())
        first = False
        while time.time() < deadline:
            started = time.perf_counter()
            try:
                job = (await client.ClaimJob(claim, timeout=60)).job
            except grpc.aio.AioRpcError as exc:  # counted, then asked again as a worker does
                out["errors"].append(f"ClaimJob {exc.code().name}")
                await asyncio.sleep(0.5)
                continue
            # A claimer's first claim meets every other claimer's start (the burst a fresh pool
            # makes); later ones are the steady state a long-running pool sees.
            out["claim_ms" if first else "first_claim_ms"].append(1000 * (time.perf_counter() - started))
            first = True
            if not job.id:
                out["end"].append(time.time())
                return
            await asyncio.sleep(hold())
            request = spb.CompleteJobRequest(
                job=job.id, lease_token=job.lease_token, outcome=pb.OUTCOME_COMPLETED, score=score
            )
            while True:
                started = time.perf_counter()
                try:
                    await client.CompleteJob(request, timeout=60)
                    break
                except grpc.aio.AioRpcError as exc:  # a repeated completion with the token is safe
                    out["errors"].append(f"CompleteJob {exc.code().name}")
                    await asyncio.sleep(0.5)
            out["complete_ms"].append(1000 * (time.perf_counter() - started))
            out["completed"].append(job.id)
    finally:
        await channel.close()


async def executor(address: str, name: str, slots: int, hold, deadline: float, out: dict) -> None:
    """One executor of `slots` slots without a sandbox, as services/executor/worker.py claims: its
    free slots in one ClaimJob (max_jobs), then each slot completes its job with claim_next (the
    slot's next job in the same call), until nothing is queued."""
    from google.protobuf.duration_pb2 import Duration

    from hemra.services.common import transport
    from hemra.services.executor.attempt import claimed
    from hemra.v1 import common_pb2 as pb
    from hemra.v1 import store_service_pb2 as spb

    channel = transport.channel(address)
    client = transport.store(channel, os.environ["HEMRA_TOKEN"])
    batch = spb.ClaimJobRequest(worker=name, lease=Duration(seconds=60), max_jobs=slots)
    score = pb.Score(state=pb.SCORE_STATE_SCORED, rewards={"reward": 1.0})

    async def slot(job) -> None:
        while job is not None and job.id:
            await asyncio.sleep(hold())
            request = spb.CompleteJobRequest(
                job=job.id, lease_token=job.lease_token, outcome=pb.OUTCOME_COMPLETED, score=score
            )
            request.claim_next.CopyFrom(spb.ClaimJobRequest(worker=name, lease=Duration(seconds=60)))
            started = time.perf_counter()
            response = await client.CompleteJob(request, timeout=60, retry_for=60)  # repeats are safe
            out["complete_ms"].append(1000 * (time.perf_counter() - started))
            out["completed"].append(job.id)
            job = response.next_job if response.HasField("next_job") else None

    try:
        await channel.channel_ready()
        out["start"].append(time.time())
        first = False
        while time.time() < deadline:
            started = time.perf_counter()
            jobs = claimed(await client.ClaimJob(batch, timeout=60, retry_for=60))
            out["claim_ms" if first else "first_claim_ms"].append(1000 * (time.perf_counter() - started))
            first = True
            if not jobs:
                out["end"].append(time.time())
                return
            await asyncio.gather(*(slot(job) for job in jobs))
    finally:
        await channel.close()


async def clients(
    addresses: list[str],
    first: int,
    count: int,
    total: int,
    work: float,
    deadline: float,
    slots: int = 1,
    jitter: float = 0.0,
) -> dict:
    # Each job's work: `work` seconds, or drawn from work x (1 +- jitter) as real trials vary
    # (seeded per process, so a measurement can be repeated).
    draw = random.Random(first)

    def hold() -> float:
        return work * draw.uniform(1 - jitter, 1 + jitter) if jitter else work

    out = {
        "claim_ms": [],
        "first_claim_ms": [],
        "complete_ms": [],
        "completed": [],
        "errors": [],
        "names": [],
        "start": [],
        "end": [],
    }
    tasks = []
    for k in range(first, first + count):
        name = f"claimer-{k:03d}"
        out["names"].append(name)
        address = addresses[k % len(addresses)]
        tasks.append(
            executor(address, name, slots, hold, deadline, out)
            if slots > 1
            else claimer(address, name, hold, deadline, out)
        )
    # A pod starts its claim loop at some moment: spread the first claims over one work time.
    await asyncio.gather(*(_after(k * work / max(total, 1), t) for k, t in zip(range(first, first + count), tasks)))
    return out


async def _after(delay: float, coroutine) -> None:
    await asyncio.sleep(delay)
    await coroutine


# --------------------------------------------------------------------------- one measurement


async def measure(db, addresses: list[str], pids: list[int], claimers: int, args, scratch: Path) -> dict:
    run_id = await qt.record_run(db, args.jobs, f"claimers-{len(addresses)}x{claimers}", analyze=True)
    meter = CpuMeter(pids, qt.POSTGRES_ADMIN, db.pg_name)
    procs = min(args.clients, claimers)
    share = [claimers // procs + (1 if i < claimers % procs else 0) for i in range(procs)]
    deadline = time.time() + args.timeout
    await meter.start()
    started = time.perf_counter()
    children, first = [], 0
    for i, count in enumerate(share):
        out = scratch / f"clients-{len(addresses)}-{claimers}-{i}.json"
        command = [sys.executable, __file__, "_clients", ",".join(addresses), str(first), str(count), str(claimers)]
        command += [
            "--work",
            str(args.work),
            "--deadline",
            str(deadline),
            "--out",
            str(out),
            "--slots",
            str(args.slots),
            "--jitter",
            str(args.jitter),
        ]
        children.append((subprocess.Popen(command, cwd=ROOT, env=os.environ.copy()), out))
        first += count
    for child, _ in children:
        child.wait(timeout=args.timeout + 60)
    seconds = time.perf_counter() - started
    store_cpu, pg_cpu = await meter.stop()
    reports = [json.loads(out.read_text()) for _, out in children]
    merged = {key: [v for r in reports for v in r[key]] for key in reports[0]}
    problem = None
    try:
        await qt.verify(db, run_id, args.jobs, merged["completed"], set(merged["names"]), f"S={len(addresses)}")
    except qt.BenchError as exc:
        problem = str(exc)
    claim, complete = merged["claim_ms"], merged["complete_ms"]
    # From the first claim to the last answer: the clients' Python start-up left out.
    busy = max(merged["end"], default=time.time()) - min(merged["start"], default=0.0)
    return {
        "stores": len(addresses),
        "claimers": claimers,
        "jobs": args.jobs,
        "seconds": round(seconds, 2),
        "loop_seconds": round(busy, 2),
        "jobs_per_s": round(args.jobs / busy, 1),
        "slots": args.slots,
        "jitter": args.jitter,
        "offered_jobs_per_s": round(claimers * args.slots / args.work, 1),
        "claim_p50_ms": round(percentile(claim, 0.50), 1),
        "claim_p99_ms": round(percentile(claim, 0.99), 1),
        "claim_max_ms": round(max(claim), 1),
        "first_claim_p50_ms": round(percentile(merged["first_claim_ms"], 0.50), 1),
        "first_claim_p99_ms": round(percentile(merged["first_claim_ms"], 0.99), 1),
        "complete_p50_ms": round(percentile(complete, 0.50), 1),
        "complete_p99_ms": round(percentile(complete, 0.99), 1),
        "store_cpu_ms_per_job": round(1000 * store_cpu / args.jobs, 2),
        "postgres_cpu_ms_per_job": round(1000 * pg_cpu / args.jobs, 2),
        "errors": len(merged["errors"]),
        "error_kinds": sorted(set(merged["errors"])),
        "no_job_lost_or_duplicated": problem is None,
        "problem": problem,
    }


async def bench(args) -> int:
    scratch = Path(tempfile.mkdtemp(prefix="hemra-claimers-"))
    db = await qt.create_database("postgres", scratch)  # migrates once, as `hemra db upgrade`
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEMRA_")}
    env.update(HEMRA_TOKEN=TOKEN, HEMRA_DATABASE_URL=db.url, HEMRA_HOME=str(scratch / "home"))
    os.environ["HEMRA_TOKEN"] = TOKEN
    results = []
    try:
        for stores in [int(x) for x in args.stores.split(",")]:
            started = [start("hemra.services.store", env) for _ in range(stores)]
            await until_serving([a for _, a in started])
            try:
                for claimers in [int(x) for x in args.claimers.split(",")]:
                    result = await measure(
                        db, [a for _, a in started], [p.pid for p, _ in started], claimers, args, scratch
                    )
                    results.append(result)
                    print(json.dumps(result), flush=True)
            finally:
                for process, _ in started:
                    process.terminate()
                for process, _ in started:
                    process.wait(timeout=30)
    finally:
        if not args.keep:
            await qt.drop_database(db)
            subprocess.run(["rm", "-rf", str(scratch)])
    print_table(results, args)
    out = BENCH_DIR / "results" / f"claimers-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"work": args.work, "jobs": args.jobs, "results": results}, indent=1))
    return 0 if results and all(r["no_job_lost_or_duplicated"] for r in results) else 1


def print_table(results: list[dict], args) -> None:
    slots = f", {args.slots} slots per claimer (complete p99: completion + claim_next)" if args.slots > 1 else ""
    slots += f", work x (1 +- {args.jitter:g})" if args.jitter else ""
    print(f"\nsimulated claimers: {args.jobs} jobs per row, {args.work:g} s of work each, one PostgreSQL{slots}")
    head = f"{'stores':>6} {'claimers':>8} {'jobs/s':>7} {'offered':>8} {'claim p50':>9} {'p99':>7} {'max':>7}"
    head += f" {'first p99':>9} {'complete p99':>12} {'store ms/job':>12} {'pg ms/job':>9} {'errors':>6} {'once':>5}"
    print(head)
    for r in results:
        print(
            f"{r['stores']:>6} {r['claimers']:>8} {r['jobs_per_s']:>7} {r['offered_jobs_per_s']:>8} "
            f"{r['claim_p50_ms']:>7}ms {r['claim_p99_ms']:>5}ms {r['claim_max_ms']:>5}ms "
            f"{r['first_claim_p99_ms']:>7}ms {r['complete_p99_ms']:>10}ms "
            f"{r['store_cpu_ms_per_job']:>12} {r['postgres_cpu_ms_per_job']:>9} {r['errors']:>6} "
            f"{'yes' if r['no_job_lost_or_duplicated'] else 'NO':>5}"
        )
    for r in results:
        if r["claimers"] * r["slots"] != 256:
            continue
        # With slots, work reaches a slot with its last completion (claim_next): that call's p99
        # is the claim's, beside the batch claims'.
        p99 = r["claim_p99_ms"] if r["slots"] == 1 else max(r["claim_p99_ms"], r["complete_p99_ms"])
        verdict = "met" if p99 < 100 and r["no_job_lost_or_duplicated"] else "missed"
        shape = "256 claimers" if r["slots"] == 1 else f"{r['claimers']} executors x {r['slots']} slots"
        print(f"target: {shape} through {r['stores']} store(s), claim p99 < 100 ms: {p99} ms ({verdict})")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_clients":
        parser = argparse.ArgumentParser(prog="claimers.py _clients")
        parser.add_argument("mode")
        parser.add_argument("addresses")
        parser.add_argument("first", type=int)
        parser.add_argument("count", type=int)
        parser.add_argument("total", type=int)
        parser.add_argument("--work", type=float, required=True)
        parser.add_argument("--deadline", type=float, required=True)
        parser.add_argument("--out", required=True)
        parser.add_argument("--slots", type=int, default=1)
        parser.add_argument("--jitter", type=float, default=0.0)
        args = parser.parse_args()
        addresses = args.addresses.split(",")
        report = asyncio.run(
            clients(addresses, args.first, args.count, args.total, args.work, args.deadline, args.slots, args.jitter)
        )
        Path(args.out).write_text(json.dumps(report))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claimers", default="64,256")
    parser.add_argument("--stores", default="1,3")
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--work", type=float, default=1.0, help="seconds each claimer holds a job")
    parser.add_argument("--clients", type=int, default=4, help="processes the claimers are spread over")
    parser.add_argument(
        "--slots",
        type=int,
        default=1,
        help="slots per claimer: above 1, each claimer is an executor that claims its free slots in one call "
        "(max_jobs) and refills each slot with its completion (claim_next)",
    )
    parser.add_argument(
        "--jitter",
        type=float,
        default=0.0,
        help="each job's work drawn from work x (1 +- jitter), as real trials vary (0: exactly --work)",
    )
    parser.add_argument("--timeout", type=float, default=300, help="seconds a measurement may take")
    parser.add_argument("--keep", action="store_true", help="keep the database and the scratch folder")
    return asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
