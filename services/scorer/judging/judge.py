"""Judge one recorded attempt with one HEMRA judge: ask, re-ask what cannot be read, combine the
samples, aggregate the criteria, and say honestly when the judge could not judge.

A criterion the judge could not judge (no readable answer after the re-asks, a refusal, the
model unreachable after the retries) keeps its error; a trial with any such criterion is a
scorer failure of this judge: its score has no reward, never a 0, and the task's own verdict
is untouched.
"""

import asyncio
import json
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field

from hemra.services.common.judges import Criterion, Judge
from hemra.services.scorer.judging import prompts
from hemra.services.scorer.judging.calls import Answer, Call, CallFailed, ModelClient
from hemra.v1 import common_pb2 as pb

SOURCE = "hemra"


@dataclass
class _Asked:
    """One criterion's verdicts over the samples, and its failure if any."""

    verdicts: list[prompts.Verdict] = field(default_factory=list)
    error: str = ""


@dataclass
class Judging:
    """A judge's score of one attempt, with the raw calls still to be stored as blobs."""

    score: pb.Score
    calls: list[tuple[pb.JudgeCall, Call]]


async def judge_attempt(judge: Judge, client: ModelClient, inputs: prompts.Inputs) -> Judging:
    started = time.monotonic()
    groups = [judge.criteria] if judge.mode == "batched" else [(c,) for c in judge.criteria]
    asked = {c.id: _Asked() for c in judge.criteria}
    calls: list[tuple[pb.JudgeCall, Call]] = []
    served: set[str] = set()

    async def one(sample: int, index: int, group) -> None:
        verdicts, error, made = await _ask(judge, client, inputs, group)
        for retry, call in enumerate(made):
            calls.append(((sample, index, retry), _call_record(sample, retry, group, call), call))
            if call.served_model:
                served.add(call.served_model)
        for criterion in group:
            if error:
                asked[criterion.id].error = asked[criterion.id].error or error
            else:
                asked[criterion.id].verdicts.append(verdicts[criterion.id])

    await asyncio.gather(*(one(s, i, g) for s in range(judge.samples) for i, g in enumerate(groups)))
    calls.sort(key=lambda found: found[0])
    score = _score(judge, asked, served)
    score.judge_calls.extend(record for _, record, _ in calls)
    score.duration.FromNanoseconds(int((time.monotonic() - started) * 1e9))
    score.judged_time.GetCurrentTime()
    return Judging(score, [(record, call) for _, record, call in calls])


async def _ask(judge: Judge, client: ModelClient, inputs: prompts.Inputs, group) -> tuple[dict, str, list[Call]]:
    """The verdicts for `group` (one sample), re-asking up to the judge's parse retries;
    or an error saying why there are none. Every call made, in order."""
    system = prompts.system_prompt(group)
    messages = [("user", prompts.user_prompt(judge, inputs, group))]
    made: list[Call] = []
    for _ in range(judge.parse_retries + 1):
        try:
            answer: Answer = await client.ask(system, messages)
        except CallFailed as failed:
            made += failed.calls
            return {}, f"the model did not answer: {failed}", made
        made += answer.calls
        last = made[-1]
        if answer.refused:
            last.outcome, last.error = "refused", "the model refused to judge"
            return {}, "the model refused to judge", made
        try:
            return prompts.read_answer(answer.text, group), "", made
        except ValueError as exc:
            last.outcome, last.error = "unparseable", str(exc)
            messages = messages[:1] + [
                ("assistant", answer.text or "(nothing)"),
                ("user", prompts.REASK.format(error=exc)),
            ]
    return {}, f"no readable answer after {judge.parse_retries + 1} tries: {made[-1].error}", made


def _call_record(sample: int, retry: int, group, call: Call) -> pb.JudgeCall:
    return pb.JudgeCall(
        sample=sample,
        retry=retry,
        criterion=group[0].id if len(group) == 1 else "",
        http_status=call.status,
        outcome=call.outcome,
        served_model=call.served_model,
        latency_ms=call.latency_ms,
        error=call.error[:1000],
        input_tokens=call.input_tokens,
        output_tokens=call.output_tokens,
    )


def _score(judge: Judge, asked: dict[str, _Asked], served: set[str]) -> pb.Score:
    models = ", ".join(sorted(served))
    score = pb.Score(
        scorer=f"judge:{judge.name}", judge=judge.name, scorer_fingerprint=judge.fingerprint(), judge_model=models
    )
    values: list[tuple[Criterion, float]] = []
    for criterion in judge.criteria:
        judgment = _judgment(judge, criterion, asked[criterion.id], models)
        score.judgments.append(judgment)
        if not judgment.error:
            values.append((criterion, judgment.value))
    failed = [j for j in score.judgments if j.error]
    if failed:
        score.state = pb.SCORE_STATE_SCORER_FAILED
        score.error = f"judge {judge.name!r} could not judge {len(failed)} of {len(judge.criteria)} criteria; " + (
            f"{failed[0].criterion}: {failed[0].error}"
        )
    else:
        score.state = pb.SCORE_STATE_SCORED
        score.rewards[judge.name] = judge.aggregate(values)
    return score


def _judgment(judge: Judge, criterion: Criterion, asked: _Asked, models: str) -> pb.Judgment:
    judgment = pb.Judgment(
        judge=judge.name,
        source=SOURCE,
        criterion=criterion.id,
        description=criterion.description,
        weight=criterion.weight,
        expected=criterion.expected,
        judge_model=models,
    )
    if asked.error:
        judgment.error = asked.error[:1000]
        return judgment
    values = [v.value for v in asked.verdicts]
    value = _combine(judge.combine, values)
    first = asked.verdicts[0]
    judgment.value = value
    judgment.passed = value >= judge.pass_at
    judgment.raw_json = json.dumps(first.raw)
    judgment.reason = first.reason
    judgment.observed = first.observed
    judgment.agreement = sum(1 for v in values if abs(v - value) < 1e-9) / len(values)
    if len(values) > 1:
        judgment.sample_raw_json.extend(json.dumps(v.raw) for v in asked.verdicts)
    return judgment


def _combine(how: str, values: list[float]) -> float:
    if how == "median":
        return float(statistics.median(values))
    if how == "majority":
        counts = Counter(values)
        top = max(counts.values())
        return min(v for v, n in counts.items() if n == top)
    return sum(values) / len(values)
