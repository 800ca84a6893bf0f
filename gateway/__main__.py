"""Run the gateway alone, in a deployment: python -m hemra.gateway --store HOST:PORT --planner HOST:PORT
--importer HOST:PORT. It serves the read-only HTTP API with the trace viewer (or --ui DIR) and
the gRPC front door the `hemra` CLI reaches with HEMRA_SERVER (gateway/frontdoor.py)."""

import argparse
import asyncio
import signal
from pathlib import Path

from hemra.gateway.app import create_app
from hemra.gateway.frontdoor import build_front_door
from hemra.gateway.security import LOOPBACK_HOSTS
from hemra.gateway.server import start_http, stop_http, url_of
from hemra.services.common import auth, transport
from hemra.services.common.entry import (
    add_auth_options,
    add_expose_option,
    check_listeners,
    configure_logging,
    credentials_of,
)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m hemra.gateway", description=__doc__)
    parser.add_argument("--listen", default="127.0.0.1:7878", help="the HTTP API and UI (default %(default)s)")
    parser.add_argument(
        "--front-door", default="127.0.0.1:7800", help="the gRPC front door for the CLI (default %(default)s)"
    )
    parser.add_argument("--store", required=True, help="the store's HOST:PORT")
    parser.add_argument("--planner", required=True, help="the planner's HOST:PORT")
    parser.add_argument("--importer", required=True, help="the importer's HOST:PORT")
    parser.add_argument("--scorer", default="", help="the scorer's HOST:PORT (for hemra judge; optional)")
    parser.add_argument("--ui", type=Path, default=None, help="serve this folder at / instead of the trace viewer")
    parser.add_argument("--tls-cert", type=Path, default=None, help="PEM certificate: the front door speaks TLS")
    parser.add_argument("--tls-key", type=Path, default=None, help="PEM private key for --tls-cert")
    add_expose_option(parser, "--listen and --front-door (and answer any Host name over HTTP)")
    add_auth_options(parser)
    args = parser.parse_args(argv)
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.exit(2, "error: --tls-cert and --tls-key go together\n")
    if args.ui is not None and not (args.ui / "index.html").is_file():
        parser.exit(2, f"error: --ui {args.ui}: no index.html there\n")
    check_listeners(parser, args, ("--listen", args.listen), ("--front-door", args.front_door))
    return args


async def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    credentials = credentials_of(args, "gateway")
    configure_logging()
    tls = (args.tls_key.read_bytes(), args.tls_cert.read_bytes()) if args.tls_cert else None
    names = ("store", "planner", "importer", "scorer") if args.scorer else ("store", "planner", "importer")
    channels = {name: transport.channel(getattr(args, name)) for name in names}
    store = transport.store(channels["store"], credentials.token(auth.SENDS["gateway"]))
    app = create_app(store, ui_dir=args.ui, allowed_hosts=None if args.expose else LOOPBACK_HOSTS)
    door, door_port = build_front_door(channels, credentials, args.front_door, tls)
    web = await start_http(app, args.listen)
    await transport.start(door)
    host, _ = transport.split_listen(args.front_door)
    print(f"gateway listening on {url_of(web)} (HTTP), front door on {host}:{door_port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await transport.stop(door, grace=5)
        await stop_http(web)
        for channel in channels.values():
            await channel.close()


if __name__ == "__main__":
    asyncio.run(main())
