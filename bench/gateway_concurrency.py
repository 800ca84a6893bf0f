"""The read API under concurrent readers: 1 client against 8 on one `hemra serve`.

    .venv/bin/python bench/gateway_concurrency.py [--clients 8] [--seconds 4] [--repeat 3] [--keep]

1. Store. A fresh HEMRA_HOME whose SQLite store holds 4 small finished runs (2 harnesses x 20
   tasks x 2 repetitions: 80 attempts each), recorded with the store's own Store.record_run
   (bench/gateway.py's plans()).
2. Server. `hemra serve --concurrency 0` on loopback, as on a laptop (extra options after `--`
   go to it, e.g. `-- --gateway-workers 2`).
3. Load. For each route (health, runs list, run report, attempts page), one client alone, then
   `--clients` clients at once, each on its own kept-alive connection sending its next request
   as soon as the last one is answered, for `--seconds` each (after a short warm-up). The
   clients are asyncio streams in one process (a minimal HTTP/1.1 reader: little CPU of their
   own on a 2-core machine). Every answer must be 200; the first of each route is checked.
4. Figures per route and concurrency: requests/s, p50, p99 and max latency; the ratios
   throughput(N clients) / throughput(1 client) and, at N clients, p99 / p50.

Repeated `--repeat` times on the same server; the table shows medians and the spread (min-max)
of the ratios. Targets at N clients: p99 <= 3x p50 (no request starves) and throughput >= 1.5x
one client's. Bounded: every phase stops after its seconds, a request waits at most 30 s, and
the whole run is killed at `--deadline`. Writes bench/results/gateway-concurrency-<timestamp>.json.
Exits 1 when a check fails (HTTP error, wrong answer); a missed target is reported, not an error.
"""

import argparse
import asyncio
import datetime as dt
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
if sys.path[0] != str(REPO):
    sys.path.insert(0, str(REPO))

from bench.gateway import free_port, percentile, plans  # noqa: E402

RUNS, TASKS, REPETITIONS = 4, 20, 2
TARGET_TAIL = 3.0  # p99 / p50 at N clients
TARGET_SPEEDUP = 1.5  # requests/s at N clients / at 1
REQUEST_TIMEOUT = 30.0


async def build_store(home: Path) -> list[str]:
    from hemra.services.store.service import Store

    store = await Store.open(f"sqlite:///{home / 'hemra.db'}", home / "blobs")
    try:
        return [
            (await store.record_run(plan))[0].id
            for plan in plans(RUNS, random.Random(7), task_count=TASKS, repetitions=REPETITIONS)
        ]
    finally:
        await store.close()


def routes(runs: list[str]) -> list[tuple[str, str]]:
    return [
        ("health", "/api/health"),
        ("runs", "/api/runs"),
        ("report", f"/api/runs/{runs[-1]}/report"),
        ("attempts", f"/api/runs/{runs[-1]}/attempts"),
    ]


def hemra_command() -> list[str]:
    """`hemra` of this checkout: its own .venv's, else this interpreter with the repo on the path."""
    own = REPO / ".venv" / "bin" / "hemra"
    if own.exists():
        return [str(own)]
    return [sys.executable, "-c", "import sys; from hemra.clients.cli.main import main; sys.argv[0] = 'hemra'; main()"]


def start_server(home: Path, extra: list[str]) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEMRA_")} | {"HEMRA_HOME": str(home)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), str(REPO / "protos"), env.get("PYTHONPATH")]))
    command = [*hemra_command(), "serve", "--concurrency", "0", "--listen", f"127.0.0.1:{port}"]
    command += ["--store-listen", "127.0.0.1:0", *extra]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"hemra serve exited: {process.stdout.read()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code == 200:
                return process, port
        except httpx.HTTPError:
            time.sleep(0.2)
    stop_server(process)
    sys.exit("hemra serve did not answer in 60 s")


