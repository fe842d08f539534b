#!/usr/bin/env bash
# The one test command: every module of the repository (each go.mod), with
# gofmt, go vet, staticcheck (a pinned version), go test -race and a short
# run of every fuzz target, then the installability check
# (scripts/check-install.sh). .ci/run runs it.
#
#   ./test.sh                 everything
#   FUZZTIME=200000x ./test.sh   longer fuzz runs (default 5000 inputs each)
#
# It prints a line as each module starts and ends (with the time it took
# and the time so far), and the total at the end. It takes about 7-9
# minutes on an otherwise idle 2-core machine with warm caches; a first
# run also downloads the npm packages and Go modules.
#
# Fuzz budgets are counts of inputs, not durations: with a duration, Go 1.26's
# fuzz coordinator can fail a run that found nothing with "context deadline
# exceeded" when the machine is busy (go.dev/issue/75804, fixed in Go 1.27).
#
# It exits non-zero when any step of any module fails, when it finds no
# module, or when a tool it needs is missing. Modules are found with find(1),
# so a tarball or a "Download ZIP" tests the same as a git checkout.
#
# Every step is checked explicitly ("|| return 1"): bash ignores set -e inside
# a function or subshell whose status is tested, so relying on it here would
# let a failing step pass unnoticed (scripts/check-test-sh.sh proves it does
# not).
set -uo pipefail
cd "$(dirname "$0")" || exit 1
root=$(pwd)
fuzztime=${FUZZTIME:-5000x}

die() {
	echo "test.sh: $*" >&2
	exit 1
}

command -v go >/dev/null || die "go is not on PATH"
command -v gofmt >/dev/null || die "gofmt is not on PATH"

# staticcheck, pinned, built once into the Go build cache's directory
# (outside the repository). TOOLGUARD_STATICCHECK names another binary
# (scripts/check-test-sh.sh gives a stand-in).
staticcheck_version=v0.8.2
staticcheck=${TOOLGUARD_STATICCHECK:-"$(go env GOCACHE)/toolguard-bin/staticcheck-$staticcheck_version"}
if [ ! -x "$staticcheck" ]; then
	echo "== go install honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
	mkdir -p "$(dirname "$staticcheck")" || die "cannot make $(dirname "$staticcheck")"
	tmpbin=$(mktemp -d) || die "mktemp failed"
	GOBIN="$tmpbin" go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version" ||
		die "cannot install staticcheck $staticcheck_version"
	mv "$tmpbin/staticcheck" "$staticcheck" || die "cannot keep staticcheck"
	rm -rf "$tmpbin"
fi

# Tests that run a real TypeScript SDK server or client, or a published MCP
# server from npm, find their packages through TOOLGUARD_NODE_MODULES:
# installed once, from the npm registry, into testdata/node.
# TOOLGUARD_NO_NPM=1 skips this (those tests then fail, they do not skip).
if [ "${TOOLGUARD_NO_NPM:-}" != 1 ] && [ -f testdata/node/package.json ]; then
	if ! command -v npm >/dev/null; then
		if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
			echo "== apt-get install nodejs npm (for the TypeScript fixtures)"
			{ apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null; } || die "apt-get install nodejs npm failed"
		else
			die "Node.js and npm are needed for the TypeScript fixtures; install them and run again"
		fi
	fi
	if [ ! -d testdata/node/node_modules ] || [ testdata/node/package-lock.json -nt testdata/node/node_modules ]; then
		echo "== npm ci (testdata/node)"
		(cd testdata/node && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed in testdata/node"
		touch testdata/node/node_modules
	fi
	export TOOLGUARD_NODE_MODULES="$root/testdata/node/node_modules"
fi

# Every go.mod outside node_modules and testdata, root first.
modules=$(find . -name go.mod -not -path '*/node_modules/*' -not -path './testdata/*' -not -path '*/.git/*' |
	sed 's|/go.mod$||' | sort)
[ -n "$modules" ] || die "no go.mod found under $root"

fuzzlog=$(mktemp)
trap 'rm -f "$fuzzlog"' EXIT

# test_module runs every step in the current directory; on failure it prints
# the step and returns 1.
test_module() {
	local unformatted pkgs pkg target
	unformatted=$(gofmt -l .) || { echo "step failed: gofmt" >&2; return 1; }
	if [ -n "$unformatted" ]; then
		echo "step failed: gofmt needed:" $unformatted >&2
		return 1
	fi
	go vet ./... || { echo "step failed: go vet" >&2; return 1; }
	"$staticcheck" ./... || { echo "step failed: staticcheck" >&2; return 1; }
	go test -race -count=1 -timeout 10m ./... || { echo "step failed: go test" >&2; return 1; }
	# Each fuzz target, briefly (its seed corpus already ran above).
	pkgs=$(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' ./...) ||
		{ echo "step failed: go list" >&2; return 1; }
	for pkg in $pkgs; do
		for target in $(cat "$pkg"/*_test.go 2>/dev/null | grep -o '^func Fuzz[A-Za-z0-9_]*' | sed 's/^func //'); do
			# A target whose inputs are costly (real server sessions) names
			# a smaller budget on a "//toolguard:fuzzbudget N" line above it;
			# FUZZTIME, when set, still applies to every target.
			budget=$fuzztime
			if [ -z "${FUZZTIME:-}" ]; then
				own=$(cat "$pkg"/*_test.go | grep -B2 "^func $target(" | sed -n 's|^//toolguard:fuzzbudget ||p' | head -1)
				[ -n "$own" ] && budget=$own
			fi
			echo "-- fuzz $target ($budget)"
			if ! (cd "$pkg" && go test -run '^$' -fuzz "^$target\$" -fuzztime "$budget" . >"$fuzzlog" 2>&1); then
				cat "$fuzzlog" >&2
				echo "step failed: fuzz $target" >&2
				return 1
			fi
		done
	done
}

# elapsed prints the time since $1 (a value of $SECONDS): 42s, 3m07s.
elapsed() {
	local s=$((SECONDS - $1))
	if [ "$s" -ge 60 ]; then
		printf '%dm%02ds' $((s / 60)) $((s % 60))
	else
		printf '%ds' "$s"
	fi
}

passed=0
failed=0
summary=""
count=$(printf '%s\n' $modules | wc -l | tr -d ' ')
i=0
for dir in $modules; do
	i=$((i + 1))
	echo "== $dir ($i of $count) started"
	begun=$SECONDS
	if (cd "$dir" && test_module); then
		passed=$((passed + 1))
		summary+="ok    $dir"$'\n'
		echo "== $dir ok ($(elapsed "$begun"), $(elapsed 0) so far)"
	else
		failed=$((failed + 1))
		summary+="FAIL  $dir"$'\n'
		echo "== $dir FAILED ($(elapsed "$begun"), $(elapsed 0) so far)"
	fi
done

# Installability: the modules at their release version, from a local
# file-based module proxy, into a fresh consumer outside the repository.
if [ "${TOOLGUARD_NO_INSTALL_CHECK:-}" != 1 ]; then
	echo "== install check started"
	begun=$SECONDS
	if scripts/check-install.sh; then
		passed=$((passed + 1))
		summary+="ok    install check (scripts/check-install.sh)"$'\n'
		echo "== install check ok ($(elapsed "$begun"))"
	else
		failed=$((failed + 1))
		summary+="FAIL  install check (scripts/check-install.sh)"$'\n'
		echo "== install check FAILED ($(elapsed "$begun"))"
	fi
fi

echo
printf '%s' "$summary"
echo "total $(elapsed 0)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
