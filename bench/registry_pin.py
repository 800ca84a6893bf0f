"""Pinning a Harbor registry dataset: `hemra datasets pin harbor:bench-ds@1.0` of N tasks (default
500) spread over R local git repositories (default 5), served as file:// URLs, each holding two
commits (the registry pins the older one), against `git clone` of the same repositories.

    .venv/bin/python bench/registry_pin.py [--tasks 500] [--repos 5] [--keep]

1. Make the repositories: N small Harbor tasks (copies of the bundled reverse-lines task, each
   with its own name and data), a first commit, then a second commit changing every task.
2. Floor: `git clone` (full, file://) of every repository, timed, and its size on disk.
3. `hemra datasets pin` in a fresh HEMRA_HOME (a subprocess: start-up counts), timed; its
   cache's size on disk and the store's. Then the same pin again (the registry unchanged: the
   pinned copy is kept, nothing fetched).
4. Checks: N tasks pinned, every one at the older commit, the second pin's digest equal to the
   first's. Exits 1 when a check fails. Writes bench/results/registry-pin-<timestamp>.json.

Floors measured in the same run: `git clone` of the repositories, and `hemra datasets list` (the
CLI's start-up with its embedded services, which every command pays today).

Targets: the first pin within 3x clone + start-up (it also hashes every file, stores it as a blob
and records the dataset); the second within 1.5x the start-up.
"""

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
HEMRA = REPO / ".venv" / "bin" / "hemra"
TASK = REPO / "examples" / "hemra-offline" / "reverse-lines"
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env={**os.environ, **GIT_ENV}, check=True
    )
    return done.stdout.strip()


def make_repositories(root: Path, tasks: int, repos: int) -> list[dict]:
    """The registry's task entries, pinned at each repository's first commit."""
    entries = []
    for r in range(repos):
        repo = root / f"repo-{r}"
        repo.mkdir(parents=True)
        git(repo, "init", "-q", "-b", "main")
        names = [f"task-{i:04d}" for i in range(r, tasks, repos)]
        for name in names:
            folder = repo / "tasks" / name
            shutil.copytree(TASK, folder)
            toml = folder / "task.toml"
            toml.write_text(toml.read_text().replace('"hemra/reverse-lines"', f'"bench/{name}"'))
            (folder / "environment" / "data" / "steps.txt").write_text(f"1. {name}\n2. done\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "first")
        first = git(repo, "rev-parse", "HEAD")
        for name in names:
            (repo / "tasks" / name / "instruction.md").write_text(f"Changed {name}.\n")
        git(repo, "commit", "-q", "-am", "second")
        entries += [
            {"name": n, "git_url": f"file://{repo}", "git_commit_id": first, "path": f"tasks/{n}"} for n in names
        ]
    return entries


def disk(path: Path) -> int:
    return int(subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True).stdout.split()[0])


def timed(argv: list[str], env: dict | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])}: {done.stderr.strip()[-500:]}")
    return elapsed, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--repos", type=int, default=5)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="hemra-bench-registry-"))
    try:
        entries = make_repositories(scratch / "repos", args.tasks, args.repos)
        registry = scratch / "registry.json"
        registry.write_text(json.dumps([{"name": "bench-ds", "version": "1.0", "tasks": entries}]))
        clones = scratch / "clones"
        floor = 0.0
        for repo in sorted((scratch / "repos").iterdir()):
            elapsed, _ = timed(["git", "clone", "-q", f"file://{repo}", str(clones / repo.name)])
            floor += elapsed
        env = {k: v for k, v in os.environ.items() if not k.startswith("HEMRA_")}
        env.update(HEMRA_HOME=str(scratch / "home"), HEMRA_HARBOR_REGISTRY=str(registry))
        startup_s, _ = timed([str(HEMRA), "datasets", "list"], env)  # the CLI and its embedded services
        first_s, first = timed([str(HEMRA), "datasets", "pin", "harbor:bench-ds@1.0", "--json"], env)
        second_s, second = timed([str(HEMRA), "datasets", "pin", "harbor:bench-ds@1.0", "--json"], env)
        first, second = json.loads(first), json.loads(second)
        home = scratch / "home"
        row = {
            "tasks": args.tasks,
            "repos": args.repos,
            "git_clone_s": round(floor, 3),
            "first_pin_s": round(first_s, 3),
            "second_pin_s": round(second_s, 3),
            "cli_startup_s": round(startup_s, 3),
            "first_vs_floor": round(first_s / (floor + startup_s), 2),
            "second_vs_startup": round(second_s / startup_s, 2),
            "clone_bytes": disk(clones),
            "cache_bytes": disk(home / "cache" / "harbor"),
            "store_bytes": disk(home) - disk(home / "cache"),
        }
        older = {e["git_commit_id"] for e in entries}
        checks = [
            (f"{args.tasks} tasks pinned", len(first["tasks"]) == args.tasks),
            ("every task at the older commit", {t["commit"] for t in first["tasks"]} <= older),
            ("the second pin is the first", second["digest"] == first["digest"]),
        ]
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"pinning a {args.tasks}-task registry dataset from {args.repos} local git repositories")
    print(f"  git clone of the repositories          {row['git_clone_s']:8.2f} s  {row['clone_bytes']:>12,} bytes")
    print(f"  hemra datasets list (CLI start-up)     {row['cli_startup_s']:8.2f} s")
    print(
        f"  hemra datasets pin, first              {row['first_pin_s']:8.2f} s  "
        f"({row['first_vs_floor']:.2f}x clone + start-up)"
    )
    print(
        f"  hemra datasets pin, again (kept)       {row['second_pin_s']:8.2f} s  "
        f"({row['second_vs_startup']:.2f}x start-up)"
    )
    print(f"  pinned copy {row['cache_bytes']:,} bytes; store (database and blobs) {row['store_bytes']:,} bytes")
    print(f"target: first pin <= 3x clone + start-up: {'met' if row['first_vs_floor'] <= 3 else 'MISSED'}")
    print(f"target: second pin <= 1.5x start-up: {'met' if row['second_vs_startup'] <= 1.5 else 'MISSED'}")
    failed = [name for name, ok in checks if not ok]
    for name in failed:
        print(f"CHECK FAILED: {name}")
    RESULTS_DIR.mkdir(exist_ok=True)
    out = RESULTS_DIR / f"registry-pin-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    out.write_text(json.dumps({"args": vars(args), "row": row, "checks": checks}, indent=2))
    if args.keep:
        print(f"kept {scratch}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
