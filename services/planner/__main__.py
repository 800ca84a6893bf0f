"""Run the planner service alone: python -m hemra.services.planner --store 127.0.0.1:7801."""

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
from hemra.services.common.settings import hemra_home
from hemra.services.planner.server import build_server


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hemra.services.planner", description=__doc__)
    parser.add_argument("--listen", default="127.0.0.1:7802")
    parser.add_argument("--store", required=True, help="the store service's host:port")
    parser.add_argument(
        "--no-build-images",
        dest="build_images",
        action="store_false",
        help="leave docker runs' task images to the executors (this planner has no Docker engine)",
    )
    add_expose_option(parser)
    add_auth_options(parser)
    args = parser.parse_args(argv)
    check_listeners(parser, args)
    credentials = credentials_of(args, "planner")
    channel = transport.channel(args.store)
    store = transport.store(channel, credentials.token(auth.SENDS["planner"]))
    server, port = build_server(store, hemra_home(), args.listen, credentials, args.build_images)
    try:
        await serve_forever("planner", server, args.listen, port)
    finally:
        await channel.close()


if __name__ == "__main__":
    run(main)
