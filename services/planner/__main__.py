"""Run the planner service alone: python -m services.planner --store 127.0.0.1:7801."""

import argparse
import asyncio

from services.common import transport
from services.common.entry import add_auth_options, add_expose_option, check_listeners, serve_forever, token_of
from services.common.settings import hemra_home
from services.planner.server import build_server


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m services.planner", description=__doc__)
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
    token = token_of(args)
    channel = transport.channel(args.store)
    server, port = build_server(transport.store(channel, token), hemra_home(), args.listen, token, args.build_images)
    try:
        await serve_forever("planner", server, args.listen, port)
    finally:
        await channel.close()


if __name__ == "__main__":
    asyncio.run(main())
