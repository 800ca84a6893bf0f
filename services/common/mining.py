"""History mining: commands in an attempt's events that read the repository's history beyond
HEAD (or the project's upstream, or a package cache of the project), where a task's answer can
sit: `git log --all`, `git show <hash>:<file>`, `git reflog`, `git fetch`, a curl of GitHub.

An event is the agent's command when it is a tool call: the harness protocol's `run_command`
(payload.command), a CLI agent's shell tool (arguments.command, a Bash, a codex
command_execution, pi's bash), an ACP terminal or execute call (command, arguments.command,
keystrokes). A shell line is split into its simple commands (`cd x && git log --all | grep y`,
`$(...)`, `bash -lc '...'`), each matched against the patterns below.

Each pattern has a name, kept stable (PATTERNS is append-only: the store keeps an attempt's
patterns as a bitmask of their positions). A hit is `certain` when the command reaches beyond
HEAD by what it says (`--all`, the reflog, the network); a revision named by hash, tag or
remote branch is only `possible`: whether it is an ancestor of HEAD (harmless) or a later
commit (the answer) cannot be told from the events alone.

Ordinary work is no hit: `git log -5`, `git log -p file`, `git diff`, `git diff HEAD~1`,
`git show HEAD`, `git status`, `git stash` and its list, `git checkout -- file`, `git blame`.
A plain word after show/diff/checkout (a branch, or a path?) is not read as a revision, except
in `<rev>:<path>` and `git checkout <rev> -- <path>`.
"""

import re
import shlex
from dataclasses import dataclass

#: Every pattern, in a fixed order (append only: bit i of a stored mask is PATTERNS[i]).
PATTERNS = (
    "git_log_all",
    "git_reflog",
    "git_show_hash",
    "git_diff_hash",
    "git_checkout_hash",
    "git_cherry_pick",
    "git_restore_source",
    "git_fetch_upstream",
    "curl_upstream",
    "package_cache_newer",
)
#: What each pattern means, in the report's and the dashboard's words.
DESCRIPTIONS = {
    "git_log_all": "git log/rev-list over every ref (--all, --branches, --tags, --remotes, --reflog)",
    "git_reflog": "git reflog, or unreachable objects (fsck --lost-found/--unreachable)",
    "git_show_hash": "git show of a commit by hash, tag or remote ref (possibly not an ancestor of HEAD)",
    "git_diff_hash": "git diff against a commit by hash or remote ref",
    "git_checkout_hash": "git checkout/switch/reset to a commit by hash or remote ref",
    "git_cherry_pick": "git cherry-pick",
    "git_restore_source": "git restore --source of a commit other than HEAD",
    "git_fetch_upstream": "git fetch, pull, clone, ls-remote or remote add/update",
    "curl_upstream": "a download from GitHub, GitLab or Bitbucket (curl, wget, gh, pip of a URL)",
    "package_cache_newer": "a package cache or a package download (pip cache, ~/.cache/pip, conda pkgs, pip download)",
}
#: Patterns whose hits are always `possible`: the revision may be an ancestor of HEAD.
POSSIBLE = frozenset({"git_show_hash", "git_diff_hash", "git_checkout_hash", "git_restore_source"})
#: The longest command text a hit keeps.
MAX_COMMAND = 300
#: The most of one event's text read for commands (a multi-megabyte payload is not a command).
MAX_TEXT = 64 * 1024
#: Nesting of `bash -c '...'` and `$(...)` followed.
MAX_DEPTH = 4

