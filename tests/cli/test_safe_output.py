"""JSON the CLI prints stays printable whatever a stored string holds, and the same value."""

import json

from hemra.clients.cli.safe import safe_json


def test_a_lone_surrogate_is_printed_as_its_escape_and_reads_back_the_same():
    value = {"payload": "before\ud800after\udfff"}
    text = safe_json(json.dumps(value, ensure_ascii=False))
    assert text.encode("utf-8")  # printable: no surrogate left to encode
    assert "\\ud800" in text and "\\udfff" in text
    assert json.loads(text) == value
