"""Bounded reading and parsing of files HEMRA did not write (task files, run and harness files,
reward files, imported runs): one place that decides how large and how deep they may be.

- `read_regular` opens a regular file only (never a FIFO, a device or, unless asked, a link),
  without blocking, and never reads past a size.
- `load_json` and `load_toml` refuse input larger than a size or nested deeper than a depth
  before their parser sees it: a deep document would otherwise end in a RecursionError (the
  parsers recurse, and so does much of what reads their result), and TOML's dotted keys cost
  tomllib time and memory by the square of their length.

Every refusal is an `Unbounded` (a ValueError) whose text is one line naming the input and
the bound. A parser's own error (not JSON, malformed TOML, not UTF-8) is left to the caller,
which words it as before.
"""

import json
import os
import re
import stat
import tomllib
from pathlib import Path

#: Nesting deeper than this is refused: far beyond any real task, run or report file, far below
#: the interpreter's recursion limit (1,000 frames) for whatever walks the result.
MAX_DEPTH = 64
#: A JSON document read whole (a run report, a trial's result.json).
MAX_JSON_BYTES = 64 * 1024 * 1024
#: A TOML file (task.toml, a run file, a harness file): a few kilobytes in practice.
MAX_TOML_BYTES = 1024 * 1024

_READ = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK  # O_NONBLOCK: a FIFO swapped in is not waited on


class Unreadable(ValueError):
    """A file that cannot be read as what it should be: one line naming it and why."""


class Unbounded(Unreadable):
    """Input past one of the bounds: one line naming it and the bound."""


class NotRegular(Unbounded):
    """Not a regular file (a FIFO, a device, a folder, or a link not followed)."""


class TooLarge(Unbounded):
    def __init__(self, message: str, size: int, grew: bool = False):
        super().__init__(message)
        self.size, self.grew = size, grew


def read_regular(path: str | Path, limit: int, follow_links: bool = False) -> tuple[bytes, int]:
    """The bytes and mode of the regular file at `path`, at most `limit` bytes. Links are
    refused unless `follow_links` (then one leading to anything but a regular file is). The
    file is looked at before it is opened (a device is never opened) and again once open (a
    file swapped in between is refused too). OSError (absent, unreadable) is the caller's."""
    info = os.stat(path, follow_symlinks=follow_links)
    _check_regular(path, info)
    fd = os.open(path, _READ if follow_links else _READ | os.O_NOFOLLOW)
    try:
        info = os.fstat(fd)
        _check_regular(path, info)
        if info.st_size > limit:
            raise TooLarge(f"{path}: {info.st_size:,} bytes; at most {limit:,} are read", info.st_size)
        # One byte more than stat says: getting exactly the size means the end was reached.
        data = os.read(fd, info.st_size + 1)
        if len(data) != info.st_size:  # a short read, or the file changed: read on to the end
            chunks, size = [data], len(data)
            while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    raise TooLarge(f"{path}: grew past {limit:,} bytes while read", size, grew=True)
            data = b"".join(chunks)
        return data, info.st_mode
    finally:
        os.close(fd)


def _check_regular(path, info: os.stat_result) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise NotRegular(f"{path}: a symbolic link (not followed)")
    if not stat.S_ISREG(info.st_mode):
        raise NotRegular(f"{path}: not a regular file")


def load_json(data: bytes | str, where, limit: int = MAX_JSON_BYTES, depth: int = MAX_DEPTH, decode=json.loads):
    """`decode(data)` once `data` is known to be at most `limit` bytes and `depth` levels deep."""
    check_json(data, where, limit, depth)
    return decode(data)


