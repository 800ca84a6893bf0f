"""Orchestration overhead benchmark: HEMRA's wall time against a plain bash loop doing the same work.

    .venv/bin/python bench/orchestration.py [--tasks N] [--repeat R] [--keep]

1. Generates N trivial Harbor-format tasks (each with its own input) in a temp folder.
2. Floor: one bash script that works every task for both harnesses, sequentially, each
   trial in a fresh folder under `bwrap` with the binds HEMRA's host sandbox uses
   (oracle: copy data, solve.sh, test.sh; nop: copy data, test.sh). This is the
   floor the targets use (the sandbox's namespaces, sandbox user without capabilities and
   seccomp filter). A second, stricter floor without bwrap (the scripts honour
   APP_DIR / LOGS_DIR) is measured and reported for information.
3. HEMRA: `hemra run -H oracle -H nop -d <folder> --concurrency 1` and `--concurrency 4`,
   each with a fresh HEMRA_HOME; exit status 0 and oracle N/N, nop 0/N are required.
4. Prints a table and writes bench/results/orchestration-<timestamp>.json.

Targets: HEMRA c=1 / floor <= 2.0, and HEMRA c=4 / HEMRA c=1 < 1.0.
"""

import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
C1_FLOOR_TARGET = 2.0
#: What the performance issue asks of the host sandbox.
C1_FLOOR_ISSUE_TARGET = 1.5
C4_C1_TARGET = 1.0
HARNESSES = ("oracle", "nop")

# The commands HEMRA runs inside the sandbox (services/executor/harnesses/builtin.py and
# services/scorer/verifier.py), reused verbatim by the bwrap floor.
SOLVE_COMMAND = "(/solution/solve.sh) > /logs/agent/oracle.txt 2>&1"
# The verifier's command as services/scorer/verifier.py runs it (a fresh HOME from mktemp),
# from /tests with PYTHONNOUSERSITE=1 (verifier.TEST_CWD, VERIFIER_ENV).
TEST_COMMAND = (
    'mkdir -p /logs/verifier && chmod +x /tests/test.sh && HOME="$(mktemp -d)" && export HOME && '
    "(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1"
)
TEST_OPTIONS = "--chdir /tests --setenv PYTHONNOUSERSITE 1"


class BenchError(Exception):
    pass


# --------------------------------------------------------------------------- dataset

TASK_TOML = """\
schema_version = "1.3"

[task]
name = "bench/sum-{index:04d}"
description = "Sum the integers in /app/data/input.txt (orchestration benchmark task {index})."

[verifier]
timeout_sec = 60.0

[agent]
timeout_sec = 60.0

[environment]
cpus = 1
memory_mb = 256
"""

INSTRUCTION = """\
`/app/data/input.txt` holds one integer per line. Write their sum, as a single
decimal number followed by a newline, to `/app/answer.txt`.
"""

DOCKERFILE = """\
FROM debian:bookworm-slim
WORKDIR /app
COPY data/ /app/data/
"""

# APP_DIR / LOGS_DIR default to the Harbor paths; only the no-bwrap floor sets them.
SOLVE_SH = """\
#!/bin/bash
set -euo pipefail
app="${APP_DIR:-/app}"
total=0
while read -r n; do
  total=$((total + n))
done < "$app/data/input.txt"
echo "$total" > "$app/answer.txt"
"""

TEST_SH = """\
#!/bin/bash
# Binary reward in /logs/verifier/reward.txt: 1 when /app/answer.txt holds the expected sum.
app="${{APP_DIR:-/app}}"
logs="${{LOGS_DIR:-/logs}}"
mkdir -p "$logs/verifier"
rm -f "$logs/verifier/reward.json" "$logs/verifier/reward.txt"
/usr/bin/python3 - "$app/answer.txt" "{expected}" > "$logs/verifier/reward.txt" <<'PY'
import sys
try:
    with open(sys.argv[1]) as f:
        ok = f.read().strip() == sys.argv[2]
except OSError:
    ok = False
print(1 if ok else 0)
PY
exit 0
"""


def make_dataset(folder: Path, count: int) -> None:
    folder.mkdir(parents=True)
    for index in range(count):
        numbers = [(index * 7919 + k * 104729) % 1000 - 300 for k in range(5 + index % 7)]
        task = folder / f"sum-{index:04d}"
        for sub in ("environment/data", "solution", "tests"):
            (task / sub).mkdir(parents=True)
        (task / "task.toml").write_text(TASK_TOML.format(index=index))
        (task / "instruction.md").write_text(INSTRUCTION)
        (task / "environment/Dockerfile").write_text(DOCKERFILE)
        (task / "environment/data/input.txt").write_text("".join(f"{n}\n" for n in numbers))
        for path, text in (("solution/solve.sh", SOLVE_SH), ("tests/test.sh", TEST_SH.format(expected=sum(numbers)))):
            (task / path).write_text(text)
            (task / path).chmod(0o755)


