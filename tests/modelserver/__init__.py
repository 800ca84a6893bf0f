"""A scripted model server on loopback for tests: Anthropic Messages, OpenAI Responses and
Chat Completions, streaming or not, replaying a script of shell calls, texts and errors.

In a test:

    with ModelServer(parse([{"shell": "touch /app/x"}, {"text": "Done."}])) as server:
        ...   # point the client at server.url (Anthropic) or server.url + "/v1" (OpenAI)
        server.model_requests()   # what it received: method, path, headers (lower-cased), body

`server.script` may be replaced between runs. From a shell:

    python -m tests.modelserver --script script.json --port 0
    # prints: modelserver listening on http://127.0.0.1:PORT

The script format is in tests/modelserver/script.py.
"""

from tests.modelserver.script import SCRIPT_ENDED, Script, Turn, load, parse
from tests.modelserver.server import ModelServer, Request

__all__ = ["SCRIPT_ENDED", "ModelServer", "Request", "Script", "Turn", "load", "parse"]
