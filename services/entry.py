"""Entry-point helpers for running one service as its own process."""

import asyncio
import logging
import signal

import grpc

from services import rpc


async def serve_forever(name: str, server: grpc.aio.Server, listen: str, port: int) -> None:
    """Start, print the bound address on one line (tests read it), stop on SIGTERM/SIGINT."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    await server.start()
    host, _ = rpc.split_listen(listen)
    print(f"{name} listening on {host}:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(grace=5)
