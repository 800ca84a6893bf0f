"""The one error tree across a real gRPC server: each class a servicer raises travels with its
status code and ErrorInfo reason, and the client raises the same class again."""

from types import SimpleNamespace

import grpc
import pytest
from google.protobuf import wrappers_pb2

from hemra.services.common import errors, transport
from hemra.services.domain.importerrors import ImportProblem
from hemra.services.domain.planerrors import NotFound as PlanNotFound
from hemra.services.domain.planerrors import PlanError

_METHOD = "/hemra.test.Raiser/Raise"


async def _serve(raised: BaseException, token: str = ""):
    async def handler(request, context):
        raise raised

    server = transport.new_server(token)
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "hemra.test.Raiser",
                {
                    "Raise": grpc.unary_unary_rpc_method_handler(
                        handler,
                        request_deserializer=wrappers_pb2.StringValue.FromString,
                        response_serializer=wrappers_pb2.StringValue.SerializeToString,
                    )
                },
            )
        ]
    )
    port = transport.bind(server, "127.0.0.1:0")
    await server.start()
    return server, port


def _client(port: int, token: str = "") -> transport.Client:
    channel = transport.channel(f"127.0.0.1:{port}")
    stub = SimpleNamespace(
        Raise=channel.unary_unary(
            _METHOD,
            request_serializer=wrappers_pb2.StringValue.SerializeToString,
            response_deserializer=wrappers_pb2.StringValue.FromString,
        )
    )
    from hemra.services.common import auth

    return transport.Client(channel, stub, metadata=auth.metadata(token), timeout=10, retries=1)


async def _raw_call(port: int) -> grpc.aio.AioRpcError:
    """The status as it travels, seen without HEMRA's client."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary(
            _METHOD,
            request_serializer=wrappers_pb2.StringValue.SerializeToString,
            response_deserializer=wrappers_pb2.StringValue.FromString,
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(wrappers_pb2.StringValue(value="x"), timeout=10)
        return caught.value


@pytest.mark.parametrize("cls", errors.TREE, ids=lambda cls: cls.__name__)
async def test_each_class_travels_with_its_code_and_reason_and_comes_back_as_itself(cls):
    server, port = await _serve(cls(f"{cls.__name__} happened"))
    try:
        raw = await _raw_call(port)
        assert raw.code() == cls.code
        assert raw.details() == f"{cls.__name__} happened"
        assert transport.error_reason(raw.trailing_metadata()) == cls.reason
        with pytest.raises(errors.HemraError) as caught:
            await _client(port).Raise(wrappers_pb2.StringValue(value="x"))
        assert type(caught.value) is cls
        assert caught.value.code == cls.code and str(caught.value) == f"{cls.__name__} happened"
    finally:
        await server.stop(None)


def test_reasons_are_stable_and_distinct():
    reasons = [cls.reason for cls in errors.TREE]
    assert len(set(reasons)) == len(reasons)
    assert errors.LeaseLost.reason == "LEASE_LOST" and errors.LeaseLost.code == grpc.StatusCode.ABORTED


@pytest.mark.parametrize(
    ("raised", "arrives_as"),
    [
        (PlanError("bad key"), errors.InvalidArgument),
        (PlanNotFound("no dataset"), errors.NotFound),
        (ImportProblem("not a job"), errors.InvalidArgument),
    ],
)
async def test_a_services_own_subclass_travels_as_its_shared_class(raised, arrives_as):
    server, port = await _serve(raised)
    try:
        assert transport.error_reason((await _raw_call(port)).trailing_metadata()) == arrives_as.reason
        with pytest.raises(errors.HemraError) as caught:
            await _client(port).Raise(wrappers_pb2.StringValue(value="x"))
        assert type(caught.value) is arrives_as
    finally:
        await server.stop(None)


async def test_anything_else_is_internal_with_one_line_and_no_reason():
    server, port = await _serve(ValueError("first line\nsecond line"))
    try:
        raw = await _raw_call(port)
        assert raw.code() == grpc.StatusCode.INTERNAL
        assert raw.details() == "internal error: ValueError: first line"
        assert transport.error_reason(raw.trailing_metadata()) == ""
        with pytest.raises(errors.HemraError) as caught:
            await _client(port).Raise(wrappers_pb2.StringValue(value="x"))
        assert type(caught.value) is errors.HemraError and caught.value.code == grpc.StatusCode.INTERNAL
    finally:
        await server.stop(None)


async def test_a_long_message_is_cut_to_fit_the_trailer():
    server, port = await _serve(errors.NotFound("x" * 100_000))
    try:
        raw = await _raw_call(port)
        assert raw.details() == "x" * transport.MAX_ERROR_CHARS + "..."
        assert transport.error_reason(raw.trailing_metadata()) == "NOT_FOUND"
    finally:
        await server.stop(None)


async def test_statuses_without_a_reason_map_by_code():
    """The token interceptor refuses without a reason, and a server that is not there is
    gRPC's own UNAVAILABLE: both still come back as their class."""
    server, port = await _serve(errors.NotFound("unreached"), token="right")
    try:
        with pytest.raises(errors.Unauthenticated):
            await _client(port, "wrong").Raise(wrappers_pb2.StringValue(value="x"))
    finally:
        await server.stop(None)
    with pytest.raises(errors.Unavailable):
        await _client(port).Raise(wrappers_pb2.StringValue(value="x"))
