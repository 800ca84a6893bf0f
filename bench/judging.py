"""Judging 1,000 trials: `hemra judge`'s path (ScorerService.JudgeRun over the embedded services and
a SQLite store) against the scripted model server answering each call after a simulated latency.

    .venv/bin/python bench/judging.py [--trials 1000] [--latency 0.05] [--concurrency 8,32] [--keep]

1. A fresh HEMRA_HOME whose store holds one import of N finished trials (recorded directly with
   Store.record_run, as bench/imports_compare.py does).
2. For each concurrency C: a judge file with two criteria, one batched call per trial, `concurrency
   = C`, against the scripted model server on loopback that waits `latency` seconds before each
   answer. Time JudgeRun over the whole import (in-process gRPC, as `hemra judge` on one machine
   does). The ideal is N x latency / C: the calls alone, perfectly overlapped. The floor, measured
   in the same run: N calls at concurrency C from a bare httpx client against the same server (what
   the server and the transport cost on this machine, with no HEMRA).
3. The store's growth per judged trial: the SQLite file (with its WAL) and the blob folder (every
   request and response is kept) before and after the first judging, over N.

Checks: every trial judged, none failed, every score 0.0 (the scripted judge grades by the
rubric's expected text; an import of results holds no agent message for it to find), one call
per trial per judging. Exits 1 when a check fails; a missed
target is reported, not an error. Writes bench/results/judging-<timestamp>.json (gitignored).

Target: wall time <= 1.5 x the floor at each concurrency.
"""

import argparse
import asyncio
import datetime as dt
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.imports_compare import compare_plans  # noqa: E402

TARGET_RATIO = 1.5
JUDGE = """
[model]
api = "openai-chat"
id = "bench-judge-1"
base_url_env = "BENCH_JUDGE_URL"
api_key_env = "BENCH_JUDGE_KEY"

[[criterion]]
id = "named"
description = "The task is named"
expected = "bench/task"

[[criterion]]
id = "tidy"
description = "The answer is tidy"
type = "likert"
points = 5
expected = "bench/task"

[retries]
concurrency = {concurrency}
timeout_secs = 30
"""


class ModelServerProcess:
    """The scripted model server in its own process, as a model API is: judging's cost here is
    the scorer's and the store's, not the server's share of this process."""

    def __init__(self, script: Path):
        self.script = script

    def __enter__(self) -> "ModelServerProcess":
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.modelserver", "--script", str(self.script), "--port", "0", "--count"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline()
        self.url = line.rsplit(" ", 1)[-1].strip()
        return self

    def requests(self) -> int:
        """Model requests served so far (the server prints the count on SIGUSR1)."""
        self.process.send_signal(signal.SIGUSR1)
        return int(self.process.stdout.readline().split()[-1])

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def db_bytes(home: Path) -> int:
    return sum(p.stat().st_size for p in home.glob("hemra.db*"))


async def record_import(home: Path, trials: int) -> str:
    from hemra.services.store.service import Store
    from hemra.services.store.settings import StoreSettings

    settings = StoreSettings.from_env(None, home)
    [plan, _], _ = compare_plans(trials, random.Random(1))
    store = await Store.open(f"sqlite:///{home / 'hemra.db'}", settings.blob_dir)
    try:
        await store.record_run(plan)
    finally:
        await store.close()
    return plan.label


async def judge_once(home: Path, label: str, judge_file: Path) -> tuple[float, object]:
    from hemra.services.common import judges
    from hemra.services.compose import embedded
    from hemra.v1 import scorer_service_pb2 as scpb

    spec = judges.load(judge_file).spec()
    async with embedded.services(home, f"sqlite:///{home / 'hemra.db'}") as services:
        start = time.perf_counter()
        response = await services.scorer.JudgeRun(scpb.JudgeRunRequest(run=label, judge=spec), timeout=3600)
        return time.perf_counter() - start, response


async def bare_floor(url: str, calls: int, concurrency: int) -> float:
    """The same number of calls at the same concurrency from a bare HTTP client, no HEMRA: what
    the model server and the transport cost here."""
    import httpx

    slots = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(timeout=None, limits=limits) as http:

        async def one(index: int) -> None:
            body = {
                "model": "floor",
                "messages": [{"role": "system", "content": "-"}, {"role": "user", "content": str(index)}],
            }
            async with slots:
                (await http.post(url + "/v1/chat/completions", json=body)).raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(calls)))
        return time.perf_counter() - start


