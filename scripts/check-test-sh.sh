#!/usr/bin/env bash
# Proves that test.sh can fail: it runs the real test.sh with stand-in `go`
# and `gofmt` commands that fail one chosen step in one chosen module, and
# asserts a non-zero exit and a FAIL line for that module; it also asserts
# that a tree without modules fails and that a tree without .git is tested.
# Runs in a few seconds; .ci/run runs it before test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

stub="$work/bin"
mkdir -p "$stub"
# The stand-in go succeeds at everything, except the step named by
# FAKE_FAIL (vet, test, fuzz) when run in the module FAKE_FAIL_DIR.
cat >"$stub/go" <<'STUB'
#!/bin/sh
step=$1
case "$1" in
list)
	# The packages with tests: the module itself, and middleware/ when it
	# has fuzz targets (so the fuzz step runs).
	echo "$PWD"
	[ -d "$PWD/middleware" ] && echo "$PWD/middleware"
	exit 0 ;;
test)
	for a in "$@"; do [ "$a" = -fuzz ] && step=fuzz; done ;;
esac
mod=$PWD
[ "$step" = fuzz ] && [ "$(basename "$PWD")" = middleware ] && mod=$(dirname "$PWD")
if [ "$step" = "${FAKE_FAIL:-}" ] && [ "$mod" = "${FAKE_FAIL_DIR:-}" ]; then
	echo "stand-in go: $step fails in $mod" >&2
	exit 1
fi
exit 0
STUB
cat >"$stub/gofmt" <<'STUB'
#!/bin/sh
if [ "${FAKE_FAIL:-}" = gofmt ] && [ "$PWD" = "${FAKE_FAIL_DIR:-}" ]; then echo unformatted.go; fi
exit 0
STUB
cat >"$stub/staticcheck" <<'STUB'
#!/bin/sh
if [ "${FAKE_FAIL:-}" = staticcheck ] && [ "$PWD" = "${FAKE_FAIL_DIR:-}" ]; then echo "stand-in staticcheck: fails in $PWD" >&2; exit 1; fi
exit 0
STUB
chmod +x "$stub/go" "$stub/gofmt" "$stub/staticcheck"

export PATH="$stub:$PATH" TOOLGUARD_NO_NPM=1 TOOLGUARD_NO_INSTALL_CHECK=1 TOOLGUARD_STATICCHECK="$stub/staticcheck"
nmod=$(find . -name go.mod -not -path '*/node_modules/*' -not -path './testdata/*' -not -path '*/.git/*' | wc -l)
[ "$nmod" -gt 1 ] || { echo "check-test-sh: expected several modules, found $nmod" >&2; exit 1; }

fails=0
expect() { # expect <want-status: 0|nonzero> <description> <test.sh path> [env...]
	local want=$1 what=$2 script=$3 out status
	shift 3
	status=0
	out=$(env "$@" "$script" 2>&1) || status=$?
	if { [ "$want" = 0 ] && [ "$status" -ne 0 ]; } || { [ "$want" != 0 ] && [ "$status" -eq 0 ]; }; then
		echo "check-test-sh: FAIL: $what: exit status $status, want $want" >&2
		printf '%s\n' "$out" | tail -20 >&2
		fails=$((fails + 1))
		return
	fi
	LAST_OUT=$out
	echo "ok    $what (exit $status)"
}

expect 0 "all steps pass" ./test.sh
grep -qx "$nmod passed, 0 failed" <<<"$LAST_OUT" || { echo "check-test-sh: FAIL: no '$nmod passed, 0 failed' line" >&2; fails=$((fails + 1)); }
# A line as each module starts and one as it ends, with its time, and the
# total.
for mod in $(find . -name go.mod -not -path '*/node_modules/*' -not -path './testdata/*' -not -path '*/.git/*' | sed 's|/go.mod$||'); do
	grep -q "^== $mod ([0-9]* of $nmod) started\$" <<<"$LAST_OUT" && grep -q "^== $mod ok ([0-9ms]*, [0-9ms]* so far)\$" <<<"$LAST_OUT" ||
		{ echo "check-test-sh: FAIL: no start and end lines for $mod" >&2; fails=$((fails + 1)); }
done
grep -q '^total [0-9][0-9ms]*$' <<<"$LAST_OUT" || { echo "check-test-sh: FAIL: no total line" >&2; fails=$((fails + 1)); }

# A failing go test in each module in turn; vet, gofmt and fuzz in a few.
for mod in $(find . -name go.mod -not -path '*/node_modules/*' -not -path './testdata/*' -not -path '*/.git/*' | sed 's|/go.mod$||' | sort); do
	dir=$(cd "$mod" && pwd)
	expect nonzero "go test fails in $mod" ./test.sh FAKE_FAIL=test FAKE_FAIL_DIR="$dir"
	grep -q "^FAIL  $mod\$" <<<"$LAST_OUT" || { echo "check-test-sh: FAIL: no FAIL line for $mod" >&2; fails=$((fails + 1)); }
	grep -qx "$((nmod - 1)) passed, 1 failed" <<<"$LAST_OUT" || { echo "check-test-sh: FAIL: wrong count line for $mod" >&2; fails=$((fails + 1)); }
done
expect nonzero "go vet fails in the root module" ./test.sh FAKE_FAIL=vet FAKE_FAIL_DIR="$root"
expect nonzero "staticcheck fails in adapters/gin" ./test.sh FAKE_FAIL=staticcheck FAKE_FAIL_DIR="$root/adapters/gin"
expect nonzero "gofmt finds a file in adapters/echo" ./test.sh FAKE_FAIL=gofmt FAKE_FAIL_DIR="$root/adapters/echo"
expect nonzero "a fuzz target fails in the root module" ./test.sh FAKE_FAIL=fuzz FAKE_FAIL_DIR="$root"

# No module at all: refuse.
mkdir -p "$work/empty"
cp test.sh "$work/empty/"
expect nonzero "no go.mod found" "$work/empty/test.sh"

# Outside a git checkout (a tarball): the modules are still found.
mkdir -p "$work/tarball/a" "$work/tarball/b/c"
cp test.sh "$work/tarball/"
touch "$work/tarball/go.mod" "$work/tarball/a/go.mod" "$work/tarball/b/c/go.mod"
expect 0 "no .git: three modules" "$work/tarball/test.sh"
grep -qx "3 passed, 0 failed" <<<"$LAST_OUT" || { echo "check-test-sh: FAIL: tarball tree not tested whole" >&2; fails=$((fails + 1)); }

if [ "$fails" -ne 0 ]; then
	echo "check-test-sh: $fails check(s) failed" >&2
	exit 1
fi
echo "check-test-sh: test.sh fails when a step fails"
