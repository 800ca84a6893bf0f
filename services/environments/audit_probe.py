"""The leak audit's probe: copied into a task's container (no network) and run there as root
by services/environments/audit.py. Python 3.6+ standard library only: it runs on whatever
interpreter the task's image has. Reads the input JSON named by its argument, prints one JSON
object of findings on stdout.

It looks for what could hand the agent the answer:
  - git history past HEAD in every repository it finds (refs, reflogs, FETCH_HEAD and
    friends, stashes, commit objects that are not ancestors of HEAD, replace refs, grafts,
    alternates), and the reference fix's lines in git objects past HEAD;
  - the reference fix's lines, or the task's own tests/ and solution/ files, in files the
    agent can read (the workdir outside its repository's tracked tree, /tmp, home folders,
    /opt, site-packages), within bounds;
  - a network interface other than loopback.
"""

# It runs on the image's own interpreter, as old as Python 3.6: no capture_output (3.7).
# ruff: noqa: UP022, UP031

import hashlib
import json
import os
import site
import subprocess
import sys
import tempfile
import time

#: Never walked: kernel and device trees, and the probe's own folder.
SKIP = ("/proc", "/sys", "/dev", "/run", "/.hemra-audit")
GIT_SPECIAL = ("FETCH_HEAD", "ORIG_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "BISECT_HEAD", "AUTO_MERGE")
DETAIL_CHARS = 600
MAX_FINDINGS = 200
#: Folders where a repository is looked for (besides the workdir), and how deep.
REPO_ROOTS = ("/testbed", "/app", "/src", "/repo", "/workspace", "/root", "/home", "/opt", "/tmp", "/usr/src", "/srv")
REPO_DEPTH = 4


class Probe:
    def __init__(self, config):
        self.config = config
        self.deadline = time.time() + float(config.get("deadline_secs", 100))
        self.findings = []
        self.dropped = 0
        self.complete = True
        self.notes = []

    def find(self, kind, severity, detail):
        if len(self.findings) >= MAX_FINDINGS:
            self.dropped += 1
            return
        detail = str(detail)
        if len(detail) > DETAIL_CHARS:
            detail = detail[: DETAIL_CHARS - 3] + "..."
        self.findings.append({"kind": kind, "severity": severity, "detail": detail})

    def left(self):
        return self.deadline - time.time()

    def out_of_time(self, stage):
        if self.left() > 0:
            return False
        if self.complete:
            self.notes.append("time limit reached during " + stage)
        self.complete = False
        return True

    def git(self, repo, *args, **kwargs):
        """git's stdout (bytes), or None when it fails or the time is up."""
        if self.left() <= 0:
            self.complete = False
            return None
        command = ["git", "-c", "safe.directory=*", "-c", "core.quotePath=false", "-C", repo] + list(args)
        try:
            done = subprocess.run(
                command,
                input=kwargs.get("input"),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                timeout=max(1.0, min(self.left(), 90.0)),
            )
        except subprocess.TimeoutExpired:
            self.complete = False
            self.notes.append("git " + args[0] + " timed out in " + repo)
            return None
        except OSError:
            return None
        if done.returncode != 0 and not kwargs.get("allow_fail"):
            return None
        return done.stdout


def text(data):
    return data.decode("utf-8", "replace") if data is not None else ""


def shown(line, limit=80):
    line = line.strip()
    return repr(line if len(line) <= limit else line[: limit - 3] + "...")


# --- repositories --------------------------------------------------------------------------
def find_repos(probe):
    """Top folders of git repositories (a .git folder or file inside), workdir's first."""
    found, seen = [], set()

    def add(path):
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            found.append(real)

    workdir = probe.config.get("workdir") or "/"
    top = text(probe.git(workdir, "rev-parse", "--show-toplevel")).strip() if os.path.isdir(workdir) else ""
    if top:
        add(top)
    roots = [workdir] + [r for r in probe.config.get("repo_roots", REPO_ROOTS) if r != workdir]
    visited = 0
    for root in roots:
        if not os.path.isdir(root) or root.startswith(SKIP):
            continue
        base_depth = root.rstrip("/").count("/")
        for folder, dirs, files in os.walk(root):
            visited += 1
            if visited > 200000 or probe.left() <= 0:
                probe.notes.append("repository search stopped early")
                return found
            if ".git" in dirs or ".git" in files:
                add(folder)
            if folder.count("/") - base_depth >= REPO_DEPTH:
                dirs[:] = []
            dirs[:] = [d for d in dirs if d != ".git" and not os.path.join(folder, d).startswith(SKIP)]
    return found


def audit_repo(probe, repo, needles, is_task_repo):
    """Findings about one repository. Returns the set of its tracked paths that are unchanged
    from HEAD (the file scan leaves them alone: they are HEAD's own content)."""
    git_dir = text(probe.git(repo, "rev-parse", "--absolute-git-dir")).strip()
    if not git_dir:
        probe.find("git_error", "warning", "%s: git cannot read this repository" % repo)
        return set()
    head = text(probe.git(repo, "rev-parse", "--verify", "-q", "HEAD^{commit}")).strip()
    ancestors = set(text(probe.git(repo, "rev-list", "HEAD")).split()) if head else set()
    if is_task_repo:
        check_base(probe, repo, head, ancestors)
    check_refs(probe, repo, ancestors)
    check_special_heads(probe, repo, git_dir, ancestors)
    check_reflogs(probe, repo, head)
    check_history_rewrites(probe, repo, git_dir)
    check_objects(probe, repo, head, ancestors, needles)
    return tracked_unchanged(probe, repo)


def describe(probe, repo, shas, limit=5):
    """One line per commit (short ID, date, subject), for a finding's detail."""
    shas = list(shas)[:limit]
    if not shas:
        return ""
    lines = text(probe.git(repo, "log", "--no-walk=unsorted", "--format=%h %ci %s", *shas)).splitlines()
    return "; ".join(line[:120] for line in lines) or ", ".join(s[:12] for s in shas)


def check_base(probe, repo, head, ancestors):
    """The task's repository: a HEAD past the task's base commit holds the fix's history."""
    base = probe.config.get("base_commit") or ""
    if not head or not base or head.startswith(base) or base.startswith(head[:12]):
        return
    full = text(probe.git(repo, "rev-parse", "--verify", "-q", base + "^{commit}")).strip()
    if full and full in ancestors:
        probe.find(
            "git_head_not_base",
            "leak",
            "%s: HEAD %s is %s commits past the task's base commit %s"
            % (repo, head[:12], text(probe.git(repo, "rev-list", "--count", full + "..HEAD")).strip(), base[:12]),
        )
    else:
        probe.find(
            "git_head_not_base",
            "warning",
            "%s: HEAD %s is not the task's base commit %s" % (repo, head[:12], base[:12]),
        )


def check_refs(probe, repo, ancestors):
    """Refs (branches, tags, remotes, stash, replace refs) that reach past HEAD."""
    refs = text(probe.git(repo, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(*objectname)%00%(objecttype)"))
    ahead_refs = []
    for line in refs.splitlines():
        parts = line.split("\0")
        if len(parts) != 4:
            continue
        name, target, peeled, kind = parts
        if name.startswith("refs/replace/"):
            probe.find(
                "git_history_rewrite",
                "warning",
                "%s: replace ref %s (git shows other objects in place of some)" % (repo, name),
            )
        commit = peeled or target
        if commit in ancestors:
            continue
        kinds = text(probe.git(repo, "cat-file", "-t", commit)).strip()
        if kinds == "commit":
            ahead_refs.append((name, commit))
        else:
            probe.find(
                "git_ref_ahead",
                "warning",
                "%s: ref %s names a %s %s, not a commit of HEAD's history" % (repo, name, kinds or kind, commit[:12]),
            )
    for name, commit in ahead_refs[:20]:
        probe.find(
            "git_ref_ahead",
            "leak",
            "%s: ref %s -> %s, not an ancestor of HEAD (%s)"
            % (repo, name, commit[:12], describe(probe, repo, [commit], 1)),
        )
    if len(ahead_refs) > 20:
        probe.find("git_ref_ahead", "leak", "%s: %d more refs past HEAD" % (repo, len(ahead_refs) - 20))


def check_special_heads(probe, repo, git_dir, ancestors):
    """FETCH_HEAD, ORIG_HEAD and the like naming commits past HEAD."""
    for special in GIT_SPECIAL:
        path = os.path.join(git_dir, special)
        if not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as handle:
                content = text(handle.read(65536))
        except OSError:
            continue
        shas = [w for w in content.split() if len(w) in (40, 64) and all(c in "0123456789abcdef" for c in w)]
        past = [s for s in shas if s not in ancestors]
        present = [s for s in past if probe.git(repo, "cat-file", "-e", s + "^{commit}") is not None]
        if present:
            probe.find(
                "git_special_head",
                "leak",
                "%s: %s names %s, not an ancestor of HEAD (%s)"
                % (repo, special, present[0][:12], describe(probe, repo, present, 3)),
            )
        elif past:
            probe.find(
                "git_special_head",
                "warning",
                "%s: %s names %s, a commit this repository does not hold (only its ID shows)"
                % (repo, special, past[0][:12]),
            )


def check_reflogs(probe, repo, head):
    reflogged = text(probe.git(repo, "rev-list", "--reflog", "--not", "HEAD", allow_fail=True)).split() if head else []
    if reflogged:
        probe.find(
            "git_reflog",
            "leak",
            "%s: reflogs name %d commits past HEAD: %s" % (repo, len(reflogged), describe(probe, repo, reflogged)),
        )


def check_history_rewrites(probe, repo, git_dir):
    for name, what in (("info/grafts", "grafts rewrite history"), ("objects/info/alternates", "objects borrowed from")):
        path = os.path.join(git_dir, name)
        try:
            with open(path) as handle:
                content = handle.read(4096).strip()
        except (OSError, UnicodeDecodeError):
            continue
        if content:
            probe.find(
                "git_history_rewrite", "warning", "%s: %s %s: %s" % (repo, name, what, content.replace("\n", ", "))
            )


def check_objects(probe, repo, head, ancestors, needles):
    """Every object in the repository (packs, loose objects, alternates): commits that are not
    HEAD's ancestors, and blobs HEAD's tree does not hold."""
    listing = text(
        probe.git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype) %(objectsize)")
    )
    commits, blobs = [], []
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "commit" and parts[0] not in ancestors:
            commits.append(parts[0])
        elif len(parts) == 3 and parts[1] == "blob":
            blobs.append((parts[0], int(parts[2])))
    if commits:
        report_commits(probe, repo, head, commits)
    if needles and blobs and probe.left() > 0:
        held = set(text(probe.git(repo, "rev-list", "--objects", "HEAD")).split()) if head else set()
        search_blobs(probe, repo, [b for b in blobs if b[0] not in held], needles)


def report_commits(probe, repo, head, commits):
    """Commits that are not HEAD's ancestors: how many refs or reflogs still reach."""
    reachable = (
        set(text(probe.git(repo, "rev-list", "--all", "--reflog", "--not", "HEAD", allow_fail=True)).split())
        if head
        else set()
    )
    loose = [c for c in commits if c not in reachable]
    probe.find(
        "git_commit_ahead",
        "leak",
        "%s: %d commits are not ancestors of HEAD (%d reachable from refs or reflogs, %d unreachable): %s"
        % (
            repo,
            len(commits),
            len(commits) - len(loose),
            len(loose),
            describe(probe, repo, sorted(commits, key=lambda c: c not in reachable)),
        ),
    )


def search_blobs(probe, repo, blobs, needles):
    """The fix's lines in git blobs HEAD's tree does not hold (later versions of files)."""
    limit = int(probe.config.get("max_file_bytes", 2000000))
    budget = int(probe.config.get("max_blob_bytes", 512 * 1024 * 1024))
    wanted = []
    for sha, size in blobs:
        if size <= limit and budget > 0:
            wanted.append(sha)
            budget -= size
    if budget <= 0:
        probe.find(
            "audit_bounds",
            "warning",
            "%s: only %d of %d blobs past HEAD were searched (size bound)" % (repo, len(wanted), len(blobs)),
        )
    hits = blob_hits(probe, repo, wanted, needles)
    if hits is not None:
        report_blob_hits(probe, repo, hits)


def blob_hits(probe, repo, wanted, needles):
    """{blob: the first needle line it holds}, read in batches; None when the time ran out."""
    hits = {}
    for start in range(0, len(wanted), 2000):
        if probe.out_of_time("the search of git objects"):
            return None
        batch = wanted[start : start + 2000]
        data = probe.git(repo, "cat-file", "--batch", input="\n".join(batch).encode() + b"\n")
        if data is None:
            continue
        position = 0
        while position < len(data):
            end = data.find(b"\n", position)
            if end < 0:
                break
            header = data[position:end].split()
            if len(header) != 3:
                position = end + 1
                continue
            size = int(header[2])
            body = data[end + 1 : end + 1 + size]
            position = end + 1 + size + 1
            for needle in needles:
                if needle["bytes"] in body:
                    hits.setdefault(header[0].decode(), needle["text"])
                    break
    return hits


def report_blob_hits(probe, repo, hits):
    for sha, line in list(hits.items())[:5]:
        where = text(
            probe.git(
                repo,
                "log",
                "--all",
                "--reflog",
                "-n",
                "1",
                "--format=%h %ci %s",
                "--find-object=" + sha,
                allow_fail=True,
            )
        ).strip()
        probe.find(
            "answer_in_git",
            "leak",
            "%s: blob %s holds the fix's line %s%s"
            % (repo, sha[:12], shown(line), " (commit " + where[:140] + ")" if where else " (in no commit)"),
        )
    if len(hits) > 5:
        probe.find("answer_in_git", "leak", "%s: %d more blobs past HEAD hold the fix's lines" % (repo, len(hits) - 5))


def tracked_unchanged(probe, repo):
    tracked = text(probe.git(repo, "ls-files", "-z")).split("\0")
    changed = set(text(probe.git(repo, "diff", "--name-only", "-z", "HEAD", allow_fail=True)).split("\0"))
    return {os.path.join(repo, p) for p in tracked if p and p not in changed}


def filter_needles(probe, repo, needles):
    """Drop the lines HEAD's tree already holds anywhere: not a leak, and they would match copies."""
    if not repo or not needles:
        return needles
    with tempfile.NamedTemporaryFile("wb", suffix=".txt") as patterns:
        patterns.write("\n".join(n["text"] for n in needles).encode() + b"\n")
        patterns.flush()
        found = probe.git(repo, "grep", "-h", "-F", "-I", "-f", patterns.name, "HEAD", "--", ".", allow_fail=True)
    if found is None:
        return needles
    present = text(found)
    return [n for n in needles if n["text"] not in present]


# --- files ---------------------------------------------------------------------------------
def scan_files(probe, needles, hashes, unchanged):
    """The fix's lines and the task's own files, in files the agent can read (bounded)."""
    FileScan(probe, needles, hashes, unchanged).run()


def scan_roots(probe):
    """The folders the file scan walks: the configured ones, else the workdir and the usual
    places an image leaves files in, site-packages included."""
    workdir = probe.config.get("workdir") or "/"
    roots = probe.config.get("scan_roots") or [
        workdir,
        "/testbed",
        "/tmp",
        "/var/tmp",
        "/root",
        "/home",
        "/tests",
        "/solution",
        "/opt",
        "/usr/local/lib",
    ]
    if not probe.config.get("scan_roots"):
        try:
            roots += list(site.getsitepackages())
        except AttributeError:  # a virtualenv's old site module
            pass
        roots += ["/usr/lib/python3/dist-packages"]
    return roots


class FileScan:
    """One walk of the scan's roots, with its bounds (files, bytes) and counts."""

    def __init__(self, probe, needles, hashes, unchanged):
        self.probe = probe
        self.needles = needles
        self.hashes = hashes
        self.unchanged = unchanged
        self.max_files = int(probe.config.get("max_files", 100000))
        self.max_bytes = int(probe.config.get("max_file_bytes", 2000000))
        self.budget = int(probe.config.get("max_scan_bytes", 512 * 1024 * 1024))
        self.sizes = {h["size"] for h in hashes.values()}
        self.files = self.skipped = self.reported = 0
        self.seen = set()

    def run(self):
        for root in scan_roots(self.probe):
            real = os.path.realpath(root)
            if not os.path.isdir(real) or real in self.seen or (real != "/" and real.startswith(SKIP)):
                continue
            self.seen.add(real)
            if not self.walk(real):
                return
        if self.reported > 10:
            self.probe.find("answer_in_file", "leak", "%d more files hold the answer's lines" % (self.reported - 10))
        if self.skipped:
            self.probe.notes.append("%d files over %d bytes not searched" % (self.skipped, self.max_bytes))

    def walk(self, real):
        """Every regular file under `real`; False when a bound or the time stopped the scan."""
        for folder, dirs, names in os.walk(real):
            dirs[:] = [
                d
                for d in dirs
                if d != ".git"
                and not os.path.join(folder, d).startswith(SKIP)
                and os.path.join(folder, d) not in self.seen
            ]
            if self.probe.out_of_time("the file scan"):
                return False
            for name in names:
                path = os.path.join(folder, name)
                if path in self.unchanged:
                    continue
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if not (info.st_mode & 0o170000 == 0o100000):  # regular files only
                    continue
                self.files += 1
                if self.files > self.max_files or self.budget <= 0:
                    self.probe.find(
                        "audit_bounds",
                        "warning",
                        "file scan stopped after %d files (bound); %s and later folders not searched"
                        % (self.files - 1, folder),
                    )
                    return False
                self.check(path, info)
        return True

    def check(self, path, info):
        """One file: a copy of one of the task's files, or a holder of one of the fix's lines."""
        if info.st_size > self.max_bytes:
            self.skipped += 1
            return
        try:
            with open(path, "rb") as handle:
                data = handle.read(self.max_bytes + 1)
        except OSError:
            return
        self.budget -= len(data)
        hidden = path.startswith(("/tests/", "/solution/"))
        if info.st_size in self.sizes:
            digest = hashlib.sha256(data).hexdigest()
            if digest in self.hashes:
                self.probe.find(
                    "task_files_in_view",
                    "warning" if hidden else "leak",
                    "%s is the task's %s%s" % (path, self.hashes[digest]["path"], HIDDEN if hidden else ""),
                )
                return
        for needle in self.needles:
            if needle["bytes"] in data:
                self.reported += 1
                if self.reported <= 10:
                    self.probe.find(
                        "answer_in_file",
                        "warning" if hidden else "leak",
                        "%s holds the %s line %s%s"
                        % (path, needle["source"], shown(needle["text"]), HIDDEN if hidden else ""),
                    )
                break


HIDDEN = " (hidden in HEMRA's docker sandbox: an empty folder is mounted there while the agent works)"


def task_folders(probe):
    for top in probe.config.get("task_folders", ("/tests", "/solution")):
        try:
            entries = os.listdir(top)
        except OSError:
            continue
        if entries:
            probe.find(
                "task_files_in_view",
                "warning",
                "%s in the image holds %d entries (%s)%s" % (top, len(entries), ", ".join(sorted(entries)[:5]), HIDDEN),
            )


def network(probe):
    try:
        interfaces = sorted(os.listdir(probe.config.get("interfaces", "/sys/class/net")))
    except OSError:
        probe.notes.append("/sys/class/net cannot be read")
        return
    others = [i for i in interfaces if i != "lo"]
    if others:
        probe.find("network", "leak", "network interfaces besides loopback: " + ", ".join(others))


def run(config):
    """Every check; the findings as one JSON-ready object."""
    probe = Probe(config)
    needles = [dict(n, bytes=n["text"].encode("utf-8")) for n in config.get("needles", [])]
    hashes = config.get("hashes", {})
    repos = find_repos(probe)
    workdir = config.get("workdir") or "/"
    task_repo = repos[0] if repos and (workdir.rstrip("/") + "/").startswith(repos[0].rstrip("/") + "/") else ""
    if task_repo:
        needles = filter_needles(probe, task_repo, needles)
    unchanged = set()
    for repo in repos:
        if probe.out_of_time("the git checks"):
            break
        unchanged |= audit_repo(probe, repo, needles, repo == task_repo)
    # Short lines are searched in git objects past HEAD only: in files they would match too much.
    long_needles = [n for n in needles if len(n["text"]) >= int(config.get("min_file_needle", 20))]
    if long_needles or hashes:
        scan_files(probe, long_needles, hashes, unchanged)
    task_folders(probe)
    network(probe)
    if probe.dropped:
        probe.notes.append("%d more findings not listed" % probe.dropped)
    return {
        "findings": probe.findings,
        "complete": probe.complete,
        "repos": repos,
        "needles": len(needles),
        "notes": probe.notes,
    }


def main():
    with open(sys.argv[1]) as handle:
        config = json.load(handle)
    sys.stdout.write(json.dumps(run(config)))


if __name__ == "__main__":
    main()
