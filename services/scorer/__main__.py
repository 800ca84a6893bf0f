"""Run the scorer service alone: python -m services.scorer --store 127.0.0.1:7801."""

import argparse
import asyncio

from clients import rpc as clients
from services import rpc
from services.entry import add_auth_options, serve_forever, token_of
from services.scorer.server import build_server


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m services.scorer", description=__doc__)
    parser.add_argument("--listen", default="127.0.0.1:7804")
    parser.add_argument("--store", required=True, help="the store service's host:port")
    parser.add_argument("--expose", action="store_true",
                        help="allow --listen on an address other than loopback (other machines can reach it)")
    add_auth_options(parser)
    args = parser.parse_args(argv)
    if args.expose:
        rpc.allow_exposed()
    try:
        rpc.check_listen(args.listen)
    except (rpc.NotLoopback, ValueError) as exc:
        parser.exit(2, f"error: {exc}\n")
    token = token_of(args)
    channel = clients.channel(args.store)
    server, port, servicer = build_server(clients.store(channel, token), args.listen, token)
    try:
        await serve_forever("scorer", server, args.listen, port)
    finally:
        await servicer.close()
        await channel.close()


if __name__ == "__main__":
    asyncio.run(main())