_HEX = re.compile(r"^[0-9a-f]{7,40}$")
_HEAD = re.compile(r"^(HEAD|@|ORIG_HEAD|MERGE_HEAD|stash@\{\d+\}|stash)([~^]\d*)*$")
_REMOTE = re.compile(r"^(origin|upstream|remotes/|refs/|FETCH_HEAD)")
_TAG = re.compile(r"^v?\d+(\.\d+)+[\w.+-]*$")
_SUFFIX = re.compile(r"([~^]\d*|\^\{[^}]*\}|@\{[^}]*\})+$")
_HOSTS = re.compile(
    r"(?<![\w.-])(github\.com|api\.github\.com|raw\.githubusercontent\.com|codeload\.github\.com|"
    r"gist\.github\.com|objects\.githubusercontent\.com|gitlab\.com|bitbucket\.org)\b",
    re.IGNORECASE,
)
_CACHE_PATH = re.compile(
    r"(\.cache/(pip|uv|pypoetry)\b|/pkgs/[A-Za-z0-9_.-]+-\d|\.npm/_cacache|\.yarn/cache|\.pnpm-store|"
    r"\.m2/repository|\.cargo/registry|pip/(http|wheels)\b)"
)
#: Options of `git log` and its kin that walk more than HEAD's history.
_ALL_REFS = re.compile(r"^(--all|--branches|--tags|--remotes|--reflog|-g|--walk-reflogs|--glob)(=.*)?$")
#: Git's own options before the subcommand that take a value as the next word.
_GIT_VALUE_OPTIONS = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}
#: Words that run the command after them (their own options are skipped).
_PREFIXES = {"sudo", "env", "command", "nohup", "time", "exec", "builtin", "nice", "stdbuf", "xargs", "timeout"}
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/usr/bin/env"}
_SPLIT = {"&&", "||", ";", "|", "&", "\n", ";;", "|&", "(", ")", "{", "}"}
#: Tool-call payload keys that hold a command, at the top or under `arguments`/`input`.
_COMMAND_KEYS = ("command", "cmd", "keystrokes", "script", "commands")
_PATH_KEYS = ("path", "file_path", "filePath", "filename")


@dataclass(frozen=True)
class Hit:
    pattern: str
    #: The simple command that matched (cut to MAX_COMMAND).
    command: str
    #: False: the command itself reaches beyond HEAD; True: it names a revision that may be
    #: an ancestor of HEAD (events cannot tell).
    possible: bool = False


def mask(patterns) -> int:
    """The bitmask of these pattern names (unknown names count nothing)."""
    bits = 0
    for name in patterns:
        if name in PATTERNS:
            bits |= 1 << PATTERNS.index(name)
    return bits


def names(bits: int) -> list[str]:
    """The pattern names of a bitmask, in PATTERNS order."""
    return [name for i, name in enumerate(PATTERNS) if bits >> i & 1]


def event_hits(type_: str, name: str, payload) -> list[Hit]:
    """The mining hits of one event (none unless it is a tool call with a command or a path)."""
    if type_ != "tool_call" or not isinstance(payload, dict):
        return []
    hits: list[Hit] = []
    for text in _commands_of(payload):
        hits += command_hits(text)
    for path in _paths_of(payload):
        if _CACHE_PATH.search(path):
            hits.append(Hit("package_cache_newer", f"read {path}"[:MAX_COMMAND]))
    return _unique(hits)


def command_hits(line: str) -> list[Hit]:
    """The mining hits of one shell line (any number of simple commands)."""
    if not isinstance(line, str) or not line.strip():
        return []
    line = line[:MAX_TEXT]
    if not _MAYBE.search(line):  # most commands: one regex, no parsing
        return []
    hits: list[Hit] = []
    for words in _simple_commands(line, 0):
        hits += _match(words)
    return _unique(hits)


#: A line that can hold a hit mentions one of these (a cheap first look).
_MAYBE = re.compile(r"git|curl|wget|aria2c|\bgh\b|pip|conda|pkgs|npm|yarn|pnpm|\.cache|\.m2|cargo|uv\b|http")


def worth_reading(payload_json: str) -> bool:
    """Whether an event's payload, as JSON text, can hold a hit (a cheap look before decoding)."""
    return bool(_MAYBE.search(payload_json[: MAX_TEXT * 2]))


def _unique(hits: list[Hit]) -> list[Hit]:
    return list(dict.fromkeys(hits))


