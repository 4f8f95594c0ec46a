#!/usr/bin/env bash
# test.sh is the project's test command: every package, with the race
# detector, against the real disk, fio, redis-server and the Docker engine.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go test -race -count=1 -timeout 40m ./... "$@"
