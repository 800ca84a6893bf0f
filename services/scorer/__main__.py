"""Run the scorer service alone: python -m hemra.services.scorer --store 127.0.0.1:7801."""

import argparse

from hemra.services.common import auth, transport
from hemra.services.common.entry import (
    add_auth_options,
    add_expose_option,
    check_listeners,
    credentials_of,
    run,
    serve_forever,
)
from hemra.services.scorer.server import build_server


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hemra.services.scorer", description=__doc__)
    parser.add_argument("--listen", default="127.0.0.1:7804")
    parser.add_argument("--store", required=True, help="the store service's host:port")
    add_expose_option(parser)
    add_auth_options(parser)
    args = parser.parse_args(argv)
    check_listeners(parser, args)
    credentials = credentials_of(args, "scorer")
    channel = transport.channel(args.store)
    store = transport.store(channel, credentials.token(auth.SENDS["scorer"]), ride_out=transport.STORE_RIDE_OUT)
    server, port, servicer = build_server(store, args.listen, credentials)
    try:
        await serve_forever("scorer", server, args.listen, port)
    finally:
        await servicer.close()
        await channel.close()


if __name__ == "__main__":
    run(main)
