"""HEMRA judge files: judges/<name>.toml, read, checked and fingerprinted.

A judge file names a model (by API and exact id; its endpoint and key only by the names of
environment variables), what the judge reads of a recorded attempt, a prompt template, the
criteria and how they combine (docs/judges.md). The client reads the file and sends its
definition (canonical JSON, template inlined) in the run's spec; the scorer rebuilds the same
Judge from that JSON, so a judge means the same thing on every machine that judges with it.

The fingerprint covers everything that changes what a judgment means and nothing else: the
model requested, the sampling parameters sent, the prompt's bytes (HEMRA's own instructions
included, through PROMPT_VERSION), the inputs read, the criteria, samples, combining and
aggregation. Names, descriptions, retries, timeouts, endpoints, keys and concurrency are
left out: changing them does not change the measurement.
"""

import functools
import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hemra.services.common import parsing
from hemra.v1 import common_pb2 as pb

#: Where the executor keeps the files judges read among an attempt's artifacts:
#: CAPTURE_ROOT/start/<path> when the agent started, CAPTURE_ROOT/end/<path> when it stopped.
CAPTURE_ROOT = "/hemra/judge"
#: The most of one file captured for judges.
MAX_CAPTURE_BYTES = 1024 * 1024
#: Bumped whenever HEMRA's own judge instructions or rendering change (it is in every fingerprint).
PROMPT_VERSION = 1
APIS = ("anthropic-messages", "openai-responses", "openai-chat")
DEFAULT_KEY_ENV = {
    "anthropic-messages": "ANTHROPIC_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "openai-chat": "OPENAI_API_KEY",
}
CRITERION_TYPES = ("binary", "likert", "numeric", "categorical")
AGGREGATIONS = ("weighted_mean", "all_pass", "any_pass", "threshold")
COMBINES = ("mean", "median", "majority")
ANSWERS = ("final_message", "none")
TRAJECTORIES = ("none", "messages", "full")
MODES = ("batched", "individual")
PLACEHOLDERS = ("instruction", "answer", "files", "diff", "trajectory", "criteria")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DEFAULT_TEMPLATE = """Judge the agent's work on the task below against the criteria.

Task instruction:
{instruction}

The agent's final message:
{answer}

Files from the agent's workspace:
{files}

Changes the agent made to those files:
{diff}

What the agent did:
{trajectory}
"""


class JudgeFileError(ValueError):
    """A judge file that cannot be used: the file and the problem, in one line."""


@dataclass(frozen=True)
class Criterion:
    id: str
    description: str
    type: str = "binary"
    weight: float = 1.0
    expected: str = ""
    points: int = 5
    min: float = 0.0
    max: float = 1.0
    choices: dict[str, float] = field(default_factory=dict)

    def normalize(self, raw) -> float:
        """The judge's raw answer as 0..1; ValueError when it is not an answer on this scale."""
        if self.type == "binary":
            if isinstance(raw, bool):
                return float(raw)
            if isinstance(raw, str) and raw.strip().lower() in ("yes", "true", "pass", "met"):
                return 1.0
            if isinstance(raw, str) and raw.strip().lower() in ("no", "false", "fail", "not met"):
                return 0.0
            if isinstance(raw, int | float) and raw in (0, 1):
                return float(raw)
            raise ValueError(f"{self.id}: {raw!r} is not yes or no")
        if self.type == "categorical":
            if isinstance(raw, str) and raw in self.choices:
                return self.choices[raw]
            raise ValueError(f"{self.id}: {raw!r} is not one of {sorted(self.choices)}")
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
            raise ValueError(f"{self.id}: {raw!r} is not a number")
        if self.type == "likert":
            if raw != int(raw) or not 1 <= raw <= self.points:
                raise ValueError(f"{self.id}: {raw!r} is not a whole number from 1 to {self.points}")
            return (raw - 1) / (self.points - 1)
        if not self.min <= raw <= self.max:
            raise ValueError(f"{self.id}: {raw!r} is not between {self.min} and {self.max}")
        return (raw - self.min) / (self.max - self.min)

    def scale(self) -> str:
        """The answer this criterion takes, said to the judge."""
        if self.type == "binary":
            return "true or false (true: the criterion is met)"
        if self.type == "likert":
            return f"a whole number from 1 (worst) to {self.points} (best)"
        if self.type == "numeric":
            return f"a number from {self.min:g} to {self.max:g}"
        return "one of " + ", ".join(json.dumps(c) for c in self.choices)

    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(_canonical(asdict(self)).encode()).hexdigest()