# --------------------------------------------------------------------------- floors


def sandbox_user() -> tuple[int, int] | None:
    """The user HEMRA's host sandbox runs commands as (None: HEMRA's own, not root)."""
    return _host().sandbox_owner()


def _host():
    """services/executor/sandboxes/host/, whose sandbox the floor copies."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from hemra.services.executor.sandboxes import host

    return host


def bwrap_prefix(full: bool = True) -> str:
    """The bwrap arguments of services/executor/sandboxes/host/, up to the per-attempt binds.
    `full=False`: the lighter floor of earlier figures (no network, cgroup or session
    namespace, no sandbox user)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise BenchError("bwrap not found (apt-get install bubblewrap)")
    args = [bwrap, "--die-with-parent"]
    if full:
        args.append("--new-session")
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    if full:
        args += ["--unshare-cgroup-try", "--unshare-net"]
    args += [
        "--hostname",
        "hemra",
        "--tmpfs",
        "/",
        "--ro-bind",
        "/usr",
        "/usr",
        "--ro-bind",
        "/etc",
        "/etc",
    ]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    if full and sandbox_user() is not None:  # the sandbox user's passwd and group entries
        args += ["--ro-bind", "$etc/passwd", "/etc/passwd", "--ro-bind", "$etc/group", "/etc/group"]
    args += ["--dev", "/dev", "--proc", "/proc"]
    if full:  # the sandbox's seccomp filter (fd 9, opened per command) and its status pipe (fd 8)
        args += ["--json-status-fd", "8", "--seccomp", "9"]
    return " ".join(f'"{a}"' if a.startswith("$") else shlex.quote(a) for a in args)


def run_as(full: bool = True) -> str:
    """What the host sandbox puts before each command when HEMRA runs as root: setpriv to the
    sandbox user, with no capability left."""
    owner = sandbox_user() if full else None
    return "" if owner is None else shlex.join(_host().run_as(owner))


def give_to_user(full: bool = True) -> str:
    """The attempt folder given to the sandbox user and its passwd and group files written, as
    the host sandbox's prepare (host/sandbox.py) does for each sandbox (in bash, one chown; the files with builtins).
    Nothing when HEMRA is not root. (The tests are copied in with the rest, before the solve:
    the floor has one folder where HEMRA has the verifier's fresh one.)"""
    owner = sandbox_user() if full else None
    if owner is None:
        return ":"
    uid, gid = owner
    files = [f'printf %s {shlex.quote(text)} > "$etc/{name}"' for name, text in _host().etc_files(owner).items()]
    return f'chown -R {uid}:{gid} "$root"; ' + "; ".join(files)


def seccomp_file(work: Path) -> Path:
    """The host sandbox's seccomp program (services/executor/sandboxes/seccomp.py), in a file
    the floor gives each bwrap on fd 9, as the sandbox gives it on a pipe."""
    from hemra.services.executor.sandboxes import seccomp

    path = work / "seccomp.bpf"
    path.write_bytes(seccomp.program())
    return path


