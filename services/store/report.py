"""A run's report: one table per dataset, each harness against the baseline on the
tasks both graded comparably. Anything that makes a comparison unfair is flagged,
never averaged in. Plain data in, typed records (hemra.services.store.outputs) out."""

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import msgspec
from sqlalchemy import exists, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from hemra.services.domain import vocabulary
from hemra.services.domain.records import HarnessFacts, Score, history_kept
from hemra.services.domain.rewards import SCORED, is_binary, passes, usable_rewards
from hemra.services.store import attemptreads, audits, repair, runreads, settled
from hemra.services.store import tables as t
from hemra.services.store.outputs import (
    CellJudge,
    DatasetReport,
    PairedSummary,
    Report,
    ReportRow,
    RetryReason,
    RunChange,
    RunRepair,
    TagRow,
)

#: A retry reason is its error's first line, cut to this; a row lists this many reasons at most
#: (the rest summed under one).
MAX_REASON_CHARS = 200
MAX_RETRY_REASONS = 10
_UNGRADED = (vocabulary.INFRA_FAILED, vocabulary.CANCELLED)
_new = object.__new__


class ScoreInfo:
    """What reports and comparisons ask of a score, derived once. Scores repeat a lot (one
    fingerprint per task, a handful of reward values), so loaders share one per distinct score."""

    __slots__ = ("score", "rewards", "fingerprint", "is_scored", "is_binary", "passed", "key", "judged")

    def __init__(self, score: dict | None):
        score = score or {}
        self.score = score
        # A reward outside services/domain/rewards.MAX_ABS_REWARD (or not a number) reads as a scorer failure.
        read = Score.of(score)
        usable = usable_rewards(read.rewards or {})
        self.rewards = usable or {}
        self.fingerprint = read.scorer_fingerprint
        self.is_scored = read.state == SCORED and usable is not None
        self.is_binary = is_binary(self.rewards)
        #: 1 when a binary reward passes (services/domain/rewards.passes), else 0.
        self.passed = int(self.is_binary and passes(self.rewards))
        #: What must be equal for two graded trials to pair: fingerprint, reward names, judge model.
        self.key = (self.fingerprint, tuple(sorted(self.rewards)), read.judge_model)
        #: The scorer judged criteria (a rubric): most scores have none, and comparisons skip them.
        self.judged = bool(read.judgments)


