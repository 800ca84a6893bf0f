"""Repository history in task environments: HEMRA's strip layer.

An environment that holds a git repository may hold its future too: the commit that fixes
the task's bug behind a branch, a tag, a remote-tracking ref, a stash, a reflog entry or an
unreachable object. An agent that runs `git log --all -p` reads the answer. So every task
image HEMRA builds gets one more layer, HEMRA's, that strips every git repository in the
image to its HEAD's past (SCRIPT below), then checks, in the same layer, that nothing else is
left; a repository it cannot strip fails the build, and the planner refuses the task by name.

Which repositories: every git directory on the image's root file system (a folder holding
HEAD, objects/ and refs/: each work tree's .git, bare repositories, submodules' git
directories under .git/modules), each at its own HEAD; the task's `[environment]
base_commit` (SWE-bench tasks: the row's base_commit) names the commit the repository at the
task's workdir is detached at first. A run keeps a task's history only when it says so
(`allow_history`, `--allow-history`): that task's image is built without the layer and the
run records the task (RunSpec.history_kept) for its report.
"""

import hashlib
import json

#: Bumped when what the layer does changes; images are keyed by KEY (the script's digest too).
VERSION = "1"
#: The label on an image HEMRA stripped, and its value.
LABEL = "hemra.history"
STRIPPED = f"stripped-{VERSION}"
#: The program name the script reports as ($0 of `sh -c`).
NAME = "hemra-history"

