"""Run the executor service alone: python -m hemra.services.executor --store HOST:PORT --scorer HOST:PORT."""

import argparse
import asyncio
import signal

from hemra.services.common import auth, runspec, transport
from hemra.services.common.entry import (
    add_auth_options,
    add_expose_option,
    check_listeners,
    configure_logging,
    credentials_of,
    run,
)
from hemra.services.common.runspec import BOUNDS
from hemra.services.common.settings import hemra_home
from hemra.services.executor import sandboxes
from hemra.services.executor.server import build_executor, lease_settings


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hemra.services.executor", description=__doc__)
    parser.add_argument("--listen", default="127.0.0.1:7803", help="where the harness protocol is served")
    parser.add_argument("--store", required=True)
    parser.add_argument("--scorer", required=True)
    parser.add_argument("--concurrency", type=int, default=1, help="attempts worked at once (1 to 1000)")
    parser.add_argument(
        "--sandbox",
        choices=sandboxes.KINDS,
        default="host",
        help="the sandbox backend that must answer before this executor says SERVING (default %(default)s)",
    )
    parser.add_argument(
        "--pool",
        default=runspec.DEFAULTS["pool"],
        help="the executor pool whose runs this executor works (run --pool; default %(default)s)",
    )
    add_expose_option(parser)
    add_auth_options(parser)
    args = parser.parse_args(argv)
    check_listeners(parser, args)
    if runspec.pool_error(args.pool):
        parser.exit(2, f"error: --pool: {runspec.pool_error(args.pool)}\n")
    if not 1 <= args.concurrency <= BOUNDS["concurrency"][1]:
        parser.exit(
            2, f"error: --concurrency must be from 1 to {BOUNDS['concurrency'][1]:,} (got {args.concurrency:,})\n"
        )
    credentials = credentials_of(args, "executor")
    token = credentials.token(auth.SENDS["executor"])
    configure_logging()
    store_channel, scorer_channel = transport.channel(args.store), transport.channel(args.scorer)
    server, port, worker, _ = build_executor(
        # Past its lease an attempt is another worker's: riding out the store longer is pointless.
        transport.store(store_channel, token, ride_out=lease_settings()[0]),
        transport.scorer(scorer_channel, token),
        hemra_home(),
        args.concurrency,
        args.listen,
        credentials=credentials,
        pool=args.pool,
    )
    await transport.start(server, ready=lambda: sandboxes.backend_state(args.sandbox))
    print(f"executor listening on {args.listen.rpartition(':')[0]}:{port}", flush=True)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    work = asyncio.create_task(worker.run())
    await asyncio.wait({work, asyncio.create_task(stopping.wait())}, return_when=asyncio.FIRST_COMPLETED)
    # NOT_SERVING first, then hand running attempts back, all of them, while the harness
    # protocol and the store's channel are still up (they need both to say they stopped).
    await server.health.not_serving("shutting down")
    await worker.stop()
    await work
    await transport.stop(server, grace=5)
    await store_channel.close()
    await scorer_channel.close()


if __name__ == "__main__":
    run(main)