def stop_server(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


# --- the clients --------------------------------------------------------------------------------


class Connection:
    """One kept-alive HTTP/1.1 connection: GET, read the status and a Content-Length body."""

    def __init__(self, port: int):
        self.port = port
        self.reader = self.writer = None

    async def get(self, path: str) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = next(int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:"))
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def client(port: int, path: str, until: float, warm_until: float, times: list, problems: list) -> None:
    connection = Connection(port)
    try:
        while time.perf_counter() < until:
            started = time.perf_counter()
            status, body = await asyncio.wait_for(connection.get(path), REQUEST_TIMEOUT)
            elapsed = time.perf_counter() - started
            if status != 200:
                problems.append(f"{path}: HTTP {status} {body[:200]!r}")
                return
            if started >= warm_until:
                times.append((started, elapsed))
    finally:
        connection.close()


def tree_cpu(pid: int) -> float:
    """User + system seconds of `pid` and every process under it (hemra serve and its HTTP
    processes), from /proc: unlike latency, barely moved by other work on the machine."""
    total, ticks = 0.0, os.sysconf("SC_CLK_TCK")
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                total += sum(tree_cpu(int(child)) for child in f.read().split())
    except (FileNotFoundError, ProcessLookupError):
        pass
    return total


async def phase(port: int, path: str, clients: int, seconds: float, warm: float, server: int = 0) -> dict:
    """`clients` clients on `path` for `warm` + `seconds`; figures of the requests started after
    warm-up, and the server's CPU seconds over that window (`server`: its PID)."""
    problems: list[str] = []
    times: list[list] = [[] for _ in range(clients)]
    begin = time.perf_counter()
    warm_until, until = begin + warm, begin + warm + seconds

    async def cpu_at_warm_end() -> float:
        await asyncio.sleep(max(warm_until - time.perf_counter(), 0))
        return tree_cpu(server) if server else 0.0

    cpu_start = asyncio.ensure_future(cpu_at_warm_end())
    await asyncio.gather(*(client(port, path, until, warm_until, times[i], problems) for i in range(clients)))
    cpu = (tree_cpu(server) - await cpu_start) if server else 0.0
    latencies = [e * 1000 for per in times for _, e in per]
    if problems or not latencies:
        return dict(problems=problems or [f"{path}: no answer in {seconds} s"])
    # Requests/s over the measured window: requests started in it, answered by its end.
    spans = [s + e for per in times for s, e in per]
    window = max(spans) - warm_until
    per_client = [len(per) for per in times]
    return dict(
        clients=clients,
        n=len(latencies),
        rps=len(latencies) / window,
        p50_ms=percentile(latencies, 50),
        p99_ms=percentile(latencies, 99),
        max_ms=max(latencies),
        server_cpu_ms_per_request=1000 * cpu / len(latencies),
        fewest_per_client=min(per_client),
        most_per_client=max(per_client),
        problems=[],
    )


def check_answers(port: int, runs: list[str]) -> list[str]:
    import httpx

    base = f"http://127.0.0.1:{port}"
    problems = []
    body = httpx.get(f"{base}/api/runs", timeout=30).json()
    if sorted(r["id"] for r in body["runs"]) != sorted(runs):
        problems.append(f"runs list: {[r['id'] for r in body['runs']]}, expected {runs}")
    report = httpx.get(f"{base}/api/runs/{runs[-1]}/report", timeout=30).json()
    if not report.get("datasets") or not report.get("complete"):
        problems.append("report: no datasets, or not complete")
    attempts = httpx.get(f"{base}/api/runs/{runs[-1]}/attempts", timeout=30).json()["attempts"]
    if len(attempts) != 2 * TASKS * REPETITIONS:
        problems.append(f"attempts page: {len(attempts)} attempts, expected {2 * TASKS * REPETITIONS}")
    return problems


async def measure(port: int, runs: list[str], args, server: int = 0) -> tuple[list[dict], list[str]]:
    rows, problems = [], []
    for name, path in routes(runs):
        one = await phase(port, path, 1, args.seconds, args.warm, server)
        many = await phase(port, path, args.clients, args.seconds, args.warm, server)
        problems += one["problems"] + many["problems"]
        if not problems:
            rows.append(dict(route=name, path=path, one=one, many=many))
        print(f"  {name}: {one.get('rps', 0):.0f} -> {many.get('rps', 0):.0f} req/s", flush=True)
    return rows, problems


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def summarize(repeats: list[list[dict]], args) -> tuple[list[str], list[dict]]:
    lines, summary = [], []
    n = args.clients
    lines.append(
        f"{'route':9} {'1: rps':>7} {'p50':>6} {'p99':>6} {'max':>6} | {n}: rps {'p50':>6} {'p99':>6} {'max':>6}"
        f" | {'rps x':>5} {'(spread)':>11} {'p99/p50':>7} {'(spread)':>11} | CPU ms/req 1, {n}"
    )
    for i, first in enumerate(repeats[0]):
        rows = [rep[i] for rep in repeats]

        def med(side: str, key: str, rows=rows) -> float:
            return statistics.median(r[side][key] for r in rows)

        speedups = [r["many"]["rps"] / r["one"]["rps"] for r in rows]
        tails = [r["many"]["p99_ms"] / r["many"]["p50_ms"] for r in rows]
        speedup, tail = statistics.median(speedups), statistics.median(tails)
        missed = []
        if first["route"] != "health":
            missed = [m for m, bad in (("rps", speedup < TARGET_SPEEDUP), ("tail", tail > TARGET_TAIL)) if bad]
        lines.append(
            f"{first['route']:9} {med('one', 'rps'):7.0f} {med('one', 'p50_ms'):6.1f} {med('one', 'p99_ms'):6.1f}"
            f" {med('one', 'max_ms'):6.0f} | {med('many', 'rps'):6.0f} {med('many', 'p50_ms'):6.1f}"
            f" {med('many', 'p99_ms'):6.1f} {med('many', 'max_ms'):6.0f}"
            f" | {speedup:5.2f} ({min(speedups):.2f}-{max(speedups):.2f}) {tail:7.2f}"
            f" ({min(tails):.2f}-{max(tails):.2f}) | {med('one', 'server_cpu_ms_per_request'):5.2f},"
            f" {med('many', 'server_cpu_ms_per_request'):5.2f}{'  MISSED ' + ', '.join(missed) if missed else ''}"
        )
        summary.append(
            dict(route=first["route"], speedup=speedup, speedups=speedups, tail=tail, tails=tails, missed=missed)
        )
    return lines, summary


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    parser.add_argument("--seconds", type=float, default=4.0, help="measured seconds per phase (default 4)")
    parser.add_argument("--warm", type=float, default=0.5, help="warm-up seconds per phase (default 0.5)")
    parser.add_argument("--repeat", type=int, default=3, help="measurements on the same server (default 3)")
    parser.add_argument("--deadline", type=float, default=900, help="stop everything after this many seconds")
    parser.add_argument("--keep", action="store_true", help="keep the generated HEMRA_HOME")
    parser.add_argument("serve_options", nargs="*", help="after --: more options for hemra serve")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError(f"over {args.deadline} s")))
    signal.alarm(int(args.deadline))
    home = Path(tempfile.mkdtemp(prefix="hemra-bench-concurrency-")) / "home"
    home.mkdir()
    process = None
    try:
        runs = asyncio.run(build_store(home))
        process, port = start_server(home, args.serve_options)
        problems = check_answers(port, runs)
        repeats, loads = [], []
        for r in range(args.repeat):
            loads.append(load())
            print(f"measurement {r + 1}/{args.repeat} (load {loads[-1]}; {os.cpu_count()} CPUs)", flush=True)
            rows, found = asyncio.run(measure(port, runs, args, process.pid))
            problems += found
            if found:
                break
            repeats.append(rows)
        stop_server(process)
        if repeats:
            lines, summary = summarize(repeats, args)
            print(
                f"\nhemra serve {' '.join(args.serve_options)}: 1 client vs {args.clients}, {args.seconds:g} s each, "
                f"medians of {len(repeats)} (ms; spread min-max); load averages at each start: {'; '.join(loads)}"
            )
            print("\n".join(lines))
            missed = [f"{s['route']} {m}" for s in summary for m in s["missed"]]
            print(
                f"targets at {args.clients} clients (p99 <= {TARGET_TAIL:g}x p50, req/s >= {TARGET_SPEEDUP:g}x one"
                f" client's): {'all met' if not missed else 'missed: ' + ', '.join(missed)}"
            )
            RESULTS_DIR = BENCH_DIR / "results"
            RESULTS_DIR.mkdir(exist_ok=True)
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
            out = RESULTS_DIR / f"gateway-concurrency-{stamp}.json"
            out.write_text(json.dumps(dict(args=vars(args), loads=loads, repeats=repeats, summary=summary), indent=2))
            print(f"wrote {out}")
        for problem in problems:
            print(f"CHECK FAILED: {problem}")
        return 1 if problems else 0
    finally:
        if process is not None:
            stop_server(process)
        if args.keep:
            print(f"kept {home}")
        else:
            shutil.rmtree(home.parent, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