# POSIX sh and git. Arguments: [--check] [REPOSITORY BASE_COMMIT]. Idempotent: a second run
# finds each repository already stripped, strips it again to the same refs and objects, and
# its checks pass. Offline: nothing here fetches.
SCRIPT = r"""
set -u
fail() { echo "$0: $*" >&2; exit 1; }
check_only=""
if [ "${1:-}" = "--check" ]; then check_only=1; shift; fi
repo=${1:-}
base=${2:-}
scratch=$(mktemp -d 2>/dev/null) || { scratch=/tmp/hemra-history.$$; mkdir -p "$scratch"; } || fail "no scratch folder"
trap 'rm -rf "$scratch"' EXIT
for variable in GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES \
  GIT_COMMON_DIR GIT_NAMESPACE GIT_REPLACE_REF_BASE GIT_GRAFT_FILE GIT_SHALLOW_FILE GIT_CEILING_DIRECTORIES \
  GIT_CONFIG GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM GIT_CONFIG_PARAMETERS GIT_CONFIG_COUNT; do unset "$variable"; done
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_NO_REPLACE_OBJECTS=1 GIT_TERMINAL_PROMPT=0 LC_ALL=C
mkdir -p "$scratch/hooks"
printf '[safe]\n\tdirectory = *\n[core]\n\thooksPath = %s/hooks\n\tlogAllRefUpdates = false\n' "$scratch" \
  > "$scratch/.gitconfig"

# Files of a git directory that name commits or hold what refs held.
LEFTOVERS="FETCH_HEAD ORIG_HEAD MERGE_HEAD MERGE_MSG MERGE_MODE MERGE_RR CHERRY_PICK_HEAD REVERT_HEAD REBASE_HEAD
AUTO_MERGE SQUASH_MSG COMMIT_EDITMSG BISECT_LOG BISECT_START BISECT_EXPECTED_REV BISECT_ANCESTORS_OK BISECT_NAMES
BISECT_TERMS BISECT_HEAD BISECT_RUN packed-refs logs worktrees rebase-merge rebase-apply sequencer rr-cache
gitk.cache info/refs info/grafts objects/info/alternates objects/info/http-alternates objects/info/packs
objects/info/commit-graph objects/info/commit-graphs objects/pack/multi-pack-index"

command -v find >/dev/null 2>&1 || fail "the image has no find: HEMRA cannot look for git repositories in it"
find / -xdev \( -path /proc -o -path /sys -o -path /dev \) -prune -o -name HEAD \( -type f -o -type l \) -print \
  2>/dev/null > "$scratch/heads"
: > "$scratch/dirs"
while IFS= read -r head; do
  dir=${head%/HEAD}
  if [ -d "$dir/objects" ] && { [ -d "$dir/refs" ] || [ -d "$dir/reftable" ]; }; then
    (cd "$dir" && pwd -P) >> "$scratch/dirs"
  fi
done < "$scratch/heads"
have_git=""
command -v git >/dev/null 2>&1 && have_git=1
if [ -z "$have_git" ]; then
  [ -n "$repo" ] && fail "$repo: the task names base commit $base, but the image has no git"
  first=$(head -n 1 "$scratch/dirs")
  [ -n "$first" ] && fail "$first: a git repository, but the image has no git to strip its history"
  exit 0
fi
base_dir=""
if [ -n "$repo" ]; then
  base_dir=$(git -C "$repo" rev-parse --absolute-git-dir 2>/dev/null) \
    || fail "$repo: not a git repository (the task names base commit $base)"
  base_dir=$(cd "$base_dir" && pwd -P)
  grep -qxF "$base_dir" "$scratch/dirs" || printf '%s\n' "$base_dir" >> "$scratch/dirs"
fi

strip() {  # strip GIT_DIR WANTED_COMMIT WORK_TREE
  G=$1 want=$2 work=$3
  head=$(git --git-dir="$G" rev-parse -q --verify 'HEAD^{commit}' 2>/dev/null) || head=""
  if [ -n "$want" ]; then
    target=$(git --git-dir="$G" rev-parse -q --verify "$want^{commit}" 2>/dev/null) \
      || fail "$G: base commit $want is not in the repository"
  else
    target=$head
  fi
  branch=$(git --git-dir="$G" symbolic-ref -q HEAD 2>/dev/null) || branch=""
  # HEAD detached at the base first: with its branch deleted an attached HEAD would be unborn.
  if [ -n "$target" ] && [ "$target" != "$head" ]; then
    git -C "$work" checkout -q --detach "$target" || fail "$G: cannot check out base commit $target"
  fi
  if [ -n "$target" ]; then git --git-dir="$G" update-ref --no-deref HEAD "$target" || fail "$G: cannot detach HEAD"; fi
  git --git-dir="$G" for-each-ref --format='delete %(refname)' | git --git-dir="$G" update-ref --stdin \
    || fail "$G: cannot delete its refs"
  git --git-dir="$G" reflog expire --expire=now --expire-unreachable=now --all 2>/dev/null
  git --git-dir="$G" config --name-only --get-regexp '^(remote|branch)\.' 2>/dev/null | sed 's/\.[^.]*$//' | sort -u \
    | while IFS= read -r section; do git --git-dir="$G" config --remove-section "$section" 2>/dev/null; done
  for leftover in $LEFTOVERS; do rm -rf "$G/$leftover"; done
  rm -f "$G"/objects/pack/*.keep
  if [ ! -d "$G/reftable" ]; then
    rm -rf "$G/refs" && mkdir -p "$G/refs/heads" "$G/refs/tags" || fail "$G: cannot clear refs/"
  fi
  if [ -n "$branch" ]; then  # keep the branch name HEAD was on, at the base: it is an ancestor
    if [ -n "$target" ]; then git --git-dir="$G" update-ref "$branch" "$target" || fail "$G: cannot keep $branch"; fi
    git --git-dir="$G" symbolic-ref HEAD "$branch" || fail "$G: cannot attach HEAD to $branch"
  fi
  git --git-dir="$G" -c gc.reflogExpire=now -c gc.reflogExpireUnreachable=now -c gc.pruneExpire=now \
    -c gc.worktreePruneExpire=now -c gc.cruftPacks=false -c gc.writeCommitGraph=false -c core.commitGraph=false \
    -c repack.writeBitmaps=false gc -q --prune=now || fail "$G: git gc failed"
  git --git-dir="$G" -c repack.writeBitmaps=false repack -a -d -q || fail "$G: git repack failed"
  git --git-dir="$G" prune --expire=now || fail "$G: git prune failed"
  for leftover in $LEFTOVERS; do  # gc wrote info/refs and packed the kept branch's ref
    [ "$leftover" = packed-refs ] || rm -rf "$G/$leftover"
  done
}

check() {  # check GIT_DIR: only HEAD and its ancestors are left
  G=$1
  for leftover in $LEFTOVERS; do
    case $leftover in logs|packed-refs) continue ;; esac
    [ -e "$G/$leftover" ] && fail "$G: $leftover remains"
  done
  [ -d "$G/logs" ] && [ -n "$(find "$G/logs" -type f 2>/dev/null | head -n 1)" ] && fail "$G: reflogs remain"
  target=$(git --git-dir="$G" rev-parse -q --verify 'HEAD^{commit}' 2>/dev/null) || target=""
  refs=$(git --git-dir="$G" for-each-ref --format='%(refname) %(objectname)') || fail "$G: cannot list its refs"
  branch=$(git --git-dir="$G" symbolic-ref -q HEAD 2>/dev/null) || branch=""
  expected=""
  [ -n "$branch" ] && [ -n "$target" ] && expected="$branch $target"
  [ "$refs" = "$expected" ] || fail "$G: refs besides HEAD remain: $(printf '%s' "$refs" | head -n 3 | tr '\n' ' ')"
  git --git-dir="$G" cat-file --batch-all-objects --batch-check='%(objecttype) %(objectname)' > "$scratch/objects" \
    || fail "$G: cannot list its objects"
  sed -n 's/^commit //p' "$scratch/objects" > "$scratch/commits"
  if [ -n "$target" ]; then
    extra=$(git --git-dir="$G" rev-list "^$target" --stdin < "$scratch/commits") || fail "$G: cannot walk its commits"
    [ -z "$extra" ] || fail "$G: commits that are not ancestors of HEAD remain: $(printf '%s' "$extra" | head -n 1)"
  elif [ -s "$scratch/commits" ]; then
    fail "$G: HEAD has no commit, but commits remain"
  fi
  extra=$(git --git-dir="$G" rev-list --all --reflog ${target:+"^$target"}) || fail "$G: cannot walk its refs"
  [ -z "$extra" ] || fail "$G: refs or reflogs reach past HEAD"
}

while IFS= read -r dir; do
  [ -n "$dir" ] || continue
  want="" work="$dir"
  if [ "$dir" = "$base_dir" ]; then want=$base work=$repo; fi
  [ -n "$check_only" ] || strip "$dir" "$want" "$work"
  check "$dir"
  if [ -n "$want" ]; then
    now=$(git --git-dir="$dir" rev-parse -q --verify 'HEAD^{commit}')
    wanted=$(git --git-dir="$dir" rev-parse -q --verify "$want^{commit}")
    [ "$now" = "$wanted" ] || fail "$dir: HEAD is not at base commit $want"
  fi
done < "$scratch/dirs"
"""

