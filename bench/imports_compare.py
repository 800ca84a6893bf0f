"""Big imports and big compares: `hemra import` of a 10,000-trial Harbor job against `cp -r` of the
same folder, and `hemra compare` of two 5,000- and 50,000-trial sides.

    .venv/bin/python bench/imports_compare.py [--trials N] [--compare-sizes 5000,50000] [--keep]

1. Import. Generate a Harbor 0.25-shaped job directory with N trials (default 10,000): ~100 task
   names, 2 agents (oracle; terminus-2 with a model), a few KB of small files per trial, empty
   folders, reward.txt and reward.json rewards, ~5% of trials with exception_info. Then, three
   times, interleaved: time `cp -r <job> <tmp>/copy` (the floor) and `hemra import <job> --label
   big` into a fresh HEMRA_HOME (a subprocess, so Python start-up and the in-process services
   count), then `hemra export big --out <tmp>/export` of that import; the medians are compared,
   so a shared machine's load swings hit all alike. The page cache is never dropped: the job was
   just written, so all read it warm; `sync` runs before each timing (not timed) so none pays
   another's writeback. Checks: `hemra runs
   --json` shows the import with N trials and the expected passed/failed/errored counts, and
   `hemra export big --out X` gives X/source identical to the job (diff -r, every folder, empty
   ones too). For information: `hemra compare big/oracle big/terminus-2 --json` on that import.
2. Compare. For each size S (default 5,000 and 50,000): a fresh HEMRA_HOME whose SQLite store
   holds two imports of S trials each (S/5 tasks x 5 repetitions, the same task digests and
   scorer fingerprints on both sides, 0/1 rewards), recorded directly with Store.record_run as
   services/importer/record.py would record them. Time `hemra compare cmp-a cmp-b --json` end to
   end (subprocess, median of 3): opening the store itself, as a new warm store's first compare
   of the two sides (a new warm store for each of 3 samples) and as its next one; and
   Store.compare in-process (median of 3, plus a breakdown).
   Checks: paired_tasks and binary_tasks equal S/5, both sides S trials, all graded.
3. Print a table; write bench/results/imports-compare-<timestamp>.json (gitignored). When a
   target is missed, the missed step runs once more under cProfile (not timed) and the top costs
   are printed and saved. Exits 1 when a check fails (a missed target is not an error).

Targets: import seconds / cp -r seconds <= 3; export seconds / import seconds <= 2; compare of
two 50,000-trial sides (CLI, end to end, a warm store's first compare of them) < 1 s.

Internal mode (started by the benchmark itself): `_profile OUT.prof -- <hemra arguments>` runs
the CLI in-process under cProfile, with asyncio.to_thread made inline so that the importer's
folder reading (which HEMRA runs in a thread) is profiled too.
"""

import argparse
import asyncio
import datetime as dt
import hashlib
import io
import json
import os
import platform
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
HEMRA = REPO / ".venv" / "bin" / "hemra"
PYTHON = REPO / ".venv" / "bin" / "python"
if sys.path[0] != str(REPO):  # first: bench/gateway.py must not stand for the gateway package
    sys.path.insert(0, str(REPO))

IMPORT_RATIO_TARGET = 3.0
COMPARE_SECONDS_TARGET = 1.0
#: hemra export of the import / hemra import of the job (issue 18).
EXPORT_RATIO_TARGET = 2.0
#: The size the compare target names; smaller sizes must meet it too, larger ones are information.
COMPARE_TARGET_SIZE = 50_000
COMPARE_REPETITIONS = 5
COMPARE_SAMPLES = 3
#: cp -r and hemra import, each this many times, interleaved.
IMPORT_SAMPLES = 3
SEED = 20261202
PROFILE_TOP = 15

# --- the generated Harbor job ------------------------------------------------------------------

JOB_NAME = "2026-12-02__14-05-09"
JOBS_DIR = "/home/runner/harbor-jobs"
#: Where the job says its tasks were. Never present here, so the import keeps Harbor's own pins.
TASKS_ROOT = "/home/runner/harbor-datasets/bench-tasks"
DATASET = "bench-tasks"
VERBS = ["fix", "parse", "merge", "sort", "count", "build", "patch", "convert", "query", "compress"]
NOUNS = ["median", "csv", "json", "logs", "dates", "config", "cache", "graph", "matrix", "unicode"]
SHORTUUID = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
AGENTS = [
    {"name": "oracle", "version": "1.0.0", "model_info": None, "model_name": None},
    {
        "name": "terminus-2",
        "version": "2.0.0",
        "model_info": {"name": "claude-sonnet-4-5", "provider": "anthropic"},
        "model_name": "anthropic/claude-sonnet-4-5",
    },
]
EXCEPTION_RATE = 0.05
#: (type, weight, message, what HEMRA should make of it: "failed" = graded 0, "errored" = not graded)
EXCEPTIONS = [
    ("AgentTimeoutError", 40, "Agent execution timed out after 900.0 seconds", "failed"),
    ("EnvironmentStartTimeoutError", 35, "Environment start timed out after 600.0 seconds", "errored"),
    ("NonZeroAgentExitCodeError", 15, "Agent command exited with code 1", "failed"),
    ("VerifierTimeoutError", 10, "Verifier execution timed out after 300.0 seconds", "errored"),
]
COMPOSE = "/home/runner/harbor-compose.yaml"
COMPOSE_DIGEST = "sha256:" + hashlib.sha256(b"bench compose overlay").hexdigest()


class BenchError(Exception):
    pass


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _dump(data) -> str:
    """Harbor writes its JSON with indent 4 and no trailing newline."""
    return json.dumps(data, indent=4)


