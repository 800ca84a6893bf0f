"""What a store holds besides runs: its datasets and their tasks, harnesses, scorers and
judges, each with how it was used. Typed records out (hemra.services.store.outputs).

Datasets, harnesses, scorers and judges are few (tens to hundreds in a store), so
they come back whole; tasks are paged by name."""

import json
from collections import defaultdict
from typing import NamedTuple

from sqlalchemy import Text, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from hemra.services.common.errors import NotFound
from hemra.services.domain.records import HarnessFacts, Score
from hemra.services.store import attemptreads, pagetokens, runreads, usage
from hemra.services.store import tables as t
from hemra.services.store.outputs import (
    AttemptUsage,
    DatasetSummary,
    HarnessSummary,
    JudgeSummary,
    ScoredTask,
    ScorerSummary,
    TaskPage,
    TaskSummary,
)
from hemra.services.store.runreads import shown as _shown

#: Tasks a scorer lists by name (the count covers them all).
SCORER_TASKS = 200
JUDGES_NOTE = (
    "No HEMRA judge has scored an attempt in this store, and no run names one: runs name judges "
    "with [[judge]] or --judge, and hemra judge judges a finished run (docs/judges.md)."
)


def _score_field(name: str):
    return t.Attempt.score[name].as_string()


def _grouped(rows, *aggregates, skip: tuple[str, ...] = ()):
    """Group a subquery by its columns (but `skip`): PostgreSQL cannot group by a JSON
    expression repeated with its own bound key, so the expressions are named first."""
    keys = [c for c in rows.c if c.name not in skip]
    return select(*keys, *aggregates).group_by(*keys)


async def find_dataset(session: AsyncSession, ref: str) -> t.Dataset:
    """A dataset by digest, by name@digest-prefix, or by name (the one used last)."""
    ref = ref.removeprefix("datasets/")
    if ref.startswith("sha256:"):
        row = await session.get(t.Dataset, ref)
        if row is None:
            raise NotFound(f"no dataset with digest {ref}")
        return row
    name, _, prefix = ref.partition("@")
    query = select(t.Dataset).where(t.Dataset.dataset_name == name)
    rows = list((await session.execute(query)).scalars())
    if prefix:
        rows = [r for r in rows if r.digest.removeprefix("sha256:").startswith(prefix.removeprefix("sha256:"))]
    if not rows:
        raise NotFound(f"no dataset {_shown(ref)}")
    if len(rows) > 1:
        used = await _last_use(session, t.Cell.dataset_digest, [r.digest for r in rows])
        rows.sort(key=lambda r: (used.get(r.digest, 0.0), r.digest), reverse=True)
    return rows[0]


async def _last_use(session: AsyncSession, column, digests: list[str]) -> dict[str, float]:
    query = (
        select(column, func.max(t.Run.create_time))
        .join(t.Run, t.Cell.run_id == t.Run.id)
        .where(column.in_(digests))
        .group_by(column)
    )
    return dict((await session.execute(query)).all())


async def _uses(session: AsyncSession, column) -> dict[str, dict]:
    """Per digest in `column` (a Cell column): runs, imports, the other side's names and last use."""
    query = select(column, t.Run.id, t.Run.kind, t.Run.create_time, t.Cell.dataset_name, t.Cell.harness_name).join(
        t.Run, t.Cell.run_id == t.Run.id
    )
    uses: dict[str, dict] = defaultdict(
        lambda: {"runs": set(), "imports": set(), "datasets": set(), "harnesses": set(), "last": 0.0}
    )
    for digest, run_id, kind, created, dataset_name, harness_name in (await session.execute(query)).all():
        use = uses[digest]
        use["imports" if kind == "import" else "runs"].add(run_id)
        use["datasets"].add(dataset_name)
        use["harnesses"].add(harness_name)
        use["last"] = max(use["last"], created)
    return uses


class Fact(NamedTuple):
    """Attempts of one run counted by what the catalog reports (one aggregate row)."""

    run_id: str
    task_digest: str
    task_name: str
    dataset_digest: str
    dataset_name: str
    harness_name: str
    state: str
    verdict: str | None
    fingerprint: str | None
    scorer: str | None
    judge_model: str | None
    score_state: str | None
    count: int
    first_attempt: str


async def attempt_facts(session: AsyncSession, run_ids: list[str]) -> dict[str, list[Fact]]:
    """Per run, its attempts counted by task, dataset, harness, state, verdict and scorer, in
    one aggregate. What tasks, scorers and judges report is summed from these, so a
    store can keep the facts of settled runs and count only the runs still going."""
    facts: dict[str, list[Fact]] = {run_id: [] for run_id in run_ids}
    if not run_ids:
        return facts
    rows = (
        select(
            t.Attempt.run_id,
            t.Trial.task_digest,
            t.Trial.task_name,
            t.Cell.dataset_digest,
            t.Cell.dataset_name,
            t.Cell.harness_name,
            t.Attempt.state,
            t.Attempt.verdict,
            _score_field("scorerFingerprint").label("fingerprint"),
            _score_field("scorer").label("scorer"),
            _score_field("judgeModel").label("judge_model"),
            _score_field("state").label("score_state"),
            t.Attempt.id,
        )
        .join(t.Trial, t.Attempt.trial_id == t.Trial.id)
        .join(t.Cell, t.Trial.cell_id == t.Cell.id)
        .where(t.Attempt.run_id.in_(run_ids))
    ).subquery()
    for row in (await session.execute(_grouped(rows, func.count(), func.min(rows.c.id), skip=("id",)))).all():
        facts[row[0]].append(Fact(*row))
    return facts


