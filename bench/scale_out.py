"""Scale-out on sleeping jobs: what coordinating many executors through one store costs.

    .venv/bin/python bench/scale_out.py [--jobs 2000] [--executors 1,4,8,16] [--sleep 1.0]
                                        [--baseline-jobs 100] [--keep]

On a fresh PostgreSQL database (127.0.0.1:5432, dropped afterwards), as a deployment runs:
`hemra db upgrade`, then the store, planner and scorer each in its own process, and for each
N in --executors, N executor processes (concurrency 1 each, host sandbox). Once every executor
says SERVING, one run is submitted to the planner: a generated dataset of 20 trivial tasks,
attempts enough for the job count, a program harness that sleeps --sleep seconds and does
nothing else, run concurrency N. The time runs from the submission until no attempt of the
run is queued or running. N=1 works --baseline-jobs jobs (its throughput is steady: 2,000
one-second jobs would take over half an hour), every other N --jobs.

Reported per N: jobs/s, the speed-up over one executor (throughput ratio, the baseline
measured in the same run), and the claim gap p50/p99: on each executor, the time from the
end of one attempt to the start of its next (completing, claiming and starting one job: the
coordination a job costs); CPU per job of the store process, of the PostgreSQL backends
serving the database (from /proc) and of the executors with their sandboxes. Checks: every trial finished exactly
once.

Target (issue 37): at 16 executors, a speed-up of at least 13x.

With --keda, then: KEDA's decisions simulated against the same queue (the Helm chart's
deploy/helm/hemra): a burst of --jobs jobs submitted with no executor running; every
--keda-poll seconds the chart's query (files/executors-needed.sql, the pool's queued and
leased jobs over each executor's concurrency) is run on PostgreSQL, and executor processes
are started or stopped (SIGTERM: they hand running attempts back) to match it within
0..--keda-max. Reported against a fixed pool of --keda-max executors on the same burst:
the time to drain the queue and the executor-seconds spent (replicas integrated over time).
And what a scale-down costs: SIGTERM to an executor working 4 attempts, the seconds until
they are all back in the queue and until the process is gone (the chart's grace period).
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

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "protos")]
POSTGRES_ADMIN = os.environ.get("HEMRA_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
TASKS = 20
TOKEN = "scale-out-" + secrets.token_hex(8)
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids, children: bool = False) -> dict[int, float]:
    """user + system CPU seconds of each live process (from /proc: any user's process), with
    `children` those of its children it has waited for (an executor's sandboxes)."""
    seconds = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[pid] = sum(int(field) for field in fields[11 : 15 if children else 13]) / TICK
    return seconds


async def backends(dsn: str, name: str) -> list[int]:
    """The PostgreSQL backend processes serving this database."""
    import asyncpg

    conn = await asyncpg.connect(dsn, timeout=10)
    try:
        rows = await conn.fetch("SELECT pid FROM pg_stat_activity WHERE datname = $1", name)
        return [row["pid"] for row in rows if row["pid"] != conn.get_server_pid()]
    finally:
        await conn.close()


class CpuMeter:
    """CPU spent between start() and stop() by some processes and the database's backends.
    A backend that exits in between is not counted (the stores keep theirs open)."""

    def __init__(self, processes: list[int], dsn: str, name: str):
        self.processes, self.dsn, self.name = processes, dsn, name

    async def start(self) -> None:
        self.before = cpu_seconds(self.processes)
        self.pg_before = cpu_seconds(await backends(self.dsn, self.name))

    async def stop(self) -> tuple[float, float]:
        after = cpu_seconds(self.processes)
        pg_after = cpu_seconds(await backends(self.dsn, self.name))
        mine = sum(after[p] - self.before.get(p, 0.0) for p in after)
        theirs = sum(pg_after[p] - self.pg_before.get(p, 0.0) for p in pg_after)
        return mine, theirs


def make_dataset(folder: Path) -> Path:
    """20 tasks whose verifier always passes: the harness's sleep is the whole job."""
    dataset = folder / "sleepy-tasks"
    for i in range(TASKS):
        task = dataset / f"task-{i:02d}"
        (task / "tests").mkdir(parents=True)
        (task / "environment").mkdir()
        (task / "task.toml").write_text(f'[task]\nname = "bench/task-{i:02d}"\n\n[verifier]\ntimeout_sec = 60.0\n')
        (task / "instruction.md").write_text("Nothing to do.\n")
        (task / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\n")
        test = task / "tests" / "test.sh"
        test.write_text("#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n")
        test.chmod(0o755)
    return dataset


def make_harness(folder: Path, sleep: float) -> Path:
    harness = folder / "harnesses" / "sleeper.toml"
    harness.parent.mkdir(parents=True)
    harness.write_text(f'kind = "program"\nagent = "sleeper"\nversion = "1"\ncommand = ["sleep", "{sleep}"]\n')
    return harness


def start(module: str, env: dict, *args: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", module, "--listen", "127.0.0.1:0", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = process.stdout.readline()
    if "listening on" not in line:
        raise SystemExit(f"{module} did not start: {line!r}")
    return process, line.rsplit(" ", 1)[1].strip()


async def admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(POSTGRES_ADMIN, timeout=10)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def until_serving(addresses: list[str], timeout: float = 120) -> None:
    from hemra.services.common import health

    deadline = time.monotonic() + timeout
    for address in addresses:
        while await _status(health, address) != "SERVING":
            if time.monotonic() > deadline:
                raise SystemExit(f"{address} is not SERVING after {timeout:g} s")
            await asyncio.sleep(0.2)


async def _status(health, address: str) -> str:
    try:
        return await health.check(address)
    except Exception:  # not up yet
        return ""


async def submit_and_wait(planner_addr: str, store_addr: str, spec) -> tuple[str, float]:
    from hemra.services.common import transport
    from hemra.v1 import planner_service_pb2 as ppb
    from hemra.v1 import store_service_pb2 as spb

    planner_channel, store_channel = transport.channel(planner_addr), transport.channel(store_addr)
    planner, store = transport.planner(planner_channel, TOKEN), transport.store(store_channel, TOKEN)
    try:
        started = time.perf_counter()
        run = (await planner.PlanRun(ppb.PlanRunRequest(spec=spec))).run
        while True:
            progress = (await store.GetRun(spb.GetRunRequest(run=run.id))).run.progress
            if progress.queued == 0 and progress.running == 0:
                return run.id, time.perf_counter() - started
            await asyncio.sleep(0.2)
    finally:
        await planner_channel.close()
        await store_channel.close()


async def attempts_of(url: str, run_id: str) -> list:
    import asyncpg

    conn = await asyncpg.connect(url.replace("postgresql+asyncpg", "postgresql"), timeout=10)
    try:
        return await conn.fetch(
            "SELECT a.trial_id, j.lease_owner AS worker, a.outcome, a.start_time, a.end_time "
            "FROM attempts a JOIN jobs j ON j.attempt_id = a.id WHERE a.run_id = $1",
            run_id,
        )
    finally:
        await conn.close()


def claim_gaps(rows) -> list[float]:
    by_worker: dict[str, list] = {}
    for row in rows:
        if row["start_time"] is not None and row["end_time"] is not None:
            by_worker.setdefault(row["worker"], []).append((row["start_time"], row["end_time"]))
    gaps = []
    for spans in by_worker.values():
        spans.sort()
        gaps += [max(0.0, _seconds(b[0]) - _seconds(a[1])) for a, b in zip(spans, spans[1:])]
    return gaps


def _seconds(value) -> float:
    return value.timestamp() if hasattr(value, "timestamp") else float(value)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def spawn(n: int, env: dict, addresses: dict) -> list[subprocess.Popen]:
    """n executors started at once (as a Deployment's new pods are), once each is listening."""
    command = [sys.executable, "-m", "hemra.services.executor", "--listen", "127.0.0.1:0"]
    command += ["--store", addresses["store"], "--scorer", addresses["scorer"]]
    processes = [
        subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for _ in range(n)
    ]
    for process in processes:
        if "listening on" not in process.stdout.readline():
            raise SystemExit("an executor did not start")
    return processes


def keda_query(pool: str = "default", concurrency: int = 1) -> str:
    """The chart's query for one pool, templated as the chart does (tests/deploy/test_helm.py
    runs the rendered one)."""
    template = (ROOT / "deploy" / "helm" / "hemra" / "files" / "executors-needed.sql").read_text()
    return template.replace("{{ .pool }}", pool).replace("{{ .concurrency }}", str(concurrency))


async def measure_keda(jobs: int, poll: float, most: int, env: dict, addresses: dict, url: str, dataset, harness):
    """A burst worked by executors started and stopped as KEDA would: replicas = the query's
    answer within 0..most, asked every `poll` seconds."""
    import asyncpg

    from hemra.services.common import transport
    from hemra.v1 import common_pb2 as pb
    from hemra.v1 import planner_service_pb2 as ppb
    from hemra.v1 import store_service_pb2 as spb

    query = keda_query()
    conn = await asyncpg.connect(url, timeout=10)
    planner_channel, store_channel = transport.channel(addresses["planner"]), transport.channel(addresses["store"])
    planner, store = transport.planner(planner_channel, TOKEN), transport.store(store_channel, TOKEN)
    running: list[subprocess.Popen] = []
    stopped: list[subprocess.Popen] = []
    decisions, executor_seconds, peak = [], 0.0, 0
    spec = pb.RunSpec(
        harnesses=[str(harness)],
        datasets=[str(dataset)],
        attempts=max(1, -(-jobs // TASKS)),
        concurrency=most,
        label="keda",
        sandbox="host",
    )
    try:
        started = last = time.perf_counter()
        run = (await planner.PlanRun(ppb.PlanRunRequest(spec=spec))).run
        next_poll = started
        while True:
            now = time.perf_counter()
            executor_seconds += len(running) * (now - last)
            last = now
            progress = (await store.GetRun(spb.GetRunRequest(run=run.id))).run.progress
            if progress.queued == 0 and progress.running == 0:
                seconds = now - started
                break
            if now >= next_poll:
                wanted = int(await conn.fetchval(query))
                target = min(max(wanted, 0), most)
                decisions.append((round(now - started, 1), wanted, target))
                if target > len(running):
                    running += await asyncio.to_thread(spawn, target - len(running), env, addresses)
                while len(running) > target:  # a ReplicaSet removes its newest pods first
                    process = running.pop()
                    process.terminate()
                    stopped.append(process)
                peak = max(peak, len(running))
                next_poll = now + poll
            await asyncio.sleep(0.2)
    finally:
        for process in running + stopped:
            process.terminate()
        for process in running + stopped:
            process.wait(timeout=60)
        await conn.close()
        await planner_channel.close()
        await store_channel.close()
    rows = await attempts_of(url, run.id)
    trials = {}
    for row in rows:
        trials.setdefault(row["trial_id"], []).append(row["outcome"])
    return {
        "jobs": len(trials),
        "seconds": round(seconds, 2),
        "executor_seconds": round(executor_seconds, 1),
        "peak_executors": peak,
        "scale_changes": sum(1 for a, b in zip(decisions, decisions[1:]) if a[2] != b[2]),
        "released_attempts": sum(1 for row in rows if row["outcome"] != "completed"),
        "every_trial_once": all(outcomes.count("completed") == 1 for outcomes in trials.values()),
        "decisions": decisions,
    }


async def measure_drain(concurrency: int, env: dict, addresses: dict, url: str, dataset, scratch: Path) -> dict:
    """One executor working `concurrency` long attempts gets SIGTERM, as a scaled-down pod
    does: the seconds until every attempt is back in the queue, and until the process exits."""
    from hemra.services.common import transport
    from hemra.v1 import common_pb2 as pb
    from hemra.v1 import planner_service_pb2 as ppb
    from hemra.v1 import store_service_pb2 as spb

    harness = make_harness(scratch / "drain", 600)
    command = ["--store", addresses["store"], "--scorer", addresses["scorer"], "--concurrency", str(concurrency)]
    executor, _ = start("hemra.services.executor", env, *command)
    planner_channel, store_channel = transport.channel(addresses["planner"]), transport.channel(addresses["store"])
    planner, store = transport.planner(planner_channel, TOKEN), transport.store(store_channel, TOKEN)
    try:
        spec = pb.RunSpec(
            harnesses=[str(harness)], datasets=[str(dataset)], concurrency=concurrency, label="drain", sandbox="host"
        )
        run = (await planner.PlanRun(ppb.PlanRunRequest(spec=spec))).run
        while (await store.GetRun(spb.GetRunRequest(run=run.id))).run.progress.running < concurrency:
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)  # the harnesses are running, not starting
        signalled = time.perf_counter()
        executor.terminate()
        while (await store.GetRun(spb.GetRunRequest(run=run.id))).run.progress.running:
            await asyncio.sleep(0.05)
        handed_back = time.perf_counter() - signalled
        executor.wait(timeout=120)
        exited = time.perf_counter() - signalled
        await store.CancelRun(spb.CancelRunRequest(run=run.id))
    finally:
        if executor.poll() is None:
            executor.kill()
        await planner_channel.close()
        await store_channel.close()
    return {"concurrency": concurrency, "handed_back_s": round(handed_back, 2), "exited_s": round(exited, 2)}


async def measure(
    n: int, jobs: int, scratch: Path, env: dict, addresses: dict, url: str, dataset, harness, meter=None
) -> dict:
    from hemra.v1 import common_pb2 as pb

    executors = [
        start("hemra.services.executor", env, "--store", addresses["store"], "--scorer", addresses["scorer"])[0]
        for _ in range(n)
    ]
    cpu = {}
    try:
        if meter:
            await meter.start()
            executors_before = cpu_seconds([p.pid for p in executors], children=True)
        spec = pb.RunSpec(
            harnesses=[str(harness)],
            datasets=[str(dataset)],
            attempts=max(1, -(-jobs // TASKS)),
            concurrency=n,
            label=f"scale-{n}",
            sandbox="host",
        )
        run_id, seconds = await submit_and_wait(addresses["planner"], addresses["store"], spec)
        if meter:
            cpu["store"], cpu["postgres"] = await meter.stop()
            after = cpu_seconds([p.pid for p in executors], children=True)
            cpu["executors"] = sum(after[p] - executors_before.get(p, 0.0) for p in after)
    finally:
        for process in executors:
            process.terminate()
        for process in executors:
            process.wait(timeout=60)
    return summary(n, await attempts_of(url, run_id), seconds, cpu)


def summary(executors: int, rows, seconds: float, cpu: dict[str, float]) -> dict:
    """One measurement's figures, from its attempts' rows (trial_id, worker, outcome,
    start_time, end_time), its wall time and the CPU seconds each kind of process spent."""
    trials: dict[str, list] = {}
    for row in rows:
        trials.setdefault(row["trial_id"], []).append(row["outcome"])
    gaps = claim_gaps(rows)
    return {
        "executors": executors,
        "jobs": len(trials),
        "seconds": round(seconds, 2),
        "jobs_per_s": round(len(trials) / seconds, 3),
        "claim_gap_p50_ms": round(1000 * percentile(gaps, 0.50), 1),
        "claim_gap_p99_ms": round(1000 * percentile(gaps, 0.99), 1),
        **{f"{who}_cpu_ms_per_job": round(1000 * spent / len(trials), 1) for who, spent in cpu.items()},
        "every_trial_once": all(outcomes.count("completed") == 1 for outcomes in trials.values()),
    }


def print_keda(keda: dict) -> None:
    fixed, scaled = keda["fixed"], keda["keda"]
    fixed_cost = fixed["seconds"] * fixed["executors"]
    time_ratio, cost_ratio = scaled["seconds"] / fixed["seconds"], scaled["executor_seconds"] / fixed_cost
    most, poll = fixed["executors"], keda["poll"]
    print(f"\nKEDA simulated: the query every {poll:g} s, 0..{most} executors, {scaled['jobs']} jobs")
    print(f"  fixed pool of {fixed['executors']}: drained in {fixed['seconds']} s, {fixed_cost:.0f} executor-seconds")
    print(
        f"  KEDA: drained in {scaled['seconds']} s ({time_ratio:.2f}x the fixed pool's time),"
        f" {scaled['executor_seconds']:.0f} executor-seconds ({cost_ratio:.2f}x), peak {scaled['peak_executors']},"
        f" {scaled['scale_changes']} scale changes, {scaled['released_attempts']} attempts handed back on scale-down"
    )
    drain = keda["drain"]
    print(
        f"  SIGTERM to an executor working {drain['concurrency']} attempts: all back in the queue after"
        f" {drain['handed_back_s']} s, the process gone after {drain['exited_s']} s"
    )


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--baseline-jobs", type=int, default=100)
    parser.add_argument("--executors", default="1,4,8,16")
    parser.add_argument("--sleep", type=float, default=1.0)
    parser.add_argument("--keep", action="store_true", help="keep the database and the scratch folder")
    parser.add_argument("--keda", action="store_true", help="then simulate KEDA on a burst (see above)")
    parser.add_argument("--keda-poll", type=float, default=15.0, help="seconds between queries (the chart's)")
    parser.add_argument("--keda-max", type=int, default=16, help="maxReplicaCount, and the fixed pool's size")
    args = parser.parse_args()
    counts = [int(x) for x in args.executors.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="hemra-scale-"))
    name = "hemra_scale_" + secrets.token_hex(6)
    url = POSTGRES_ADMIN.rsplit("/", 1)[0] + "/" + name
    await admin(f"CREATE DATABASE {name}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEMRA_")}
    env.update(HEMRA_TOKEN=TOKEN, HEMRA_DATABASE_URL=url, HEMRA_HOME=str(scratch / "home"))
    services = []
    try:
        subprocess.run(
            [sys.executable, "-m", "hemra.clients.cli.main", "db", "upgrade"],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
        store, store_addr = start("hemra.services.store", env)
        services.append(store)
        await until_serving([store_addr])
        planner, planner_addr = start("hemra.services.planner", env, "--store", store_addr)
        scorer, scorer_addr = start("hemra.services.scorer", env, "--store", store_addr)
        services += [planner, scorer]
        addresses = {"store": store_addr, "planner": planner_addr, "scorer": scorer_addr}
        dataset, harness = make_dataset(scratch), make_harness(scratch, args.sleep)
        results = []
        meter = CpuMeter([store.pid], POSTGRES_ADMIN, name)
        for n in counts:
            jobs = args.baseline_jobs if n == 1 else args.jobs
            result = await measure(n, jobs, scratch, env, addresses, url, dataset, harness, meter)
            results.append(result)
            print(json.dumps(result), flush=True)
        keda = None
        if args.keda:
            fixed = next((r for r in results if r["executors"] == args.keda_max), None)
            if fixed is None:
                fixed = await measure(args.keda_max, args.jobs, scratch, env, addresses, url, dataset, harness)
                print(json.dumps(fixed), flush=True)
            scaled = await measure_keda(args.jobs, args.keda_poll, args.keda_max, env, addresses, url, dataset, harness)
            print(json.dumps(scaled), flush=True)
            drain = await measure_drain(4, env, addresses, url, dataset, scratch)
            print(json.dumps(drain), flush=True)
            keda = {"fixed": fixed, "keda": scaled, "poll": args.keda_poll, "drain": drain}
    finally:
        for process in services:
            process.terminate()
            process.wait(timeout=30)
        if not args.keep:
            await admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            subprocess.run(["rm", "-rf", str(scratch)])
    base = next((r for r in results if r["executors"] == 1), None)
    print(
        f"\n{'executors':>9} {'jobs':>6} {'seconds':>8} {'jobs/s':>8} {'speed-up':>9} {'gap p50':>8} {'gap p99':>8}",
        end="",
    )
    print(f" {'CPU ms/job: store':>17} {'postgres':>8} {'executors':>9}")
    for r in results:
        r["speed_up"] = round(r["jobs_per_s"] / base["jobs_per_s"], 2) if base else None
        print(
            f"{r['executors']:>9} {r['jobs']:>6} {r['seconds']:>8} {r['jobs_per_s']:>8} {r['speed_up'] or '-':>9} "
            f"{r['claim_gap_p50_ms']:>6}ms {r['claim_gap_p99_ms']:>6}ms {r.get('store_cpu_ms_per_job', '-'):>17} "
            f"{r.get('postgres_cpu_ms_per_job', '-'):>8} {r.get('executors_cpu_ms_per_job', '-'):>9}"
        )
    top = max(results, key=lambda r: r["executors"])
    if base and top["executors"] == 16:
        verdict = "met" if top["speed_up"] >= 13 else "missed"
        print(f"target: speed-up >= 13x at 16 executors: {top['speed_up']}x ({verdict})")
    if keda:
        print_keda(keda)
    out = ROOT / "bench" / "results" / f"scale-out-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"sleep": args.sleep, "results": results, "keda": keda}, indent=1))
    checked = results + ([keda["keda"]] if keda else [])
    return 0 if all(r["every_trial_once"] for r in checked) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