@dataclass(frozen=True)
class Judge:
    name: str
    description: str
    # [model]
    api: str
    model: str
    base_url_env: str
    api_key_env: str
    max_tokens: int
    temperature: float | None
    top_p: float | None
    seed: int | None
    reasoning_effort: str
    stream: bool
    # [input]
    instruction: bool
    answer: str
    files: tuple[str, ...]
    diff: bool
    trajectory: str
    max_input_chars: int
    # [prompt]
    template: str
    mode: str
    criteria: tuple[Criterion, ...]
    # [scoring]
    aggregation: str
    threshold: float
    pass_at: float
    # [samples]
    samples: int
    combine: str
    # [retries]
    parse_retries: int
    transport_retries: int
    timeout_secs: float
    backoff_secs: float
    concurrency: int

    def sampling(self) -> dict:
        """The sampling parameters sent with every call (those the file sets)."""
        sent = {"max_tokens": self.max_tokens}
        for key in ("temperature", "top_p", "seed"):
            if getattr(self, key) is not None:
                sent[key] = getattr(self, key)
        if self.reasoning_effort:
            sent["reasoning_effort"] = self.reasoning_effort
        return sent

    @functools.cached_property
    def _fingerprint(self) -> str:
        meaning = {
            "prompt_version": PROMPT_VERSION,
            "api": self.api,
            "model": self.model,
            "sampling": self.sampling(),
            "input": {
                "instruction": self.instruction,
                "answer": self.answer,
                "files": list(self.files),
                "diff": self.diff,
                "trajectory": self.trajectory,
                "max_input_chars": self.max_input_chars,
            },
            "template": self.template,
            "mode": self.mode,
            "criteria": [asdict(c) for c in self.criteria],
            "scoring": {"aggregation": self.aggregation, "threshold": self.threshold, "pass_at": self.pass_at},
            "samples": {"count": self.samples, "combine": self.combine},
        }
        return "sha256:" + hashlib.sha256(_canonical(meaning).encode()).hexdigest()

    def fingerprint(self) -> str:
        return self._fingerprint

    def spec(self) -> pb.JudgeSpec:
        return pb.JudgeSpec(name=self.name, fingerprint=self.fingerprint(), definition_json=self.definition_json())

    def definition_json(self) -> str:
        data = asdict(self)
        data["files"] = list(self.files)
        data["criteria"] = [asdict(c) for c in self.criteria]
        return _canonical(data)

    def aggregate(self, values: list[tuple[Criterion, float]]) -> float:
        """The judge's score from its criteria's combined values."""
        weighted = sum(c.weight * v for c, v in values) / (sum(c.weight for c, _ in values) or 1.0)
        if self.aggregation == "all_pass":
            return float(all(v >= self.pass_at for _, v in values))
        if self.aggregation == "any_pass":
            return float(any(v >= self.pass_at for _, v in values))
        if self.aggregation == "threshold":
            return float(weighted >= self.threshold)
        return weighted


def missing_variable(judge: Judge, env) -> str:
    """The one line saying which variable this judge needs and `env` lacks (its endpoint's,
    then its key's), or "" when it can call its model. The scorer refuses to call without them,
    so a run (or `hemra judge`) checks first: every judgment would fail."""
    for variable, what in (
        (judge.base_url_env, "its endpoint, model.base_url_env"),
        (judge.api_key_env, "its key, model.api_key_env"),
    ):
        if variable and not env.get(variable, ""):
            return f"judge {judge.name!r}: environment variable {variable} ({what}) is not set"
    return ""


def failed_score(spec: pb.JudgeSpec, error: str) -> pb.Score:
    """The score of a judge that could not judge at all: its failure, no reward."""
    return pb.Score(
        state=pb.SCORE_STATE_SCORER_FAILED,
        scorer=f"judge:{spec.name}",
        judge=spec.name,
        scorer_fingerprint=spec.fingerprint,
        error=error,
    )


