"""`hemra compare a b`: pair two sides task by task and report b - a.

Tasks pair only when every trial on both sides was graded by one scorer
fingerprint, with the same reward names and the same judge model; anything
else is listed as not comparable, with the reason. Single 0/1 rewards pair on
pass rates, other rewards on mean reward, summed apart. Infrastructure
failures, scorer failures and cancelled trials are counted apart.
"""

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from hemra.services.common.errors import InvalidArgument, NotFound
from hemra.services.domain import vocabulary
from hemra.services.domain.records import Score, TaskIdentity
from hemra.services.store import runreads
from hemra.services.store import tables as t
from hemra.services.store.outputs import (
    Comparison,
    CriterionDelta,
    Interval,
    McNemar,
    NotComparable,
    PairedTask,
    RewardDelta,
    SideSummary,
)
from hemra.services.store.report import TrialResult, judged_value, load_trials, why_not

#: Comparison's lists with an entry per task: what CompareSidesRequest.list_limit cuts.
PER_TASK_LISTS = ("tasks", "flipped_to_pass", "flipped_to_fail", "not_comparable", "criteria_not_comparable")
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261202
LEVEL = 0.95


@dataclass
class Side:
    ref: str
    run: t.Run
    cells: list[t.Cell]
    #: Runs carrying the label the side named its run by, when more than one (the newest is used).
    label_matches: int = 0
    #: task digest -> the latest attempt of each trial on this side
    trials: dict[str, list[TrialResult]] = field(default_factory=lambda: defaultdict(list))
    _graded: dict[str, list[TrialResult]] | None = field(default=None, init=False, repr=False)

    def graded(self) -> dict[str, list[TrialResult]]:
        """Task digest -> its graded trials, sorted out once (judge_view sorts them again)."""
        if self._graded is None:
            self._graded = {digest: [x for x in ts if x.is_graded] for digest, ts in self.trials.items()}
        return self._graded

    @property
    def label(self) -> str:
        names = ", ".join(f"{c.dataset_name}/{c.harness_name}" for c in self.cells)
        return f"{self.run.label} ({self.run.id}): {names}"


async def resolve_side(session: AsyncSession, ref: str, scores: dict | None = None, load=None) -> Side:
    """An import (ID or label) or a run cell: run, run/harness or run/dataset/harness.
    `load(session, run, cells, scores)`: each cell's trials (default: report.load_trials; the
    store keeps settled cells' trials)."""
    run, rest = await _find_prefix(session, ref)
    runreads.refuse_loose(run, "a compare")
    matches = await runreads.label_matches(session, ref.removesuffix(rest).removesuffix("/") if rest else ref, run)
    cells = await runreads.cells_of(session, run.id)
    if rest:
        chosen = [c for c in cells if rest in (c.harness_name, f"{c.dataset_name}/{c.harness_name}")]
        if not chosen:
            known = ", ".join(sorted({f"{c.dataset_name}/{c.harness_name}" for c in cells}))
            raise NotFound(
                f"{runreads.shown(ref, quote=False)}: {run.label} has no cell {runreads.shown(rest)} (cells: {known})"
            )
        cells = chosen
    harnesses = sorted({c.harness_name for c in cells})
    if len(harnesses) > 1:
        raise InvalidArgument(
            f"{runreads.shown(ref, quote=False)}: {run.label} holds several harnesses ({', '.join(harnesses)}); "
            f"name one, e.g. {run.label}/{harnesses[0]}"
        )
    side = Side(ref, run, cells, label_matches=matches)
    by_cell = await (load or _load_cells)(session, run, cells, scores)
    for cell in cells:
        for trial in by_cell[cell.id]:
            side.trials[trial.task_digest].append(trial)
    for trials in side.trials.values():
        trials.sort(key=lambda x: x.repetition)
    return side


async def _load_cells(session: AsyncSession, run: t.Run, cells: list[t.Cell], scores: dict | None) -> dict[str, list]:
    return (await load_trials(session, [c.id for c in cells], scores, run.judge_version)).trials


async def _find_prefix(session: AsyncSession, ref: str) -> tuple[t.Run, str]:
    """The longest leading part of `ref` that names a run or import, and the rest."""
    parts = ref.split("/")
    # The longest few only: a label holds a slash or two, not thousands (each cut is a query).
    for cut in range(len(parts), max(len(parts) - 16, 0), -1):
        try:
            return await runreads.find_run(session, "/".join(parts[:cut])), "/".join(parts[cut:])
        except NotFound:
            continue
    raise NotFound(f"{runreads.shown(ref, quote=False)}: no run or import by that ID or label")


