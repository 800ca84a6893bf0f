#!/bin/bash
# The official postgres image's contract, in brief: on an empty data folder, initdb with
# POSTGRES_USER and the password from POSTGRES_PASSWORD(_FILE), create POSTGRES_DB; then
# run postgres as the postgres user, listening on every interface with password auth.
set -euo pipefail
USER_NAME="${POSTGRES_USER:-postgres}"
DB_NAME="${POSTGRES_DB:-$USER_NAME}"
if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
  PASSWORD="$(cat "$POSTGRES_PASSWORD_FILE")"
else
  PASSWORD="${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE}"
fi
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" && chown -R postgres:postgres "$PGDATA" && chmod 0700 "$PGDATA"
  # Its socket folder may be a fresh tmpfs (a read-only root): the official image's 3777.
  mkdir -p /var/run/postgresql && chown postgres:postgres /var/run/postgresql && chmod 3777 /var/run/postgresql
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"
  printf '%s\n' "$PASSWORD" > "$pwfile"
  initdb --username="$USER_NAME" --pwfile="$pwfile" --auth-host=scram-sha-256 --auth-local=trust -D "$PGDATA" >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$DB_NAME" != postgres ]; then
    postgres --single -D "$PGDATA" -c listen_addresses='' postgres <<< "CREATE DATABASE \"$DB_NAME\" OWNER \"$USER_NAME\";" >/dev/null
  fi
fi
exec "$@" -c listen_addresses='*' -D "$PGDATA"
