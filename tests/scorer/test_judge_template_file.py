"""A judge's prompt.template_file (issue 31, item 9): a relative path inside the judge file's own
folder. An absolute path, `..` or a link leading out is refused in one line, through the real
CLI, before anything is read (it read /etc/passwd into the prompt)."""

import os

import pytest
from typer.testing import CliRunner

from hemra.clients.cli.main import app
from hemra.services.common import judges
from tests.scorer.test_judges import JUDGE, write_judge

FIELDS = {"api": "anthropic-messages", "stream": "false", "parse": 2, "transport": 2, "timeout": 10}


def judge_with_template(tmp_path, template_file: str):
    text = JUDGE.format(**FIELDS) + f'\n[prompt]\ntemplate_file = "{template_file}"\n'
    return write_judge(tmp_path, text=text)


def run_with_judge(tmp_path, monkeypatch, path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HEMRA_HOME", str(tmp_path / "home"))
    return CliRunner().invoke(app, ["run", "-H", "oracle", "-d", "hemra-offline", "--judge", str(path), "--detach"])


@pytest.mark.parametrize(
    ("template_file", "problem"),
    [
        ("/etc/passwd", "must be a relative path inside the judge file's folder"),
        ("../outside.md", "must be a relative path inside the judge file's folder"),
        ("prompts/../../outside.md", "must be a relative path inside the judge file's folder"),
        ("leak.md", "a link that leads outside the judge file's folder"),
        ("linked/outside.md", "a link that leads outside the judge file's folder"),
    ],
)
def test_template_file_outside_the_judges_folder__one_line_refusal(tmp_path, monkeypatch, template_file, problem):
    (tmp_path / "outside.md").write_text("SECRET {instruction}\n")
    path = judge_with_template(tmp_path, template_file)
    os.symlink(tmp_path / "outside.md", path.parent / "leak.md")
    os.symlink(tmp_path, path.parent / "linked")
    result = run_with_judge(tmp_path, monkeypatch, path)
    assert result.exit_code == 2
    assert result.output == f"error: {path}: prompt.template_file {template_file!r}: {problem}\n"
    assert "SECRET" not in result.output and "root:" not in result.output
    assert not (tmp_path / "home" / "hemra.db").exists()  # refused before any store was opened


def test_template_file_inside_the_judges_folder__read(tmp_path):
    path = judge_with_template(tmp_path, "prompts/quality.md")
    (path.parent / "prompts").mkdir()
    (path.parent / "prompts" / "quality.md").write_text("Grade this: {instruction}\n")
    os.symlink(path.parent / "prompts" / "quality.md", path.parent / "inside.md")  # a link that stays inside
    assert judges.load(path).template == "Grade this: {instruction}\n"
    assert judges.load(judge_with_template(tmp_path, "inside.md")).template == "Grade this: {instruction}\n"
