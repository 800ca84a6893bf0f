"""python -m tests.modelserver --script FILE [--port N]: serve a script until interrupted."""

import argparse
import signal
import sys
import threading

from tests.modelserver import ModelServer, load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.modelserver", description=__doc__)
    parser.add_argument("--script", required=True, help="a JSON script: a list of turns")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument(
        "--count", action="store_true", help="print 'requests N' (model requests served) on SIGUSR1 (benchmarks)"
    )
    args = parser.parse_args(argv)
    try:
        script = load(args.script)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    with ModelServer(script, args.port) as server:
        if args.count:
            signal.signal(signal.SIGUSR1, lambda *_: print(f"requests {len(server.model_requests())}", flush=True))
        print(f"modelserver listening on {server.url}", flush=True)
        try:
            stopped.wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