def judge_view(side: Side, judge: str) -> None:
    """Each trial as the HEMRA judge `judge` scored it (its latest judging), in place of the
    task's own score; trials it did not judge drop out. A trial pairs only with one judged
    under the same fingerprint by the same served models (ScoreInfo.key)."""
    for digest, trials in side.trials.items():
        side.trials[digest] = [y for y in (x.judged_by(judge) for x in trials) if y is not None]
    side._graded = None


def compare(
    a: Side, b: Side, judge: str = "", tasks: dict[str, "TaskIdentity"] | None = None, list_limit: int = 0
) -> Comparison:
    """b - a, task by task. `tasks`: what the store knows of the tasks on one side only
    (unpaired_tasks), to pair them on Harbor's digest and to tell a changed definition from a
    task not run. `list_limit` (0: none) cuts the per-task lists, after every figure was
    computed from them whole."""
    if judge:
        judge_view(a, judge)
        judge_view(b, judge)
        if not any(x for ts in a.trials.values() for x in ts) and not any(x for ts in b.trials.values() for x in ts):
            raise InvalidArgument(f"no trial on either side was scored by judge {judge!r}")
    pair_by_harbor_digest(a, b, tasks or {})
    changed = changed_definitions(a, b)
    if not a.trials.keys() & b.trials.keys():
        differ = (
            f"; {len(changed)} task(s) of the same name have other digests, e.g. "
            f"{_name(a, b, changed[0][0])} (a {_short(changed[0][0])}, b {_short(changed[0][1])})"
            if changed
            else ""
        )
        sides = f"{runreads.shown(a.ref, quote=False)} and {runreads.shown(b.ref, quote=False)}"
        raise InvalidArgument(f"{sides} have no task in common{differ}")
    summaries = side_summary(a), side_summary(b)
    result = Comparison(a=summaries[0], b=summaries[1], flags=flags_of(a, b, summaries))
    for digest_a, digest_b in changed:
        unknown = any(_unknown((tasks or {}).get(d)) for d in (digest_a, digest_b))
        what = "task definitions cannot be matched" if unknown else "task definitions differ"
        result.not_comparable.append(
            NotComparable(
                task_name=_name(a, b, digest_a),
                reason=f"{what} (a {_short(digest_a)}, b {_short(digest_b)})",
                a_task_digest=digest_a,
                b_task_digest=digest_b,
            )
        )
    skipped = {d for pair in changed for d in pair}
    binary, numeric = [], []
    for digest in sorted(a.trials.keys() | b.trials.keys(), key=lambda d: _name(a, b, d)):
        if digest not in skipped:
            _pair_task(digest, a, b, result, binary, numeric)
    binary_summary(result, binary)
    result.reward_deltas = numeric_summary(numeric)
    result.paired_tasks = len(result.tasks)
    result.criteria, result.criteria_not_comparable = criteria_summary(a, b, result.tasks)
    return cut_lists(result, list_limit)


def cut_lists(result: Comparison, limit: int) -> Comparison:
    """Record each per-task list's length, then keep its first `limit` entries (0 keeps all):
    a caller that prints twenty names need not receive (or convert) thousands of rows."""
    result.list_lengths = {name: len(getattr(result, name)) for name in PER_TASK_LISTS}
    if limit:
        for name in PER_TASK_LISTS:
            setattr(result, name, getattr(result, name)[:limit])
    return result


async def unpaired_tasks(session: AsyncSession, a: Side, b: Side) -> dict[str, TaskIdentity]:
    """The identities of the tasks on one side only (few, unless the sides share no dataset)."""
    digests = sorted(a.trials.keys() ^ b.trials.keys())
    found: dict[str, TaskIdentity] = {}
    for start in range(0, len(digests), 500):
        query = select(t.Task.digest, t.Task.record).where(t.Task.digest.in_(digests[start : start + 500]))
        for digest, record in (await session.execute(query)).all():
            found[digest] = TaskIdentity.of(record)
    return found