def check_json(data: bytes | str, where, limit: int = MAX_JSON_BYTES, depth: int = MAX_DEPTH) -> None:
    """Refuse JSON larger than `limit` bytes or nested deeper than `depth` (without parsing it)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > limit:
        raise Unbounded(f"{where}: {len(raw):,} bytes; at most {limit:,} are read")
    if json_depth(raw) > depth:
        raise Unbounded(f"{where}: nested more than {depth} levels deep")


#: A JSON string, its closing quote optional: an unterminated one ends at the end (each match is
#: linear and never retried, so no input makes the scan quadratic).
_JSON_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
#: Opening brackets as +1, closing ones as -1 (0xFF as a signed byte).
_SIGNS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def json_depth(raw: bytes) -> int:
    """How deeply the arrays and objects of a JSON text nest (brackets inside strings do not
    count), in linear time and without recursion. Malformed text gets a number too; its parser
    refuses it afterwards."""
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    opened = brackets.count(b"[") + brackets.count(b"{")
    if opened <= 1:
        return opened
    if len(brackets) <= 4096:
        level = deepest = 0
        for sign in brackets.translate(_SIGNS):
            level += 1 if sign == 1 else -1
            deepest = max(deepest, level)
        return deepest
    import numpy  # only for documents with many brackets: a running sum in C

    signs = numpy.frombuffer(brackets.translate(_SIGNS), dtype=numpy.int8)
    return int(numpy.cumsum(signs, dtype=numpy.int64).max())


def load_toml(text: str, where, limit: int = MAX_TOML_BYTES, depth: int = MAX_DEPTH) -> dict:
    """tomllib.loads(text) once `text` is known to be at most `limit` bytes, with no key of
    more than `depth` dotted parts and no value nested deeper than `depth`; the table it gives
    nests no deeper than `depth` either (headers, dotted keys and inline values together)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise Unbounded(f"{where}: {size:,} bytes; at most {limit:,} are read")
    problem = _toml_problem(text, depth)
    if problem:
        raise Unbounded(f"{where}: {problem}")
    try:
        data = tomllib.loads(text)
    except RecursionError:  # not expected after the scan; never a traceback either way
        raise Unbounded(f"{where}: nested more than {depth} levels deep") from None
    if nesting(data) > depth:
        raise Unbounded(f"{where}: nested more than {depth} levels deep")
    return data


def read_toml(path: Path) -> dict:
    """The TOML file at `path` (a task, run, harness, judge or dataset file): a regular file
    (a link is followed), bounded in size and nesting. Unreadable in one line naming the file
    for anything but its absence (FileNotFoundError: the caller says what was looked for)."""
    return read_toml_text(path)[1]


def read_toml_text(path: Path) -> tuple[str, dict]:
    """read_toml's text and table."""
    try:
        raw, _ = read_regular(path, MAX_TOML_BYTES, follow_links=True)
        text = raw.decode("utf-8")
        return text, load_toml(text, path)
    except FileNotFoundError:
        raise
    except tomllib.TOMLDecodeError as exc:
        raise Unreadable(f"{path}: malformed TOML: {exc}") from None
    except UnicodeDecodeError:
        raise Unreadable(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise Unreadable(f"{path}: cannot be read: {exc.strerror or exc}") from None


#: What the TOML scan stops at: quotes, comments, brackets, and what separates keys and values.
_TOML_TOKEN = re.compile(r"\"\"\"|'''|[\"'#\[\]{}=,.\n]")
_TOML_END = {
    '"""': re.compile(r'(?:[^"\\]|\\.|"(?!""))*+"""', re.DOTALL),
    "'''": re.compile(r"(?:[^']|'(?!''))*+'''"),
    '"': re.compile(r'(?:[^"\\\n]|\\.)*+"'),
    "'": re.compile(r"[^'\n]*+'"),
}


def _toml_problem(text: str, depth: int) -> str:
    """Why a TOML text is too deep for tomllib ("" when it is not), by a linear scan: the
    dotted parts of each key (in tables' headers, at the start of a line, in inline tables)
    and the nesting of inline arrays and tables. Anything malformed is left to tomllib."""
    stack: list[str] = []  # the open inline arrays ("[") and tables ("{")
    in_key, parts, pos = True, 1, 0
    while match := _TOML_TOKEN.search(text, pos):
        token, pos = match.group(), match.end()
        if token in _TOML_END:  # a string (a quoted key part, or a value): skip it whole
            end = _TOML_END[token].match(text, pos)
            pos = end.end() if end else len(text)
        elif token == "#":
            newline = text.find("\n", pos)
            pos = len(text) if newline < 0 else newline
        elif token == "." and in_key:
            parts += 1
            if parts > depth:
                return f"a key of more than {depth} dotted parts"
        elif token == "=":
            in_key = False
        elif token == "\n":
            if not stack:
                in_key, parts = True, 1
        elif token in "[{":
            if in_key and not stack:
                continue  # a table's header, [name] or [[name]]: its name is a key
            stack.append(token)
            if len(stack) > depth:
                return f"nested more than {depth} levels deep"
            in_key, parts = token == "{", 1
        elif token in "]}":
            if stack:
                stack.pop()
        elif token == "," and stack and stack[-1] == "{":
            in_key, parts = True, 1
    return ""


def nesting(value) -> int:
    """How deeply lists and dicts nest in `value` (0 for a scalar), without recursion."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, level = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        pending.extend((child, level + 1) for child in children)
    return deepest