def _stamp(base: float, offset: float) -> str:
    return dt.datetime.fromtimestamp(base + offset, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def make_tasks(count: int, rng: random.Random) -> list[dict]:
    tasks = []
    for i in range(count):
        name = f"{VERBS[i // len(NOUNS) % len(VERBS)]}-{NOUNS[i % len(NOUNS)]}"
        if i >= len(VERBS) * len(NOUNS):
            name += f"-{i // (len(VERBS) * len(NOUNS))}"
        tasks.append(
            {
                "name": name,
                "task_name": f"bench/{name}",
                "path": f"{TASKS_ROOT}/{name}",
                "checksum": _sha(f"bench task checksum {name}"),
                "digest": "sha256:" + _sha(f"bench task content {name}"),
                "json_rewards": i % 5 == 2,  # a fifth of the tasks grade to reward.json, the rest to reward.txt
                "tests": [f"test_{name.replace('-', '_')}_{k}" for k in range(rng.randint(3, 8))],
                "pass": {"oracle": 0.97, "terminus-2": rng.uniform(0.15, 0.9)},
            }
        )
    return tasks


def _trial_lock(task: dict, agent: dict) -> dict:
    agent_lock = {
        "name": agent["name"],
        "skip_model_parsing": False,
        "skills": [],
        "resume_trajectory": False,
        "extra_allowed_hosts": [],
        "kwargs": {},
        "mcp_servers": [],
    }
    if agent["model_name"]:
        agent_lock["model_name"] = agent["model_name"]
    return {
        "schema_version": 2,
        "task": {
            "name": task["name"],
            "type": "local",
            "digest": task["digest"],
            "source": DATASET,
            "path": task["path"],
        },
        "install_only": False,
        "timeout_multiplier": 1.0,
        "agent": agent_lock,
        "bridge_inputs": {},
        "skills": [],
        "environment": {
            "type": "docker",
            "force_build": False,
            "delete": True,
            "stream": False,
            "cpu_enforcement_policy": "auto",
            "memory_enforcement_policy": "auto",
            "extra_docker_compose": [COMPOSE],
            "kwargs": {},
            "extra_allowed_hosts": [],
        },
        "extra_docker_compose": [{"path": COMPOSE, "digest": COMPOSE_DIGEST}],
        "verifier": {"disable": False, "environment_mode": "shared"},
    }


def _full_config(task: dict, agent: dict, trial_name: str, job_id: str) -> dict:
    return {
        "task": {
            "path": task["path"],
            "git_url": None,
            "git_commit_id": None,
            "name": None,
            "ref": None,
            "overwrite": False,
            "download_dir": None,
            "source": DATASET,
        },
        "trial_name": trial_name,
        "trials_dir": f"{JOBS_DIR}/{JOB_NAME}",
        "install_only": False,
        "timeout_multiplier": 1.0,
        "agent_timeout_multiplier": None,
        "verifier_timeout_multiplier": None,
        "agent_setup_timeout_multiplier": None,
        "environment_build_timeout_multiplier": None,
        "agent": {
            "name": agent["name"],
            "import_path": None,
            "model_name": agent["model_name"],
            "base_url": None,
            "model_api_key_name": None,
            "model_api_format": None,
            "skip_model_parsing": False,
            "n_concurrent": None,
            "concurrency_group": None,
            "skills": [],
            "override_timeout_sec": None,
            "override_setup_timeout_sec": None,
            "max_timeout_sec": None,
            "resume_trajectory": False,
            "load_trajectory": None,
            "extra_allowed_hosts": [],
            "kwargs": {},
            "mcp_servers": [],
        },
        "user_agent": None,
        "environment": {
            "type": "docker",
            "import_path": None,
            "force_build": False,
            "delete": True,
            "stream": False,
            "cpu_enforcement_policy": "auto",
            "memory_enforcement_policy": "auto",
            "override_cpus": None,
            "override_memory_mb": None,
            "override_storage_mb": None,
            "override_gpus": None,
            "override_tpu": None,
            "mounts": None,
            "extra_docker_compose": [COMPOSE],
            "kwargs": {},
            "extra_allowed_hosts": [],
        },
        "verifier": {"override_timeout_sec": None, "max_timeout_sec": None, "disable": False},
        "artifacts": [],
        "extra_instruction_paths": [],
        "extra_instructions": [],
        "job_id": job_id,
        "source_trial": None,
    }


def _traceback(kind: str, message: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/opt/harbor-venv/lib/python3.12/site-packages/harbor/trial/trial.py", line 769, in _run_phase\n'
        "    await asyncio.wait_for(\n"
        '  File "/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/tasks.py", line 519, in wait_for\n'
        "    async with timeouts.timeout(timeout):\n"
        '  File "/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/timeouts.py", line 115, in __aexit__\n'
        "    raise TimeoutError from exc_val\n"
        "TimeoutError\n\n"
        "The above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/harbor-venv/lib/python3.12/site-packages/harbor/trial/single_step.py", line 76, in _run\n'
        "    await self._run_phase(\n"
        '  File "/opt/harbor-venv/lib/python3.12/site-packages/harbor/trial/trial.py", line 778, in _run_phase\n'
        f"    raise {kind}(\n"
        f"harbor.trial.errors.{kind}: {message}\n"
    )


class JobWriter:
    """Writes the job and counts what it wrote (files, folders, bytes) and what HEMRA should see."""

    def __init__(self, root: Path):
        self.root = root
        self.files = 0
        self.bytes = 0
        self.dirs = 0

    def mkdir(self, relative: str) -> None:
        (self.root / relative).mkdir(parents=True, exist_ok=False)
        self.dirs += 1

    def put(self, relative: str, text: str) -> None:
        data = text.encode()
        with open(self.root / relative, "wb") as out:
            out.write(data)
        self.files += 1
        self.bytes += len(data)


def generate_job(root: Path, trials: int, seed: int = SEED) -> dict:
    """A Harbor 0.25 job directory with `trials` trial folders; returns what HEMRA should record."""
    rng = random.Random(seed)
    tasks = make_tasks(min(100, max(1, trials // 2)), rng)
    job_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    base = dt.datetime(2026, 12, 2, 14, 5, 9, 412000, tzinfo=dt.UTC).timestamp()
    writer = JobWriter(root)
    root.mkdir(parents=True)
    expected = {
        "trials": trials,
        "tasks": len(tasks),
        "passed": 0,
        "failed": 0,
        "errored": 0,
        "exceptions": {},
        "reward_json_trials": 0,
        "reward_txt_trials": 0,
    }
    lock_trials, names, graded = [], set(), {}
    evals = {a["name"]: {"n": 0, "errors": 0, "sum": 0.0, "reward_stats": {}, "exception_stats": {}} for a in AGENTS}
    weights = [w for _, w, _, _ in EXCEPTIONS]
    for k in range(trials):
        agent = AGENTS[k % len(AGENTS)]
        task = tasks[(k // len(AGENTS)) % len(tasks)]
        while True:
            trial = f"{task['name']}__{''.join(rng.choice(SHORTUUID) for _ in range(7))}"
            if trial not in names:
                names.add(trial)
                break
        exception = rng.choices(EXCEPTIONS, weights)[0] if rng.random() < EXCEPTION_RATE else None
        kind = exception[0] if exception else ""
        passed = rng.random() < task["pass"][agent["name"]] and exception is None
        if exception and exception[3] == "errored":
            rewards = None
        elif task["json_rewards"]:
            rewards = (
                {"reward": 1.0, "format_ok": 1.0}
                if passed
                else {"reward": rng.choice([0.0, 0.2, 0.4, 0.6, 0.8]), "format_ok": rng.choice([0.0, 1.0])}
            )
        else:
            rewards = {"reward": 1.0 if passed else 0.0}
        verdict = "errored" if rewards is None else ("passed" if all(v >= 1 for v in rewards.values()) else "failed")
        expected[verdict] += 1
        if rewards is not None:
            graded.setdefault(task["name"], set()).add(agent["name"])
        if kind:
            expected["exceptions"][kind] = expected["exceptions"].get(kind, 0) + 1
        started = 1.3 * k / 4 + rng.uniform(0, 0.2)
        env_s, agent_s, verify_s = rng.uniform(2.5, 4.5), rng.uniform(0.5, 200.0), rng.uniform(1.5, 3.0)
        infra = kind == "EnvironmentStartTimeoutError"
        if infra:
            env_s, agent_s, verify_s = 600.0, 0.0, 0.0
        finished = started + env_s + agent_s + verify_s + 0.4

        writer.mkdir(trial)
        writer.mkdir(f"{trial}/agent")
        writer.mkdir(f"{trial}/verifier")
        writer.mkdir(f"{trial}/artifacts")
        tlock = _trial_lock(task, agent)
        writer.put(f"{trial}/lock.json", _dump(tlock))
        lock_trials.append(tlock)
        config = {
            "task": {"path": task["path"], "source": DATASET},
            "trial_name": trial,
            "trials_dir": f"{JOBS_DIR}/{JOB_NAME}",
            "environment": {"type": "docker", "extra_docker_compose": [COMPOSE]},
            "job_id": job_id,
        }
        if agent["model_name"]:
            config["agent"] = {"name": agent["name"], "model_name": agent["model_name"]}
        writer.put(f"{trial}/config.json", _dump(config))
        image = "hb__" + _sha("image " + task["name"])[:32]
        log = f"Skipping image OS validation for {image}: docker inspect returned 1\n"
        if not infra:
            log += "Collecting main service artifacts\n"
        else:
            log += "Environment start timed out after 600.0 seconds; tearing down\n"
        writer.put(f"{trial}/trial.log", log)

        tokens = None
        if not infra:
            if agent["name"] == "oracle":
                writer.put(f"{trial}/agent/oracle.txt", "")
            else:
                tokens = (rng.randint(8_000, 90_000), rng.randint(0, 60_000), rng.randint(500, 9_000))
                steps = rng.randint(3, 12)
                writer.put(
                    f"{trial}/agent/terminus-2.txt",
                    "".join(
                        f"[step {s}] sent keystrokes to tmux session main ({rng.randint(20, 400)} chars)\n"
                        for s in range(1, steps + 1)
                    ),
                )
                writer.put(
                    f"{trial}/agent/trajectory.json",
                    _dump(
                        {
                            "schema_version": "ATIF-v1.2",
                            "session_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                            "agent": {
                                "name": "terminus-2",
                                "version": agent["version"],
                                "model_name": agent["model_name"],
                            },
                            "steps": [
                                {"step_id": s, "source": "agent", "message": f"step {s} of {task['name']}"}
                                for s in range(1, min(steps, 4) + 1)
                            ],
                            "final_metrics": {
                                "total_prompt_tokens": tokens[0],
                                "total_cached_tokens": tokens[1],
                                "total_completion_tokens": tokens[2],
                            },
                        }
                    ),
                )
            if rewards is not None:
                if task["json_rewards"]:
                    writer.put(f"{trial}/verifier/reward.json", json.dumps(rewards) + "\n")
                    expected["reward_json_trials"] += 1
                else:
                    writer.put(f"{trial}/verifier/reward.txt", f"{int(rewards['reward'])}\n")
                    expected["reward_txt_trials"] += 1
            ok = passed
            lines = [f"{name} ... {'ok' if ok or j % 2 else 'FAIL'}" for j, name in enumerate(task["tests"])]
            if kind == "VerifierTimeoutError":
                lines = lines[:2]
            else:
                lines += [
                    "",
                    "-" * 70,
                    f"Ran {len(task['tests'])} tests in 0.004s",
                    "",
                    "OK" if ok else f"FAILED (failures={(len(task['tests']) + 1) // 2})",
                ]
            writer.put(f"{trial}/verifier/test-stdout.txt", "\n".join(lines) + "\n")
            writer.put(
                f"{trial}/artifacts/manifest.json",
                json.dumps(
                    [
                        {
                            "source": "/logs/artifacts",
                            "destination": "artifacts/logs/artifacts",
                            "type": "directory",
                            "status": "ok",
                            "service": None,
                            "exclude": [],
                        }
                    ],
                    indent=2,
                ),
            )
            writer.mkdir(f"{trial}/artifacts/logs")
            writer.mkdir(f"{trial}/artifacts/logs/artifacts")  # empty, as Harbor 0.25 leaves it
        # an infrastructure failure leaves agent/, verifier/ and artifacts/ empty

        exception_info = None
        if exception:
            trace = _traceback(kind, exception[2])
            exception_info = {
                "exception_type": kind,
                "exception_message": exception[2],
                "exception_traceback": trace,
                "occurred_at": _stamp(base, finished - 0.3),
            }
            writer.put(f"{trial}/exception.txt", trace)

        def phase(start, length):
            return {"started_at": _stamp(base, start), "finished_at": _stamp(base, start + length)}

        result = {
            "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "task_name": task["task_name"],
            "trial_name": trial,
            "trial_uri": f"file://{JOBS_DIR}/{JOB_NAME}/{trial}",
            "task_id": {"path": task["path"]},
            "source": DATASET,
            "task_checksum": task["checksum"],
            "config": _full_config(task, agent, trial, job_id),
            "agent_info": {"name": agent["name"], "version": agent["version"], "model_info": agent["model_info"]},
            "agent_result": None
            if infra
            else {
                "n_input_tokens": tokens[0] if tokens else None,
                "n_cache_tokens": tokens[1] if tokens else None,
                "n_output_tokens": tokens[2] if tokens else None,
                "cost_usd": round(tokens[0] * 3e-6 + tokens[2] * 1.5e-5, 6) if tokens else None,
                "model_usage": None,
                "rollout_details": None,
                "metadata": None,
            },
            "verifier_result": None if rewards is None else {"rewards": rewards},
            "verifier_environment_mode": "shared",
            "exception_info": exception_info,
            "started_at": _stamp(base, started),
            "finished_at": _stamp(base, finished),
            "environment_setup": phase(started + 0.1, env_s),
            "agent_setup": None if infra else phase(started + 0.1 + env_s, 0.0001),
            "agent_execution": None if infra else phase(started + 0.1 + env_s, agent_s),
            "verifier": None if infra else phase(started + 0.2 + env_s + agent_s, verify_s),
            "step_results": None,
        }
        writer.put(f"{trial}/result.json", _dump(result))

        stats = evals[agent["name"]]
        if rewards is not None:
            stats["n"] += 1
            stats["sum"] += rewards["reward"]
            for key, value in rewards.items():
                stats["reward_stats"].setdefault(key, {}).setdefault(str(value), []).append(trial)
        if kind:
            stats["errors"] += 1
            stats["exception_stats"].setdefault(kind, []).append(trial)

    # Job-level files, after the trials (as Harbor finishes them).
    errored = sum(s["errors"] for s in evals.values())
    writer.put(
        "config.json",
        _dump(
            {
                "jobs_dir": JOBS_DIR,
                "n_attempts": 1,
                "agents": [{"name": "oracle"}, {"name": "terminus-2", "model_name": "anthropic/claude-sonnet-4-5"}],
                "environment": {"type": "docker", "extra_docker_compose": [COMPOSE]},
                "datasets": [{"path": TASKS_ROOT}],
            }
        ),
    )
    end = 1.3 * trials / 4 + 900
    writer.put(
        "result.json",
        _dump(
            {
                "id": job_id,
                "started_at": _stamp(base, 0).rstrip("Z"),
                "updated_at": _stamp(base, end).rstrip("Z"),
                "finished_at": _stamp(base, end).rstrip("Z"),
                "n_total_trials": trials,
                "stats": {
                    "n_completed_trials": trials,
                    "n_errored_trials": errored,
                    "n_running_trials": 0,
                    "n_pending_trials": 0,
                    "n_cancelled_trials": 0,
                    "n_retries": 0,
                    "evals": {
                        (
                            f"{a['name']}__{a['model_info']['name']}__{DATASET}"
                            if a["model_info"]
                            else f"{a['name']}__{DATASET}"
                        ): {
                            "n_trials": evals[a["name"]]["n"],
                            "n_errors": evals[a["name"]]["errors"],
                            "metrics": [{"reward": evals[a["name"]]["sum"] / max(1, evals[a["name"]]["n"])}],
                            "pass_at_k": {},
                            "reward_stats": evals[a["name"]]["reward_stats"],
                            "exception_stats": evals[a["name"]]["exception_stats"],
                        }
                        for a in AGENTS
                    },
                    "n_input_tokens": None,
                    "n_cache_tokens": None,
                    "n_output_tokens": None,
                    "cost_usd": None,
                },
            }
        ),
    )
    writer.put(
        "lock.json",
        _dump(
            {
                "schema_version": 3,
                "created_at": _stamp(base, 0.01),
                "harbor": {"version": "0.25.0", "is_editable": False},
                "n_concurrent_trials": 4,
                "retry": {
                    "max_retries": 0,
                    "exclude_exceptions": [
                        "AgentTimeoutError",
                        "VerifierTimeoutError",
                        "RewardFileNotFoundError",
                        "RewardFileEmptyError",
                        "VerifierOutputParseError",
                    ],
                    "wait_multiplier": 1.0,
                    "min_wait_sec": 1.0,
                    "max_wait_sec": 60.0,
                },
                "trials": lock_trials,
            }
        ),
    )
    writer.put(
        "job.log",
        "".join(f"Agent '{a['name']}' does not declare an options_model; leftover kwargs are ignored\n" for a in AGENTS)
        + "Collecting main service artifacts\n" * 3,
    )
    expected.update(
        paired_tasks=sum(1 for agents in graded.values() if len(agents) == len(AGENTS)),
        files=writer.files,
        dirs=writer.dirs,
        bytes=writer.bytes,
        empty_dirs=len(empty_dirs(root)),
    )
    return expected


def walk(root: Path) -> tuple[set[str], set[str]]:
    """(folders, files) under root, as relative paths."""
    folders, files = set(), set()
    for folder, dirs, names in os.walk(root):
        base = Path(folder).relative_to(root)
        folders.update((base / d).as_posix() for d in dirs)
        files.update((base / n).as_posix() for n in names)
    return folders, files


def empty_dirs(root: Path) -> list[str]:
    return sorted(
        Path(folder).relative_to(root).as_posix()
        for folder, dirs, names in os.walk(root)
        if not dirs and not names and Path(folder) != root
    )


# --- processes ---------------------------------------------------------------------------------


def hemra_env(home: Path, warm_store: bool = False) -> dict:
    """Commands without a warm store unless asked (each one opens the store itself, as the
    first read command does); with one, read commands after the first are served by it."""
    env = {k: v for k, v in os.environ.items() if k not in ("HEMRA_DATABASE_URL", "HEMRA_BLOB_DIR", "HEMRA_DEBUG")}
    env["HEMRA_HOME"] = str(home)
    env["HEMRA_WARM_STORE"] = "600" if warm_store else "0"
    return env


def timed(argv: list, env: dict | None = None, check: bool = True, timeout: float = 900) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run([str(a) for a in argv], env=env, capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    if check and proc.returncode != 0:
        raise BenchError(f"{' '.join(map(str, argv))} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return seconds, proc.stdout


def sync() -> float:
    start = time.perf_counter()
    subprocess.run(["sync"], check=True)
    return time.perf_counter() - start


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def pressure() -> dict:
    """Load average and pressure stall (share of the last 10 s some task waited for CPU / I/O)."""
    found = {"load_1m": round(os.getloadavg()[0], 2)}
    for kind in ("cpu", "io"):
        try:
            line = Path(f"/proc/pressure/{kind}").read_text().splitlines()[0]
            found[f"{kind}_some_avg10"] = float(line.split("avg10=")[1].split()[0])
        except (OSError, IndexError, ValueError):
            pass
    return found


def load_note() -> str:
    p = pressure()
    busy = p["load_1m"] > (os.cpu_count() or 1) or p.get("cpu_some_avg10", 0) > 20 or p.get("io_some_avg10", 0) > 20
    return (
        (
            f" (LOAD {p['load_1m']:.1f} on {os.cpu_count()} CPUs, CPU pressure {p.get('cpu_some_avg10', 0):.0f}%, "
            f"I/O pressure {p.get('io_some_avg10', 0):.0f}%: other work competes)"
        )
        if busy
        else ""
    )


# --- 1. import ---------------------------------------------------------------------------------


def bench_import(trials: int, scratch: Path, checks: list) -> dict:
    job = scratch / "jobs" / JOB_NAME
    start = time.perf_counter()
    expected = generate_job(job, trials)
    generate_s = time.perf_counter() - start
    print(
        f"generated {job}: {trials} trials, {expected['tasks']} tasks, {expected['files']} files, "
        f"{expected['dirs']} folders ({expected['empty_dirs']} empty), {expected['bytes'] / 1e6:.1f} MB "
        f"in {generate_s:.1f} s; exceptions {expected['exceptions']}",
        flush=True,
    )

    # Floor and import interleaved, IMPORT_SAMPLES times each (cp, import, cp, import, ...), so a
    # shared machine's load swings hit both alike; medians are compared. The page cache holds the
    # job (just written, nothing dropped); `sync` (not timed) runs before each timing.
    # Nothing is deleted until every sample is taken: on ext4 without a journal (this machine's
    # root), each new file's inode search skips the inodes freed in the last minutes one by one,
    # so removing a 145,000-entry copy just before a timing makes that timing pay for it.
    conditions = {"cp": [], "import": []}
    cp_samples, cp_syncs, import_samples, import_syncs, out, leftovers = [], [], [], [], "", []
    export_samples, export_out = [], ""
    for sample in range(IMPORT_SAMPLES):
        sync()
        conditions["cp"].append(pressure())
        copy = scratch / f"copy-{sample}"
        seconds, _ = timed(["cp", "-r", job, copy])
        cp_samples.append(seconds)
        cp_syncs.append(sync())
        leftovers.append(copy)
        print(f"cp -r #{sample + 1}: {seconds:.2f} s (then sync {cp_syncs[-1]:.2f} s){load_note()}", flush=True)
        home = scratch / ("home-import" if sample == IMPORT_SAMPLES - 1 else f"home-import-{sample}")
        sync()
        conditions["import"].append(pressure())
        seconds, out = timed([HEMRA, "import", job, "--label", "big"], hemra_env(home))
        import_samples.append(seconds)
        import_syncs.append(sync())
        print(
            f"hemra import #{sample + 1}: {seconds:.2f} s (then sync {import_syncs[-1]:.2f} s): {out.strip()}"
            f"{load_note()}",
            flush=True,
        )
        # Then that import exported, as a user would: the same store, a fresh folder.
        export = scratch / ("export" if sample == IMPORT_SAMPLES - 1 else f"export-{sample}")
        sync()
        seconds, export_out = timed([HEMRA, "export", "big", "--out", export], hemra_env(home))
        export_samples.append(seconds)
        print(f"hemra export #{sample + 1}: {seconds:.2f} s: {export_out.strip()}{load_note()}", flush=True)
        if home.name != "home-import":
            leftovers += [home, export]
    for leftover in leftovers:
        shutil.rmtree(leftover)
    cp_s, import_s = statistics.median(cp_samples), statistics.median(import_samples)
    cp_sync_s, import_sync_s = statistics.median(cp_syncs), statistics.median(import_syncs)
    home = scratch / "home-import"
    env = hemra_env(home)
    checks.append(check("import prints N trials", f": {trials} trials, harbor 0.25" in out, out.strip()))

    _, listing = timed([HEMRA, "runs", "--json"], env)
    runs = [r for r in json.loads(listing) if r.get("label") == "big"]
    progress = runs[0].get("progress", {}) if runs else {}
    got = {k: progress.get(k, 0) for k in ("trials", "done", "passed", "failed", "errored")}
    want = {
        "trials": trials,
        "done": trials,
        "passed": expected["passed"],
        "failed": expected["failed"],
        "errored": expected["errored"],
    }
    checks.append(
        check("hemra runs --json: N trials recorded", len(runs) == 1 and got["trials"] == trials, f"progress {got}")
    )
    checks.append(
        check("import verdicts as generated (passed/failed/errored)", got == want, f"got {got}, generated {want}")
    )
    cells = runs[0].get("cells", []) if runs else []

    export = scratch / "export"
    export_s = statistics.median(export_samples)
    diff = subprocess.run(
        ["diff", "-r", "--no-dereference", str(job), str(export / "source")], capture_output=True, text=True
    )
    checks.append(
        check(
            "export source/ == job (diff -r)", diff.returncode == 0, (diff.stdout + diff.stderr)[:2000] or "identical"
        )
    )
    (dirs_a, files_a), (dirs_b, files_b) = walk(job), walk(export / "source")
    checks.append(
        check(
            "export keeps every folder (empty ones too) and file",
            dirs_a == dirs_b and files_a == files_b and empty_dirs(export / "source") == empty_dirs(job),
            f"{len(dirs_b)}/{len(dirs_a)} folders, {len(files_b)}/{len(files_a)} files, "
            f"{len(empty_dirs(export / 'source'))}/{expected['empty_dirs']} empty folders",
        )
    )

    # Information: compare the import's two agents (each side 5,000 trials at the default size,
    # with the import's whole file tree on its run row).
    info_compare = {}
    if len(cells) == 2:
        samples = []
        for _ in range(COMPARE_SAMPLES):
            seconds, out = timed([HEMRA, "compare", "big/oracle", "big/terminus-2", "--json"], env)
            samples.append(seconds)
        data = json.loads(out)
        info_compare = {
            "seconds": statistics.median(samples),
            "samples": samples,
            "paired_tasks": data.get("paired_tasks"),
            "binary_tasks": data.get("binary_tasks"),
            "a_trials": data["a"].get("trials"),
            "b_trials": data["b"].get("trials"),
        }
        print(
            f"info: hemra compare big/oracle big/terminus-2 --json: {info_compare['seconds']:.2f} s "
            f"(paired {info_compare['paired_tasks']} of {expected['tasks']} tasks)",
            flush=True,
        )
        checks.append(
            check(
                "import compare pairs every task graded by both agents",
                data.get("paired_tasks") == expected["paired_tasks"],
                f"paired_tasks {data.get('paired_tasks')}, expected {expected['paired_tasks']}",
            )
        )

    store_bytes = {
        "db": sum(p.stat().st_size for p in home.glob("hemra.db*")),
        "blobs": tree_bytes(home / "blobs") if (home / "blobs").is_dir() else 0,
        "blob_files": sum(1 for p in (home / "blobs").rglob("*") if p.is_file()),
    }
    return {
        "trials": trials,
        "generated": expected,
        "generate_s": generate_s,
        "cp_s": cp_s,
        "cp_sync_s": cp_sync_s,
        "import_s": import_s,
        "import_sync_s": import_sync_s,
        "cp_samples": cp_samples,
        "import_samples": import_samples,
        "ratio": import_s / cp_s,
        "ratio_with_sync": (import_s + import_sync_s) / (cp_s + cp_sync_s),
        "pair_ratios": [i / c for i, c in zip(import_samples, cp_samples)],
        "export_s": export_s,
        "export_samples": export_samples,
        "export_ratio": export_s / import_s,
        "conditions": conditions,
        "progress": progress,
        "store": store_bytes,
        "compare_info": info_compare,
        "job_dir": str(job),
        "home": str(home),
    }


# --- 2. compare --------------------------------------------------------------------------------


def compare_plans(size: int, rng: random.Random):
    """Two imports of `size` trials each, on the same tasks (digests, scorer fingerprints), 0/1 rewards,
    shaped as services/importer/record.py + services/store/requests.py's planned_run() would record them."""
    from hemra.services import digests
    from hemra.services.store.records import PlannedRun

    tasks = size // COMPARE_REPETITIONS
    names = [f"bench/task-{i:06d}" for i in range(tasks)]
    task_pins = ["sha256:" + _sha(f"bench compare task {i}") for i in range(tasks)]
    task_digests = [digests.sha256(f"imported task\0{pin}".encode()) for pin in task_pins]
    verifiers = [
        digests.sha256(f"imported verifier\0harbor-checksum:{_sha(f'checksum {i}')}".encode()) for i in range(tasks)
    ]
    fingerprints = [digests.scorer_fingerprint(v, {"reward": 1.0}) for v in verifiers]
    task_rows = [
        dict(digest=d, task_name=n, record={"name": f"tasks/{d}", "digest": d, "taskName": n})
        for d, n in zip(task_digests, names)
    ]
    dataset_digest = digests.sha256(("imported dataset\0" + DATASET + "\0" + "\0".join(sorted(task_digests))).encode())
    dataset = dict(
        digest=dataset_digest,
        dataset_name=DATASET,
        source="harbor import",
        task_digests=sorted(task_digests),
        create_time=0.0,
    )
    base_rate = [rng.uniform(0.05, 0.95) for _ in range(tasks)]
    plans = []
    for side, (agent, version, lift) in enumerate((("agent-a", "1.0.0", 0.0), ("agent-b", "1.1.0", 0.04))):
        h_digest = digests.sha256(f"imported agent\0harbor\0{agent}\0{version}\0".encode())
        harness = dict(
            digest=h_digest,
            harness_name=agent,
            record={
                "name": f"harnesses/{h_digest}",
                "digest": h_digest,
                "harnessName": agent,
                "kind": "import",
                "agent": agent,
                "agentVersion": version,
            },
        )
        trials = []
        for rep in range(1, COMPARE_REPETITIONS + 1):
            for i in range(tasks):
                reward = 1.0 if rng.random() < min(1.0, base_rate[i] + lift) else 0.0
                trial_dir = f"{names[i].split('/')[1]}__{side}{rep}{i:06d}"
                start = 1_796_000_000.0 + rep * 1000 + i * 0.01
                result = dict(
                    outcome="completed",
                    error="",
                    agent_version=version,
                    start_time=start,
                    end_time=start + 42.0,
                    score={
                        "state": "SCORE_STATE_SCORED",
                        "rewards": {"reward": reward},
                        "scorer": "imported",
                        "scorerFingerprint": fingerprints[i],
                    },
                    artifacts=[
                        {"path": f"{trial_dir}/{p}", "blobDigest": "sha256:" + _sha(f"{trial_dir}/{p}")}
                        for p in (
                            "config.json",
                            "lock.json",
                            "result.json",
                            "trial.log",
                            "verifier/reward.txt",
                            "verifier/test-stdout.txt",
                        )
                    ],
                )
                trials.append((0, task_digests[i], names[i], rep, result))
        label = f"cmp-{'ab'[side]}"
        plans.append(
            PlannedRun(
                label=label,
                spec={"label": label, "baseline": agent, "datasets": [DATASET], "harnesses": [agent]},
                concurrency=1,
                max_infra_retries=0,
                datasets=[dataset],
                tasks=task_rows,
                harnesses=[harness],
                cells=[(dataset_digest, DATASET, h_digest, agent, "")],
                trials=trials,
                kind="import",
                import_format="harbor 0.25",
                source=f"/bench/{label}",
                tree=[],
            )
        )
    return plans, tasks


async def record_compare_store(home: Path, size: int) -> tuple[int, float]:
    from hemra.services.store.service import Store
    from hemra.services.store.settings import StoreSettings

    settings = StoreSettings.from_env(None, home)
    plans, tasks = compare_plans(size, random.Random(SEED + size))
    store = await Store.open(f"sqlite:///{home / 'hemra.db'}", settings.blob_dir)
    try:
        start = time.perf_counter()
        for plan in plans:
            await store.record_run(plan)
        return tasks, time.perf_counter() - start
    finally:
        await store.close()


async def compare_in_process(home: Path, samples: int) -> dict:
    """Store.compare timed in this process (median of `samples`), and one broken-down call."""
    from hemra.clients.cli import comparing, render
    from hemra.services.bulk import gc_paused
    from hemra.services.store import compare as cmp
    from hemra.services.store import convert
    from hemra.services.store.service import Store
    from hemra.v1 import store_service_pb2 as spb

    store = await Store.open(f"sqlite:///{home / 'hemra.db'}", home / "blobs")
    try:
        times, result = [], None
        for _ in range(samples):
            store.forget()  # each sample reads both sides (a store keeps what it read of settled runs)
            start = time.perf_counter()
            result = await store.compare("cmp-a", "cmp-b")
            times.append(time.perf_counter() - start)
        # The same steps as Store.compare, the servicer and the CLI, timed apart.
        with gc_paused():
            start = time.perf_counter()
            async with store.sessions() as session:
                scores: dict = {}
                side_a = await cmp.resolve_side(session, "cmp-a", scores)
                side_b = await cmp.resolve_side(session, "cmp-b", scores)
            loaded = time.perf_counter()
            again = cmp.compare(side_a, side_b)
            compared = time.perf_counter()
        message = spb.Comparison.FromString(convert.message(again, spb.Comparison).SerializeToString())
        text = render.dumps(render.message_json(message, comparing.BULK))
        done = time.perf_counter()
        return {
            "seconds": statistics.median(times),
            "samples": times,
            "first_s": times[0],
            "load_sides_s": loaded - start,
            "pair_and_stats_s": compared - loaded,
            "proto_and_json_s": done - compared,
            "json_bytes": len(text),
            "paired_tasks": result.paired_tasks,
            "binary_tasks": result.binary_tasks,
            "delta": result.delta,
        }
    finally:
        await store.close()


def bench_compare(size: int, scratch: Path, checks: list) -> dict:
    if size % COMPARE_REPETITIONS:
        raise BenchError(f"--compare-sizes: {size} is not a multiple of {COMPARE_REPETITIONS} repetitions")
    home = scratch / f"home-compare-{size}"
    tasks, record_s = asyncio.run(record_compare_store(home, size))
    print(
        f"compare {size:,}: recorded 2 x {size:,} trials ({tasks:,} tasks x {COMPARE_REPETITIONS}) "
        f"with Store.record_run in {record_s:.1f} s",
        flush=True,
    )
    sync()
    env = hemra_env(home)
    samples, out = [], ""
    conditions = pressure()
    for _ in range(COMPARE_SAMPLES):
        seconds, out = timed([HEMRA, "compare", "cmp-a", "cmp-b", "--json"], env)
        samples.append(seconds)
    data = json.loads(out)
    cli_s = statistics.median(samples)
    firsts, agains = [], []
    from hemra.services.store import warm

    warm_env = hemra_env(home, warm_store=True)
    for _ in range(COMPARE_SAMPLES):
        # A new warm store each sample: the first command leaves it, the second is its first
        # compare of these runs (it reads both sides), the third finds their trials kept.
        try:
            timed([HEMRA, "compare", "cmp-a", "cmp-b", "--json"], warm_env)
            time.sleep(1)  # for the warm store to start
            seconds, warm_out = timed([HEMRA, "compare", "cmp-a", "cmp-b", "--json"], warm_env)
            firsts.append(seconds)
            agains.append(timed([HEMRA, "compare", "cmp-a", "cmp-b", "--json"], warm_env)[0])
        finally:
            warm.stop(home)  # the one these commands left
    warm_first_s, warm_s = statistics.median(firsts), statistics.median(agains)
    inproc = asyncio.run(compare_in_process(home, COMPARE_SAMPLES))
    print(
        f"compare {size:,}: CLI {cli_s:.2f} s (samples {', '.join(f'{s:.2f}' for s in samples)}), "
        f"warm store: first {warm_first_s:.2f} s (samples {', '.join(f'{s:.2f}' for s in firsts)}), "
        f"again {warm_s:.2f} s (samples {', '.join(f'{s:.2f}' for s in agains)}), "
        f"Store.compare {inproc['seconds']:.2f} s (load sides {inproc['load_sides_s']:.2f}, pair + stats "
        f"{inproc['pair_and_stats_s']:.2f}, proto + JSON {inproc['proto_and_json_s']:.2f}){load_note()}",
        flush=True,
    )
    a, b = data.get("a", {}), data.get("b", {})
    checks.append(
        check(
            f"compare {size}: paired_tasks == tasks",
            data.get("paired_tasks") == tasks,
            f"paired_tasks {data.get('paired_tasks')}, tasks {tasks}",
        )
    )
    checks.append(
        check(
            f"compare {size}: binary_tasks == tasks",
            data.get("binary_tasks") == tasks,
            f"binary_tasks {data.get('binary_tasks')}, tasks {tasks}",
        )
    )
    checks.append(
        check(
            f"compare {size}: both sides {size} trials, all graded, nothing not comparable",
            a.get("trials") == b.get("trials") == a.get("graded") == b.get("graded") == size
            and not data.get("not_comparable"),
            f"a {a.get('trials')}/{a.get('graded')}, b {b.get('trials')}/{b.get('graded')}, "
            f"not comparable {len(data.get('not_comparable') or [])}",
        )
    )
    checks.append(
        check(
            f"compare {size}: the warm store's answer == the CLI's own",
            json.loads(warm_out) == data,
            "they differ",
        )
    )
    checks.append(
        check(
            f"compare {size}: in-process result == CLI result",
            inproc["paired_tasks"] == data.get("paired_tasks")
            and abs(inproc["delta"] - data.get("delta", 0.0)) < 1e-12,
            f"in-process paired {inproc['paired_tasks']} delta {inproc['delta']}, "
            f"CLI paired {data.get('paired_tasks')} delta {data.get('delta')}",
        )
    )
    return {
        "size": size,
        "tasks": tasks,
        "repetitions": COMPARE_REPETITIONS,
        "record_s": record_s,
        "cli_s": cli_s,
        "cli_samples": samples,
        "cli_warm_first_s": warm_first_s,
        "cli_warm_s": warm_s,
        "cli_warm_first_samples": firsts,
        "cli_warm_samples": agains,
        "in_process": inproc,
        "cli_overhead_s": cli_s - inproc["seconds"],
        "delta": data.get("delta"),
        "delta_interval": data.get("delta_interval"),
        "db_bytes": sum(p.stat().st_size for p in home.glob("hemra.db*")),
        "home": str(home),
        "conditions": conditions,
    }


# --- profiling ---------------------------------------------------------------------------------


def profile_child(argv: list[str]) -> int:
    """_profile OUT -- hemra args: the CLI in this process under cProfile, threads made inline."""
    import cProfile

    out, rest = argv[0], argv[argv.index("--") + 1 :]

    async def inline(func, /, *args, **kwargs):
        return func(*args, **kwargs)

    asyncio.to_thread = inline
    from hemra.clients.cli.main import main as hemra_main

    sys.argv = ["hemra", *rest]
    profiler = cProfile.Profile()
    code = 0
    with open(os.devnull, "w") as devnull:
        saved, sys.stdout = sys.stdout, devnull
        try:
            profiler.enable()
            try:
                code = hemra_main() or 0
            except SystemExit as exc:
                code = exc.code or 0
            finally:
                profiler.disable()
        finally:
            sys.stdout = saved
    profiler.dump_stats(out)
    return int(code)


def top_costs(path: Path, top: int = PROFILE_TOP) -> dict:
    """The top functions by own time and by cumulative time (HEMRA's code only for the latter)."""
    import pstats

    stats = pstats.Stats(str(path), stream=io.StringIO())
    total = stats.total_tt
    rows = []
    for (file, line, func), (_cc, nc, tt, ct, _) in stats.stats.items():
        where = file.replace(str(REPO) + "/", "")
        if "site-packages/" in where:
            where = where.split("site-packages/", 1)[1]
        else:
            where = re.sub(r"^.*/lib/python3\.\d+/", "", where)
        rows.append(
            {
                "function": f"{where}:{line}({func})",
                "calls": nc,
                "own_s": tt,
                "cum_s": ct,
                "ours": file.startswith(str(REPO)) and "/.venv/" not in file,
            }
        )
    own = sorted(rows, key=lambda r: -r["own_s"])[:top]
    cum = sorted((r for r in rows if r["ours"]), key=lambda r: -r["cum_s"])[: top + 5]
    return {"total_s": total, "by_own_time": own, "hemra_by_cumulative": cum}


def print_costs(title: str, costs: dict) -> list[str]:
    lines = [
        f"--- {title}: {costs['total_s']:.2f} s profiled in the main thread "
        f"(select.epoll poll = waiting, mostly for aiosqlite's thread running SQLite)"
    ]
    for key, heading in (("by_own_time", "top by own time"), ("hemra_by_cumulative", "HEMRA code by cumulative time")):
        lines.append(f"  {heading}:")
        lines.append(f"    {'own s':>7} {'cum s':>7} {'calls':>9}  function")
        for r in costs[key]:
            lines.append(f"    {r['own_s']:7.2f} {r['cum_s']:7.2f} {r['calls']:>9}  {r['function']}")
    print("\n".join(lines), flush=True)
    return lines


def profile_cli(name: str, args: list, home: Path, scratch: Path) -> dict:
    out = scratch / f"{name}.prof"
    seconds, _ = timed([PYTHON, Path(__file__).resolve(), "_profile", out, "--", *args], hemra_env(home))
    costs = top_costs(out)
    costs["wall_s"] = seconds
    costs["printed"] = print_costs(
        f"cProfile of hemra {' '.join(map(str, args[:1]))} ({name}; wall {seconds:.2f} s "
        f"under the profiler, not in the table)",
        costs,
    )
    return costs


async def _profile_store_compare(home: Path, out: Path) -> None:
    import cProfile

    from hemra.services.store.service import Store

    store = await Store.open(f"sqlite:///{home / 'hemra.db'}", home / "blobs")
    try:
        await store.compare("cmp-a", "cmp-b")  # warm, as the timed samples after the first
        profiler = cProfile.Profile()
        profiler.enable()
        await store.compare("cmp-a", "cmp-b")
        profiler.disable()
        profiler.dump_stats(str(out))
    finally:
        await store.close()


# --- report ------------------------------------------------------------------------------------


def check(what: str, ok: bool, detail: str) -> dict:
    if not ok:
        print(f"CHECK FAILED: {what}: {detail}", flush=True)
    return {"what": what, "ok": bool(ok), "detail": detail}


def targets_of(imp: dict, compares: list[dict]) -> list[dict]:
    targets = [
        {
            "what": f"import {imp['trials']:,} trials / cp -r",
            "value": imp["ratio"],
            "unit": "x",
            "target": f"<= {IMPORT_RATIO_TARGET:g}x",
            "met": imp["ratio"] <= IMPORT_RATIO_TARGET,
        }
    ]
    targets.append(
        {
            "what": f"export of the import / import ({imp['trials']:,} trials)",
            "value": imp["export_ratio"],
            "unit": "x",
            "target": f"<= {EXPORT_RATIO_TARGET:g}x",
            "met": imp["export_ratio"] <= EXPORT_RATIO_TARGET,
        }
    )
    for c in compares:
        if c["size"] <= COMPARE_TARGET_SIZE:
            targets.append(
                {
                    "what": f"compare 2 x {c['size']:,} trials (CLI, a warm store's first compare of them)",
                    "value": c["cli_warm_first_s"],
                    "unit": "s",
                    "target": f"< {COMPARE_SECONDS_TARGET:g} s",
                    "met": c["cli_warm_first_s"] < COMPARE_SECONDS_TARGET,
                    "size": c["size"],
                }
            )
    return targets


def print_table(imp: dict | None, compares: list[dict], targets: list[dict], startup_s: float) -> None:
    met = {t["what"]: t for t in targets}

    def row(what, value, target="", key=None):
        t = met.get(key) if key else None
        verdict = ("yes" if t["met"] else "NO") if t else ""
        print(f"  {what:<58}{value:>12}  {target:<12}{verdict}")

    print("\nimports and compare" + load_note())
    print(f"  {'figure':<58}{'value':>12}  {'target':<12}met")
    if imp:
        g = imp["generated"]
        row(
            f"job: {imp['trials']:,} trials, {g['files']:,} files, {g['dirs']:,} folders ({g['empty_dirs']:,} empty)",
            f"{g['bytes'] / 1e6:.1f} MB",
        )
        row(f"cp -r <job> <tmp>/copy (floor; median of {len(imp['cp_samples'])})", f"{imp['cp_s']:.2f} s")
        row(f"hemra import <job> --label big (median of {len(imp['import_samples'])})", f"{imp['import_s']:.2f} s")
        key = targets[0]["what"]
        row("import / cp -r", f"{imp['ratio']:.2f}x", targets[0]["target"], key)
        row(
            "info: samples cp -r / import",
            " ".join(f"{c:.1f}/{i:.1f}" for c, i in zip(imp["cp_samples"], imp["import_samples"])),
        )
        row("info: import / cp -r of each interleaved pair", " ".join(f"{r:.2f}x" for r in imp["pair_ratios"]))
        row("info: sync after cp -r / after import", f"{imp['cp_sync_s']:.2f} / {imp['import_sync_s']:.2f} s")
        row("info: (import + sync) / (cp -r + sync)", f"{imp['ratio_with_sync']:.2f}x")
        row("info: import - CLI start-up (hemra --version)", f"{imp['import_s'] - startup_s:.2f} s")
        row(
            "info: per trial, import / cp -r",
            f"{1000 * imp['import_s'] / imp['trials']:.2f} / {1000 * imp['cp_s'] / imp['trials']:.2f} ms",
        )
        row(f"hemra export big --out X (median of {len(imp['export_samples'])})", f"{imp['export_s']:.2f} s")
        key = targets[1]["what"]
        row("export / import", f"{imp['export_ratio']:.2f}x", targets[1]["target"], key)
        s = imp["store"]
        row(
            "info: store after import: SQLite / blobs (files)",
            f"{s['db'] / 1e6:.1f} / {s['blobs'] / 1e6:.1f} MB ({s['blob_files']:,})",
        )
        if imp["compare_info"]:
            ci = imp["compare_info"]
            row(
                f"info: compare big/oracle big/terminus-2 ({ci['a_trials']:,} + {ci['b_trials']:,}, with tree)",
                f"{ci['seconds']:.2f} s",
            )
    row("info: CLI start-up alone (hemra --version)", f"{startup_s:.2f} s")
    for c in compares:
        t_key = next((t["what"] for t in targets if t.get("size") == c["size"]), None)
        n = f"{c['size']:,}"
        row(f"compare 2 x {n} trials ({c['tasks']:,} tasks x {c['repetitions']}): CLI --json", f"{c['cli_s']:.2f} s")
        row(
            "  with a warm store, its first compare of these runs",
            f"{c['cli_warm_first_s']:.2f} s",
            f"< {COMPARE_SECONDS_TARGET:g} s" if t_key else "info",
            t_key,
        )
        row("  with a warm store, compared again (trials kept)", f"{c['cli_warm_s']:.2f} s")
        ip = c["in_process"]
        row("  Store.compare in-process", f"{ip['seconds']:.2f} s")
        row(
            "    load both sides / pair + stats / proto + JSON",
            f"{ip['load_sides_s']:.2f}/{ip['pair_and_stats_s']:.2f}/{ip['proto_and_json_s']:.2f}",
        )
        row("  CLI overhead (CLI - in-process)", f"{c['cli_overhead_s']:.2f} s")
    print()
    for t in targets:
        print(
            f"  target {t['what']}: {t['value']:.2f}{t['unit']} (target {t['target']}): "
            f"{'met' if t['met'] else 'MISSED'}"
        )


def git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def git_dirty() -> list[str]:
    """Uncommitted changes in the tree that was measured."""
    try:
        return subprocess.run(
            ["git", "status", "--short"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return []


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_profile":
        return profile_child(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=10_000, help="trials in the generated Harbor job (default 10000)")
    parser.add_argument(
        "--compare-sizes",
        default="5000,50000",
        help="trials per side for the compare, comma-separated (default 5000,50000)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp folder (job, HEMRA homes, export)")
    args = parser.parse_args()
    try:
        sizes = [int(s) for s in args.compare_sizes.split(",") if s.strip()]
    except ValueError:
        parser.error("--compare-sizes takes integers, e.g. 5000,50000")
    if args.trials < 2 or any(s < COMPARE_REPETITIONS or s % COMPARE_REPETITIONS for s in sizes):
        parser.error(f"--trials must be at least 2; each compare size a multiple of {COMPARE_REPETITIONS}")
    if not HEMRA.exists():
        parser.error(f"{HEMRA} not found: make setup first")
    if Path(TASKS_ROOT).exists():
        print(f"note: {TASKS_ROOT} exists here; the import may pin those task folders", file=sys.stderr)

    scratch = Path(tempfile.mkdtemp(prefix="hemra-bench-imports-"))
    checks: list[dict] = []
    started = time.perf_counter()
    try:
        startup_s, _ = timed([HEMRA, "--version"])
        imp = bench_import(args.trials, scratch, checks)
        compares = [bench_compare(size, scratch, checks) for size in sizes]
        targets = targets_of(imp, compares)
        print_table(imp, compares, targets, startup_s)

        profiles = {}
        missed = [t for t in targets if not t["met"]]
        if missed:
            print("\nmissed targets: profiling the missed steps once more under cProfile (not in the table)\n")
        for t in missed:
            if t["what"].startswith("import"):
                home = scratch / "home-import-profiled"
                profiles["import"] = profile_cli("import", ["import", imp["job_dir"], "--label", "big"], home, scratch)
            elif t["what"].startswith("export"):
                out = scratch / "export-profiled"
                profiles["export"] = profile_cli(
                    "export", ["export", "big", "--out", str(out)], Path(imp["home"]), scratch
                )
            else:
                c = next(c for c in compares if c["size"] == t["size"])
                home = Path(c["home"])
                profiles[f"compare_{c['size']}_cli"] = profile_cli(
                    f"compare-{c['size']}", ["compare", "cmp-a", "cmp-b", "--json"], home, scratch
                )
                out = scratch / f"store-compare-{c['size']}.prof"
                asyncio.run(_profile_store_compare(home, out))
                costs = top_costs(out)
                costs["printed"] = print_costs(f"cProfile of Store.compare in-process ({c['size']:,} per side)", costs)
                profiles[f"compare_{c['size']}_store"] = costs
    except BenchError as exc:
        print(f"\nBENCHMARK FAILED: {exc}", file=sys.stderr)
        print(f"temp folder kept: {scratch}", file=sys.stderr)
        return 1
    except BaseException:
        print(f"temp folder kept: {scratch}", file=sys.stderr)
        raise

    failed = [c for c in checks if not c["ok"]]
    print(
        f"\nchecks: {len(checks) - len(failed)}/{len(checks)} passed"
        + "".join(f"\n  FAILED {c['what']}: {c['detail']}" for c in failed)
    )
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = {
        "benchmark": "imports_compare",
        "timestamp": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "options": {"trials": args.trials, "compare_sizes": sizes},
        "method": "import: subprocess wall time of `hemra import <job> --label big` into a fresh HEMRA_HOME "
        "(SQLite); floor: `cp -r <job> <tmp>/copy` run once right after generating the job. The page "
        "cache is not dropped (both read the job warm); `sync` (not timed) runs before each timing, "
        "and the sync after each is recorded apart. compare: median of "
        f"{COMPARE_SAMPLES} subprocess runs of `hemra compare cmp-a cmp-b --json`, and the median of "
        f"{COMPARE_SAMPLES} Store.compare calls in one process (the first includes query compilation).",
        "import": imp,
        "compare": compares,
        "cli_startup_s": startup_s,
        "targets": targets,
        "checks": checks,
        "profiles": profiles,
        "elapsed_s": time.perf_counter() - started,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "end_conditions": pressure(),
        },
        "hemra_commit": git_commit(),
        "hemra_dirty_files": git_dirty(),
        "temp_dir": str(scratch) if args.keep else None,
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"imports-compare-{stamp}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"results: {path} ({out['elapsed_s']:.0f} s in all)")
    if args.keep:
        print(f"temp folder kept: {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