#: Part of every stripped image's tag: changes with the script or VERSION.
KEY = hashlib.sha256(f"{VERSION}\0{SCRIPT}".encode()).hexdigest()[:10]


def command(repository: str = "", base_commit: str = "", check: bool = False) -> list[str]:
    """The exec-form command that strips (or, with `check`, only checks) the image's repositories."""
    args = (["--check"] if check else []) + ([repository, base_commit] if base_commit else [])
    return ["/bin/sh", "-c", SCRIPT, NAME, *args]


def run_line(repository: str = "", base_commit: str = "") -> str:
    """The Dockerfile RUN line of the layer (exec form: no shell quoting, no variable expansion)."""
    return "RUN " + json.dumps(command(repository, base_commit))


def dockerfile(image: str, repository: str = "", base_commit: str = "", user: str = "") -> str:
    """The layer on `image`: as root, then back to the image's own user."""
    lines = [f"FROM {image}"]
    if user:
        lines.append("USER 0")
    lines.append(run_line(repository, base_commit))
    if user:
        lines.append(f"USER {user}")
    return "\n".join(lines) + "\n"


def of_task(task) -> tuple[str, str]:
    """(repository, base commit) a task names for the strip ("", "" when it names none)."""
    environment = task.environment
    base = getattr(environment, "base_commit", "") or ""
    return (environment.workdir or "/", base) if base else ("", "")


def repository_folders(paths) -> list[str]:
    """Git directories among a task's file paths (a folder holding HEAD and objects/)."""
    paths = set(paths)
    found = []
    for path in sorted(paths):
        if path == "HEAD" or path.endswith("/HEAD"):
            folder = path[: -len("HEAD")]
            if any(p.startswith(folder + "objects/") for p in paths):
                found.append(folder.rstrip("/") or ".")
    return found
