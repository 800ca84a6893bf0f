"""HarnessService: the harness protocol, served to each live attempt's harness and verifier.

Each attempt gets a token per phase (harness, then verifier); a call with an
unknown or revoked token is UNAUTHENTICATED, so a harness cannot touch its
sandbox once its phase ended, nor another attempt's sandbox ever.

Events a harness emits are its own doing: one HEMRA cannot keep as it is (a payload
that is not a JSON object or holds a lone surrogate, a time outside protobuf's years
1970 to 9999, a duration that is negative or over a year) is recorded in its place as
an "error" event named "protocol" with the event's text (escaped, cut at
MAX_RAW_BYTES), and the call succeeds: the harness goes on, and the attempt is scored.
(A request whose strings are not valid UTF-8 never reaches this code: gRPC refuses it
to the harness.)
"""

import json
import re
import secrets
import time
from dataclasses import dataclass, field

import grpc

from hemra.services.common import errors
from hemra.services.executor.events import MAX_DURATION_SECS, MAX_RAW_BYTES, MAX_TIME_SECS, BadMessages, EventLog, event
from hemra.services.executor.sandboxes import Sandbox
from hemra.v1 import harness_service_pb2 as hpb
from hemra.v1 import harness_service_pb2_grpc as hpb_grpc


@dataclass
class Grant:
    """What a token opens: one attempt's sandbox, for one phase."""

    attempt_id: str
    phase: str
    sandbox: Sandbox
    task: object
    model: str
    deadline: float
    events: EventLog | None = None
    finish: hpb.FinishRequest | None = None
    #: Events the harness emitted that HEMRA could not keep (see the module's docstring).
    bad: BadMessages | None = field(default=None, repr=False)


class Grants:
    def __init__(self):
        self._by_token: dict[str, Grant] = {}

    def issue(self, grant: Grant) -> str:
        token = secrets.token_urlsafe(32)
        self._by_token[token] = grant
        return token

    def revoke(self, token: str) -> None:
        self._by_token.pop(token, None)

    def check(self, context: grpc.aio.ServicerContext) -> Grant:
        metadata = dict(context.invocation_metadata() or ())
        token = metadata.get("authorization", "").removeprefix("Bearer ").strip()
        grant = self._by_token.get(token)
        if grant is None:
            raise errors.Unauthenticated("unknown or expired attempt token")
        return grant


#: The most one ReadFile call returns (well under the gRPC message limit).
MAX_READ_BYTES = 64 * 1024 * 1024


