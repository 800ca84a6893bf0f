"""A scripted model server on loopback for tests: Anthropic Messages, OpenAI Responses and
Chat Completions, streaming or not, replaying a script of shell calls, texts and errors."""

from tests.modelserver.script import SCRIPT_ENDED, Script, Turn, load, parse
from tests.modelserver.server import ModelServer, Request

__all__ = ["SCRIPT_ENDED", "ModelServer", "Request", "Script", "Turn", "load", "parse"]