async def all_facts(session: AsyncSession, facts_of=None) -> list[Fact]:
    """Facts of every run; `facts_of(run_ids)` may answer from a cache (default: attempt_facts)."""
    run_ids = list((await session.execute(select(t.Run.id))).scalars())
    by_run = await (facts_of or (lambda ids: attempt_facts(session, ids)))(run_ids)
    return [fact for run_id in run_ids for fact in by_run[run_id]]


async def list_datasets(session: AsyncSession) -> list[DatasetSummary]:
    uses = await _uses(session, t.Cell.dataset_digest)
    query = select(t.Dataset.digest, t.Dataset.dataset_name, t.Dataset.source, t.Dataset.task_digests)
    datasets = []
    for digest, name, source, task_digests in (await session.execute(query)).all():
        use = uses.get(digest, {"runs": (), "imports": (), "harnesses": (), "last": 0.0})
        datasets.append(
            DatasetSummary(
                name=f"datasets/{digest}",
                digest=digest,
                dataset_name=name,
                source=source,
                tasks=len(task_digests or []),
                runs=len(use["runs"]),
                imports=len(use["imports"]),
                harness_names=sorted(use["harnesses"]),
                last_used_time=use["last"] or None,
            )
        )
    datasets.sort(key=lambda d: (-(d.last_used_time or 0.0), d.dataset_name, d.digest))
    return datasets


async def list_tasks(
    session: AsyncSession, dataset_ref: str, page_size: int, page_token: str, facts_of=None
) -> TaskPage:
    """A dataset's tasks by (name, digest), keyset-paged, with attempt verdict counts."""
    page_size = page_size if 0 < page_size <= 1000 else 200
    dataset = await find_dataset(session, dataset_ref)
    query = (
        select(t.Task.digest, t.Task.task_name, t.Task.record["origin"].as_string())
        .where(t.Task.digest.in_(dataset.task_digests or []))
        .order_by(t.Task.task_name, t.Task.digest)
        .limit(page_size + 1)
    )
    if page_token:
        name, digest = pagetokens.after_task(page_token)
        query = query.where((t.Task.task_name > name) | ((t.Task.task_name == name) & (t.Task.digest > digest)))
    rows = (await session.execute(query)).all()
    more = len(rows) > page_size
    rows = rows[:page_size]
    tasks = {digest: TaskSummary(task_name=name, digest=digest, origin=origin or "") for digest, name, origin in rows}
    fingerprints, harnesses = defaultdict(set), defaultdict(set)
    for fact in await all_facts(session, facts_of):
        task = tasks.get(fact.task_digest)
        if task is None or fact.dataset_digest != dataset.digest or fact.state != "finished":
            continue
        task.attempts += fact.count
        if fact.verdict in ("passed", "failed", "errored"):
            setattr(task, fact.verdict, getattr(task, fact.verdict) + fact.count)
        harnesses[fact.task_digest].add(fact.harness_name)
        if fact.fingerprint:
            fingerprints[fact.task_digest].add(fact.fingerprint)
    for digest, task in tasks.items():
        task.scorer_fingerprints = sorted(fingerprints[digest])
        task.harness_names = sorted(harnesses[digest])
    token = pagetokens.tasks_token(rows[-1][1], rows[-1][0]) if more else ""
    return TaskPage(
        dataset_name=dataset.dataset_name,
        dataset_digest=dataset.digest,
        tasks=list(tasks.values()),
        next_page_token=token,
    )


async def list_harnesses(session: AsyncSession) -> list[HarnessSummary]:
    uses = await _uses(session, t.Cell.harness_digest)
    # Trials, not attempts: the trials table is narrow, so counting it stays cheap on big stores.
    counts = dict(
        (
            await session.execute(
                select(t.Cell.harness_digest, func.count())
                .select_from(t.Trial)
                .join(t.Cell, t.Trial.cell_id == t.Cell.id)
                .group_by(t.Cell.harness_digest)
            )
        ).all()
    )
    harnesses = []
    for digest, name, record in (
        await session.execute(select(t.Harness.digest, t.Harness.harness_name, t.Harness.record))
    ).all():
        facts = HarnessFacts.of(record)
        use = uses.get(digest, {"runs": (), "imports": (), "datasets": (), "last": 0.0})
        harnesses.append(
            HarnessSummary(
                name=f"harnesses/{digest}",
                digest=digest,
                harness_name=name,
                kind=facts.kind,
                agent=facts.agent,
                agent_version=facts.agent_version,
                model=facts.model,
                env=list(facts.env),
                runs=len(use["runs"]),
                imports=len(use["imports"]),
                trials=counts.get(digest, 0),
                dataset_names=sorted(use["datasets"]),
                last_used_time=use["last"] or None,
            )
        )
    harnesses.sort(key=lambda h: (-(h.last_used_time or 0.0), h.harness_name, h.digest))
    return harnesses


