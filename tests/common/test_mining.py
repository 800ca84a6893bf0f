"""History mining: which command lines reach beyond HEAD, and which are ordinary work."""

import pytest

from hemra.services.common import mining

#: (command line, the patterns it hits)
POSITIVE = [
    ("git log --all", {"git_log_all"}),
    ("git log --all -p", {"git_log_all"}),
    ("git log --oneline --all --grep=median", {"git_log_all"}),
    ("git log --all -S compute_median --oneline", {"git_log_all"}),
    ("cd /app && git log --all | grep fix", {"git_log_all"}),
    ("git --no-pager log --branches --oneline", {"git_log_all"}),
    ("git -C /app log --tags", {"git_log_all"}),
    ("git rev-list --all", {"git_log_all"}),
    ("git shortlog --remotes", {"git_log_all"}),
    ("git log -g", {"git_log_all"}),
    ("git log origin/main --oneline", {"git_log_all"}),
    ("GIT_PAGER=cat git log --all", {"git_log_all"}),
    ("bash -lc 'git log --all --oneline'", {"git_log_all"}),
    ('sh -c "cd /app; git log --reflog"', {"git_log_all"}),
    ("for h in $(git rev-list --all); do git show $h; done", {"git_log_all"}),
    ("git grep median `git rev-list --all`", {"git_log_all"}),
    ("git reflog", {"git_reflog"}),
    ("git reflog show --all", {"git_reflog"}),
    ("git fsck --lost-found", {"git_reflog"}),
    ("git show 3f2a9c1", {"git_show_hash"}),
    ("git show 3f2a9c1d5e7b:src/stats_utils.py", {"git_show_hash"}),
    ("git show origin/main:src/stats_utils.py", {"git_show_hash"}),
    ("git show v2.1.0", {"git_show_hash"}),
    ("git show feature-x:src/app.py", {"git_show_hash"}),
    ("git diff 3f2a9c1", {"git_diff_hash"}),
    ("git diff HEAD..origin/main", {"git_diff_hash"}),
    ("git diff HEAD 3f2a9c1 -- src/", {"git_diff_hash"}),
    ("git checkout 3f2a9c1", {"git_checkout_hash"}),
    ("git checkout 3f2a9c1 -- src/stats_utils.py", {"git_checkout_hash"}),
    ("git checkout feature-x -- src/stats_utils.py", {"git_checkout_hash"}),
    ("git switch --detach 3f2a9c1", {"git_checkout_hash"}),
    ("git reset --hard origin/main", {"git_checkout_hash"}),
    ("git cherry-pick 3f2a9c1", {"git_cherry_pick"}),
    ("git restore --source=3f2a9c1 src/stats_utils.py", {"git_restore_source"}),
    ("git restore -s feature-x src/", {"git_restore_source"}),
    ("git fetch origin", {"git_fetch_upstream"}),
    ("git pull", {"git_fetch_upstream"}),
    ("git remote add upstream https://github.com/org/proj", {"git_fetch_upstream"}),
    ("git clone https://github.com/org/proj /tmp/proj", {"git_fetch_upstream"}),
    ("git ls-remote origin", {"git_fetch_upstream"}),
    ("curl -sL https://raw.githubusercontent.com/org/proj/main/src/a.py", {"curl_upstream"}),
    ("wget https://github.com/org/proj/archive/refs/heads/main.zip", {"curl_upstream"}),
    ("gh pr view 123 --repo org/proj", {"curl_upstream"}),
    ("pip install git+https://github.com/org/proj@main", {"curl_upstream"}),
    ("pip download proj==2.0 --no-deps -d /tmp/x", {"package_cache_newer"}),
    ("python -m pip download proj", {"package_cache_newer"}),
    ("ls ~/.cache/pip/wheels", {"package_cache_newer"}),
    ("find /opt/conda/pkgs/proj-2.1.0-py_0 -name '*.py'", {"package_cache_newer"}),
    ("pip index versions proj", {"package_cache_newer"}),
    ("git log --all && git show 3f2a9c1:a.py && git fetch", {"git_log_all", "git_show_hash", "git_fetch_upstream"}),
]