class TrialResult:
    """The latest attempt of one trial, reduced to what the report needs."""

    __slots__ = (
        "task_digest",
        "task_name",
        "state",
        "outcome",
        "score",
        "agent_version",
        "agent_name",
        "repetition",
        "rewards",
        "fingerprint",
        "is_binary",
        "passed",
        "key",
        "is_graded",
        "judge_scores",
        "judged",
        "mined",
    )

    def __init__(
        self,
        task_digest: str,
        task_name: str,
        state: str,
        outcome: str | None,
        score: dict | None,
        agent_version: str = "",
        repetition: int = 0,
        agent_name: str = "",
        info: ScoreInfo | None = None,
        judge_scores: dict[str, dict] | None = None,
        mined: bool = False,
    ):
        info = info if info is not None else ScoreInfo(score)
        self.task_digest, self.task_name, self.state, self.outcome = task_digest, task_name, state, outcome
        self.score = score
        self.agent_version, self.agent_name = agent_version, agent_name
        #: The trial's repetition (-k); paired 0/1 tests pair repetition k with repetition k.
        self.repetition = repetition
        self.rewards, self.fingerprint, self.key = info.rewards, info.fingerprint, info.key
        self.is_binary, self.passed = info.is_binary, info.passed
        self.is_graded = state == "finished" and outcome not in _UNGRADED and info.is_scored
        #: HEMRA judge name -> its latest score of this attempt (re-judging replaces it here).
        self.judge_scores = judge_scores or {}
        #: Some criterion was judged: by the task's scorer or by a HEMRA judge.
        self.judged = info.judged or bool(judge_scores)
        #: Some event of the attempt mined the repository's history (services/common/mining.py).
        self.mined = mined

    def of(self, task_digest: str, task_name: str, repetition: int) -> "TrialResult":
        """This attempt's result for another trial (a big cell's trials share a few kinds of
        attempt): a copy with that task and repetition, made without deriving anything again.
        What copies share (rewards, key, judge scores) nothing changes."""
        new = _new(TrialResult)
        new.task_digest, new.task_name, new.repetition = task_digest, task_name, repetition
        new.state, new.outcome, new.score = self.state, self.outcome, self.score
        new.agent_version, new.agent_name, new.judge_scores = self.agent_version, self.agent_name, self.judge_scores
        new.rewards, new.fingerprint, new.key = self.rewards, self.fingerprint, self.key
        new.is_binary, new.passed, new.is_graded, new.judged = self.is_binary, self.passed, self.is_graded, self.judged
        new.mined = self.mined
        return new

    @property
    def has_result(self) -> bool:
        """Finished with something of the agent to judge (not lost to infrastructure or cancelled)."""
        return self.state == "finished" and self.outcome not in _UNGRADED

    def judged_by(self, judge: str) -> "TrialResult | None":
        """This trial as HEMRA judge `judge` scored it (None when it did not)."""
        score = self.judge_scores.get(judge)
        if score is None:
            return None
        return TrialResult(
            self.task_digest,
            self.task_name,
            self.state,
            self.outcome,
            score,
            self.agent_version,
            self.repetition,
            self.agent_name,
            judge_scores={k: v for k, v in self.judge_scores.items() if k != judge},
            mined=self.mined,
        )


@dataclass
class Loaded:
    """What load_trials read."""

    #: cell ID -> the latest attempt of each of its trials.
    trials: dict[str, list[TrialResult]]
    #: The cells whose trials are final: read from their settled_cells row, or read settled
    #: from their attempts (newly_settled).
    final: set[str] = field(default_factory=set)
    #: Of the cells read from their attempts, those that have settled: a store keeps them
    #: (settled.keep) so that the next read need not join their attempts again.
    newly_settled: dict[str, settled.Trials] = field(default_factory=dict)


async def load_trials(
    session: AsyncSession, cell_ids: list[str], scores: dict | None = None, judge_version: int | None = None
) -> Loaded:
    """The latest attempt of each trial of these cells, one query per cell (settled.py): with
    the run's `judge_version`, a cell kept settled at it is read from its one row instead.

    Equal score texts are parsed once: a big cell has few distinct scores, and two sides of a
    compare share most of theirs (pass the same `scores` dict to both loads). No ORM object
    is built per row.
    """
    infos: dict[str | None, ScoreInfo] = {} if scores is None else scores
    conn = await session.connection()
    kept = {} if judge_version is None else await settled.read(conn, cell_ids, judge_version)
    loaded = Loaded({}, set(kept))
    for cell_id in cell_ids:
        trials = kept.get(cell_id)
        if trials is None:
            trials = await settled.from_attempts(conn, cell_id)
            if judge_version is not None and trials.is_settled():
                loaded.final.add(cell_id)
                loaded.newly_settled[cell_id] = trials
        loaded.trials[cell_id] = _results(trials, infos)
    return loaded


def _results(trials: settled.Trials, infos: dict[str | None, ScoreInfo]) -> list[TrialResult]:
    """A TrialResult per trial: one made per kind of attempt, copied for each of its trials."""
    kinds = []
    for state, outcome, version, agent, text, judged, mined in trials.kinds:
        info = infos.get(text)
        if info is None:
            info = infos[text] = ScoreInfo(_parse(text))
        kinds.append(
            TrialResult("", "", state, outcome, info.score or None, version, 0, agent, info, _latest(judged), mined)
        )
    tasks = trials.tasks
    return [kinds[kind].of(*tasks[task], repetition) for task, repetition, kind in trials.rows]


