"""Keep the `--help` blocks of docs/command-line.md equal to what `hemra ... --help` prints.

    python scripts/cli_help_docs.py          # rewrite the blocks that drifted
    python scripts/cli_help_docs.py --check  # exit 1 when any block drifted

A block is a fenced code block whose first line is ` Usage: hemra <words> ...`;
the words before the first option or argument name the command. Help is taken
100 columns wide, without colour, as the page shows it.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "command-line.md"
HEMRA = str(Path(sys.executable).parent / "hemra")
BLOCK = re.compile(r"```\n( Usage: hemra[^\n]*\n.*?)```", re.S)


def command_of(usage: str) -> list[str]:
    words = usage.split()[2:]  # after "Usage: hemra"
    return [w for w in words[: next((i for i, w in enumerate(words) if not w.isidentifier()), len(words))]]


def help_text(command: list[str]) -> str:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    out = subprocess.run(
        [HEMRA, *command, "--help"], capture_output=True, text=True, env=env, timeout=60, check=True
    ).stdout
    return _normal(out)


def _normal(text: str) -> str:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def main() -> int:
    check = "--check" in sys.argv[1:]
    page = PAGE.read_text()
    drifted = []

    def refresh(match: re.Match) -> str:
        current = _normal(match.group(1))
        command = command_of(current.splitlines()[0])
        fresh = help_text(command)
        if fresh != current:
            drifted.append(" ".join(["hemra", *command]))
        return f"```\n{fresh}```"

    updated = BLOCK.sub(refresh, page)
    if check:
        if drifted:
            print(
                f"{PAGE.relative_to(ROOT)} differs from --help for: {', '.join(drifted)}; "
                "run python scripts/cli_help_docs.py"
            )
            return 1
        return 0
    PAGE.write_text(updated)
    print(f"refreshed: {', '.join(drifted) or 'nothing'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