def pair_by_harbor_digest(a: Side, b: Side, tasks: dict[str, TaskIdentity]) -> None:
    """A task imported without its folder is known by Harbor's content digest alone (its job's
    lock.json); when the other side ran a folder of that digest, it is that task. Its trials move
    under the other side's task digest, graded by that side's scorer: Harbor's digest covers the
    task's tests, so the verifier is the same one."""
    only_a = a.trials.keys() - b.trials.keys()
    by_harbor = {tasks[d].harbor_digest: d for d in only_a if d in tasks and tasks[d].harbor_digest}
    for digest_b in sorted(b.trials.keys() - a.trials.keys()):
        identity_b = tasks.get(digest_b)
        digest_a = by_harbor.get(identity_b.harbor_digest) if identity_b and identity_b.harbor_digest else None
        if digest_a is None or tasks[digest_a].has_files == identity_b.has_files:
            continue  # two pinned folders of one Harbor digest differ in files Harbor leaves out
        if identity_b.has_files:
            _adopt(a, digest_a, digest_b, b)
        else:
            _adopt(b, digest_b, digest_a, a)


def _adopt(side: Side, old: str, new: str, other: Side) -> None:
    keys = {x.key for x in other.graded().get(new, [])}
    key = next(iter(keys)) if len(keys) == 1 else None
    moved = []
    for trial in side.trials.pop(old):
        copy = trial.of(new, trial.task_name, trial.repetition)
        if key is not None and trial.is_graded and trial.key[1:] == key[1:]:
            copy.fingerprint, copy.key = key[0], key
        moved.append(copy)
    side.trials[new] = moved
    side._graded = None


def changed_definitions(a: Side, b: Side) -> list[tuple[str, str]]:
    """(digest on a, digest on b) of each task name run on both sides under one digest each,
    a different one: its definition changed between them (not a task one side did not run)."""

    def names(side: Side, digests) -> dict[str, list[str]]:
        found = defaultdict(list)
        for digest in digests:
            found[side.trials[digest][0].task_name].append(digest) if side.trials[digest] else None
        return found

    on_a = names(a, a.trials.keys() - b.trials.keys())
    on_b = names(b, b.trials.keys() - a.trials.keys())
    return [
        (on_a[name][0], on_b[name][0])
        for name in sorted(on_a.keys() & on_b.keys())
        if len(on_a[name]) == 1 and len(on_b[name]) == 1
    ]


def _unknown(identity: "TaskIdentity | None") -> bool:
    """An import's task known by neither its files nor Harbor's digest (a job without lock.json,
    imported without --tasks): whether it is the other side's task cannot be told."""
    return identity is not None and not identity.has_files and not identity.harbor_digest


def _short(digest: str) -> str:
    return digest[:19] if digest.startswith("sha256:") else digest[:12]


def _name(a: Side, b: Side, digest: str) -> str:
    trials = a.trials.get(digest) or b.trials.get(digest)
    return trials[0].task_name


def _pair_task(digest: str, a: Side, b: Side, result: Comparison, binary: list, numeric: list) -> None:
    name = _name(a, b, digest)
    graded_a = a.graded().get(digest, [])
    graded_b = b.graded().get(digest, [])
    if not graded_a or not graded_b:
        side = "a" if not graded_a else "b"
        why = "not run" if digest not in (a.trials if side == "a" else b.trials) else "nothing graded"
        result.not_comparable.append(NotComparable(task_name=name, reason=f"{why} on side {side}"))
        return
    keys = {x.key for x in graded_a + graded_b}
    if len(keys) > 1:
        result.not_comparable.append(NotComparable(task_name=name, reason=why_not(keys)))
        return
    task = PairedTask(
        task_name=name,
        task_digest=digest,
        binary=all(x.is_binary for x in graded_a + graded_b),
        a_trials=len(graded_a),
        b_trials=len(graded_b),
    )
    if task.binary:
        pa, pb = _passes(graded_a), _passes(graded_b)
        task.a_pass_rate, task.b_pass_rate = sum(pa) / len(pa), sum(pb) / len(pb)
        binary.append((name, pa, pb, _paired_repetitions(graded_a, graded_b)))
        if task.a_pass_rate == 0 and task.b_pass_rate == 1:
            result.flipped_to_pass.append(name)
        elif task.a_pass_rate == 1 and task.b_pass_rate == 0:
            result.flipped_to_fail.append(name)
    else:
        task.a_means, task.b_means = _means(graded_a), _means(graded_b)
        numeric.append(task)
    result.tasks.append(task)


def _paired_repetitions(a: list[TrialResult], b: list[TrialResult]) -> list[tuple[int, int]]:
    """(a passed, b passed) for each repetition both sides graded."""
    by_rep_b = {x.repetition: x.passed for x in b}
    return [(x.passed, by_rep_b[x.repetition]) for x in a if x.repetition in by_rep_b]