def floor_script_bwrap(dataset: Path, work: Path, full: bool = True) -> str:
    """Every task x harness, one at a time, each in a fresh folder, each script under bwrap as
    the host sandbox runs it (`full=False`: the lighter bwrap of earlier figures)."""
    # The full floor: each bwrap reads the seccomp program on fd 9 and reports on fd 8.
    fds = f"9<{shlex.quote(str(seccomp_file(work)))} 8>/dev/null" if full else ""
    return f"""\
set -u
dataset={shlex.quote(str(dataset))}
work={shlex.quote(str(work))}
env_args=(--chdir /app --clearenv --setenv PATH /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\
          --setenv HOME /root --setenv LANG C.UTF-8)
oracle_pass=0; nop_pass=0; n=0
for task in "$dataset"/*/; do
  n=$((n + 1))
  for harness in oracle nop; do
    root="$work/$n-$harness/root"
    etc="$work/$n-$harness/etc"
    mkdir -p "$root/app" "$root/logs/agent" "$root/logs/verifier" "$root/logs/artifacts" \\
             "$root/tests" "$root/solution" "$root/tmp" "$root/root" "$etc"
    cp -r "$task/environment/data" "$root/app/data"
    binds=()
    for top in app logs root solution tests tmp; do binds+=(--bind "$root/$top" "/$top"); done
    if [ "$harness" = oracle ]; then
      cp -r "$task/solution/." "$root/solution/"
    fi
    cp -r "$task/tests/." "$root/tests/"
    {give_to_user(full)}
    if [ "$harness" = oracle ]; then
      {bwrap_prefix(full)} "${{binds[@]}}" "${{env_args[@]}}" --setenv DEBIAN_FRONTEND noninteractive \\
        -- {run_as(full)} bash -c {shlex.quote(SOLVE_COMMAND)} {fds}
    fi
    {bwrap_prefix(full)} "${{binds[@]}}" "${{env_args[@]}}" {TEST_OPTIONS if full else ""} \\
      -- {run_as(full)} bash -c {shlex.quote(TEST_COMMAND)} {fds}
    if [ "$(cat "$root/logs/verifier/reward.txt" 2>/dev/null)" = 1 ]; then
      if [ "$harness" = oracle ]; then oracle_pass=$((oracle_pass + 1)); else nop_pass=$((nop_pass + 1)); fi
    fi
    rm -rf "$work/$n-$harness"
  done
done
echo "tasks=$n oracle=$oracle_pass nop=$nop_pass"
"""


def light_floor(dataset: Path, work: Path) -> str:
    return floor_script_bwrap(dataset, work, full=False)


def floor_script_plain(dataset: Path, work: Path) -> str:
    """The same loop without bwrap: APP_DIR / LOGS_DIR point the scripts at the fresh folder."""
    return f"""\
set -u
dataset={shlex.quote(str(dataset))}
work={shlex.quote(str(work))}
oracle_pass=0; nop_pass=0; n=0
for task in "$dataset"/*/; do
  n=$((n + 1))
  for harness in oracle nop; do
    dir="$work/$n-$harness"
    mkdir -p "$dir/app" "$dir/logs/agent" "$dir/logs/verifier"
    cp -r "$task/environment/data" "$dir/app/data"
    if [ "$harness" = oracle ]; then
      (cd "$dir/app" && APP_DIR="$dir/app" LOGS_DIR="$dir/logs" "$task/solution/solve.sh") \\
        > "$dir/logs/agent/oracle.txt" 2>&1
    fi
    (cd "$dir/app" && APP_DIR="$dir/app" LOGS_DIR="$dir/logs" "$task/tests/test.sh") \\
      > "$dir/logs/verifier/test-stdout.txt" 2>&1
    if [ "$(cat "$dir/logs/verifier/reward.txt" 2>/dev/null)" = 1 ]; then
      if [ "$harness" = oracle ]; then oracle_pass=$((oracle_pass + 1)); else nop_pass=$((nop_pass + 1)); fi
    fi
    rm -rf "$dir"
  done
done
echo "tasks=$n oracle=$oracle_pass nop=$nop_pass"
"""


def children_cpu() -> float:
    """User + system seconds of this process's children that have been waited for (the floor's
    bash and every bwrap under it; `hemra run` and its sandboxes)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def busy() -> str:
    load = os.getloadavg()[0]
    return f"; LOAD {load:.1f} on {os.cpu_count()} CPUs" if load > (os.cpu_count() or 1) else ""


def run_floor(build, dataset: Path, scratch: Path, tasks: int, label: str) -> float:
    """Time one whole floor loop (all tasks x harnesses); it must see oracle N/N and nop 0/N."""
    work = Path(tempfile.mkdtemp(prefix=f"floor-{label}-", dir=scratch))
    path = work.with_suffix(".sh")
    path.write_text(build(dataset, work))
    started = time.perf_counter()
    done = subprocess.run(["bash", str(path)], capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    expected = f"tasks={tasks} oracle={tasks} nop=0"
    if done.returncode != 0 or done.stdout.strip() != expected:
        raise BenchError(
            f"floor ({label}) failed: exit {done.returncode}, got {done.stdout.strip()!r}, "
            f"expected {expected!r}\n{done.stderr[-2000:]}"
        )
    shutil.rmtree(work, ignore_errors=True)
    return elapsed


# --------------------------------------------------------------------------- HEMRA


def hemra_binary() -> str:
    local = REPO / ".venv" / "bin" / "hemra"
    if local.exists():
        return str(local)
    found = shutil.which("hemra")
    if found is None:
        raise BenchError("hemra not found: run `make setup` first")
    return found


def pass_counts(stdout: str) -> dict[str, tuple[int, int]]:
    """Harness -> (passed, graded) from the report's pass-rate column."""
    counts = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) < 4 or not cells[1]:
            continue
        name = cells[1].removesuffix(" (baseline)")
        match = re.match(r"(\d+)/(\d+) \(", cells[3])
        if name in HARNESSES and match:
            counts[name] = (int(match[1]), int(match[2]))
    return counts