def _latest(text: str | None) -> dict[str, dict]:
    """Each HEMRA judge's latest score, from an attempt's judge_scores column as JSON text."""
    return attemptreads.latest_judge_scores(_parse(text)) if text else {}


def _parse(text: str | None) -> dict | None:
    return None if text is None else msgspec.json.decode(text)


@dataclass
class CellResults:
    cell: t.Cell
    trials: list[TrialResult] = field(default_factory=list)
    #: The harness as pinned for the run.
    harness: HarnessFacts = HarnessFacts()
    #: Names of the run's tasks whose environments kept their repositories' history (RunSpec.history_kept).
    history_kept: frozenset[str] = frozenset()
    #: The errors of its attempts that were retried as a later attempt of their trial, counted.
    retries: Counter = field(default_factory=Counter)

    def graded_by_task(self) -> dict[str, list[TrialResult]]:
        by_task = defaultdict(list)
        for trial in self.trials:
            if trial.is_graded:
                by_task[trial.task_digest].append(trial)
        return by_task


async def build_report(session: AsyncSession, run: t.Run) -> tuple[Report, dict[str, settled.Trials]]:
    """The report, and the trials of the cells read settled (Loaded.newly_settled)."""
    cells = await runreads.cells_of(session, run.id)
    harnesses = {
        h.digest: HarnessFacts.of(h.record)
        for h in (
            await session.execute(select(t.Harness).where(t.Harness.digest.in_({c.harness_digest for c in cells})))
        ).scalars()
    }
    loaded = await load_trials(session, [c.id for c in cells], judge_version=run.judge_version)
    kept = history_kept(run.spec)
    retries = await retries_of(session, run.id)
    results = [
        CellResults(
            cell, loaded.trials[cell.id], harnesses.get(cell.harness_digest, HarnessFacts()), kept, retries[cell.id]
        )
        for cell in cells
    ]
    built = report_of(run, results, await task_tags(session, {x.task_digest for c in results for x in c.trials}))
    if run.kind == "run":
        built.repairs = [repair_record(row) for row in await repair.repairs_of(session, run.id)]
        built.trials_by_attempts = await repair.trials_by_attempts(session, run.id)
        built.unfair = any(r.allowed_changes for r in built.repairs)
    return built, loaded.newly_settled


async def task_tags(session: AsyncSession, digests: set[str]) -> dict[str, list[str]]:
    """Task.tags by task digest, for those that have any (tasks pinned before tags have none)."""
    found: dict[str, list[str]] = {}
    ordered = sorted(digests)
    for start in range(0, len(ordered), 500):  # bounded IN lists, whatever the run's size
        rows = await session.execute(
            select(t.Task.digest, t.Task.record).where(t.Task.digest.in_(ordered[start : start + 500]))
        )
        for digest, record in rows:
            tags = record.get("tags") if isinstance(record, dict) else None
            if isinstance(tags, list) and tags:
                found[digest] = [str(tag) for tag in tags]
    return found


def repair_record(row: t.RunRepair) -> RunRepair:
    """A stored resume or repair as the report shows it (a row edited by hand reads as empty)."""
    changes = row.allowed_changes if isinstance(row.allowed_changes, list) else []
    return RunRepair(
        kind=str(row.kind),
        requested_by=str(row.requested_by or ""),
        create_time=row.create_time,
        reasons=[str(r) for r in row.reasons] if isinstance(row.reasons, list) else [],
        queued=int(row.queued or 0),
        allowed_changes=[
            RunChange(what=str(c.get("what", "")), pinned=str(c.get("pinned", "")), current=str(c.get("current", "")))
            for c in changes
            if isinstance(c, dict)
        ],
    )


