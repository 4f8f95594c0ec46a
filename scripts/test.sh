#!/usr/bin/env bash
# test.sh is the project's test command: every package, with the race
# detector, against the real disk, fio, redis-server and the Docker engine;
# then the store again without it, because the store's plain-store publish
# path (server/store/publish_amd64.go) is built only without -race (about
# 30 s more), and the allocation tests of the server and the client without
# it, because under -race sync.Pool drops crypto/tls's record buffers at
# random and their TLS cases skip there, and the client's pacing test,
# whose bound the race detector's slowdown would cross (a few seconds).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -race -count=1 -timeout 40m ./... "$@"
go test -count=1 -timeout 10m ./server/store/... "$@"
go test -count=1 -timeout 10m -run 'Alloc|TestPacingIsPrecise' ./server/ ./bench/ "$@"
