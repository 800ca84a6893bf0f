"""Run the importer service alone: python -m services.importer --listen 127.0.0.1:7805."""

import argparse
import asyncio

from services.entry import add_auth_options, serve_forever, token_of
from services.importer.server import build_server


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m services.importer", description=__doc__)
    parser.add_argument("--listen", default="127.0.0.1:7805")
    add_auth_options(parser)
    args = parser.parse_args(argv)
    server, port = build_server(args.listen, token_of(args))
    await serve_forever("importer", server, args.listen, port)


if __name__ == "__main__":
    asyncio.run(main())