async def scores_of(home: Path, label: str) -> list[float]:
    from hemra.services.compose import embedded
    from hemra.v1 import store_service_pb2 as spb

    values, token = [], ""
    async with embedded.services(home, f"sqlite:///{home / 'hemra.db'}") as services:
        while True:
            page = await services.store.ListAttempts(spb.ListAttemptsRequest(parent=label, page_token=token))
            values += [a.judge_scores[0].rewards.get(a.judge_scores[0].judge, -1.0) for a in page.attempts]
            token = page.next_page_token
            if not token:
                return values


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", default="8,32")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="hemra-bench-judging-"))
    home = scratch / "home"
    home.mkdir()
    os.environ["HEMRA_HOME"] = str(home)
    label = asyncio.run(record_import(home, args.trials))
    rows, checks = [], []
    script = scratch / "script.json"
    script.write_text(json.dumps({"judge": [{"delay": args.latency, "judge": "rubric"}]}))
    with ModelServerProcess(script) as server:
        os.environ.update(BENCH_JUDGE_URL=server.url + "/v1", BENCH_JUDGE_KEY="bench")
        for index, concurrency in enumerate(int(c) for c in args.concurrency.split(",")):
            judge_file = scratch / f"judge-{concurrency}" / "judges" / "bench.toml"
            judge_file.parent.mkdir(parents=True)
            judge_file.write_text(JUDGE.format(concurrency=concurrency))
            before = (db_bytes(home), folder_bytes(home / "blobs"))
            wall, response = asyncio.run(judge_once(home, label, judge_file))
            after = (db_bytes(home), folder_bytes(home / "blobs"))
            ideal = args.trials * args.latency / concurrency
            floor = asyncio.run(bare_floor(server.url, args.trials, concurrency))
            row = {
                "concurrency": concurrency,
                "judged": response.judged,
                "failed": response.failed,
                "wall_s": round(wall, 3),
                "ideal_s": round(ideal, 3),
                "floor_s": round(floor, 3),
                "vs_ideal": round(wall / ideal, 3),
                "vs_floor": round(wall / floor, 3),
                "trials_per_s": round(args.trials / wall, 1),
            }
            if index == 0:
                row["db_bytes_per_trial"] = round((after[0] - before[0]) / args.trials)
                row["blob_bytes_per_trial"] = round((after[1] - before[1]) / args.trials)
            rows.append(row)
            checks.append(("every trial judged, none failed", response.judged == args.trials and not response.failed))
        values = asyncio.run(scores_of(home, label))
        checks.append(("every score 0.0", len(values) == args.trials and all(v == 0.0 for v in values)))
        calls = server.requests()
        checks.append((f"one call per trial per judging ({calls})", calls == 2 * args.trials * len(rows)))
    print(f"judging {args.trials} trials, {args.latency * 1000:.0f} ms per call (scripted model server, SQLite)")
    print(
        f"{'concurrency':>11} {'wall s':>7} {'ideal s':>7} {'floor s':>7} {'/ideal':>6} {'/floor':>6} {'trials/s':>8}"
    )
    for row in rows:
        print(
            f"{row['concurrency']:>11} {row['wall_s']:>7.2f} {row['ideal_s']:>7.2f} {row['floor_s']:>7.2f} "
            f"{row['vs_ideal']:>6.2f} {row['vs_floor']:>6.2f} {row['trials_per_s']:>8.1f}"
        )
    first = rows[0]
    print(
        f"store growth per judged trial (2 criteria, 1 call): {first['db_bytes_per_trial']} bytes of database, "
        f"{first['blob_bytes_per_trial']} bytes of blobs (the call's request and response)"
    )
    for row in rows:
        met = row["vs_floor"] <= TARGET_RATIO
        print(
            f"target: wall <= {TARGET_RATIO} x the bare-client floor at concurrency {row['concurrency']}: "
            f"{'met' if met else 'MISSED'}"
        )
    failed = [name for name, ok in checks if not ok]
    for name in failed:
        print(f"CHECK FAILED: {name}")
    RESULTS_DIR.mkdir(exist_ok=True)
    out = RESULTS_DIR / f"judging-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    out.write_text(json.dumps({"args": vars(args), "rows": rows, "checks": checks}, indent=2))
    if args.keep:
        print(f"kept {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