def run_hemra(dataset: Path, scratch: Path, tasks: int, concurrency: int, keep: bool) -> float:
    home = Path(tempfile.mkdtemp(prefix=f"home-c{concurrency}-", dir=scratch))
    env = {**os.environ, "HEMRA_HOME": str(home)}
    env.pop("HEMRA_DATABASE_URL", None)  # a fresh SQLite database under the fresh home
    # As an installed HEMRA runs (pip compiles its modules): not each module compiled anew.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [
        hemra_binary(),
        "run",
        *(a for h in HARNESSES for a in ("-H", h)),
        "-d",
        str(dataset),
        "--concurrency",
        str(concurrency),
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=scratch)
    elapsed = time.perf_counter() - started
    problem = None
    if done.returncode != 0:
        problem = f"exit status {done.returncode}"
    else:
        counts = pass_counts(done.stdout)
        want = {"oracle": (tasks, tasks), "nop": (0, tasks)}
        if counts != want:
            problem = f"report says {counts}, expected {want}"
        elif f", {tasks} tasks)" not in done.stdout:
            problem = f"report does not list {tasks} tasks"
    if problem:
        raise BenchError(
            f"hemra run --concurrency {concurrency} failed: {problem}\n"
            f"command: {shlex.join(command)}\nHEMRA_HOME: {home}\n"
            f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
        )
    if not keep:
        shutil.rmtree(home, ignore_errors=True)
    return elapsed


# --------------------------------------------------------------------------- report


def git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def summarise(samples: dict[str, list[float]], trials: int) -> dict:
    seconds = {k: statistics.median(v) for k, v in samples.items()}
    c1_floor = seconds["hemra_c1"] / seconds["floor"]
    c4_c1 = seconds["hemra_c4"] / seconds["hemra_c1"]
    return {
        "seconds": seconds,
        "ms_per_trial": {k: 1000 * v / trials for k, v in seconds.items()},
        "ratios": {
            "c1_over_floor": c1_floor,
            "c4_over_c1": c4_c1,
            "c1_over_floor_plain": seconds["hemra_c1"] / seconds["floor_plain"],
            "c1_over_floor_light": seconds["hemra_c1"] / seconds["floor_light"],
        },
        "targets": {
            "c1_over_floor": {"target": f"<= {C1_FLOOR_TARGET}", "met": c1_floor <= C1_FLOOR_TARGET},
            "c1_over_floor_issue": {"target": f"<= {C1_FLOOR_ISSUE_TARGET}", "met": c1_floor <= C1_FLOOR_ISSUE_TARGET},
            "c4_over_c1": {"target": f"< {C4_C1_TARGET}", "met": c4_c1 < C4_C1_TARGET},
        },
    }


