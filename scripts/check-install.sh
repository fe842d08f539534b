#!/usr/bin/env bash
# Proves the modules install as a stranger installs them, without publishing:
# the working tree's modules are written at the release version into a local
# file-based module proxy, and a fresh consumer module outside the repository
# (no replace, no go.work) go-gets the root module and every adapter from it,
# builds each copyable example program against them, and go-installs the
# commands at that version; then the commands are installed from the
# working tree as from a clone, with the README's one line.
#
#   scripts/check-install.sh            (test.sh runs it)
#   VERSION=v0.2.0 scripts/check-install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=${VERSION:-v0.1.0}
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

adapters=$(cd adapters && ls -d */ | sed 's|/$||')
(cd scripts/modproxy && go run . -version "$version" -out "$work/proxy" "$root" $(printf "$root/adapters/%s " $adapters)) >/dev/null

# The consumer reads the toolguard modules from the local proxy only, and
# everything else from the module cache already on this machine or, failing
# that, the usual proxy. A fresh module cache, so that nothing stale is used.
cache=$(go env GOMODCACHE)
export GOPROXY="file://$work/proxy,file://$cache/cache/download,$(go env GOPROXY)"
export GOMODCACHE="$work/modcache"
export GONOSUMDB=github.com/toolguard GONOSUMCHECK=1 GOWORK=off GOFLAGS=-mod=mod
export GOBIN="$work/bin"
# Checksums of everything else are still checked against the checksum
# database; its tiles already fetched on this machine are reused.
if [ -d "$cache/cache/download/sumdb" ]; then
	mkdir -p "$GOMODCACHE/cache/download"
	cp -r "$cache/cache/download/sumdb" "$GOMODCACHE/cache/download/"
fi

mkdir -p "$work/consumer"
cd "$work/consumer"
go mod init example.com/consumer >/dev/null 2>&1
go get "github.com/toolguard/toolguard@$version" $(printf "github.com/toolguard/toolguard/adapters/%s@$version " $adapters) 2>"$work/get.log" ||
	{ cat "$work/get.log" >&2; exit 1; }
if grep -q '^replace' go.mod; then
	echo "check-install: the consumer's go.mod has a replace directive" >&2
	exit 1
fi

# The copyable examples, as a team would copy them into its own module.
n=0
for dir in "$root"/examples/*/; do
	name=$(basename "$dir")
	srcs=$(ls "$dir"*.go 2>/dev/null | grep -v '_test\.go$' || true)
	[ -n "$srcs" ] || continue
	grep -q '"github.com/toolguard/toolguard/examples' $srcs && continue # uses the examples' internals
	mkdir -p "$name"
	cp $srcs "$name/"
	n=$((n + 1))
done
go mod tidy 2>"$work/tidy.log" || { cat "$work/tidy.log" >&2; exit 1; }
go build ./...
go vet ./...
echo "check-install: $n example programs build against the modules at $version from a local proxy"

# The commands, with one go install line each.
for cmd in $(cd "$root" && go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./... | grep -v -e /scripts/ -e /internal/); do
	go install "$cmd@$version"
	bin="$GOBIN/$(basename "$cmd")"
	[ -x "$bin" ] || { echo "check-install: go install $cmd@$version made no binary" >&2; exit 1; }
	echo "check-install: go install $cmd@$version"
done

# From a clone, before the modules are published: the one line the README
# gives installs every command.
clonebin="$work/clonebin"
(cd "$root" && GOBIN="$clonebin" go install ./cmd/... ./conformance/cmd/toolguard-check)
for cmd in $(cd "$root" && go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./... | grep -v -e /scripts/ -e /internal/); do
	bin="$clonebin/$(basename "$cmd")"
	[ -x "$bin" ] || { echo "check-install: go install ./cmd/... ./conformance/cmd/toolguard-check in a clone made no $(basename "$cmd")" >&2; exit 1; }
	"$bin" -h >/dev/null 2>&1 || { echo "check-install: $(basename "$cmd") -h (installed from a clone) failed" >&2; exit 1; }
done
echo "check-install: go install ./cmd/... ./conformance/cmd/toolguard-check in a clone"
