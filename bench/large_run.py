"""A large run end to end through the embedded default: what grows with the number of trials.

    .venv/bin/python bench/large_run.py [--trials 2000] [--tasks 100] [--concurrency 8]
                                        [--every 2.0] [--timeout 3600] [--keep]

Builds a dataset of --tasks trivial tasks (orchestration.py's: an oracle that sums five
numbers in bash, a verifier that checks the sum), then runs, in a fresh HEMRA_HOME (SQLite,
no HEMRA_DATABASE_URL), `hemra run -H oracle -d <dataset> -k <trials/tasks> --concurrency 8
--sandbox host`. Every --every seconds it samples the resident memory (VmRSS) of the hemra
process and of each of its descendants (bwrap, the sandboxed shells, any helper), and how many
attempts have finished (read-only from the SQLite database).

Reported: the wall time against the sum of the trials' attempt times (start to end of each
attempt, as the store records them: the time spent in sandboxes) divided by the concurrency,
the store's size (hemra.db with its WAL, and the blob folder), the hemra process's RSS at each
quarter of the run and its peak, the peak RSS of any other process (by command), and the RSS
slope per 1,000 finished attempts over the second half of the run (0 when nothing grows but
the store). Checks: the run exits 0 and every trial finished once and passed.

With --trace the CLI runs under tracemalloc (--trace-frames, 4), snapshots are taken at 25% and 95%
of the trials (SIGUSR1), and the lines whose allocations grew between them are printed: where
memory that grows with the trials is held. Slower; its timings are not comparable.

Writes bench/results/large-run-<timestamp>.json. Exits 1 when a check fails.
"""

import argparse
import datetime as dt
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import orchestration  # noqa: E402  (the trivial dataset)

#: `--trace`: the CLI under tracemalloc; each SIGUSR1 writes a snapshot (snapshot-<n>.pickle).
TRACED = """
import os, signal, sys, tracemalloc, runpy
tracemalloc.start(int(os.environ["HEMRA_BENCH_TRACE_FRAMES"]))
taken = [0]
def snapshot(*_):
    taken[0] += 1
    folder = os.environ["HEMRA_BENCH_TRACE_DIR"]
    tracemalloc.take_snapshot().dump(os.path.join(folder, f"snapshot-{taken[0]}.pickle"))
signal.signal(signal.SIGUSR1, snapshot)
sys.argv[0] = "hemra"
runpy.run_module("hemra.clients.cli.main", run_name="__main__")
"""


def growth(folder: Path, top: int = 15) -> list[str]:
    """What was allocated between the first and the last snapshot and is still held, by
    traceback, largest first (what was freed in between is left out of the lines)."""
    import tracemalloc

    snapshots = sorted(folder.glob("snapshot-*.pickle"), key=lambda p: int(p.stem.split("-")[1]))
    first, last = tracemalloc.Snapshot.load(str(snapshots[0])), tracemalloc.Snapshot.load(str(snapshots[-1]))
    diff = last.compare_to(first, "traceback")
    lines = [f"total {sum(d.size_diff for d in diff) / 1024:+.0f} KiB between the snapshots"]
    grown = sorted((d for d in diff if d.size_diff > 0), key=lambda d: d.size_diff, reverse=True)
    for stat in grown[:top]:
        where = " <- ".join(f"{f.filename.split('/wt-scale/')[-1]}:{f.lineno}" for f in stat.traceback)
        lines.append(f"{stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks  {where}")
    return lines


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return 0  # a zombie