async def list_scorers(session: AsyncSession, facts_of=None) -> list[ScorerSummary]:
    """Scorer fingerprints with the tasks they graded (summed from attempt facts)."""
    scorers: dict[tuple, ScorerSummary] = {}
    tasks: dict[tuple, dict[str, ScoredTask]] = defaultdict(dict)
    datasets: dict[tuple, set[str]] = defaultdict(set)
    sample: dict[tuple, str] = {}
    for fact in await all_facts(session, facts_of):
        if fact.score_state != "SCORE_STATE_SCORED":
            continue
        key = (fact.fingerprint or "", fact.scorer or "", fact.judge_model or "")
        scorer = scorers.get(key)
        if scorer is None:
            scorer = scorers[key] = ScorerSummary(fingerprint=key[0], scorer=key[1], judge_model=key[2])
        scorer.attempts += fact.count
        datasets[key].add(fact.dataset_name)
        task = tasks[key].get(fact.task_digest)
        if task is None:
            task = tasks[key][fact.task_digest] = ScoredTask(task_name=fact.task_name, task_digest=fact.task_digest)
        task.attempts += fact.count
        sample[key] = min(sample.get(key, fact.first_attempt), fact.first_attempt)
    # Reward names are part of the fingerprint: one scored attempt per scorer tells them.
    samples = dict(
        (
            await session.execute(select(t.Attempt.id, t.Attempt.score).where(t.Attempt.id.in_(list(sample.values()))))
        ).all()
    )
    for key, scorer in scorers.items():
        scorer.reward_names = sorted((samples.get(sample[key]) or {}).get("rewards", {}))
        graded = sorted(tasks[key].values(), key=lambda x: (x.task_name, x.task_digest))
        scorer.tasks, scorer.task_count = graded[:SCORER_TASKS], len(graded)
        scorer.dataset_names = sorted(datasets[key])
    return sorted(scorers.values(), key=lambda s: (s.scorer, s.fingerprint, s.judge_model))


async def list_judges(session: AsyncSession) -> tuple[list[JudgeSummary], str]:
    """HEMRA judges that scored attempts (attempts' judge_scores) or that runs named: each with
    the definitions (fingerprints) it was used under and the runs it scored."""
    judges: dict[str, JudgeSummary] = {}

    def judge(name: str) -> JudgeSummary:
        if name not in judges:
            judges[name] = JudgeSummary(judge=name, models=[], attempts=0, run_ids=[])
        return judges[name]

    judged = select(t.Attempt.run_id, cast(t.Attempt.judge_scores, Text)).where(t.Attempt.judge_scores.is_not(None))
    for run_id, text in (await (await session.connection()).execute(judged)).all():
        scores = attemptreads.judge_scores_of(_json(text))
        for score in scores:
            found = judge(score["judge"])
            read = Score.of(score)
            if read.scorer_fingerprint and read.scorer_fingerprint not in found.fingerprints:
                found.fingerprints.append(read.scorer_fingerprint)
            found.models += [m for m in read.judge_models if m not in found.models]
        for name, score in attemptreads.latest_judge_scores(scores).items():
            found = judges[name]
            found.attempts += 1
            found.failed += score.get("state") != "SCORE_STATE_SCORED"
            if run_id not in found.run_ids:
                found.run_ids.append(run_id)
    for run_id, spec in (await session.execute(select(t.Run.id, t.Run.spec))).all():
        for name in (spec or {}).get("judges", []):
            found = judge(name)
            if run_id not in found.run_ids:
                found.run_ids.append(run_id)
    result = [judges[name] for name in sorted(judges)]
    for found in result:
        found.models.sort()
        found.run_ids.sort()
    return result, ("" if result else JUDGES_NOTE)


def _json(text: str | None):
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def usage_query(run_id: str):
    """Per attempt of the run with usage events: their tokens and cost, as summed when written
    (services/store/usage.py): the attempts' rows alone, never the events."""
    a = t.Attempt
    return (
        select(a.id, *(getattr(a, name) for name in usage.COLUMNS))
        .where(a.run_id == run_id, a.usage_events > 0)
        .order_by(a.id)
    )


async def attempt_usage(session: AsyncSession, run_ref: str) -> list[AttemptUsage]:
    run = await runreads.find_run(session, run_ref)
    return [
        AttemptUsage(attempt_id=i, input_tokens=it, output_tokens=ot, cost_usd=c, usage_events=n)
        for i, it, ot, c, n in (await session.execute(usage_query(run.id))).all()
    ]