#: Ordinary work: no pattern.
NEGATIVE = [
    "git log",
    "git log -5",
    "git log --oneline -n 20",
    "git log -p src/stats_utils.py",
    "git log --grep=all",
    "git log -S all_items",
    "git diff",
    "git diff HEAD",
    "git diff HEAD~1",
    "git diff --stat",
    "git diff src/stats_utils.py",
    "git diff --cached",
    "git status",
    "git show",
    "git show HEAD",
    "git show HEAD~2:src/a.py",
    "git show HEAD^",
    "git show --stat",
    "git show :src/a.py",
    "git stash",
    "git stash list",
    "git stash pop",
    "git show stash@{0}",
    "git checkout -- src/stats_utils.py",
    "git checkout src/stats_utils.py",
    "git checkout .",
    "git checkout -b my-fix",
    "git restore src/a.py",
    "git restore --source=HEAD src/a.py",
    "git reset src/a.py",
    "git reset --hard HEAD",
    "git add -A && git commit -m 'fix all the things'",
    "git blame src/a.py",
    "git branch -a",
    "echo 'git log --all is forbidden' > notes.txt",
    "curl http://localhost:8000/health",
    "pip install -e .",
    "pip install pytest==8.0",
    "python -m pytest -q",
    "grep -rn 'github.com' src/",
    "cat README.md",
    "ls -la",
    "python3 -c 'print(1)'",
    "",
]


@pytest.mark.parametrize("line, patterns", POSITIVE)
def test_mining_command_is_flagged(line, patterns):
    assert {hit.pattern for hit in mining.command_hits(line)} == patterns


@pytest.mark.parametrize("line", NEGATIVE)
def test_ordinary_work_is_not_flagged(line):
    assert mining.command_hits(line) == []


def test_a_hash_is_only_possible_mining():
    [log] = mining.command_hits("git log --all")
    [show] = mining.command_hits("git show 3f2a9c1:a.py")
    assert (log.possible, show.possible) == (False, True)
    assert show.command == "git show 3f2a9c1:a.py"


@pytest.mark.parametrize(
    "type_, name, payload",
    [
        ("tool_call", "run_command", {"command": "git log --all"}),
        ("tool_call", "Bash", {"id": "t1", "arguments": {"command": "git log --all"}}),
        ("tool_call", "command_execution", {"arguments": {"command": "/bin/bash -lc 'git log --all'"}}),
        ("tool_call", "bash", {"arguments": {"command": "cd /app && git log --all | head"}}),
        ("tool_call", "terminal", {"command": "git log --all", "exit_status": {}}),
        ("tool_call", "execute", {"arguments": {"command": ["git", "log", "--all"]}}),
        ("tool_call", "bash_command", {"arguments": {"keystrokes": "git log --all\n", "duration": 1}}),
    ],
)
def test_commands_are_read_from_every_harness_shape(type_, name, payload):
    assert [h.pattern for h in mining.event_hits(type_, name, payload)] == ["git_log_all"]


def test_only_tool_calls_are_commands():
    assert mining.event_hits("message", "assistant", {"text": "I will not run git log --all"}) == []
    assert mining.event_hits("output", "stdout", {"text": "git log --all"}) == []


def test_a_read_of_a_package_cache_is_flagged():
    payload = {"arguments": {"file_path": "/root/.cache/pip/wheels/ab/proj-2.0-py3-none-any.whl"}}
    assert [h.pattern for h in mining.event_hits("tool_call", "Read", payload)] == ["package_cache_newer"]


def test_masks_round_trip():
    bits = mining.mask(["git_show_hash", "git_log_all", "unknown"])
    assert mining.names(bits) == ["git_log_all", "git_show_hash"]
    assert set(mining.DESCRIPTIONS) == set(mining.PATTERNS)


def test_atif_trajectory_becomes_events():
    trajectory = {
        "schema_version": "ATIF-v1.4",
        "steps": [
            {"step_id": 1, "source": "user", "message": "Fix the median."},
            {
                "step_id": 2,
                "source": "agent",
                "message": "Looking at history.",
                "tool_calls": [
                    {"tool_call_id": "c1", "function_name": "Bash", "arguments": {"command": "git log --all -p"}}
                ],
                "observation": {"results": [{"source_call_id": "c1", "content": "commit 3f2a9c1"}]},
            },
        ],
    }
    events = mining.atif_events(trajectory)
    assert [(e["type"], e["name"]) for e in events] == [
        ("message", "user"),
        ("message", "assistant"),
        ("tool_call", "Bash"),
        ("tool_result", ""),
    ]
    assert mining.event_hits("tool_call", "Bash", events[2]["payload"])[0].pattern == "git_log_all"
    assert mining.atif_events({"not": "atif"}) == []
