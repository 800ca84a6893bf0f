"""kind = "cli": the agent CLIs from npm (Claude Code, Codex, pi), one module each over a shared base."""


def driver(agent: str):
    from hemra.services.executor.harnesses.cli.claude_code import ClaudeCodeDriver
    from hemra.services.executor.harnesses.cli.codex import CodexDriver
    from hemra.services.executor.harnesses.cli.pi import PiDriver

    drivers = {d.agent: d for d in (ClaudeCodeDriver, CodexDriver, PiDriver)}
    if agent not in drivers:
        raise LookupError(f"cli agent {agent!r} has no driver (known: {', '.join(drivers)})")
    return drivers[agent]()
