"""ScorerService over gRPC: fetch the task's tests, verify through the harness protocol, keep the output."""

from collections import OrderedDict

import grpc

from hemra.services import envtemplate
from hemra.services.common import errors, inprocess, judges, transport
from hemra.services.scorer import rewards, verifier
from hemra.services.scorer.judging.service import Judges
from hemra.v1 import common_pb2 as pb
from hemra.v1 import harness_service_pb2 as hpb
from hemra.v1 import scorer_service_pb2 as scpb
from hemra.v1 import scorer_service_pb2_grpc as scpb_grpc
from hemra.v1 import store_service_pb2 as spb

SCORER_NAME = "verifier"
#: Tests of this many tasks are kept in memory (a run scores each task many times).
TESTS_CACHE_SIZE = 512


class ProtocolSandbox(verifier.SandboxAccess):
    """The attempt's sandbox, reached through the executor's HarnessService."""

    def __init__(self, client):
        self.client = client

    async def run(self, command, env, timeout, cwd=""):
        request = hpb.RunCommandRequest(command=command, env=env, cwd=cwd)
        request.timeout.FromNanoseconds(int(timeout * 1e9))
        response = await self.client.RunCommand(request, timeout=timeout + 60)
        return response.exit_code, response.timed_out

    async def read(self, path, limit=0):
        try:
            return (await self.client.ReadFile(hpb.ReadFileRequest(path=path, limit=limit))).content
        except errors.NotFound:
            return None

    async def write(self, files):
        await self.client.WriteFiles(
            hpb.WriteFilesRequest(files=[hpb.FileContent(path=p, content=c, executable=x) for p, c, x in files])
        )

    async def remove(self, path):
        await self.client.RemovePath(hpb.RemovePathRequest(path=path))

    async def read_many(self, wanted):
        request = hpb.ReadFilesRequest(files=[hpb.ReadFileRequest(path=p, limit=n) for p, n in wanted])
        try:
            response = await self.client.ReadFiles(request)
        except errors.HemraError as exc:
            if exc.code != grpc.StatusCode.UNIMPLEMENTED:
                raise
            return await super().read_many(wanted)  # an executor older than ReadFiles
        return [f.content if f.found else None for f in response.files]


class ScorerServicer(scpb_grpc.ScorerServiceServicer):
    def __init__(self, store):
        self.store = store
        self._channels: dict[str, grpc.aio.Channel] = {}
        #: Executors' harness protocols served by this process, by the address they give
        #: (services/compose): their sandboxes are called in process, not over loopback.
        self.local_harnesses: dict[str, object] = {}
        self._tests: OrderedDict[str, list[tuple[str, bytes]]] = OrderedDict()
        self.judges = Judges(store)

    def _channel(self, address: str) -> grpc.aio.Channel:
        if address not in self._channels:
            self._channels[address] = transport.channel(address)
        return self._channels[address]

    def serve_locally(self, address: str, harness) -> None:
        """Call `harness`, the HarnessServicer an executor of this process serves at `address`,
        in process whenever a ScoreAttempt names that address."""
        self.local_harnesses[address] = harness

    def _sandbox(self, address: str, token: str) -> ProtocolSandbox:
        """The attempt's sandbox through the harness protocol at `address`, with its token."""
        local = self.local_harnesses.get(address)
        if local is not None:
            return ProtocolSandbox(inprocess.harness(local, token))
        return ProtocolSandbox(transport.harness(self._channel(address), token))

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        await self.judges.close()

    async def JudgeAttempt(self, request, context):
        scores = await self.judges.judge_attempt(request.attempt, request.task, request.artifacts, request.judges)
        return scpb.JudgeAttemptResponse(scores=scores)

    async def JudgeRun(self, request, context):
        try:
            run_id, judged, failed, skipped = await self.judges.judge_run(
                request.run, request.judge, request.only_missing
            )
        except judges.JudgeFileError as exc:
            raise errors.InvalidArgument(str(exc)) from None
        return scpb.JudgeRunResponse(run_id=run_id, judged=judged, failed=failed, skipped=skipped)

    async def ScoreAttempt(self, request, context):
        task = request.task
        tests = await self._tests_of(task)
        # Templates read only the variables the run named, and those named pass as they are.
        named = request.verifier_env
        env = {**envtemplate.resolve(dict(task.verifier_env), named), **envtemplate.readable(named)}
        verdict = await verifier.verify(
            self._sandbox(request.sandbox_address, request.sandbox_token),
            tests,
            rewards.tests_digest(task.files),
            env,
            task.verifier_timeout.ToNanoseconds() / 1e9 or 600.0,
        )
        stdout_digest = ""
        if verdict.stdout:
            put = await self.store.PutBlobs(spb.PutBlobsRequest(blobs=[spb.Blob(data=verdict.stdout)]))
            stdout_digest = put.digests[0]
        score = pb.Score(
            state=pb.SCORE_STATE_SCORED if verdict.scored else pb.SCORE_STATE_SCORER_FAILED,
            rewards=verdict.rewards,
            scorer_fingerprint=verdict.fingerprint or rewards.fingerprint(rewards.tests_digest(task.files), []),
            scorer=SCORER_NAME,
            error=verdict.error,
            stdout_blob_digest=stdout_digest,
            judgments=verdict.judgments,
            fault=verdict.fault,
        )
        score.duration.FromNanoseconds(int(verdict.duration * 1e9))
        return scpb.ScoreAttemptResponse(score=score)

    async def _tests_of(self, task) -> list[tuple[str, bytes]]:
        """The task's tests/ files (path, content), fetched from the store once per task."""
        if task.digest in self._tests:
            self._tests.move_to_end(task.digest)
            return self._tests[task.digest]
        files = [f for f in task.files if f.path.startswith("tests/")]
        blobs = await self.store.GetBlobs(spb.GetBlobsRequest(digests=sorted({f.blob_digest for f in files})))
        data = {b.digest: b.data for b in blobs.blobs}
        tests = [(f.path, data[f.blob_digest]) for f in files]
        self._tests[task.digest] = tests
        if len(self._tests) > TESTS_CACHE_SIZE:
            self._tests.popitem(last=False)
        return tests