def from_spec(spec: pb.JudgeSpec) -> Judge:
    """The Judge a spec carries; JudgeFileError when its definition is not one (or was altered:
    its fingerprint must be the one the definition gives)."""
    try:
        data = json.loads(spec.definition_json)
        data["files"] = tuple(data["files"])
        data["criteria"] = tuple(Criterion(**c) for c in data["criteria"])
        judge = Judge(**data)
    except (ValueError, TypeError, KeyError) as exc:
        raise JudgeFileError(f"judge {spec.name!r}: its definition cannot be read ({exc})") from None
    if spec.fingerprint and judge.fingerprint() != spec.fingerprint:
        raise JudgeFileError(f"judge {spec.name!r}: its fingerprint does not match its definition")
    if judge.name != spec.name:
        raise JudgeFileError(f"judge {spec.name!r}: its definition is judge {judge.name!r}")
    return judge


def captured_files(specs) -> tuple[list[str], list[str]]:
    """(files to capture when the agent starts, files to capture when it stops) for these
    judge specs: every file a judge reads at the end, and at the start those it diffs."""
    start, end = set(), set()
    for spec in specs:
        judge = from_spec(spec)
        end.update(judge.files)
        if judge.diff:
            start.update(judge.files)
    return sorted(start), sorted(end)


#: HEMRA's own judges (reward-hacking.toml, ...): a name no judges/<name>.toml defines is
#: looked up here.
BUILTIN = Path(__file__).resolve().parent / "builtin_judges"


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN.glob("*.toml"))


def find(name_or_path: str, folder: Path) -> Path:
    """The judge file a run names: a path to a .toml, or judges/<name>.toml under `folder`, or
    else HEMRA's built-in judge of that name (BUILTIN)."""
    if name_or_path.endswith(".toml"):
        path = Path(name_or_path)
        path = path if path.is_absolute() else folder / path
    else:
        if not _NAME.match(name_or_path):
            raise JudgeFileError(f"judge {name_or_path!r}: a judge name is lowercase letters, digits, '-' and '_'")
        path = folder / "judges" / f"{name_or_path}.toml"
        if not path.is_file() and (BUILTIN / f"{name_or_path}.toml").is_file():
            return BUILTIN / f"{name_or_path}.toml"
    if not path.is_file():
        builtin = f" (built-in judges: {', '.join(builtin_names())})" if not name_or_path.endswith(".toml") else ""
        raise JudgeFileError(f"judge {name_or_path!r}: no judge file {path}{builtin}")
    return path


def load(path: Path) -> Judge:
    """Read and check a judge file; JudgeFileError naming the file and the problem."""
    try:
        data = parsing.read_toml(path)
    except parsing.Unreadable as exc:
        raise JudgeFileError(str(exc)) from None
    except OSError as exc:  # absent
        raise JudgeFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return _judge(data, path)
    except _Bad as exc:
        raise JudgeFileError(f"{path}: {exc}") from None


class _Bad(ValueError):
    pass


_TOP = {"name", "description", "model", "input", "prompt", "criterion", "scoring", "samples", "retries"}
_TABLES = {
    "model": {
        "api",
        "id",
        "base_url_env",
        "api_key_env",
        "max_tokens",
        "temperature",
        "top_p",
        "seed",
        "reasoning_effort",
        "stream",
    },
    "input": {"instruction", "answer", "files", "diff", "trajectory", "max_input_chars"},
    "prompt": {"template", "template_file", "mode"},
    "scoring": {"aggregation", "threshold", "pass_at"},
    "samples": {"count", "combine"},
    "retries": {"parse", "transport", "timeout_secs", "backoff_secs", "concurrency"},
}
#: The APIs that take these sampling parameters (any other would refuse or ignore them).
_TAKES = {"seed": ("openai-chat",), "reasoning_effort": ("openai-chat", "openai-responses")}
_CRITERION = {"id", "description", "type", "weight", "expected", "points", "min", "max", "choices"}