def children_of() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError):
            continue
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def descendants(root: int) -> list[int]:
    tree, found, todo = children_of(), [], [root]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def command_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def finished(database: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT count(*) FROM attempts WHERE state = 'finished'").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return -1  # not created yet, or busy: the next sample counts


class Sampler(threading.Thread):
    def __init__(self, pid: int, database: Path, every: float, marks: list[int] = ()):
        super().__init__(daemon=True)
        self.pid, self.database, self.every = pid, database, every
        self.marks = sorted(marks)  # finished counts at which to signal a snapshot
        self.samples: list[dict] = []
        self.peaks: dict[str, int] = {}
        self.command = ""
        self.done = threading.Event()
        self.started = time.perf_counter()

    def run(self) -> None:
        while not self.done.wait(self.every):
            main = rss_kib(self.pid)
            if main is None:
                return
            self.command = self.command or command_of(self.pid)
            for child in descendants(self.pid):
                kib = rss_kib(child)
                # A child still named as its parent is the hemra process forked, not yet exec'd.
                if kib and command_of(child) != self.command:
                    name = command_of(child)
                    self.peaks[name] = max(self.peaks.get(name, 0), kib)
            count = finished(self.database)
            self.samples.append({"t": round(time.perf_counter() - self.started, 1), "rss_kib": main, "finished": count})
            if self.marks and count >= self.marks[0]:
                self.marks.pop(0)
                os.kill(self.pid, signal.SIGUSR1)


def slope_per_1000(samples: list[dict]) -> float:
    """Least-squares KiB of the hemra process's RSS per 1,000 finished attempts, second half."""
    points = [(s["finished"], s["rss_kib"]) for s in samples if s["finished"] >= 0]
    points = points[len(points) // 2 :]
    if len(points) < 3:
        return float("nan")
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    var = sum((x - mean_x) ** 2 for x, _ in points)
    if var == 0:
        return float("nan")
    return 1000 * sum((x - mean_x) * (y - mean_y) for x, y in points) / var


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def attempt_seconds(database: Path) -> tuple[float, int, int, int]:
    """(sum of attempt times, attempts, finished trials passed, distinct trials)."""
    conn = sqlite3.connect(database)
    try:
        total, count = conn.execute(
            "SELECT sum(end_time - start_time), count(*) FROM attempts WHERE state = 'finished'"
        ).fetchone()
        passed = conn.execute("SELECT count(*) FROM attempts WHERE verdict = 'passed'").fetchone()[0]
        trials = conn.execute("SELECT count(DISTINCT trial_id) FROM attempts").fetchone()[0]
    finally:
        conn.close()
    return float(total or 0.0), count, passed, trials


def quarters(samples: list[dict]) -> list[int]:
    if not samples:
        return []
    return [samples[min(len(samples) - 1, int(q * len(samples)))]["rss_kib"] for q in (0.25, 0.5, 0.75)] + [
        samples[-1]["rss_kib"]
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--every", type=float, default=2.0, help="seconds between memory samples")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--keep", action="store_true", help="keep the dataset and the HEMRA home")
    parser.add_argument(
        "--trace",
        action="store_true",
        help="run under tracemalloc (slower): print what is allocated from 25%% to 95%% of the trials and kept",
    )
    parser.add_argument("--trace-frames", type=int, default=4, help="frames tracemalloc keeps per allocation")
    args = parser.parse_args()
    attempts = max(1, -(-args.trials // args.tasks))
    trials = attempts * args.tasks
    scratch = Path(tempfile.mkdtemp(prefix="hemra-large-"))
    dataset, home = scratch / "dataset", scratch / "home"
    orchestration.make_dataset(dataset, args.tasks)
    env = {**os.environ, "HEMRA_HOME": str(home)}
    env.pop("HEMRA_DATABASE_URL", None)
    # This checkout's CLI, whichever checkout the venv was installed from.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), str(ROOT / "protos"), env.get("PYTHONPATH")]))
    if args.trace:
        env.update(HEMRA_BENCH_TRACE_DIR=str(scratch), HEMRA_BENCH_TRACE_FRAMES=str(args.trace_frames))
    command = [sys.executable, "-c", TRACED] if args.trace else [sys.executable, "-m", "hemra.clients.cli.main"]
    command += ["run", "-H", "oracle", "-d", str(dataset), "-k", str(attempts)]
    command += ["--concurrency", str(args.concurrency), "--sandbox", "host"]
    log = scratch / "hemra.out"
    started = time.perf_counter()
    with log.open("w") as out:
        process = subprocess.Popen(command, env=env, cwd=scratch, stdout=out, stderr=subprocess.STDOUT)
        marks = [trials // 4, trials * 95 // 100] if args.trace else []
        sampler = Sampler(process.pid, home / "hemra.db", args.every, marks)
        sampler.start()
        try:
            code = process.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            process.terminate()
            code = process.wait(timeout=60)
            print(f"hemra run did not finish in {args.timeout:g} s", file=sys.stderr)
        sampler.done.set()
        sampler.join()
    wall = time.perf_counter() - started
    busy, count, passed, distinct = attempt_seconds(home / "hemra.db")
    store = {
        "database_bytes": sum(size_of(p) for p in home.glob("hemra.db*")),
        "blob_bytes": size_of(home / "blobs"),
        "home_bytes": size_of(home),
    }
    samples = sampler.samples
    result = {
        "trials": trials,
        "tasks": args.tasks,
        "attempts_per_task": attempts,
        "concurrency": args.concurrency,
        "exit_code": code,
        "wall_s": round(wall, 1),
        "trials_per_s": round(trials / wall, 2),
        "attempt_seconds_sum": round(busy, 1),
        "wall_over_sum_div_concurrency": round(wall / (busy / args.concurrency), 2) if busy else None,
        "finished_attempts": count,
        "passed": passed,
        "distinct_trials": distinct,
        **store,
        "store_bytes_per_trial": round((store["database_bytes"] + store["blob_bytes"]) / max(trials, 1)),
        "hemra_rss_quarters_mib": [round(k / 1024, 1) for k in quarters(samples)],
        "hemra_rss_peak_mib": round(max((s["rss_kib"] for s in samples), default=0) / 1024, 1),
        "hemra_rss_slope_kib_per_1000_trials": round(slope_per_1000(samples), 1),
        "children_peak_rss_mib": {k: round(v / 1024, 1) for k, v in sorted(sampler.peaks.items())},
        "samples": samples,
    }
    ok = code == 0 and count == trials and passed == trials and distinct == trials
    summary = {k: v for k, v in result.items() if k != "samples"}
    print(json.dumps(summary, indent=1))
    print(
        f"\n{trials} trials, concurrency {args.concurrency}: wall {result['wall_s']} s, attempts' time summed"
        f" {result['attempt_seconds_sum']} s (/{args.concurrency} = {busy / args.concurrency:.1f} s):"
        f" wall / (sum / concurrency) = {result['wall_over_sum_div_concurrency']}"
    )
    print(
        f"store: {store['database_bytes'] / 1e6:.1f} MB database + {store['blob_bytes'] / 1e6:.1f} MB blobs"
        f" ({result['store_bytes_per_trial']} B/trial); hemra RSS at quarters {result['hemra_rss_quarters_mib']} MiB,"
        f" peak {result['hemra_rss_peak_mib']} MiB, slope {result['hemra_rss_slope_kib_per_1000_trials']} KiB"
        " per 1,000 trials (second half)"
    )
    print(f"checks: exit {code}, {count}/{trials} attempts finished, {passed} passed: {'ok' if ok else 'FAILED'}")
    out = BENCH_DIR / "results" / f"large-run-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    if args.trace and len(list(scratch.glob("snapshot-*.pickle"))) >= 2:
        result["growth"] = growth(scratch)
        print(f"\nallocated between 25% and 95% of the trials and still held ({args.trace_frames} frames):")
        print("\n".join(result["growth"]))
        out.write_text(json.dumps(result, indent=1))
    if not ok:
        print(log.read_text()[-3000:], file=sys.stderr)
    if args.keep:
        print(f"kept: {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
