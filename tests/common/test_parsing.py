"""services/common/parsing.py: bounded reads and parses of files HEMRA did not write."""

import json
import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hemra.services.common import parsing

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab,:\n\u00e9'),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(alphabet='[]{}"\\a', max_size=4), inner),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_json_depth__is_the_documents_nesting_whatever_its_strings_hold(value):
    text = json.dumps(value, ensure_ascii=False)
    assert parsing.json_depth(text.encode()) == parsing.nesting(value)


def test_json_depth__long_and_hostile_texts_in_linear_time():
    started = time.monotonic()
    assert parsing.json_depth(b"[" * 1_000_000 + b"]" * 1_000_000) == 1_000_000
    assert parsing.json_depth(b'"' + b'\\"[' * 1_000_000) == 0  # one string that never ends
    assert parsing.json_depth(b'["a",' * 200_000) == 200_000
    assert time.monotonic() - started < 10


def test_load_json__refuses_deep_and_large_documents_in_one_line():
    assert parsing.load_json(b'{"a": [[1]]}', "x.json") == {"a": [[1]]}
    with pytest.raises(parsing.Unbounded, match=r"^x\.json: nested more than 64 levels deep$"):
        parsing.load_json("[" * 65 + "]" * 65, "x.json")
    assert parsing.load_json("[" * 64 + "]" * 64, "x.json")
    with pytest.raises(parsing.Unbounded, match=r"^x\.json: 11 bytes; at most 10 are read$"):
        parsing.load_json(b"[1,2,3,4,5]", "x.json", limit=10)
    with pytest.raises(json.JSONDecodeError):  # the parser's own error is the caller's to word
        parsing.load_json(b"[1,", "x.json")


DEEP_TOML = {
    "an inline array": "a = " + "[" * 100_000,
    "an inline table": "a = " + "{b = " * 100_000,
    "a dotted key": "a" + ".a" * 400_000 + " = 1",  # tomllib's cost grows with its square
    "a table's header": "[" + ".".join(["t"] * 100) + "]\n",
    "a header and a dotted key": "[" + ".".join(["t"] * 40) + "]\n" + ".".join(["k"] * 40) + " = 1\n",
    "arrays of inline tables": "a = [" + "{b = [" * 40 + "]}" * 40 + "]",
}


@pytest.mark.parametrize("case", list(DEEP_TOML))
def test_load_toml__refuses_what_nests_too_deep_before_tomllib_reads_it(case):
    started = time.monotonic()
    with pytest.raises(
        parsing.Unbounded, match=r"^t\.toml: (nested more than 64 levels deep|a key of more than 64 dotted parts)$"
    ):
        parsing.load_toml(DEEP_TOML[case], "t.toml")
    assert time.monotonic() - started < 5


def test_load_toml__what_a_real_file_holds_is_read_as_tomllib_reads_it():
    text = (
        '# a.b.c = [[[ in a comment\n[task]\nname = "x.y"\n[a.b]\nc.d = [1.5, {e.f = "[[{{"}] # q.r\n'
        "[[z]]\nk = \"\"\"a.b\n[[[\n\"\"\"\nl = '''{{{'''\nm = [\n  1.0,\n  2.0,\n]\n"
    )
    assert parsing.load_toml(text, "t.toml") == {
        "task": {"name": "x.y"},
        "a": {"b": {"c": {"d": [1.5, {"e": {"f": "[[{{"}}]}}},
        "z": [{"k": "a.b\n[[[\n", "l": "{{{", "m": [1.0, 2.0]}],
    }
    with pytest.raises(parsing.Unbounded, match=r"^t\.toml: 13 bytes; at most 12 are read$"):
        parsing.load_toml('name = "abc"\n', "t.toml", limit=12)


def test_read_regular__only_regular_files_never_blocking_within_a_size(tmp_path):
    (tmp_path / "file").write_bytes(b"data")
    assert parsing.read_regular(tmp_path / "file", 4)[0] == b"data"
    with pytest.raises(parsing.TooLarge, match="4 bytes; at most 3 are read") as info:
        parsing.read_regular(tmp_path / "file", 3)
    assert info.value.size == 4 and not info.value.grew
    os.mkfifo(tmp_path / "fifo")  # nobody writes to it: opening it for reading would wait
    with pytest.raises(parsing.NotRegular, match="fifo: not a regular file"):
        parsing.read_regular(tmp_path / "fifo", 10)
    os.symlink(tmp_path / "file", tmp_path / "link")
    with pytest.raises(parsing.NotRegular, match="link: a symbolic link"):
        parsing.read_regular(tmp_path / "link", 10)
    assert parsing.read_regular(tmp_path / "link", 10, follow_links=True)[0] == b"data"
    for target in ("/dev/zero", tmp_path / "fifo", tmp_path):
        os.symlink(target, tmp_path / "other")
        with pytest.raises(parsing.NotRegular, match="not a regular file"):
            parsing.read_regular(tmp_path / "other", 10, follow_links=True)
        os.unlink(tmp_path / "other")
    with pytest.raises(FileNotFoundError):
        parsing.read_regular(tmp_path / "absent", 10)


def test_read_regular__a_file_that_reads_past_its_size_stops_at_the_limit():
    # A file whose size says 0 but that reads on (as /proc files do): the limit still holds.
    assert parsing.read_regular("/proc/self/status", 1 << 20, follow_links=True)[0]
    with pytest.raises(parsing.TooLarge, match="grew past 10 bytes while read") as info:
        parsing.read_regular("/proc/self/status", 10, follow_links=True)
    assert info.value.grew