def _commands_of(payload: dict) -> list[str]:
    found = []
    for where in (payload, payload.get("arguments"), payload.get("input"), payload.get("rawInput")):
        if not isinstance(where, dict):
            continue
        for key in _COMMAND_KEYS:
            value = where.get(key)
            if isinstance(value, str):
                found.append(value)
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                # argv (["bash", "-lc", "git log --all"]) or a list of keystrokes/lines
                found.append(shlex.join(value) if key in ("command", "cmd") else "\n".join(value))
    return found


def _paths_of(payload: dict) -> list[str]:
    found = []
    for where in (payload, payload.get("arguments"), payload.get("input")):
        if isinstance(where, dict):
            found += [v for k in _PATH_KEYS if isinstance(v := where.get(k), str)]
    for location in payload.get("locations") or []:
        if isinstance(location, dict) and isinstance(location.get("path"), str):
            found.append(location["path"])
    return found


def _tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace = " \t\r"  # newlines separate commands: kept as tokens
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: words as they stand
        return line.replace("\n", " ; ").split()


def _simple_commands(line: str, depth: int) -> list[list[str]]:
    """Each simple command of a shell line, as words; `$(...)`, backticks and `sh -c '...'`
    followed inside."""
    commands: list[list[str]] = []
    if depth > MAX_DEPTH:
        return commands
    for inner in re.findall(r"\$\(([^()]*)\)|`([^`]*)`", line):
        commands += _simple_commands(inner[0] or inner[1], depth + 1)
    current: list[str] = []
    for token in _tokens(line.replace("$(", " ( ").replace("`", " ")):
        if token in _SPLIT or set(token) <= set(";&|()") or token.startswith((">", "<")) or token.endswith(">"):
            if current:
                commands.append(current)
            current = []
            continue
        current.append(token)
    if current:
        commands.append(current)
    nested = []
    for words in commands:
        words = _strip_prefixes(words)
        if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in {s.rsplit("/", 1)[-1] for s in _SHELLS}:
            flag = next((i for i, w in enumerate(words[1:-1], 1) if re.match(r"^-[a-zA-Z]*c[a-zA-Z]*$", w)), None)
            if flag is not None:
                nested += _simple_commands(words[flag + 1], depth + 1)
                continue
        nested.append(words)
    return nested


def _strip_prefixes(words: list[str]) -> list[str]:
    """The command without VAR=value assignments, sudo, env, timeout N and the like."""
    i = 0
    while i < len(words):
        word = words[i]
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            i += 1
        elif word in _PREFIXES:
            i += 1
            while i < len(words) and (words[i].startswith("-") or (word == "timeout" and words[i][:1].isdigit())):
                i += 1
        else:
            break
    return words[i:]


def _match(words: list[str]) -> list[Hit]:
    if not words:
        return []
    program = words[0].rsplit("/", 1)[-1]
    text = shlex.join(words)[:MAX_COMMAND]
    hits: list[Hit] = []
    if program == "git":
        hits += _git(words[1:], text)
    elif program in ("curl", "wget", "aria2c", "http", "https", "xh", "gh"):
        if program == "gh" or any(_HOSTS.search(w) for w in words[1:]):
            hits.append(Hit("curl_upstream", text))
    elif program in ("pip", "pip3", "uv", "python", "python3", "conda", "mamba", "npm", "yarn", "pnpm"):
        hits += _packages(program, words[1:], text)
    if any(_CACHE_PATH.search(w) for w in words[1:]):
        hits.append(Hit("package_cache_newer", text))
    return hits