async def retries_of(session: AsyncSession, run_id: str) -> dict[str, Counter]:
    """Per cell, the errors of its attempts retried as a later attempt of their trial (an
    infrastructure failure, a worker's hand-back), each counted: one grouped query per run."""
    later = aliased(t.Attempt)
    rows = await session.execute(
        select(t.Trial.cell_id, t.Attempt.error, func.count())
        .join(t.Trial, t.Trial.id == t.Attempt.trial_id)
        .where(
            t.Attempt.run_id == run_id,
            t.Attempt.outcome == vocabulary.INFRA_FAILED,
            exists().where(later.trial_id == t.Attempt.trial_id, later.number > t.Attempt.number),
        )
        .group_by(t.Trial.cell_id, t.Attempt.error)
    )
    found: dict[str, Counter] = defaultdict(Counter)
    for cell_id, error, count in rows:
        found[cell_id][_reason(error)] += count
    return found


def _reason(error: str | None) -> str:
    line = (error or "").strip().splitlines()[0] if (error or "").strip() else "(no error recorded)"
    return line[:MAX_REASON_CHARS]


def retry_reasons(retries: Counter) -> list[RetryReason]:
    """The reasons, the most frequent first (then by name), the rest past MAX_RETRY_REASONS summed."""
    ranked = sorted(retries.items(), key=lambda item: (-item[1], item[0]))
    reasons = [RetryReason(reason=reason, attempts=count) for reason, count in ranked[:MAX_RETRY_REASONS]]
    rest = sum(count for _, count in ranked[MAX_RETRY_REASONS:])
    if rest:
        reasons.append(RetryReason(reason=f"({len(ranked) - MAX_RETRY_REASONS} other reasons)", attempts=rest))
    return reasons


def _spec(run: t.Run) -> dict:
    """The run's spec as stored; {} for one that is not an object (a row edited by hand)."""
    return run.spec if isinstance(run.spec, dict) else {}


def report_of(run: t.Run, cells, tags: dict[str, list[str]] | None = None) -> Report:
    harnesses = list(dict.fromkeys(c.cell.harness_name for c in cells))
    baseline = _spec(run).get("baseline") or (harnesses[0] if harnesses else "")
    if not isinstance(baseline, str):
        baseline = harnesses[0] if harnesses else ""
    by_dataset: dict[str, list[CellResults]] = defaultdict(list)
    for cell in cells:
        by_dataset[cell.cell.dataset_digest].append(cell)
    datasets = [dataset_table(group, baseline, tags or {}) for group in by_dataset.values()]
    complete = all(row.not_finished == 0 for table in datasets for row in table.rows)
    return Report(
        run_id=run.id,
        label=run.label,
        baseline=baseline,
        datasets=datasets,
        complete=complete,
        kind=run.kind,
        max_infra_retries=run.max_infra_retries or 0,
        **(_imported(run) if run.kind == "import" else {}),
    )


def _imported(run: t.Run) -> dict:
    """An import's header: where its results came from, and how they came into this store."""
    return dict(import_format=run.import_format, source=run.source, provenance=runreads.provenance(run))


def dataset_table(group: list[CellResults], baseline: str, tags: dict[str, list[str]]) -> DatasetReport:
    base = next((c for c in group if c.cell.harness_name == baseline), None)
    rows = [row_of(cell, base) for cell in group]
    tasks = {trial.task_digest for cell in group for trial in cell.trials}
    first = group[0].cell
    return DatasetReport(
        dataset_name=first.dataset_name,
        dataset_digest=first.dataset_digest,
        tasks=len(tasks),
        rows=rows,
        tag_rows=tag_rows(group, tags),
    )


def tag_rows(group: list[CellResults], tags: dict[str, list[str]]) -> list[TagRow]:
    """Per task tag and harness: the tasks with the tag, and the pass rate of their graded 0/1
    trials as the report's rows count it (the same trials, the same rule)."""
    found: dict[tuple[str, int], TagRow] = {}
    tasks: dict[str, set[str]] = defaultdict(set)
    for position, cells in enumerate(group):
        for trial in cells.trials:
            for tag in tags.get(trial.task_digest, ()):
                tasks[tag].add(trial.task_digest)
                row = found.setdefault((tag, position), TagRow(tag=tag, harness_name=cells.cell.harness_name))
                if trial.is_graded and trial.is_binary:
                    row.binary_graded += 1
                    row.passed += trial.passed
    for (tag, _), row in found.items():
        row.tasks = len(tasks[tag])
    return [found[key] for key in sorted(found)]


