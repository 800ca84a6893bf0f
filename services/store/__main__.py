"""Run the store service alone: python -m hemra.services.store --listen 127.0.0.1:7801.

It never migrates the database (`hemra db upgrade` does, once per deployment): it serves
NOT_SERVING, its calls answered UNAVAILABLE, until the schema is at head."""

import argparse

from hemra.services.common.entry import (
    add_auth_options,
    add_expose_option,
    check_listeners,
    credentials_of,
    run,
    serve_forever,
)
from hemra.services.store import db
from hemra.services.store.server import build_server
from hemra.services.store.service import Store
from hemra.services.store.settings import StoreSettings


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hemra.services.store", description=__doc__)
    parser.add_argument("--listen", default="127.0.0.1:7801", help="host:port (port 0 picks one)")
    parser.add_argument("--database-url", default=None, help="default: HEMRA_DATABASE_URL, else HEMRA_HOME/hemra.db")
    add_expose_option(parser)
    add_auth_options(parser)
    args = parser.parse_args(argv)
    check_listeners(parser, args)
    credentials = credentials_of(args, "store")
    settings = StoreSettings.from_env(args.database_url).check()
    store = await Store.open(settings.database_url, settings.blob_dir, migrate=False)
    server, port = build_server(store, args.listen, credentials)
    try:
        await serve_forever("store", server, args.listen, port, ready=lambda: db.schema_state(settings.database_url))
    finally:
        await store.close()


if __name__ == "__main__":
    run(main)
