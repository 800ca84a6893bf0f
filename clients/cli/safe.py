"""Strings from the store made safe for a terminal: the agent under test controls many of them
(agent versions, names it reports, error texts, output), and a terminal obeys what it prints.

`clean` shows every control character as an escape (\\x1b, \\u202e): C0 (newline and tab are
kept where the text is multi-line), DEL, C1, and the invisible Unicode formatting characters
that reorder or hide text (bidirectional overrides and isolates, zero-width characters, line
and paragraph separators). Rich renders the result as plain text, never as markup.
`safe_json` escapes the same characters inside JSON text as \\uXXXX: the JSON stays exact
(it parses to the same values) and prints nothing a terminal would act on.
"""

import logging
import re

from rich.text import Text

_INVISIBLE = "\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_INVISIBLE}]")
_UNSAFE_MULTILINE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")
#: Lone surrogates too: no terminal encoding can print one, and the escape is the same JSON value.
_UNSAFE_JSON = re.compile(f"[\x7f-\x9f{_INVISIBLE}\ud800-\udfff]")


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match) -> str:
    if match.group() in _NAMED:
        return _NAMED[match.group()]
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def clean(value, multiline: bool = False) -> str:
    """`value` as text with every control and invisible formatting character escaped."""
    return (_UNSAFE_MULTILINE if multiline else _UNSAFE).sub(_escape, str(value))


def plain(value, style: str = "", multiline: bool = False) -> Text:
    """clean(value) as a rich Text: printed as it is, never read as markup."""
    return Text(clean(value, multiline), style=style)


def safe_json(text: str) -> str:
    """JSON text (control characters already escaped by the encoder) with DEL, C1 and invisible
    formatting characters escaped too: the same JSON value, safe to print."""
    return _UNSAFE_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class CleanFormatter(logging.Formatter):
    """Log lines (and their tracebacks) cleaned: exceptions carry the agent's strings too."""

    def __init__(self, inner: logging.Formatter | None = None):
        super().__init__()
        self.inner = inner or logging.Formatter("%(message)s")

    def format(self, record: logging.LogRecord) -> str:
        return clean(self.inner.format(record), multiline=True)


def clean_logging() -> None:
    """Every log line this process writes to the terminal goes through CleanFormatter."""
    for handler in logging.getLogger().handlers:
        if not isinstance(handler.formatter, CleanFormatter):
            handler.setFormatter(CleanFormatter(handler.formatter))
    if logging.lastResort is not None and not isinstance(logging.lastResort.formatter, CleanFormatter):
        logging.lastResort.setFormatter(CleanFormatter(logging.lastResort.formatter))