def row_of(cells: CellResults, base: CellResults | None) -> ReportRow:
    row = ReportRow(harness_name=cells.cell.harness_name, model=cells.cell.model, is_baseline=base is cells)
    sums: dict[str, list[float]] = defaultdict(list)
    for trial in cells.trials:
        row.trials += 1
        row.history_mining += trial.mined
        _count_trial(row, sums, trial)
    row.mean_rewards = {name: sum(values) / len(values) for name, values in sums.items()}
    row.retried = sum(cells.retries.values())
    row.retry_reasons = retry_reasons(cells.retries)
    if base is not None and base is not cells:
        row.vs_baseline = paired_summary(base, cells)
    row.flags = flags_of(cells, base, row)
    row.judges = cell_judges(t for t in cells.trials if t.is_graded) + hemra_judges(
        t for t in cells.trials if t.has_result
    )
    return row


def judged_value(judgment: dict) -> float | None:
    """A judgment's value, or None when it has no usable one: an error, no criterion, or (a
    restored export can hold anything a Score parses) a value that is not a finite number."""
    if judgment.get("error") or not judgment.get("criterion"):
        return None
    return _number(judgment.get("value", 0.0))


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def cell_judges(trials) -> list[CellJudge]:
    """Each rubric judge over the trials: a trial's score under a judge is the weighted mean of
    its criteria's values, and exists only when every criterion was judged (else the trial
    is the judge's failure, counted apart)."""
    scores: dict[tuple[str, str], list[tuple[float, bool]]] = defaultdict(list)
    failed: Counter = Counter()
    models: dict[tuple[str, str], set[str]] = defaultdict(set)
    for trial in trials:
        by_judge: dict[tuple[str, str], list[dict]] = defaultdict(list)
        for judgment in (trial.score or {}).get("judgments", ()):
            by_judge[judgment.get("source", ""), judgment.get("judge", "")].append(judgment)
        for key, judgments in by_judge.items():
            values = [judged_value(j) for j in judgments]
            models[key].update(j.get("judgeModel", "") for j, v in zip(judgments, values) if v is not None)
            if None in values:
                failed[key] += 1
                continue
            weights = [max(_number(j.get("weight", 0.0)) or 0.0, 0.0) for j in judgments]
            total = sum(weights)
            mean = sum(w * v for w, v in zip(weights, values)) / total if total > 0 else sum(values) / len(values)
            scores[key].append((mean, all(v >= 1.0 for v in values)))
    summaries = []
    for key in sorted(scores.keys() | failed.keys()):
        judged = scores.get(key, [])
        summaries.append(
            CellJudge(
                source=key[0],
                judge=key[1],
                judge_model=", ".join(sorted(m for m in models[key] if m)),
                judged=len(judged),
                mean=sum(s for s, _ in judged) / len(judged) if judged else 0.0,
                passed=sum(p for _, p in judged),
                failed=failed[key],
            )
        )
    return summaries


def hemra_judges(trials) -> list[CellJudge]:
    """Each HEMRA judge over the trials it judged (its latest judging of each): the mean of its
    score, the trials meeting every criterion, and its failures apart (never a 0)."""
    found: dict[str, CellJudge] = {}
    sums: dict[str, float] = defaultdict(float)
    models: dict[str, set[str]] = defaultdict(set)
    for trial in trials:
        for name, score in trial.judge_scores.items():
            summary = found.setdefault(name, CellJudge(source="hemra", judge=name))
            info = ScoreInfo(score)
            if not info.is_scored or name not in info.rewards:
                summary.failed += 1
                continue
            summary.judged += 1
            sums[name] += info.rewards[name]
            summary.passed += all(j.get("passed", False) for j in score.get("judgments", ()))
            models[name].update(Score.of(score).judge_models)
    for name, summary in found.items():
        summary.mean = sums[name] / summary.judged if summary.judged else 0.0
        summary.judge_model = ", ".join(sorted(models[name]))
    return [found[name] for name in sorted(found)]