class HarnessServicer(hpb_grpc.HarnessServiceServicer):
    def __init__(self, grants: Grants):
        self.grants = grants

    async def GetTrial(self, request, context):
        grant = self.grants.check(context)
        response = hpb.GetTrialResponse(
            attempt_id=grant.attempt_id,
            instruction=grant.task.instruction,
            task_name=grant.task.task_name,
            model=grant.model,
            workdir=grant.task.environment.workdir,
        )
        response.timeout.FromNanoseconds(int(max(grant.deadline - time.monotonic(), 0) * 1e9))
        return response

    async def RunCommand(self, request, context):
        grant = self.grants.check(context)
        remaining = grant.deadline - time.monotonic()
        if remaining <= 0:
            raise errors.DeadlineExceeded("the attempt's time is up")
        timeout = request.timeout.ToNanoseconds() / 1e9 if request.HasField("timeout") else 0
        timeout = min(timeout, remaining) if timeout > 0 else remaining
        result = await grant.sandbox.exec(
            request.command, cwd=request.cwd, env=dict(request.env), timeout=timeout, stdin=request.stdin
        )
        if grant.events is not None:
            await grant.events.emit(
                event(
                    "tool_call",
                    "run_command",
                    result.duration,
                    command=request.command,
                    exit_code=result.exit_code,
                    timed_out=result.timed_out,
                    stdout=result.stdout.decode(errors="replace")[:4096],
                    stderr=result.stderr.decode(errors="replace")[:4096],
                )
            )
        response = hpb.RunCommandResponse(
            exit_code=result.exit_code, stdout=result.stdout, stderr=result.stderr, timed_out=result.timed_out
        )
        response.duration.FromNanoseconds(int(result.duration * 1e9))
        return response

    async def ReadFile(self, request, context):
        grant = self.grants.check(context)
        read = await _read(grant.sandbox, request.path, request.limit)
        if read is None:
            raise errors.NotFound(f"{request.path}: no such file")
        return hpb.ReadFileResponse(content=read[0], size_bytes=read[1])

    async def ReadFiles(self, request, context):
        grant = self.grants.check(context)
        if any(f.limit <= 0 for f in request.files):
            raise errors.InvalidArgument("ReadFiles: every file needs a limit")
        if sum(f.limit for f in request.files) > MAX_READ_BYTES:
            raise errors.InvalidArgument(
                f"ReadFiles: the limits add up to more than a call may read ({MAX_READ_BYTES})"
            )
        response = hpb.ReadFilesResponse()
        for wanted in request.files:
            read = await _read(grant.sandbox, wanted.path, wanted.limit)
            found = response.files.add(path=wanted.path, found=read is not None)
            if read is not None:
                found.content, found.size_bytes = read
        return response

    async def WriteFiles(self, request, context):
        grant = self.grants.check(context)
        try:
            await grant.sandbox.write_files([(f.path, f.content, f.executable) for f in request.files])
        except PermissionError as exc:
            raise errors.PermissionDenied(str(exc)) from None
        return hpb.WriteFilesResponse()

    async def RemovePath(self, request, context):
        grant = self.grants.check(context)
        try:
            await grant.sandbox.remove_path(request.path)
        except PermissionError as exc:
            raise errors.PermissionDenied(str(exc)) from None
        return hpb.RemovePathResponse()

    async def EmitEvents(self, request, context):
        grant = self.grants.check(context)
        if grant.events is None:
            raise errors.FailedPrecondition("events are not accepted in this phase")
        if grant.bad is None:
            grant.bad = BadMessages(grant.events, "protocol")
        kept = []
        for emitted in request.events:
            problem = _problem(emitted)
            if problem is None:
                kept.append(emitted)
                continue
            await grant.events.emit(*kept)
            kept = []
            shown = type(emitted)()
            shown.CopyFrom(emitted)
            shown.payload_json = emitted.payload_json[:MAX_RAW_BYTES]  # its text format, short
            await grant.bad.add(f"EmitEvents: an event {problem}", str(shown), event_type=emitted.type[:256])
        await grant.events.emit(*kept)
        return hpb.EmitEventsResponse()

    async def Finish(self, request, context):
        grant = self.grants.check(context)
        grant.finish = request
        return hpb.FinishResponse()


_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _problem(emitted) -> str | None:
    """What makes an emitted event one HEMRA cannot keep, or None."""
    try:
        payload = json.loads(emitted.payload_json or "{}")
    except (ValueError, RecursionError):
        return "whose payload_json is not valid JSON"
    if not isinstance(payload, dict):
        return "whose payload_json is not a JSON object"
    if _SURROGATE.search(emitted.payload_json):  # may be a lone one, which no reader can print
        try:
            json.dumps(payload, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            return "whose payload_json holds a lone surrogate (\\udXXX), text that is not Unicode"
    stamp, span = emitted.time, emitted.duration
    if not (0 <= stamp.seconds < MAX_TIME_SECS and 0 <= stamp.nanos < 1_000_000_000):
        return f"whose time is out of range (seconds {stamp.seconds}, nanos {stamp.nanos})"
    if not (0 <= span.seconds <= MAX_DURATION_SECS and 0 <= span.nanos < 1_000_000_000):
        return f"whose duration is out of range (seconds {span.seconds}, nanos {span.nanos})"
    return None


async def _read(sandbox, path: str, limit: int) -> tuple[bytes, int] | None:
    """(content, the file's whole size) of at most `limit` bytes (0: the whole file, within
    MAX_READ_BYTES), or None when there is no such file."""
    cap = min(limit, MAX_READ_BYTES) if limit > 0 else MAX_READ_BYTES
    try:
        content = await sandbox.read_file(path, limit=cap + (limit <= 0))
        if len(content) > cap:  # no limit asked for, and the file is over ours
            size = await sandbox.file_size(path)
            raise errors.ResourceExhausted(
                f"{path}: {size} bytes, more than a call may read ({MAX_READ_BYTES}); ask for a limit"
            )
        return content, await sandbox.file_size(path) if len(content) == cap else len(content)
    except (FileNotFoundError, IsADirectoryError):
        return None
    except PermissionError as exc:
        raise errors.PermissionDenied(str(exc)) from None
