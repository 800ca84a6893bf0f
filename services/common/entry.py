"""Entry-point helpers for running one service as its own process."""

import argparse
import asyncio
import logging
import signal
import sys

import grpc

from hemra.services.common import auth, errors, transport


def add_auth_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--token-env",
        default=auth.DEFAULT_TOKEN_ENV,
        metavar="NAME",
        help="environment variable holding the user's token, or the deployment's one token (default %(default)s); "
        "HEMRA_WORKER_TOKEN and HEMRA_ADMIN_TOKEN hold the others (each also as NAME_FILE)",
    )


def add_expose_option(parser: argparse.ArgumentParser, what: str = "--listen") -> None:
    parser.add_argument(
        "--expose",
        action="store_true",
        help=f"allow {what} on an address other than loopback (other machines can reach it)",
    )


def check_listeners(parser: argparse.ArgumentParser, args: argparse.Namespace, *listeners: tuple[str, str]) -> None:
    """Each (option, address) must be loopback unless --expose was given; else exit 2 saying which."""
    if args.expose:
        transport.allow_exposed()
    for option, listen in listeners or (("--listen", args.listen),):
        try:
            transport.check_listen(listen, option)
        except (transport.NotLoopback, ValueError) as exc:
            parser.exit(2, f"error: {exc}\n")


def credentials_of(args: argparse.Namespace, service: str) -> auth.Credentials:
    """The tokens `service` holds (auth.HOLDS), or exit 2 with one line saying which variable to
    set. A deployment with one token for every role still works, with a warning."""
    try:
        credentials = auth.credentials_from_env(auth.HOLDS[service], args.token_env)
    except auth.TokenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if credentials.shared:
        logging.getLogger("hemra.auth").warning(
            "%s: one token (%s) for every role: whoever holds it can also work the queue and record runs; "
            "set HEMRA_WORKER_TOKEN and HEMRA_ADMIN_TOKEN to give each role its own (docs/deploy.md)",
            service,
            args.token_env,
        )
    return credentials


def run(main) -> None:
    """asyncio.run(main()) for a service's own process: a HemraError that stops it before or
    while it serves (a malformed database URL, a store that cannot write) is one line on stderr
    and exit status 2 for what the operator gave, 1 otherwise, never a traceback."""
    try:
        asyncio.run(main())
    except errors.HemraError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2 if isinstance(exc, (errors.InvalidArgument, errors.NotFound)) else 1) from None


def configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)  # one line per migration says nothing useful


async def serve_forever(name: str, server: grpc.aio.Server, listen: str, port: int, ready=None) -> None:
    """Start, print the bound address on one line (tests read it), stop on SIGTERM/SIGINT.

    The server says SERVING at once, or once `ready` answers "" (see transport.start)."""
    configure_logging()
    await transport.start(server, ready)
    host, _ = transport.split_listen(listen)
    print(f"{name} listening on {host}:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await transport.stop(server, grace=5)
