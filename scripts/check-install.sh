#!/usr/bin/env bash
# Proves the modules install as a stranger installs them, without publishing:
# the working tree's modules are written at the release version into a local
# file-based module proxy, and a fresh consumer module outside the repository
# (no replace, no go.work) go-gets the root module and every adapter from it,
# builds each copyable example program against them, and go-installs the
# commands at that version; then the commands are installed from the
# working tree as from a clone, with the README's one line. First, the
# recipe of docs/INSTALL.md for a module of one's own built against a clone (its
# marked code blocks, run as written, the clone being this working tree):
# a copy of examples/echo-mcpgo in a new module outside the repository is
# built with replace lines and with a go.work, run, and asked over
# loopback.
#
#   scripts/check-install.sh            (test.sh runs it)
#   VERSION=v0.2.0 scripts/check-install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=${VERSION:-v0.1.0}
work=$(mktemp -d)
apppid=
trap '[ -n "$apppid" ] && kill "$apppid" 2>/dev/null; chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

# recipe NAME: the lines of docs/INSTALL.md's code block marked
# <!-- recipe:NAME -->, the clone's path being this working tree.
recipe() {
	awk -v m="<!-- recipe:$1 -->" '$0 == m { f = 1; next } f && /^```/ { if (c) exit; c = 1; next } f && c { print }' "$root/docs/INSTALL.md" |
		sed "s|^CLONE=.*|CLONE='$root'|"
}
for name in replace run work; do
	[ -n "$(recipe $name)" ] || { echo "check-install: docs/INSTALL.md has no code block marked recipe:$name" >&2; exit 1; }
done

# serve_and_ask DIR: runs DIR/myapp as docs/INSTALL.md's recipe:run block does
# (on a free port), asks it the block's initialize, then calls a tool it
# does not have in that session, and stops it.
serve_and_ask() {
	local dir=$1 run start ask url answer session i
	run=$(recipe run)
	start=$(printf '%s\n' "$run" | head -1 | sed -e 's/#.*//' -e 's/127\.0\.0\.1:8080/127.0.0.1:0/')
	ask=$(printf '%s\n' "$run" | tail -n +2)
	(cd "$dir" && exec $start) >"$dir/serve.log" 2>&1 &
	apppid=$!
	for i in $(seq 1 300); do # until it says where it listens, or exits
		url=$(sed -n 's|^listening on \(http://[^ ]*\)$|\1|p' "$dir/serve.log")
		[ -n "$url" ] && break
		kill -0 "$apppid" 2>/dev/null || { cat "$dir/serve.log" >&2; echo "check-install: the recipe's myapp exited" >&2; exit 1; }
		sleep 0.1
	done
	[ -n "$url" ] || { echo "check-install: the recipe's myapp did not say where it listens" >&2; exit 1; }
	answer=$(cd "$dir" && eval "${ask//http:\/\/127.0.0.1:8080\/mcp/$url} -D headers --max-time 30" || true)
	case $answer in
	*'"serverInfo":{"name":"notes","version":"1.0.0"}'*) ;;
	*) echo "check-install: the recipe's initialize was answered: $answer" >&2; exit 1 ;;
	esac
	session=$(sed -n 's/^Mcp-Session-Id: *\([^[:space:]]*\).*/\1/ip' "$dir/headers")
	answer=$(curl -s --max-time 30 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $session" \
		-d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_nte","arguments":{}}}' "$url" || true)
	case $answer in
	*'"error":{"code":-32602,"message":"Unknown tool: add_nte'*) ;;
	*) echo "check-install: the recipe's myapp answered an unknown tool with: $answer" >&2; exit 1 ;;
	esac
	kill "$apppid"
	wait "$apppid" 2>/dev/null || true
	apppid=
}

mkdir -p "$work/recipe-replace" "$work/recipe-work"
(cd "$work/recipe-replace" && env -u GOWORK bash -euo pipefail -c "$(recipe replace)") >"$work/recipe.log" 2>&1 ||
	{ cat "$work/recipe.log" >&2; echo "check-install: the recipe of docs/INSTALL.md (replace lines) failed" >&2; exit 1; }
serve_and_ask "$work/recipe-replace/myapp"
# The go.work way: the replace block's lines but go mod edit and tidy,
# then the recipe:work block.
(cd "$work/recipe-work" && env -u GOWORK bash -euo pipefail -c "$(recipe replace | sed -n '/^CLONE=/p; /^mkdir /p; /^cp /p; /^go mod init /p')
$(recipe work)") >"$work/recipe.log" 2>&1 ||
	{ cat "$work/recipe.log" >&2; echo "check-install: the recipe of docs/INSTALL.md (go.work) failed" >&2; exit 1; }
serve_and_ask "$work/recipe-work/myapp"
echo "check-install: a copy of examples/echo-mcpgo in a new module builds against the clone by the recipe of docs/INSTALL.md (replace lines, and go.work), runs and answers"

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
