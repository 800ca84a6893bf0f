"""The criterion table of a dataset: harnesses as columns, tasks as rows.

Results for one harness on one dataset are often spread over several runs and
imports (smoke tests, subsets, retries, full runs, runs still going). Each column
takes one source, a run or import cell, chosen by `source`:
- newest: the newest complete cell (no queued or running attempt), else the newest;
- largest: the cell with the most trials (ties: the newer).
Cells say which source they come from, how many graded trials are behind them, and
how many were left out (nothing graded them); they are never counted as failed."""

from collections import defaultdict

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from hemra.services.common.errors import InvalidArgument
from hemra.services.domain import vocabulary
from hemra.services.domain.rewards import usable_rewards
from hemra.services.store import attemptreads, runreads
from hemra.services.store import tables as t
from hemra.services.store.catalog import find_dataset
from hemra.services.store.outputs import CriterionCell, CriterionRow, CriterionSource, CriterionTable
from hemra.services.store.report import judged_value

SOURCES = ("newest", "largest")
SCORED = "SCORE_STATE_SCORED"


async def _candidates(session: AsyncSession, digest: str, progress) -> list[dict]:
    """Every run or import cell on the dataset, with its trial count and whether it is complete.
    `progress(run_ids)` counts runs as runreads.runs_progress does (the store keeps settled ones)."""
    cells = (
        await session.execute(
            select(
                t.Cell.id,
                t.Cell.harness_name,
                t.Cell.model,
                t.Run.id,
                t.Run.label,
                t.Run.kind,
                t.Run.create_time,
                t.Cell.position,
            )
            .join(t.Run, t.Cell.run_id == t.Run.id)
            .where(t.Cell.dataset_digest == digest, t.Run.kind != "loose")  # never compared
        )
    ).all()
    counts = await progress(sorted({c[3] for c in cells}))
    candidates = []
    for cell_id, harness, model, run_id, label, kind, created, position in cells:
        cell = counts[run_id][1].get(cell_id) or {"trials": 0, "queued": 0, "running": 0}
        candidates.append(
            dict(
                cell_id=cell_id,
                harness_name=harness,
                model=model,
                run_id=run_id,
                run_label=label,
                kind=kind,
                create_time=created,
                trials=cell["trials"],
                complete=not (cell["queued"] or cell["running"]),
                position=position,
            )
        )
    return candidates


def choose(candidates: list[dict], source: str) -> list[CriterionSource]:
    """One source per harness, harnesses in order of first use (and within a run, as listed)."""
    by_harness: dict[str, list[dict]] = defaultdict(list)
    for cell in sorted(candidates, key=lambda c: (c["create_time"], c["run_id"], c["position"])):
        by_harness[cell["harness_name"]].append(cell)
    chosen = []
    for cells in by_harness.values():
        if source == "largest":
            pick = max(cells, key=lambda c: (c["trials"], c["create_time"], c["run_id"]))
        else:
            complete = [c for c in cells if c["complete"]] or cells
            pick = complete[-1]
        fields = {k: v for k, v in pick.items() if k != "position"}
        chosen.append(CriterionSource(**fields, other_cells=len(cells) - 1))
    return chosen


def _trial_value(score: dict) -> tuple[float, bool]:
    """A graded trial's value, and whether it is a 0/1 pass."""
    rewards = usable_rewards(score.get("rewards", {})) or {}
    values = list(rewards.values())
    if len(values) == 1 and values[0] in (0, 1):
        return float(values[0]), True
    if "reward" in rewards:
        return float(rewards["reward"]), False
    return (sum(values) / len(values) if values else 0.0), False