def _passes(trials: list[TrialResult]) -> list[int]:
    return [x.passed for x in trials]


def _means(trials: list[TrialResult]) -> dict[str, float]:
    return {name: sum(x.rewards[name] for x in trials) / len(trials) for name in sorted(trials[0].rewards)}


def side_summary(side: Side) -> SideSummary:
    models = sorted({c.model for c in side.cells})
    summary = SideSummary(
        ref=side.ref,
        label=side.label,
        run_id=side.run.id,
        kind=side.run.kind,
        model=", ".join(models),
        label_matches=side.label_matches,
    )
    summary.trials = sum(map(len, side.trials.values()))
    summary.graded = sum(map(len, side.graded().values()))
    for trials in side.trials.values():
        for trial in trials:
            if trial.is_graded:
                continue
            if trial.state != "finished":
                summary.unfinished += 1
            elif trial.outcome == vocabulary.CANCELLED:
                summary.cancelled += 1
            elif trial.outcome == vocabulary.INFRA_FAILED:
                summary.infra_failed += 1
            else:
                summary.scorer_failed += 1
    summary.pass_at_k, summary.pass_hat_k = pass_at_k(side)
    return summary


def pass_at_k(side: Side) -> tuple[dict[int, float], dict[int, float]]:
    """pass@k (some of k tries pass) and pass^k (all k pass), unbiased estimates averaged over
    the side's binary tasks, for k from 1 to the fewest graded trials of a task."""
    tasks = Counter((len(ts), sum(_passes(ts))) for ts in side.graded().values() if ts and all(x.is_binary for x in ts))
    if not tasks:
        return {}, {}
    # Tasks share a few (trials, passes) pairs: each estimate is computed once per pair.
    top, total = min(n for n, _ in tasks), tasks.total()
    at, hat = {}, {}
    for k in range(1, top + 1):
        at[k] = sum(m * (1 - math.comb(n - c, k) / math.comb(n, k)) for (n, c), m in tasks.items()) / total
        hat[k] = sum(m * math.comb(c, k) / math.comb(n, k) for (n, c), m in tasks.items()) / total
    return at, hat


def binary_summary(result: Comparison, binary: list[tuple[str, list[int], list[int], list[tuple[int, int]]]]) -> None:
    """The pass-rate difference over the binary tasks, its interval and McNemar's test on the
    repetitions that flipped, into `result`."""
    result.binary_tasks = len(binary)
    if not binary:
        return
    rates_a = np.array([sum(pa) / len(pa) for _, pa, _, _ in binary])
    rates_b = np.array([sum(pb) / len(pb) for _, _, pb, _ in binary])
    diffs = rates_b - rates_a
    pairs = [pair for *_, paired in binary for pair in paired]
    flips_up = sum(1 for x, y in pairs if (x, y) == (0, 1))
    flips_down = sum(1 for x, y in pairs if (x, y) == (1, 0))
    result.a_passed, result.b_passed = float(rates_a.sum()), float(rates_b.sum())
    result.delta, result.delta_interval = float(diffs.mean()), bootstrap(diffs)
    result.mcnemar = McNemar(
        a_fail_b_pass=flips_up, a_pass_b_fail=flips_down, p_value=mcnemar_exact(flips_up, flips_down)
    )


def numeric_summary(numeric: list[PairedTask]) -> list[RewardDelta]:
    by_name: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for task in numeric:
        for name, value in task.a_means.items():
            if name in task.b_means:
                by_name[name].append((value, task.b_means[name]))
    deltas = []
    for name, pairs in sorted(by_name.items()):
        a = np.array([p[0] for p in pairs])
        b = np.array([p[1] for p in pairs])
        deltas.append(
            RewardDelta(
                name=name,
                tasks=len(pairs),
                a_mean=float(a.mean()),
                b_mean=float(b.mean()),
                delta=float((b - a).mean()),
                interval=bootstrap(b - a),
            )
        )
    return deltas


