"""Hugging Face datasets as a source, offline: a hub cache laid out as huggingface_hub writes it
(blobs, snapshots of symbolic links, refs), HF_HUB_OFFLINE=1, a mapping file beside the run file;
the rows become tasks pinned by revision and HEMRA's digests, and run."""

import hashlib
import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.e2e.helpers import hemra, runs

COMMIT = "4f1c2b9e0d8a7c6b5a4f3e2d1c0b9a8f7e6d5c4b"
MAPPING = """files = ["data/test-*.parquet"]
name = "instance_id"
instruction = "problem"
tests = "test_sh"
solution = "solve_sh"
dockerfile = "FROM debian:bookworm-slim\\nWORKDIR /app\\n"
verifier_timeout_secs = 60
"""


def rows() -> list[dict]:
    found = []
    for number, word in ((1, "forty-two"), (2, "seven")):
        test = (
            "#!/bin/bash\nmkdir -p /logs/verifier\n"
            f'if [ "$(cat /app/answer.txt 2>/dev/null)" = "{word}" ]; then echo 1; else echo 0; fi'
            " > /logs/verifier/reward.txt\n"
        )
        found.append(
            {
                "instance_id": f"row-{number}",
                "problem": f"Write the word {word} to /app/answer.txt.",
                "test_sh": test,
                "solve_sh": f"#!/bin/bash\necho {word} > /app/answer.txt\n",
            }
        )
    return found


def hub_cache(root: Path, table: pa.Table) -> Path:
    """datasets--acme--tiny as the hub writes it: the file in blobs/, a relative link to it in
    snapshots/<commit>/, refs/main naming the commit."""
    repo = root / "datasets--acme--tiny"
    (repo / "blobs").mkdir(parents=True)
    (repo / "refs").mkdir()
    scratch = root / "test.parquet"
    pq.write_table(table, scratch)
    data = scratch.read_bytes()
    blob = hashlib.sha256(data).hexdigest()
    (repo / "blobs" / blob).write_bytes(data)
    scratch.unlink()
    link = repo / "snapshots" / COMMIT / "data" / "test-00000-of-00001.parquet"
    link.parent.mkdir(parents=True)
    link.symlink_to(os.path.relpath(repo / "blobs" / blob, link.parent))
    (repo / "refs" / "main").write_text(COMMIT)
    return root


@pytest.fixture
def env(hemra_env, tmp_path):
    hub_cache(tmp_path / "hub", pa.Table.from_pylist(rows()))
    mapping = tmp_path / "eval" / "datasets" / "hf" / "acme" / "tiny.toml"
    mapping.parent.mkdir(parents=True)
    mapping.write_text(MAPPING)
    return {**hemra_env, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}


def run_file(folder: Path, ref: str) -> Path:
    path = folder / "hemra.toml"
    path.write_text(f'name = "hf"\nharnesses = ["oracle", "nop"]\ndatasets = [{json.dumps(ref)}]\n')
    return path


def test_rows_become_pinned_tasks_that_run(env, tmp_path):
    pinned = hemra(env, "datasets", "pin", "hf:acme/tiny@main", "--json", cwd=tmp_path / "eval")
    # `pin` outside a run file's folder finds the mapping through HEMRA_DATASETS_PATH:
    assert pinned.returncode == 2 and "no mapping file" in pinned.stderr
    env = {**env, "HEMRA_DATASETS_PATH": str(tmp_path / "eval" / "datasets")}
    pinned = json.loads(hemra(env, "datasets", "pin", "hf:acme/tiny@main", "--json").stdout)
    assert sorted(t["task_name"] for t in pinned["tasks"]) == ["acme-tiny/row-1", "acme-tiny/row-2"]
    assert pinned["source"].startswith(f"hf:acme/tiny@{COMMIT}")  # the branch, pinned at its commit
    result = hemra(env, "run", str(run_file(tmp_path / "eval", f"hf:acme/tiny@{COMMIT}")))
    assert result.returncode == 0, result.stderr + result.stdout
    assert "2/2" in result.stdout and "0/2" in result.stdout, result.stdout
    # The same revision gives the same digest: the run's dataset is the pinned one.
    [listed] = [d for d in json.loads(hemra(env, "datasets", "list", "--json").stdout) if "acme" in d["source"]]
    assert listed["digest"] == pinned["digest"] and listed["runs"] == 1
    # With HEMRA's copy and the hub's cache both gone, offline: written back from the store.
    shutil.rmtree(Path(env["HEMRA_HOME"]) / "cache" / "hf")
    shutil.rmtree(tmp_path / "hub")
    again = hemra({**env, "HEMRA_OFFLINE": "1"}, "run", str(run_file(tmp_path / "eval", f"hf:acme/tiny@{COMMIT}")))
    assert again.returncode == 0, again.stderr + again.stdout
    assert "2/2" in again.stdout, again.stdout
    [listed] = [d for d in json.loads(hemra(env, "datasets", "list", "--json").stdout) if "acme" in d["source"]]
    assert listed["digest"] == pinned["digest"] and listed["runs"] == 2


@pytest.mark.parametrize(
    ("mapping", "ref", "message"),
    [
        (MAPPING.replace('"problem"', '"question"'), f"hf:acme/tiny@{COMMIT}", "no such column"),
        (MAPPING + "unknown = 1\n", f"hf:acme/tiny@{COMMIT}", "unknown key 'unknown'"),
        (MAPPING, "hf:acme/tiny@v9", "hf:acme/tiny@v9"),
        (MAPPING, "hf:acme/other@main", "no mapping file"),
        (MAPPING.replace("test-*", "train-*"), f"hf:acme/tiny@{COMMIT}", "match nothing"),
    ],
)
def test_bad_input_is_one_line_and_records_nothing(env, tmp_path, mapping, ref, message):
    (tmp_path / "eval" / "datasets" / "hf" / "acme" / "tiny.toml").write_text(mapping)
    result = hemra(env, "run", str(run_file(tmp_path / "eval", ref)))
    assert result.returncode == 2, result.stdout
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error:") and message in line, line
    assert runs(env) == []