def _packages(program: str, args: list[str], text: str) -> list[Hit]:
    if program in ("python", "python3"):
        if args[:2] == ["-m", "pip"]:
            return _packages("pip", args[2:], text)
        if "-c" in args and any(_HOSTS.search(w) for w in args):
            return [Hit("curl_upstream", text)]
        return []
    words = [a for a in args if not a.startswith("-")]
    if program == "uv" and words[:1] == ["pip"]:
        words = words[1:]
    found = []
    if any(_HOSTS.search(w) for w in args):
        found.append(Hit("curl_upstream", text))
    if program in ("pip", "pip3", "uv") and (
        words[:1] == ["download"] or words[:1] == ["cache"] or words[:2] == ["index", "versions"]
    ):
        found.append(Hit("package_cache_newer", text))
    if program in ("npm", "yarn", "pnpm") and words[:1] in (["view"], ["pack"], ["info"]):
        found.append(Hit("package_cache_newer", text))
    if program in ("conda", "mamba") and words[:1] == ["search"]:
        found.append(Hit("package_cache_newer", text))
    return found


def _git(args: list[str], text: str) -> list[Hit]:
    i = 0
    while i < len(args) and args[i].startswith("-"):  # git's own options: -C dir, --no-pager, ...
        i += 2 if args[i] in _GIT_VALUE_OPTIONS else 1
    if i >= len(args):
        return []
    sub, rest = args[i], args[i + 1 :]
    if sub in ("log", "rev-list", "shortlog", "whatchanged", "reflog") or sub == "fsck":
        return _history(sub, rest, text)
    if sub in ("fetch", "pull", "ls-remote", "clone"):
        return [Hit("git_fetch_upstream", text)]
    if sub == "remote" and rest[:1] and rest[0] in ("add", "update", "set-url"):
        return [Hit("git_fetch_upstream", text)]
    if sub == "cherry-pick":
        revisions = [r for r in rest if not r.startswith("-")]
        return [Hit("git_cherry_pick", text)] if revisions else []
    if sub == "show":
        return _revisions("git_show_hash", rest, text, plain_words=False)
    if sub == "diff":
        return _revisions("git_diff_hash", rest, text, plain_words=False)
    if sub in ("checkout", "switch", "reset"):
        return _checkout(sub, rest, text)
    if sub == "restore":
        return _restore(rest, text)
    if sub in ("grep", "archive", "cat-file", "ls-tree", "diff-tree", "format-patch"):
        # these read whichever commit they name: the same rule as show
        return [Hit("git_show_hash", text, True)] if _named_revisions(rest) else []
    return []


def _history(sub: str, rest: list[str], text: str) -> list[Hit]:
    if sub == "reflog":
        words = [r for r in rest if not r.startswith("-")]
        if words[:1] in (["expire"], ["delete"]):
            return []
        return [Hit("git_reflog", text)]
    if sub == "fsck":
        return [Hit("git_reflog", text)] if {"--lost-found", "--unreachable", "--dangling"} & set(rest) else []
    if any(_ALL_REFS.match(r) for r in rest):
        return [Hit("git_log_all", text)]
    if any(_REMOTE.match(r) for r in _positional(rest)):
        return [Hit("git_log_all", text)]
    return []


def _positional(rest: list[str]) -> list[str]:
    """The words before `--` that are not options (nor an option's value we know of)."""
    found = []
    skip = False
    for word in rest:
        if skip:
            skip = False
            continue
        if word == "--":
            break
        if word in ("-n", "--max-count", "-S", "-G", "--grep", "--author", "-L", "--format", "--since", "--until"):
            skip = True
            continue
        if not word.startswith("-"):
            found.append(word)
    return found


def _kind(word: str, plain_words: bool) -> str:
    """ "": HEAD, a path or an option; "hash", "ref": a revision beyond what HEAD certainly is."""
    if word.startswith("-") or not word:
        return ""
    for side in re.split(r"\.\.\.?", word) if ".." in word else [word]:
        if ":" in side and not side.startswith(":"):
            rev = side.split(":", 1)[0]
            base = _SUFFIX.sub("", rev)
            if base and not _HEAD.match(rev) and not _HEAD.match(base):
                return "hash" if _HEX.match(base) else "ref"
            continue
        base = _SUFFIX.sub("", side)
        if not base or _HEAD.match(side) or _HEAD.match(base):
            continue
        if _HEX.match(base):
            return "hash"
        if _REMOTE.match(base) or _TAG.match(base):
            return "ref"
        if ".." in word and re.match(r"^[A-Za-z0-9_./-]+$", base):  # main..feature: both sides revisions
            return "ref"
        if plain_words and re.match(r"^[A-Za-z0-9_./-]+$", base):
            return "ref"
    return ""