def _count_trial(row: ReportRow, sums: dict, trial: TrialResult) -> None:
    if trial.state != "finished":
        row.unfinished += 1
        return
    if trial.outcome == vocabulary.CANCELLED:
        row.cancelled += 1
        return
    if trial.outcome == vocabulary.INFRA_FAILED:
        row.infra_failed += 1
        return
    row.harness_failed += trial.outcome == vocabulary.HARNESS_FAILED
    row.timed_out += trial.outcome == vocabulary.TIMED_OUT
    if not trial.is_graded:
        row.scorer_failed += 1
        return
    row.graded += 1
    row.verifier_faults += bool(trial.score and trial.score.get("fault"))
    if trial.is_binary:
        row.binary_graded += 1
        row.passed += trial.passed
    else:
        row.numeric_graded += 1
        for name, value in trial.rewards.items():
            sums[name].append(value)


def flags_of(cells: CellResults, base: CellResults | None, row: ReportRow) -> list[str]:
    flags = []
    if base is not None and base is not cells and cells.cell.model != base.cell.model:
        flags.append(f"model {cells.cell.model or '(none)'} differs from the baseline's {base.cell.model or '(none)'}")
    if row.not_finished:
        flags.append(f"incomplete: {row.not_finished} of {row.trials} trials did not finish")
    ungraded = row.scorer_failed + row.infra_failed
    if ungraded:
        flags.append(f"{ungraded} trials nothing graded")
    if row.verifier_faults:
        flags.append(
            f"{row.verifier_faults} trials failed on a verifier fault (it timed out, crashed or left no usable "
            "reward on what the agent left); a task that fails so under the oracle too is broken"
        )
    flags += version_flags(cells)
    flags += agent_flags(cells)
    drifting = [d for d, ts in cells.graded_by_task().items() if len({scorer_key(x) for x in ts}) > 1]
    if drifting:
        flags.append(f"scorer changed between trials on {len(drifting)} tasks")
    if row.vs_baseline is not None and row.vs_baseline.not_comparable:
        flags.append(f"scorers differ from the baseline's on {len(row.vs_baseline.not_comparable)} tasks")
    flags += history_flags(cells)
    flags += audits.flags(cells.cell)  # the dataset's leak audit, as recorded when the run was planned
    if row.history_mining:  # attempts whose commands read history beyond HEAD (services/common/mining.py)
        flags.append(
            f"{row.history_mining} of {row.trials} attempts mined repository history (git log --all, "
            "git show <hash>, git reflog, fetching the upstream, ...): see the run's mining list"
        )
    return flags


def history_flags(cells: CellResults) -> list[str]:
    """Tasks the run kept with their repositories' history (allow_history): not stripped."""
    kept = {x.task_digest for x in cells.trials if x.task_name in cells.history_kept}
    return [f"history kept on {len(kept)} tasks: the agent could read the repository's future"] if kept else []


def version_flags(cells: CellResults) -> list[str]:
    """An unpinned agent version, or attempts that ran another version than the pinned one."""
    kind = cells.harness.kind
    pinned = cells.harness.agent_version
    observed = sorted({x.agent_version for x in cells.trials if x.agent_version})
    if kind in ("builtin", "import"):
        return []
    if not pinned:
        return [f"agent version not pinned{' (ran ' + ', '.join(observed) + ')' if observed else ''}"]
    drifted = [v for v in observed if v != pinned]
    return [f"agent version drifted: pinned {pinned}, ran {', '.join(drifted)}"] if drifted else []


