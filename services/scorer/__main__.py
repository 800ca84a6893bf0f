"""Run the scorer service alone: python -m services.scorer --store 127.0.0.1:7801."""

import argparse
import asyncio

from services.common import transport
from services.entry import add_auth_options, serve_forever, token_of
from services.scorer.server import build_server


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m services.scorer", description=__doc__)
    parser.add_argument("--listen", default="127.0.0.1:7804")
    parser.add_argument("--store", required=True, help="the store service's host:port")
    parser.add_argument(
        "--expose",
        action="store_true",
        help="allow --listen on an address other than loopback (other machines can reach it)",
    )
    add_auth_options(parser)
    args = parser.parse_args(argv)
    if args.expose:
        transport.allow_exposed()
    try:
        transport.check_listen(args.listen)
    except (transport.NotLoopback, ValueError) as exc:
        parser.exit(2, f"error: {exc}\n")
    token = token_of(args)
    channel = transport.channel(args.store)
    server, port, servicer = build_server(transport.store(channel, token), args.listen, token)
    try:
        await serve_forever("scorer", server, args.listen, port)
    finally:
        await servicer.close()
        await channel.close()


if __name__ == "__main__":
    asyncio.run(main())
