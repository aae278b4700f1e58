#!/bin/sh
# Initialise $PGDATA on the first start (superuser postgres with $POSTGRES_PASSWORD), then run
# the server listening on every address.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "entrypoint: POSTGRES_PASSWORD is empty; it sets the postgres user's password" >&2
    exit 1
  fi
  mkdir -p "$PGDATA"
  chmod 700 "$PGDATA"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb --pgdata="$PGDATA" --username=postgres --pwfile="$pwfile" --encoding=UTF8 \
    --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
fi
# The socket where the clients look for it, unless that directory is not ours to write (the
# manifest mounts an emptyDir there and podman does not apply fsGroup).
socket=/var/run/postgresql
[ -w "$socket" ] || socket=/tmp
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories="$socket"
