#!/usr/bin/env bash
# Loopback load test: a real mcp-go server without and with toolguard, 80%
# known and 20% unknown tool calls, 60 seconds per side in alternating
# slices; prints throughput, errors and the server's resident memory.
# Not a CI test: run it on a quiet machine.
#
#   scripts/loadtest.sh [-duration 60s] [-workers 16] [-unknown 20]
set -euo pipefail
cd "$(dirname "$0")/../interop"
exec go run ./cmd/loadtest -duration 60s "$@"
