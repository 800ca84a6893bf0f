"""The files a user or a dataset hands HEMRA: task.toml, run files, harness files and judge
files, each a real one with one thing changed (tests/fuzz/mutate.py) or its text damaged. Each
is read, or refused in one line by the parser's own error; what is read also converts to the
message it travels in. Never another exception (a traceback)."""

import shutil
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hemra.clients.cli.common import RunFileError
from hemra.clients.cli.runfile import Flags, merge
from hemra.services.common import judges
from hemra.services.common.errors import HemraError
from hemra.services.domain import harnesses
from hemra.services.domain.tasks import load_task, task_to_proto
from tests.conftest import REPO
from tests.fuzz.mutate import DEEP, TOML, damaged_text, examples, mutated, toml_text

TASK = REPO / "examples" / "hemra-offline" / "text-stats"
HARNESSES = REPO / "examples" / "harnesses" / "harnesses"
RUN_FILE = """
name = "nightly"
baseline = "nop"
harnesses = ["oracle", "nop"]
datasets = ["hemra-offline"]
attempts = 3
concurrency = 4
model = "model-x"
timeout_secs = 600
max_infra_retries = 2
tasks = ["fix-*"]
exclude = ["*slow*"]
require = ["filesystem_isolation"]
pool = "gpu-a100"
allow_history = ["swebench/*"]

[sandbox]
kind = "docker"
image = "ubuntu:24.04"
network = "host"

[verifier]
network = "none"
env = ["API_URL", "TOKEN"]
isolation = "fresh"

[[judge]]
name = "style"
"""
JUDGE = """
description = "Style"

[model]
api = "anthropic-messages"
id = "judge-model-1"
base_url_env = "JUDGE_URL"
api_key_env = "JUDGE_KEY"
max_tokens = 2048
temperature = 0.0

[input]
instruction = true
answer = "final_message"
trajectory = "full"

[[criterion]]
id = "gives_counts"
description = "The agent reports the counts"
expected = "words:"
weight = 2.0

[[criterion]]
id = "tidy"
type = "score"
description = "Tidy"
"""
CLI_HARNESS = 'kind = "cli"\nagent = "claude-code"\nversion = "2.1.3"\nmodel = "m"\nenv = ["ANTHROPIC_API_KEY"]\n'


#: How deep a mutation may nest a value: past Python's recursion limit, which every reader bounds.
NESTING = DEEP


def _documents(*texts: str):
    """A real document with one thing changed, written as TOML; or its text damaged."""
    documents = [tomllib.loads(text) for text in texts]
    changed = st.sampled_from(documents).flatmap(lambda doc: mutated(doc, values=TOML, deep=NESTING)).map(toml_text)
    return changed | changed | st.sampled_from(texts).flatmap(damaged_text)


def _one_line(exc: BaseException) -> None:
    if isinstance(exc, HemraError):
        assert exc.code.name != "INTERNAL", f"{type(exc).__name__}: {exc}"
    assert "\n" not in str(exc).strip(), f"not one line: {str(exc)[:300]!r}"


@pytest.fixture
def task_folder(tmp_path):
    folder = tmp_path / "task"
    shutil.copytree(TASK, folder)
    return folder


def test_task_toml__fuzzed(task_folder):
    text = (TASK / "task.toml").read_text()

    @given(document=_documents(text))
    @settings(max_examples=examples(150))
    def check(document):
        (task_folder / "task.toml").write_text(document)
        try:
            task = load_task(task_folder)
        except HemraError as exc:
            _one_line(exc)
            return
        task_to_proto(task).SerializeToString()

    check()


def test_run_file__fuzzed(tmp_path):
    (tmp_path / "judges").mkdir()
    (tmp_path / "judges" / "style.toml").write_text(JUDGE)
    path = tmp_path / "hemra.toml"

    @given(document=_documents(RUN_FILE))
    @settings(max_examples=examples(150))
    def check(document):
        path.write_text(document)
        try:
            spec = merge(path, Flags())
        except (RunFileError, HemraError) as exc:
            _one_line(exc)
            return
        spec.SerializeToString()

    check()


def test_harness_file__fuzzed(tmp_path):
    texts = [p.read_text() for p in sorted(HARNESSES.glob("*.toml"))] + [CLI_HARNESS]
    path = tmp_path / "harness.toml"

    @given(document=_documents(*texts))
    @settings(max_examples=examples(150))
    def check(document):
        path.write_text(document)
        try:
            harness = harnesses.load(path)
        except HemraError as exc:
            _one_line(exc)
            return
        harnesses.harness_to_proto(harness, "").SerializeToString()

    check()


def test_judge_file__fuzzed(tmp_path):
    builtin = (REPO / "services" / "common" / "builtin_judges" / "reward-hacking.toml").read_text()
    path = tmp_path / "judges" / "style.toml"
    path.parent.mkdir()

    @given(document=_documents(JUDGE, builtin))
    @settings(max_examples=examples(150))
    def check(document):
        path.write_text(document)
        try:
            judge = judges.load(path)
        except (judges.JudgeFileError, HemraError) as exc:
            _one_line(exc)
            return
        judges.from_spec(judge.spec())

    check()


def _task_toml(path):
    folder = path.parent / "task"
    if not folder.exists():
        shutil.copytree(TASK, folder)
    (folder / "task.toml").write_text(path.read_text())
    load_task(folder)


def _run_file(path):
    merge(path, Flags())


#: Each TOML reader and the errors it refuses with.
READERS = {
    "task.toml": (_task_toml, HemraError),
    "run file": (_run_file, (RunFileError, HemraError)),
    "harness file": (harnesses.load, HemraError),
    "judge file": (judges.load, (judges.JudgeFileError, HemraError)),
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("kind", ["list", "table"])
def test_toml_nested_deep__refused(tmp_path, reader, kind):
    """A value nested 50,000 deep (DEEP's deepest) is refused in one line like any malformed file."""
    read, refusals = READERS[reader]
    value = "[" * 50_000 + "]" * 50_000 if kind == "list" else "{a = " * 50_000 + "1" + "}" * 50_000
    path = tmp_path / "file.toml"
    path.write_text(f"name = {value}\n")
    with pytest.raises(refusals) as refused:
        read(path)
    _one_line(refused.value)