def criteria_summary(a: Side, b: Side, paired: list[PairedTask]) -> tuple[list[CriterionDelta], list[NotComparable]]:
    """Every rubric criterion judged on both sides of a paired task (one scorer, so one
    rubric), paired on each task's mean value. Criteria judged by different models on the
    two sides do not pair: a different judge is a different measurement."""
    values: dict[tuple, list[tuple[float, float, int, int]]] = defaultdict(list)
    models: dict[tuple, str] = {}
    not_comparable: list[NotComparable] = []
    for task in paired:
        judged_a = [x for x in a.graded()[task.task_digest] if x.judged]
        judged_b = [x for x in b.graded()[task.task_digest] if x.judged]
        if not judged_a or not judged_b:  # most tasks: no criterion to pair
            continue
        side_a, side_b = _judged(judged_a), _judged(judged_b)
        for key in sorted(side_a.keys() & side_b.keys()):
            (values_a, by_a), (values_b, by_b) = side_a[key], side_b[key]
            models_a, models_b = ({m for m, _ in by} for by in (by_a, by_b))
            if models_a != models_b:
                a_models, b_models = (", ".join(sorted(m)) or "no model" for m in (models_a, models_b))
                reason = f"{key[1]}/{key[2]}: judged by {a_models} on side a, {b_models} on side b"
                not_comparable.append(NotComparable(task_name=task.task_name, reason=reason))
                continue
            if by_a != by_b:
                reason = f"{key[1]}/{key[2]}: judged by different definitions of the judge (fingerprints differ)"
                not_comparable.append(NotComparable(task_name=task.task_name, reason=reason))
                continue
            models[key] = ", ".join(sorted(models_a))
            values[key].append((_mean(values_a), _mean(values_b), _passed(values_a), _passed(values_b)))
    deltas = []
    for key, pairs in sorted(values.items()):
        va, vb = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
        deltas.append(
            CriterionDelta(
                judge=key[1],
                source=key[0],
                criterion=key[2],
                judge_model=models[key],
                tasks=len(pairs),
                a_mean=float(va.mean()),
                b_mean=float(vb.mean()),
                delta=float((vb - va).mean()),
                interval=bootstrap(vb - va),
                a_pass_rate=float(np.mean([p[2] for p in pairs])),
                b_pass_rate=float(np.mean([p[3] for p in pairs])),
            )
        )
    return deltas, not_comparable


def _judged(trials) -> dict[tuple, tuple[list[float], set[tuple[str, str]]]]:
    """(source, judge, criterion) -> (its values over the trials, the (model, fingerprint) pairs
    that judged it), for criteria judged without error: the task's own rubric and each HEMRA
    judge's latest judging."""
    found: dict[tuple, tuple[list[float], set[tuple[str, str]]]] = {}
    for trial in trials:
        for score in [trial.score or {}, *trial.judge_scores.values()]:
            for judgment in score.get("judgments", []):
                value = judged_value(judgment)
                if value is None:
                    continue
                key = (judgment.get("source", ""), judgment.get("judge", ""), judgment["criterion"])
                values, judged_by = found.setdefault(key, ([], set()))
                values.append(value)
                judged_by.add((judgment.get("judgeModel", ""), Score.of(score).scorer_fingerprint))
    return found


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _passed(values: list[float]) -> float:
    return sum(v >= 1.0 for v in values) / len(values)


def bootstrap(diffs: np.ndarray) -> Interval:
    """A seeded percentile bootstrap of the mean paired difference, resampling tasks.

    Resampling n tasks with replacement is a multinomial draw over the distinct
    difference values, so the cost grows with the distinct values, not the tasks.
    """
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    values, counts = np.unique(diffs, return_counts=True)
    n = len(diffs)
    draws = rng.multinomial(n, counts / n, size=BOOTSTRAP_RESAMPLES)
    means = draws @ values / n
    low, high = np.quantile(means, [(1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2])
    return Interval(low=float(low), high=float(high), level=LEVEL, resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar test: P(X <= min(b, c)) * 2 for X ~ Binomial(b + c, 1/2), capped at 1."""
    n = b + c
    if n == 0:
        return 1.0
    m = min(b, c)
    log_terms = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2) for i in range(m + 1)
    ]
    top = max(log_terms)
    tail = math.exp(top) * sum(math.exp(x - top) for x in log_terms)
    return min(1.0, 2 * tail)


def flags_of(a: Side, b: Side, summaries: tuple[SideSummary, SideSummary]) -> list[str]:
    flags = []
    models_a, models_b = {c.model for c in a.cells}, {c.model for c in b.cells}
    if models_a != models_b:
        flags.append(
            f"models differ: a uses {', '.join(sorted(m or '(none)' for m in models_a))}, "
            f"b uses {', '.join(sorted(m or '(none)' for m in models_b))}"
        )
    for name, summary in zip("ab", summaries):
        unfinished = summary.unfinished + summary.cancelled + summary.infra_failed
        if unfinished:
            flags.append(f"side {name} is incomplete: {unfinished} trials did not finish")
    return flags