def agent_flags(cells: CellResults) -> list[str]:
    """Attempts that say they ran another agent than the harness pins: another agent's name,
    or (for a harness that pins a version) the pinned agent at another version than the one
    its harness file pins, as the agent itself reported it (a cli agent's `--version` or
    stream, a harness's Finish). "Agent" here is the agent as pinned: name and version."""
    pinned = cells.harness.agent
    if not pinned:
        return []
    version = cells.harness.agent_version if cells.harness.kind not in ("builtin", "import") else ""
    pinned_as = f"{pinned} {version}" if version else pinned
    ran = [_ran_as(x, pinned, version) for x in cells.trials]
    # A trial that named no version is judged by its name alone.
    others = sorted({r for r in ran if r and r not in (pinned_as, pinned)})
    if not others:
        return []
    count = sum(1 for r in ran if r in others)
    return [
        f"agent other than the one pinned: pinned {pinned_as}, ran {', '.join(others)} "
        f"in {count} of {len(cells.trials)} trials"
    ]


def _ran_as(trial: TrialResult, pinned: str, version: str) -> str:
    """The agent a trial says it ran, as agent_flags compares it ("" when it said nothing)."""
    name = trial.agent_name or (pinned if trial.agent_version else "")
    if not name:
        return ""
    return f"{name} {trial.agent_version}" if version and trial.agent_version else name


def scorer_key(trial: TrialResult) -> tuple[str, tuple[str, ...], str]:
    """What must be equal for two graded trials to pair: scorer fingerprint, reward names, judge model."""
    return trial.key


def paired_summary(base: CellResults, other: CellResults) -> PairedSummary:
    """Pair tasks graded on both sides with one scorer fingerprint and the same reward names."""
    a, b = base.graded_by_task(), other.graded_by_task()
    summary = PairedSummary()
    sums_a: dict[str, list[float]] = defaultdict(list)
    sums_b: dict[str, list[float]] = defaultdict(list)
    for digest in sorted(a.keys() & b.keys()):
        keys = {scorer_key(x) for x in a[digest] + b[digest]}
        if len(keys) > 1:
            summary.not_comparable.append(f"{a[digest][0].task_name}: {why_not(keys)}")
            continue
        summary.paired_tasks += 1
        if all(x.is_binary for x in a[digest] + b[digest]):
            summary.binary_tasks += 1
            summary.baseline_passed += _pass_rate(a[digest])
            summary.passed += _pass_rate(b[digest])
        else:
            summary.numeric_tasks += 1
            _add_means(sums_a, a[digest])
            _add_means(sums_b, b[digest])
    summary.baseline_mean_rewards = {k: sum(v) / len(v) for k, v in sums_a.items()}
    summary.mean_rewards = {k: sum(v) / len(v) for k, v in sums_b.items()}
    if summary.binary_tasks:
        # The one home of "vs baseline" on 0/1 tasks: the CLI and the dashboard print this.
        summary.delta_points = 100 * (summary.passed - summary.baseline_passed) / summary.binary_tasks
    return summary


def why_not(keys: set) -> str:
    """Why tasks graded under these scorer keys cannot pair, in the words the docs use."""
    judges = {k[2] for k in keys}
    if len(judges) > 1:
        return "judged by different judge models (" + " vs ".join(sorted(j or "none" for j in judges)) + ")"
    names = {k[1] for k in keys}
    if len(names) > 1:
        return "reward names differ (" + " vs ".join(",".join(n) for n in sorted(names)) + ")"
    return "scorer fingerprints differ (the verifier or the task's tests changed)"


def _pass_rate(trials: list[TrialResult]) -> float:
    return sum(x.passed for x in trials) / len(trials)


def _add_means(sums: dict[str, list[float]], trials: list[TrialResult]) -> None:
    """One value per task and reward name: the mean over that task's trials."""
    for name in trials[0].rewards:
        sums[name].append(sum(x.rewards[name] for x in trials) / len(trials))