async def _latest_attempts(session: AsyncSession, cell_ids: list[str]) -> dict[str, dict]:
    """Each trial's latest attempt in these cells, by trial ID."""
    query = (
        select(
            t.Trial.id,
            t.Trial.cell_id,
            t.Trial.task_digest,
            t.Trial.task_name,
            t.Attempt.number,
            t.Attempt.state,
            t.Attempt.outcome,
            t.Attempt.score,
            t.Attempt.start_time,
            t.Attempt.end_time,
            t.Attempt.judge_scores,
            t.Attempt.input_tokens,
            t.Attempt.output_tokens,
            t.Attempt.usage_events,
        )
        .join(t.Trial, t.Attempt.trial_id == t.Trial.id)
        .where(t.Trial.cell_id.in_(cell_ids))
    )
    latest: dict[str, dict] = {}
    for (
        trial_id,
        cell_id,
        digest,
        name,
        number,
        state,
        outcome,
        score,
        start,
        end,
        judged,
        tokens_in,
        tokens_out,
        usage,
    ) in (await session.execute(query)).all():
        if trial_id in latest and latest[trial_id]["number"] > number:
            continue
        latest[trial_id] = dict(
            cell_id=cell_id,
            task_digest=digest,
            task_name=name,
            number=number,
            state=state,
            outcome=outcome,
            score=score,
            start=start,
            end=end,
            judge_scores=judged if isinstance(judged, list) else [],
            # Tokens only when the attempt's usage events said some: no usage reported is no sample.
            tokens=(tokens_in or 0) + (tokens_out or 0) if usage else None,
        )
    return latest


def _graded(attempt: dict) -> bool:
    score = attempt["score"] or {}
    return (
        attempt["state"] == "finished"
        and attempt["outcome"] not in (vocabulary.INFRA_FAILED, vocabulary.CANCELLED)
        and score.get("state") == SCORED
        and usable_rewards(score.get("rewards", {})) is not None
    )


def _cells(values: list[list[float]], excluded: list[int], lower_is_better: bool) -> list[CriterionCell]:
    cells = [
        CriterionCell(samples=len(v), value=(sum(v) / len(v) if v else 0.0), excluded=x)
        for v, x in zip(values, excluded)
    ]
    shown = [c.value for c in cells if c.samples]
    # A best needs something to beat: a row of equal values (or of one) marks none.
    if len(shown) > 1 and max(shown) - min(shown) > 1e-12:
        best = min(shown) if lower_is_better else max(shown)
        for cell in cells:
            cell.best = bool(cell.samples) and abs(cell.value - best) < 1e-12
    return cells


def _ran(attempt: dict) -> bool:
    """Finished with a result of the agent: the efficiency rows' samples. A cancelled attempt
    (one cancelled while queued has start = end) or one lost to the infrastructure says nothing
    about how the harness spends time or tokens, so it is no sample, never a 0."""
    return attempt["state"] == "finished" and attempt["outcome"] not in (vocabulary.INFRA_FAILED, vocabulary.CANCELLED)


def build_rows(sources: list[CriterionSource], attempts: dict[str, dict]) -> list[CriterionRow]:
    """Overall rows (pass rate over 0/1 tasks, mean reward over the others, apart as the
    report keeps them), one row per task (by name), then the efficiency rows: wall time and
    tokens per attempt that ran, and the error rate; one cell per source."""
    column = {s.cell_id: i for i, s in enumerate(sources)}
    n = len(sources)
    walls = [[] for _ in range(n)]
    tokens = [[] for _ in range(n)]
    errors = [[] for _ in range(n)]
    tasks: dict[str, dict] = {}
    for attempt in attempts.values():
        i = column[attempt["cell_id"]]
        task = tasks.setdefault(
            attempt["task_digest"],
            dict(name=attempt["task_name"], binary=True, values=[[] for _ in range(n)], excluded=[0] * n),
        )
        if _ran(attempt):
            if attempt["start"] and attempt["end"]:
                walls[i].append(attempt["end"] - attempt["start"])
            if attempt["tokens"] is not None:
                tokens[i].append(float(attempt["tokens"]))
        if attempt["state"] == "finished" and attempt["outcome"] != vocabulary.CANCELLED:
            # Errored as the attempt's verdict says: an infrastructure or scorer failure (rule 5).
            errors[i].append(float(not _graded(attempt)))
        if not _graded(attempt):
            task["excluded"][i] += 1
            continue
        value, binary = _trial_value(attempt["score"])
        task["binary"] = task["binary"] and binary
        task["values"][i].append(value)
    rows = [*_overall_rows(tasks, n), *judge_rows(attempts, column), *_task_rows(tasks)]
    return rows + _efficiency_rows(walls, tokens, errors, n)


