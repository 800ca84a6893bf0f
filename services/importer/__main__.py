"""Run the importer service alone: python -m services.importer --listen 127.0.0.1:7805."""

import argparse
import asyncio

from services.entry import serve_forever
from services.importer.server import build_server


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m services.importer", description=__doc__)
    parser.add_argument("--listen", default="127.0.0.1:7805")
    args = parser.parse_args(argv)
    server, port = build_server(args.listen)
    await serve_forever("importer", server, args.listen, port)


if __name__ == "__main__":
    asyncio.run(main())