def _judge(data: dict, path: Path) -> Judge:
    _known(data, _TOP, "")
    name = path.stem
    if not _NAME.match(name):
        raise _Bad("the file's name must be a judge name: lowercase letters, digits, '-' and '_'")
    if "name" in data and data["name"] != name:
        raise _Bad(f"name = {data['name']!r} differs from the file's name {name!r}")
    tables = {key: _table(data, key) for key in _TABLES}
    model, inputs, prompt, scoring, samples, retries = (tables[k] for k in _TABLES)
    api = _choice(model, "api", APIS, "model", None)
    for key in ("seed", "reasoning_effort"):
        if key in model and api not in _TAKES[key]:
            raise _Bad(f"model.{key}: the {api} API takes no {key}")
    criteria = _criteria(data)
    template = _template(prompt, path)
    judge = Judge(
        name=name,
        description=_get(data, "description", str, "", ""),
        api=api,
        model=_get(model, "id", str, "model", None),
        base_url_env=_env_name(model, "base_url_env", ""),
        api_key_env=_env_name(model, "api_key_env", DEFAULT_KEY_ENV[api]),
        max_tokens=_int(model, "max_tokens", "model", 1024, 1, 1_000_000),
        temperature=_opt_number(model, "temperature", "model", 0.0, 2.0),
        top_p=_opt_number(model, "top_p", "model", 0.0, 1.0),
        seed=_opt_int(model, "seed", "model"),
        reasoning_effort=_get(model, "reasoning_effort", str, "model", ""),
        stream=_get(model, "stream", bool, "model", False),
        instruction=_get(inputs, "instruction", bool, "input", True),
        answer=_choice(inputs, "answer", ANSWERS, "input", "final_message"),
        files=tuple(_files(inputs)),
        diff=_get(inputs, "diff", bool, "input", False),
        trajectory=_choice(inputs, "trajectory", TRAJECTORIES, "input", "none"),
        max_input_chars=_int(inputs, "max_input_chars", "input", 200_000, 1000, 10_000_000),
        template=template,
        mode=_choice(prompt, "mode", MODES, "prompt", "batched"),
        criteria=tuple(criteria),
        aggregation=_choice(scoring, "aggregation", AGGREGATIONS, "scoring", "weighted_mean"),
        threshold=_number(scoring, "threshold", "scoring", 0.5, 0.0, 1.0),
        pass_at=_number(scoring, "pass_at", "scoring", 1.0, 0.0, 1.0),
        samples=_int(samples, "count", "samples", 1, 1, 25),
        combine=_choice(samples, "combine", COMBINES, "samples", "mean"),
        parse_retries=_int(retries, "parse", "retries", 2, 0, 10),
        transport_retries=_int(retries, "transport", "retries", 4, 0, 20),
        timeout_secs=_number(retries, "timeout_secs", "retries", 120.0, 0.1, 3600.0),
        backoff_secs=_number(retries, "backoff_secs", "retries", 1.0, 0.0, 60.0),
        concurrency=_int(retries, "concurrency", "retries", 8, 1, 256),
    )
    return judge


def _known(table: dict, keys: set[str], where: str) -> None:
    unknown = sorted(set(table) - keys)
    if unknown:
        place = f"{where}: " if where else ""
        raise _Bad(f"{place}unknown key {unknown[0]!r} (known: {', '.join(sorted(keys))})")


def _table(data: dict, key: str) -> dict:
    table = data.get(key, {})
    if not isinstance(table, dict):
        raise _Bad(f"{key} must be a table ([{key}])")
    _known(table, _TABLES[key], f"[{key}]")
    return table


