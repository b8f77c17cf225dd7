#!/bin/sh
# entrypoint - runs one service of the image by name, with its arguments:
#   ingest | flags | api | writer            the long-running services
#   api bootstrap | api adduser EMAIL | ...  the api's one-shot commands
# Every service reads its configuration from the environment
# (docs/configuration.md) and listens on 0.0.0.0 inside a container.
set -eu
svc=${1:-api}
case "$svc" in
  ingest | flags | api | writer) shift ;;
  *) echo "usage: entrypoint ingest|flags|api|writer [args]" >&2; exit 2 ;;
esac
upper=$(echo "$svc" | tr a-z A-Z)
# a container's address is not loopback: listen on every interface unless told
eval ": \${${upper}_HOST:=0.0.0.0}; export ${upper}_HOST"
exec "/usr/local/bin/$svc" "$@"