def _overall_rows(tasks: dict[str, dict], n: int) -> list[CriterionRow]:
    """Pass rate over the 0/1 tasks, mean reward over the others (each only when there are some)."""
    rows = []
    for binary, criterion, unit in ((True, "Overall pass rate", "rate"), (False, "Overall mean reward", "reward")):
        group = [task for task in tasks.values() if task["binary"] == binary]
        if group:
            values = [[v for task in group for v in task["values"][i]] for i in range(n)]
            excluded = [sum(task["excluded"][i] for task in group) for i in range(n)]
            rows.append(
                CriterionRow(
                    criterion=criterion,
                    task_digest="",
                    unit=unit,
                    lower_is_better=False,
                    cells=_cells(values, excluded, False),
                )
            )
    return rows


def _task_rows(tasks: dict[str, dict]) -> list[CriterionRow]:
    """One row per task, by name."""
    return [
        CriterionRow(
            criterion=task["name"],
            task_digest=digest,
            unit="rate" if task["binary"] else "reward",
            lower_is_better=False,
            cells=_cells(task["values"], task["excluded"], False),
        )
        for digest, task in sorted(tasks.items(), key=lambda kv: (kv[1]["name"], kv[0]))
    ]


def _efficiency_rows(walls: list, tokens: list, errors: list, n: int) -> list[CriterionRow]:
    """Wall time and tokens per attempt that ran, and the error rate: lower is better."""
    return [
        CriterionRow(
            criterion=criterion,
            task_digest="",
            unit=unit,
            lower_is_better=True,
            cells=_cells(values, [0] * n, True),
        )
        for criterion, unit, values in (
            ("Wall time per attempt", "seconds", walls),
            ("Tokens per attempt", "tokens", tokens),
            ("Error rate (infrastructure or scorer failed)", "rate", errors),
        )
    ]


def judge_rows(attempts: dict[str, dict], column: dict[str, int]) -> list[CriterionRow]:
    """A row per judge (a HEMRA judge's score) and per rubric criterion ("judge / criterion"), each
    the mean 0..1 value over the trials judged; a trial the judge could not judge is left out and
    counted, never a 0."""
    n = len(column)
    found: dict[str, tuple[list[list[float]], list[int]]] = {}

    def add(label: str, i: int, value: float | None) -> None:
        values, excluded = found.setdefault(label, ([[] for _ in range(n)], [0] * n))
        if value is None:
            excluded[i] += 1
        else:
            values[i].append(value)

    for attempt in attempts.values():
        if attempt["state"] != "finished" or attempt["outcome"] in (vocabulary.INFRA_FAILED, vocabulary.CANCELLED):
            continue
        i = column[attempt["cell_id"]]
        latest = attemptreads.latest_judge_scores(attempt["judge_scores"])
        for name, score in sorted(latest.items()):
            rewards = usable_rewards(score.get("rewards", {})) or {}
            scored = score.get("state") == SCORED and name in rewards
            add(f"judge {name}", i, rewards[name] if scored else None)
        for score in [attempt["score"] or {}, *latest.values()]:
            for judgment in score.get("judgments", []):
                if isinstance(judgment, dict) and judgment.get("criterion"):
                    add(f"{judgment.get('judge', '')} / {judgment['criterion']}", i, judged_value(judgment))
    return [
        CriterionRow(
            criterion=label, task_digest="", unit="value", lower_is_better=False, cells=_cells(values, excluded, False)
        )
        for label, (values, excluded) in sorted(found.items(), key=lambda kv: (not kv[0].startswith("judge "), kv[0]))
    ]


async def criterion_table(session: AsyncSession, dataset_ref: str, source: str = "", progress=None) -> CriterionTable:
    source = source or "newest"
    if source not in SOURCES:
        raise InvalidArgument(f"source {source!r}: expected one of {', '.join(SOURCES)}")
    dataset = await find_dataset(session, dataset_ref)
    if progress is None:

        async def progress(run_ids):
            return await runreads.runs_progress(session, run_ids)

    sources = choose(await _candidates(session, dataset.digest, progress), source)
    attempts = await _latest_attempts(session, [s.cell_id for s in sources])
    return CriterionTable(
        dataset_name=dataset.dataset_name,
        dataset_digest=dataset.digest,
        source=source,
        sources=sources,
        rows=build_rows(sources, attempts) if sources else [],
    )
