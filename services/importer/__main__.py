"""Run the importer service alone: python -m hemra.services.importer --store HOST:PORT --planner HOST:PORT."""

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
from hemra.services.importer.server import build_server


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hemra.services.importer", description=__doc__)
    parser.add_argument("--listen", default="127.0.0.1:7805")
    parser.add_argument("--store", required=True, help="the store service's host:port")
    parser.add_argument("--planner", required=True, help="the planner service's host:port (pins task folders)")
    add_expose_option(parser)
    add_auth_options(parser)
    args = parser.parse_args(argv)
    check_listeners(parser, args)
    credentials = credentials_of(args, "importer")
    token = credentials.token(auth.SENDS["importer"])
    store_channel, planner_channel = transport.channel(args.store), transport.channel(args.planner)
    server, port = build_server(
        transport.store(store_channel, token), transport.planner(planner_channel, token), args.listen, credentials
    )
    try:
        await serve_forever("importer", server, args.listen, port)
    finally:
        await store_channel.close()
        await planner_channel.close()


if __name__ == "__main__":
    run(main)
