"""The compose healthchecks' probe: grpc.health.v1.Health/Check asked over a plain TCP socket
in HTTP/2 written here, without loading gRPC.

    python3 -m hemra.services.common.probe HOST:PORT [SERVICE]    # exit 0 when SERVING

A healthcheck runs in every container every few seconds (`hemra health` asks the same way).
Python with gRPC loaded (health.py's check) costs about 100 ms of CPU each time: with 16
executors and the other services at one check every 3 s, 40% of a 2-core machine. The
standard library alone costs about a fifth of that. The probe asks what health.check asks
(the server's overall status, or one service's, over plaintext as the stack's services
listen) and says SERVING only when the server's answer says so: a refused connection, a call
the server refuses, a reset stream, a GOAWAY, a malformed or oversized answer or no answer in
time are not SERVING.
"""

import socket
import struct
import sys
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
# Frame types and flags (RFC 9113, section 6).
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7
END_STREAM, ACK, END_HEADERS, PADDED = 0x1, 0x1, 0x4, 0x8
STREAM = 1
PATH = b"/grpc.health.v1.Health/Check"
#: grpc.health.v1.HealthCheckResponse.ServingStatus by number.
STATUSES = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}
#: The largest answer read: a health answer is a few bytes.
MOST_BYTES = 1 << 16


class NotServing(Exception):
    """Why the server's status could not be read."""


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _integer(value: int, prefix_bits: int, first: int = 0) -> bytes:
    """An HPACK integer (RFC 7541, section 5.1) in a prefix of `prefix_bits` bits."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out, value = [first | limit], value - limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    return bytes([*out, value])


def _literal(value: bytes) -> bytes:
    """An HPACK string, not Huffman-coded."""
    return _integer(len(value), 7) + value


def request_headers(authority: str) -> bytes:
    """The call's header block: static-table names (RFC 7541, appendix A), literal values
    without indexing (the probe's one call needs no dynamic table)."""
    return b"".join(
        [
            b"\x83",  # :method POST
            b"\x86",  # :scheme http
            _integer(4, 4) + _literal(PATH),  # :path
            _integer(1, 4) + _literal(authority.encode()),  # :authority
            _integer(31, 4) + _literal(b"application/grpc"),  # content-type
            b"\x00" + _literal(b"te") + _literal(b"trailers"),
        ]
    )


def _varint(value: int) -> bytes:
    return _integer(value, 7)  # the same 7-bit groups, low first, as protobuf's varints


def health_request(service: str) -> bytes:
    """A gRPC message (uncompressed, length-prefixed) holding HealthCheckRequest{service}."""
    name = service.encode()
    body = b"\x0a" + _varint(len(name)) + name if name else b""
    return b"\x00" + struct.pack(">I", len(body)) + body


def status_of(message: bytes) -> str:
    """The status of a HealthCheckResponse's bytes: field 1, a varint (absent when 0)."""
    if not message:
        return STATUSES[0]
    if len(message) != 2 or message[0] != 0x08 or message[1] >= 0x80:
        raise NotServing("the server's answer is not a health status")
    return STATUSES.get(message[1], f"status {message[1]}")


class _Reader:
    def __init__(self, sock: socket.socket, deadline: float):
        self.sock, self.deadline, self.buffer = sock, deadline, b""

    def exactly(self, count: int) -> bytes:
        while len(self.buffer) < count:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise NotServing("no answer in time")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(MOST_BYTES)
            except TimeoutError:
                raise NotServing("no answer in time") from None
            if not chunk:
                raise NotServing("the server closed the connection")
            self.buffer += chunk
        out, self.buffer = self.buffer[:count], self.buffer[count:]
        return out

    def frame(self) -> tuple[int, int, int, bytes]:
        head = self.exactly(9)
        length = int.from_bytes(head[:3], "big")
        if length > MOST_BYTES:
            raise NotServing("the server's frame is too large for a health answer")
        stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
        return head[3], head[4], stream, self.exactly(length)


def check(address: str, service: str = "", timeout: float = 5.0) -> str:
    """The status name the server at `address` (HOST:PORT) reports for `service`; NotServing
    (or OSError) when it cannot be read."""
    host, _, port = address.rpartition(":")
    deadline = time.monotonic() + timeout
    with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as sock:
        sock.sendall(
            PREFACE
            + frame(SETTINGS, 0, 0)
            + frame(HEADERS, END_HEADERS, STREAM, request_headers(address))
            + frame(DATA, END_STREAM, STREAM, health_request(service))
        )
        return _answer(sock, _Reader(sock, deadline))


def _answer(sock: socket.socket, reader: _Reader) -> str:
    message = b""
    while True:
        kind, flags, stream, payload = reader.frame()
        if kind == SETTINGS and not flags & ACK:
            sock.sendall(frame(SETTINGS, ACK, 0))
        elif kind == PING and not flags & ACK:
            sock.sendall(frame(PING, ACK, 0, payload))
        elif kind == GOAWAY:
            raise NotServing("the server sent GOAWAY")
        elif stream != STREAM:
            continue
        elif kind == RST_STREAM:
            raise NotServing("the server reset the call")
        elif kind == DATA:
            if flags & PADDED:
                payload = payload[1 : len(payload) - payload[0]]
            message += payload
            if len(message) >= 5:
                if message[0] != 0:
                    raise NotServing("the server's answer is compressed")
                length = int.from_bytes(message[1:5], "big")
                if length > MOST_BYTES:
                    raise NotServing("the server's answer is too large for a health answer")
                if len(message) >= 5 + length:
                    return status_of(message[5 : 5 + length])
        elif kind == HEADERS and flags & END_STREAM:
            # Trailers with no message before them: the server refused the call (an unknown
            # service, a server that is not HEMRA's); its grpc-message is left undecoded.
            raise NotServing("the server refused the call")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    port = args[0].rpartition(":")[2] if args else ""
    if not 1 <= len(args) <= 2 or not (port.isdigit() and 0 < int(port) < 65536):
        print("usage: python3 -m hemra.services.common.probe HOST:PORT [SERVICE]", file=sys.stderr)
        return 2
    try:
        found = check(args[0], args[1] if len(args) > 1 else "")
    except OSError as exc:  # refused, unreachable, an unknown host
        found = (exc.strerror or str(exc) or type(exc).__name__).lower()
    except NotServing as exc:
        found = str(exc)
    if found != "SERVING":
        print(f"error: {args[0]}: {found}", file=sys.stderr)
        return 1
    print(f"{args[0]}: SERVING")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
