#!/usr/bin/env bash
# Tests every module of the repository: gofmt, go vet, go test -race, and a
# short run of every fuzz target. This is the one test command; .ci/run runs it.
#
#   ./test.sh            everything
#   FUZZTIME=1m ./test.sh   longer fuzz runs (default 10s each)
set -euo pipefail
cd "$(dirname "$0")"
root=$(pwd)
fuzztime=${FUZZTIME:-10s}

# Tests that run a real TypeScript SDK server or client find their npm
# packages through this: installed once, from the npm registry.
if [ -f testdata/node/package.json ]; then
	if ! command -v npm >/dev/null; then
		if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
			echo "== apt-get install nodejs npm (for the TypeScript SDK fixtures)"
			apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
		else
			echo "test.sh: Node.js and npm are needed for the TypeScript SDK fixtures; install them and run again" >&2
			exit 1
		fi
	fi
	if [ ! -d testdata/node/node_modules ] || [ testdata/node/package-lock.json -nt testdata/node/node_modules ]; then
		echo "== npm ci (testdata/node)"
		(cd testdata/node && npm ci --no-audit --no-fund --loglevel=error)
	fi
	export TOOLGUARD_NODE_MODULES="$root/testdata/node/node_modules"
fi

status=0
for mod in $(git ls-files --cached --others --exclude-standard '*go.mod' | sort); do
	dir=$(dirname "$mod")
	echo "== $dir"
	(
		cd "$dir"
		unformatted=$(gofmt -l .)
		if [ -n "$unformatted" ]; then
			echo "gofmt needed:" $unformatted >&2
			exit 1
		fi
		go vet ./...
		go test -race -count=1 -timeout 8m ./...
		# Each fuzz target, briefly (the seed corpus already ran above).
		for pkg in $(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' ./...); do
			for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$pkg"/*_test.go 2>/dev/null | sed 's/^func //'); do
				echo "-- fuzz $target ($fuzztime)"
				(cd "$pkg" && go test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" . >/tmp/toolguard-fuzz.log 2>&1) ||
					{ cat /tmp/toolguard-fuzz.log >&2; exit 1; }
			done
		done
	) || status=1
done
exit $status