def print_table(summary: dict, tasks: int, trials: int, repeat: int) -> None:
    s, ms, r, t = summary["seconds"], summary["ms_per_trial"], summary["ratios"], summary["targets"]
    verdict = {True: "yes", False: "NO"}
    print()
    print(
        f"orchestration benchmark: {tasks} tasks x {len(HARNESSES)} harnesses = {trials} trials"
        + (f", median of {repeat} runs" if repeat > 1 else "")
    )
    print(f"{'measurement':<34}{'seconds':>10}{'ms/trial':>11}")
    for key, label in (
        ("floor", "floor (bash loop, bwrap)"),
        ("hemra_c1", "HEMRA --concurrency 1"),
        ("hemra_c4", "HEMRA --concurrency 4"),
        ("floor_light", "info: floor, lighter bwrap"),
        ("floor_plain", "info: floor without bwrap"),
    ):
        print(f"{label:<34}{s[key]:>10.2f}{ms[key]:>11.1f}")
    print()
    print(f"{'ratio':<34}{'value':>10}{'target':>11}{'met':>6}")
    print(
        f"{'HEMRA c=1 / floor':<34}{r['c1_over_floor']:>10.2f}{t['c1_over_floor']['target']:>11}"
        f"{verdict[t['c1_over_floor']['met']]:>6}"
    )
    print(
        f"{'HEMRA c=1 / floor (issue)':<34}{r['c1_over_floor']:>10.2f}{t['c1_over_floor_issue']['target']:>11}"
        f"{verdict[t['c1_over_floor_issue']['met']]:>6}"
    )
    print(
        f"{'HEMRA c=4 / HEMRA c=1':<34}{r['c4_over_c1']:>10.2f}{t['c4_over_c1']['target']:>11}"
        f"{verdict[t['c4_over_c1']['met']]:>6}"
    )
    print(f"{'info: HEMRA c=1 / lighter floor':<34}{r['c1_over_floor_light']:>10.2f}")
    print(f"{'info: HEMRA c=1 / floor w/o bwrap':<34}{r['c1_over_floor_plain']:>10.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=200, help="tasks in the generated dataset (default 200)")
    parser.add_argument("--repeat", type=int, default=1, help="measure everything R times; report medians")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder (dataset, HEMRA homes)")
    args = parser.parse_args()
    if args.tasks < 1 or args.repeat < 1:
        parser.error("--tasks and --repeat must be at least 1")

    scratch = Path(tempfile.mkdtemp(prefix="hemra-bench-"))
    dataset = scratch / f"bench-orchestration-{args.tasks}"
    trials = args.tasks * len(HARNESSES)
    samples: dict[str, list[float]] = {
        "floor": [],
        "floor_light": [],
        "floor_plain": [],
        "hemra_c1": [],
        "hemra_c4": [],
    }
    cpu_samples: dict[str, list[float]] = {key: [] for key in samples}
    try:
        make_dataset(dataset, args.tasks)
        print(f"dataset: {args.tasks} tasks in {dataset}", flush=True)
        for round_ in range(1, args.repeat + 1):
            tag = f"[{round_}/{args.repeat}] " if args.repeat > 1 else ""
            for key, measure in (
                ("floor", lambda: run_floor(floor_script_bwrap, dataset, scratch, args.tasks, "bwrap")),
                ("floor_light", lambda: run_floor(light_floor, dataset, scratch, args.tasks, "light")),
                ("floor_plain", lambda: run_floor(floor_script_plain, dataset, scratch, args.tasks, "plain")),
                ("hemra_c1", lambda: run_hemra(dataset, scratch, args.tasks, 1, args.keep)),
                ("hemra_c4", lambda: run_hemra(dataset, scratch, args.tasks, 4, args.keep)),
            ):
                cpu_before = children_cpu()
                seconds = measure()
                cpu = children_cpu() - cpu_before
                samples[key].append(seconds)
                cpu_samples[key].append(cpu)
                print(f"{tag}{key:<12} {seconds:8.2f} s  (CPU {cpu:7.2f} s){busy()}", flush=True)
    except BenchError as exc:
        print(f"\nBENCHMARK FAILED: {exc}", file=sys.stderr)
        print(f"temp folder kept: {scratch}", file=sys.stderr)
        return 1
    summary = summarise(samples, trials)
    print_table(summary, args.tasks, trials, args.repeat)
    cpu = {k: statistics.median(v) for k, v in cpu_samples.items()}
    summary["cpu_seconds"] = cpu
    summary["cpu_ratio_c1_over_floor"] = cpu["hemra_c1"] / cpu["floor"]
    print(
        f"{'info: CPU, HEMRA c=1 / floor':<34}{summary['cpu_ratio_c1_over_floor']:>10.2f}"
        f"   (user + system seconds of every process waited for: {cpu['hemra_c1']:.2f} / {cpu['floor']:.2f};"
        " barely moved by other work on the machine)"
    )

    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    result = {
        "benchmark": "orchestration",
        "timestamp": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "tasks": args.tasks,
        "harnesses": list(HARNESSES),
        "trials": trials,
        "repeat": args.repeat,
        "floor_method": "bash loop, sequential, each trial in a fresh folder, each command under bwrap as "
        "HEMRA's host sandbox runs it (namespaces, binds, sandbox user); floor_light is the lighter bwrap of "
        "earlier figures (no network, cgroup or session namespace, no sandbox user); floor_plain is the same "
        "loop without bwrap (APP_DIR/LOGS_DIR)",
        "samples_seconds": samples,
        "samples_cpu_seconds": cpu_samples,
        **summary,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "hemra_commit": git_commit(),
        "temp_dir": str(scratch) if args.keep else None,
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / f"orchestration-{stamp}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nresults: {out}")
    if args.keep:
        print(f"temp folder kept: {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
