"""The usage HEMRA's model relay reads itself, end to end: a fake claude in the host sandbox
(loopback only, its model endpoint relayed) calls the scripted model server with curl. Killed
before it reports, its attempt still shows the tokens the server sent; reporting the same
figures, both are shown, equal."""

from pathlib import Path

import pytest

from tests.e2e.test_cli_agents import _of, _run, _workspace, model_server
from tests.modelserver import parse

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
__all__ = ["model_server"]  # a fixture, used by name

CALL = (
    "curl -sS --fail {stream} \"$ANTHROPIC_BASE_URL/v1/messages\" -H 'content-type: application/json' "
    '-d \'{{"model":"m","max_tokens":10,"stream":{flag},"messages":[{{"role":"user","content":"hi"}}]}}\' >/dev/null '
    "|| echo 'curl failed' >&2\n"
)
INIT = 'echo \'{{"type":"system","subtype":"init","claude_code_version":"{version}"}}\'\n'
FAKES = {
    # Two model calls (one streamed), then killed before it says anything of its usage.
    "killed": CALL.format(stream="", flag="false") + CALL.format(stream="-N", flag="true") + "kill -9 $$\n",
    # One model call, then the usage it reports: what the server sent.
    "honest": CALL.format(stream="-N", flag="true")
    + 'echo \'{"type":"result","subtype":"success","is_error":false,"usage":{"input_tokens":1234,'
    '"output_tokens":56},"total_cost_usd":0}\'\n',
}
USAGE = {"input_tokens": 1234, "output_tokens": 56}


def _fake(tmp_path: Path, fault: str) -> tuple[Path, str]:
    version = f"0.0.1-{fault}"
    binary = tmp_path / "tools" / f"claude-code@{version}" / "node_modules" / ".bin" / "claude"
    binary.parent.mkdir(parents=True)
    binary.write_text(
        f'#!/bin/bash\nif [ "$1" = --version ]; then echo "{version} (Claude Code)"; exit 0; fi\n'
        + INIT.format(version=version)
        + FAKES[fault]
    )
    binary.chmod(0o755)
    return tmp_path / "tools", version


def _numbers(message: dict) -> dict:
    """A usage message of `hemra show` (int64 figures are JSON strings) as numbers, without the
    zero ones (`--json` prints every field)."""
    return {key: int(value) for key, value in message.items() if int(value)}


def test_relay_usage__a_cli_killed_before_it_reports_still_shows_what_the_server_sent(
    model_server, hemra_env, tmp_path
):
    model_server.script = parse({"turns": [{"text": "a"}, {"text": "b"}], "usage": USAGE})
    tools, version = _fake(tmp_path, "killed")
    attempt = _run(hemra_env, tools, model_server, _workspace(tmp_path, "claude-code", version), "claude-code", "k")
    assert [r.path for r in model_server.model_requests()] == ["/v1/messages"] * 2
    assert not any("curl failed" in o["text"] for o in _of(attempt, "output", "stderr"))
    assert _of(attempt, "usage") == [] and "usage" not in attempt  # it reported nothing
    assert _numbers(attempt["usage_observed"]) == {
        "input_tokens": 2 * 1234,
        "output_tokens": 2 * 56,
        "model_calls": 2,
        "events": 1,
    }
    assert attempt["usage_differs"] is True
    [observed] = _of(attempt, "usage_observed", "relay")
    assert observed["model_calls"] == 2 and observed["unreadable"] == 0


def test_relay_usage__the_same_figures_reported_are_shown_both_and_equal(model_server, hemra_env, tmp_path):
    model_server.script = parse({"turns": [{"text": "a"}], "usage": USAGE})
    tools, version = _fake(tmp_path, "honest")
    attempt = _run(hemra_env, tools, model_server, _workspace(tmp_path, "claude-code", version), "claude-code", "h")
    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    reported, observed = _numbers(attempt["usage"]), _numbers(attempt["usage_observed"])
    assert {k: reported[k] for k in USAGE} == {k: observed[k] for k in USAGE} == USAGE
    assert observed["model_calls"] == 1
    assert attempt["usage_differs"] is False  # --json prints every field, false ones too
