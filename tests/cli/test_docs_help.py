"""docs/command-line.md shows every command's --help as `hemra` prints it."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "cli_help_docs.py"


def test_command_line_page__help_blocks_match_the_program():
    result = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