def _named_revisions(rest: list[str]) -> list[str]:
    return [w for w in _positional(rest) if _kind(w, False)]


def _revisions(pattern: str, rest: list[str], text: str, plain_words: bool) -> list[Hit]:
    named = [w for w in _positional(rest) if _kind(w, plain_words)]
    return [Hit(pattern, text, True)] if named else []


def _checkout(sub: str, rest: list[str], text: str) -> list[Hit]:
    if sub == "reset" and not ({"--hard", "--soft", "--mixed", "--keep", "--merge"} & set(rest)):
        return []  # `git reset <path>` unstages
    words = []
    for word in rest:
        if word == "--":
            break
        words.append(word)
    before_paths = "--" in rest
    positional = [w for w in words if not w.startswith("-")]
    if sub == "checkout" and {"-b", "-B", "--orphan"} & set(words):
        positional = positional[1:]  # the new branch's name, then its start point
    if not positional:
        return []
    first = positional[0]
    if _kind(first, plain_words=before_paths and sub == "checkout"):
        return [Hit("git_checkout_hash", text, True)]
    return []


def _restore(rest: list[str], text: str) -> list[Hit]:
    for i, word in enumerate(rest):
        source = ""
        if word.startswith("--source="):
            source = word.split("=", 1)[1]
        elif word in ("-s", "--source") and i + 1 < len(rest):
            source = rest[i + 1]
        elif word.startswith("-s") and len(word) > 2:
            source = word[2:]
        if source and _kind(source, plain_words=True):
            return [Hit("git_restore_source", text, True)]
    return []


# --- imported trajectories -----------------------------------------------------------------
def atif_events(trajectory) -> list[dict]:
    """A Harbor trajectory (ATIF: `steps`, each with `source`, `message`, `tool_calls` and an
    `observation`) as HEMRA events: {"type", "name", "payload", "time"?}, in step order. A
    trajectory of another shape gives none."""
    steps = trajectory.get("steps") if isinstance(trajectory, dict) else None
    if not isinstance(steps, list):
        return []
    events: list[dict] = []
    for step in steps:
        if not isinstance(step, dict):
            continue
        source = str(step.get("source", ""))
        role = {"agent": "assistant", "user": "user", "system": "system"}.get(source, source or "assistant")
        when = step.get("timestamp")
        reasoning = step.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            events.append(_event("message", "thinking", when, role="thinking", text=reasoning))
        message = _text(step.get("message"))
        if message:
            events.append(_event("message", role, when, role=role, text=message))
        for call in step.get("tool_calls") or []:
            if isinstance(call, dict):
                arguments = call.get("arguments")
                events.append(
                    _event(
                        "tool_call",
                        str(call.get("function_name", "")),
                        when,
                        id=str(call.get("tool_call_id", "")),
                        arguments=arguments if isinstance(arguments, dict) else {"input": arguments},
                    )
                )
        observation = step.get("observation")
        for result in (observation.get("results") or []) if isinstance(observation, dict) else []:
            if isinstance(result, dict):
                events.append(
                    _event(
                        "tool_result",
                        "",
                        when,
                        id=str(result.get("source_call_id") or ""),
                        output=_text(result.get("content")),
                    )
                )
    return events


def _event(type_: str, name: str, when, **payload) -> dict:
    event = {"type": type_, "name": name, "payload": payload}
    if isinstance(when, str) and when:
        event["timestamp"] = when
    return event


def _text(value) -> str:
    """A message: text, or content parts whose text is joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(p.get("text", "")) for p in value if isinstance(p, dict) and p.get("text"))
    return ""
