"""Structure-aware mutation: a valid document (JSON or TOML, read into Python values) with one
thing changed (a value replaced by any value, a key removed or renamed, a value wrapped in a
list or a table, a value nested thousands deep), and the writers that put it back into text."""

import copy
import json
import math
import os

from hypothesis import strategies as st

#: "ci" (bounded, derandomized) unless HEMRA_FUZZ=long.
PROFILE = "long" if os.environ.get("HEMRA_FUZZ", "").lower() == "long" else "ci"
#: How many times the CI budget a long run draws.
LONG_FACTOR = int(os.environ.get("HEMRA_FUZZ_FACTOR", "25"))


def examples(ci: int) -> int:
    """A test's number of examples: `ci` in CI, LONG_FACTOR times more in a long run."""
    return ci if PROFILE == "ci" else ci * LONG_FACTOR


class Raw:
    """Text written as it is where a value goes (what no Python value would serialise to:
    a value nested deeper than any writer recurses)."""

    def __init__(self, json_text: str, toml_text: str):
        self.json, self.toml = json_text, toml_text

    def __repr__(self) -> str:
        return f"Raw({self.json[:30]!r}...{len(self.json)} chars)"


def _deep(depth: int, kind: str) -> Raw:
    if kind == "list":
        return Raw("[" * depth + "]" * depth, "[" * depth + "]" * depth)
    return Raw('{"a":' * depth + "1" + "}" * depth, "{a = " * depth + "1" + "}" * depth)


#: Values nested deep enough to reach any recursive reader's limit (and well past it).
DEEP = st.builds(_deep, st.sampled_from([40, 200, 1200, 50_000]), st.sampled_from(["list", "table"]))
#: Nesting that stays under Python's recursion limit (for a target whose deep case is a known finding).
SHALLOW = st.builds(_deep, st.sampled_from([40, 200]), st.sampled_from(["list", "table"]))
#: Strings a hostile caller or agent would write: paths out, NULs, numbers as text, huge.
ODD_STRINGS = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "a\x00b",
        "../../x",
        "../../../../etc/passwd",
        "/etc/passwd",
        "/",
        "~",
        "C:\\x",
        "\n",
        "x\ny",
        "1e308",
        "nan",
        "-1",
        "sha256:" + "0" * 64,
        "\u202e",
        "\U0001f600",
        "a" * 5000,
    ]
)
_SCALARS = (
    st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, -1, 2**31, 2**63, -(2**63) - 1, 2**64])
    | st.floats()
    | st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -0.0, 5e-324])
    | st.text(max_size=12)
    | ODD_STRINGS
)


def json_values(deep=DEEP):
    """Any JSON value (and a few JSON cannot hold: nan, inf, nesting `deep` as text)."""
    return st.recursive(
        st.none() | _SCALARS | deep,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6) | ODD_STRINGS, inner, max_size=3)
        ),
        max_leaves=6,
    )


JSON = json_values(DEEP)
#: Any TOML value (TOML has no null; it has dates and times).
TOML = st.recursive(
    _SCALARS | st.datetimes() | st.dates() | st.times(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6) | ODD_STRINGS, inner, max_size=3),
    max_leaves=6,
)


def paths(value, prefix=()):
    """Every place in a document a value sits (the document itself included)."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, prefix + (index,))


def _parent(document, path):
    target = document
    for key in path[:-1]:
        target = target[key]
    return target


def replaced(document, path, value):
    if not path:
        return value
    document = copy.deepcopy(document)
    _parent(document, path)[path[-1]] = value
    return document


def removed(document, path):
    if not path:
        return {}
    document = copy.deepcopy(document)
    del _parent(document, path)[path[-1]]
    return document


def renamed(document, path, name):
    """The key at `path` (in a table) under another name, its value kept."""
    document = copy.deepcopy(document)
    parent = _parent(document, path)
    if isinstance(parent, dict):
        parent[name] = parent.pop(path[-1])
    return document


@st.composite
def mutated(draw, document, values=JSON, keep_root: bool = False, deep=DEEP):
    """`document` with one thing changed (see the module's docstring); `deep`: the nesting tried."""
    places = [p for p in paths(document) if p or not keep_root]
    path = draw(st.sampled_from(places))
    action = draw(st.sampled_from(["replace", "replace", "replace", "remove", "rename", "wrap", "deep"]))
    if not path:
        action = "replace"
    if action == "remove":
        return removed(document, path)
    if action == "rename":
        return renamed(document, path, draw(st.text(max_size=8) | ODD_STRINGS))
    if action == "wrap":
        current = _parent(document, path)[path[-1]]
        return replaced(document, path, draw(st.sampled_from([[current], {"x": current}])))
    if action == "deep":
        return replaced(document, path, draw(deep))
    return replaced(document, path, draw(values))


# --- writers ----------------------------------------------------------------------------------
def json_text(document) -> str:
    """JSON as Python writes it (nan and inf as NaN and Infinity, as json.dumps does), Raw as is."""
    raws: list[Raw] = []

    def swap(value):
        if isinstance(value, Raw):
            raws.append(value)
            return f"\x00raw{len(raws) - 1}\x00"
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value

    text = json.dumps(swap(document), default=str)
    for index, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\x00raw{index}\x00"), raw.json)
    return text


def _toml_string(text: str) -> str:
    # JSON's escapes are TOML's, except that TOML wants DEL escaped too.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(value) -> str:
    if isinstance(value, Raw):
        return value.toml
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        pairs = (f"{_toml_string(str(k))} = {_toml_value(v)}" for k, v in value.items() if v is not None)
        return "{" + ", ".join(pairs) + "}"
    if hasattr(value, "isoformat"):  # datetime, date, time
        return value.isoformat()
    raise TypeError(f"no TOML for {value!r}")


def toml_text(document) -> str:
    """A table as TOML: each key on its own line, every nested value inline. A document that
    is not a table (the root replaced) is written as one key holding it."""
    if not isinstance(document, dict):
        document = {"value": document}
    return "".join(f"{_toml_string(str(k))} = {_toml_value(v)}\n" for k, v in document.items() if v is not None)


@st.composite
def damaged_text(draw, text: str):
    """`text` cut short, or with a few characters put in somewhere (the malformed-file paths)."""
    at = draw(st.integers(0, len(text)))
    if draw(st.booleans()):
        return text[:at]
    return text[:at] + draw(st.text(max_size=4) | st.sampled_from(['"', "[", "]", "=", "\n", "\\", "\x00"])) + text[at:]