def _get(table: dict, key: str, kind, where: str, default):
    if key not in table:
        if default is None:
            raise _Bad(f"[{where}] needs {key}" if where else f"needs {key}")
        return default
    value = table[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _Bad(f"{_at(where, key)} must be {kind.__name__}, not {type(value).__name__}")
    return value


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _choice(table: dict, key: str, choices, where: str, default) -> str:
    value = _get(table, key, str, where, default)
    if value not in choices:
        raise _Bad(f"{_at(where, key)} = {value!r}: must be one of {', '.join(choices)}")
    return value


def _number(table: dict, key: str, where: str, default: float, low: float, high: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise _Bad(f"{_at(where, key)} = {value!r}: must be a number from {low:g} to {high:g}")
    return float(value)


def _opt_number(table: dict, key: str, where: str, low: float, high: float) -> float | None:
    return _number(table, key, where, 0.0, low, high) if key in table else None


def _int(table: dict, key: str, where: str, default: int, low: int, high: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _Bad(f"{_at(where, key)} = {value!r}: must be a whole number from {low} to {high}")
    return value


def _opt_int(table: dict, key: str, where: str) -> int | None:
    return _int(table, key, where, 0, -(2**31), 2**31 - 1) if key in table else None


def _env_name(table: dict, key: str, default: str) -> str:
    value = _get(table, key, str, "model", default)
    if value and not _ENV.match(value):
        raise _Bad(f"model.{key} = {value!r}: give the name of an environment variable, never its value")
    return value


def _files(table: dict) -> list[str]:
    files = _get(table, "files", list, "input", [])
    for item in files:
        if not isinstance(item, str) or not item.startswith("/") or "\x00" in item or ".." in item.split("/"):
            raise _Bad(f"input.files: {item!r} must be an absolute path in the sandbox, without '..'")
    if len(set(files)) != len(files):
        raise _Bad("input.files names a file twice")
    return files


def _template(table: dict, path: Path) -> str:
    if "template" in table and "template_file" in table:
        raise _Bad("prompt: give template or template_file, not both")
    if "template_file" in table:
        file = _template_file(_get(table, "template_file", str, "prompt", None), path.parent)
        try:
            template = file.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise _Bad(f"prompt.template_file: cannot read {file}: {exc}") from None
        where = f"prompt.template_file ({file.name})"
    else:
        template = _get(table, "template", str, "prompt", DEFAULT_TEMPLATE)
        where = "prompt.template"
    for number, line in enumerate(template.splitlines(), 1):
        for match in _PLACEHOLDER.finditer(line):
            if match.group(1) not in PLACEHOLDERS:
                raise _Bad(
                    f"{where} line {number}: unknown placeholder {{{match.group(1)}}} "
                    f"(known: {', '.join('{' + p + '}' for p in PLACEHOLDERS)})"
                )
    return template


def _template_file(name: str, folder: Path) -> Path:
    """The template a judge file names: a relative path inside the judge file's own folder. A
    judge file may come from anywhere (a run's folder, a dataset): it never reads a file
    outside its folder, not by an absolute path, `..`, or a link pointing out."""
    relative = Path(name)
    if not name or "\x00" in name or relative.is_absolute() or ".." in relative.parts:
        raise _Bad(f"prompt.template_file {name!r}: must be a relative path inside the judge file's folder")
    file = folder / relative
    if not file.resolve().is_relative_to(folder.resolve()):
        raise _Bad(f"prompt.template_file {name!r}: a link that leads outside the judge file's folder")
    return file


def _criteria(data: dict) -> list[Criterion]:
    items = data.get("criterion")
    if not isinstance(items, list) or not items:
        raise _Bad("needs at least one [[criterion]]")
    found: list[Criterion] = []
    for number, item in enumerate(items, 1):
        where = f"criterion {number}"
        if not isinstance(item, dict):
            raise _Bad(f"{where} must be a table ([[criterion]])")
        _known(item, _CRITERION, where)
        if "id" not in item:
            raise _Bad(f"{where} has no id (a stable id is what compare --criteria pairs on)")
        cid = _get(item, "id", str, where, None)
        if not _ID.match(cid):
            raise _Bad(f"{where}: id {cid!r} must be letters, digits, '_', '.' and '-', at most 64")
        if cid in {c.id for c in found}:
            raise _Bad(f"criterion id {cid!r} is used twice")
        found.append(_criterion(item, cid, f"criterion {cid!r}"))
    return found


def _criterion(item: dict, cid: str, where: str) -> Criterion:
    kind = _choice(item, "type", CRITERION_TYPES, where, "binary")
    criterion = Criterion(
        id=cid,
        description=_get(item, "description", str, where, None),
        type=kind,
        weight=_number(item, "weight", where, 1.0, 0.0, 1e6),
        expected=_get(item, "expected", str, where, ""),
        points=_int(item, "points", where, 5, 2, 100) if kind == "likert" else 5,
        min=_number(item, "min", where, 0.0, -1e12, 1e12) if kind == "numeric" else 0.0,
        max=_number(item, "max", where, 1.0, -1e12, 1e12) if kind == "numeric" else 1.0,
        choices=_choices(item, where) if kind == "categorical" else {},
    )
    if criterion.min >= criterion.max:
        raise _Bad(f"{where}: min must be below max")
    return criterion


def _choices(item: dict, where: str) -> dict[str, float]:
    choices = _get(item, "choices", dict, where, None)
    if not choices:
        raise _Bad(f"{where}: a categorical criterion needs choices (answer = score from 0 to 1)")
    return {str(k): _number(choices, k, f"{where}.choices", 0.0, 0.0, 1.0) for k in choices}


def _canonical(data) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
