#!/usr/bin/env bash
# Re-records testdata/notfound/corpus.jsonl: how real MCP servers published
# on npm answer a tools/call of a tool they do not have, and how some of
# their real tools answer when they fail. See testdata/notfound/README.md.
#
#   scripts/record-notfound-corpus.sh            # install, then record
#   SCRATCH=/tmp/x scripts/record-notfound-corpus.sh
#   ONLY=slack scripts/record-notfound-corpus.sh # record only matching packages
#                                                # (writes a corpus of those only)
#
# It is not part of the test command and no test runs it.
#
# The packages (scripts/recordcorpus/servers.go, pinned to exact versions)
# are installed from the npm registry into $SCRATCH, outside the repository.
# The servers then run with dummy credentials, as root's children, in a
# network namespace of their own that has only loopback (unshare -n): none
# of them can reach a network, whatever it tries. This needs root (or user
# namespaces) and unshare(1) and ip(8).
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1
repo=$(pwd)
scratch=${SCRATCH:-/tmp/npmcorpus}
jobs=${JOBS:-4}

for c in go node npm unshare ip; do
	command -v "$c" >/dev/null || {
		echo "record-notfound-corpus: $c is not on PATH" >&2
		exit 1
	}
done
case "$scratch" in
"$repo" | "$repo"/*)
	echo "record-notfound-corpus: SCRATCH must be outside the repository" >&2
	exit 1
	;;
esac
mkdir -p "$scratch/pkgs" "$scratch/empty" "$scratch/work" "$scratch/home"

bin="$scratch/recordcorpus"
go build -o "$bin" ./scripts/recordcorpus

# Install each spec into its own directory, so that their dependencies do
# not meet. A package whose install scripts fail (they download a browser)
# is installed again without them.
install_one() {
	spec=$1
	d="$scratch/pkgs/$(printf '%s' "$spec" | tr '@/' '__')"
	if [ -f "$d/.installed" ]; then
		return 0
	fi
	mkdir -p "$d"
	[ -f "$d/package.json" ] || echo '{"private":true}' >"$d/package.json"
	export PUPPETEER_SKIP_DOWNLOAD=1 PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
	if (cd "$d" && npm install --save-exact --no-audit --no-fund "$spec" >install.log 2>&1) ||
		(cd "$d" && npm install --save-exact --no-audit --no-fund --ignore-scripts "$spec" >install.log 2>&1); then
		touch "$d/.installed"
		echo "installed $spec"
	else
		echo "NOT installed $spec (see $d/install.log)"
	fi
}
export -f install_one
export scratch
"$bin" -list ${ONLY:+-only "$ONLY"} | xargs -P "$jobs" -I{} bash -c 'install_one "$1"' _ {}

# mcp-framework is a framework: a server with one tool, the way its README
# builds one, shows how its dispatch answers.
fw="$scratch/pkgs/mcp-framework_0.2.22"
mkdir -p "$fw/mcp-framework-server/dist/tools"
cat >"$fw/mcp-framework-server/package.json" <<'EOF'
{"name": "mcp-framework-echo", "version": "0.1.0", "type": "module"}
EOF
cat >"$fw/mcp-framework-server/dist/index.js" <<'EOF'
import { MCPServer } from "mcp-framework";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
const server = new MCPServer({ basePath: dirname(fileURLToPath(import.meta.url)) });
await server.start();
EOF
cat >"$fw/mcp-framework-server/dist/tools/EchoTool.js" <<'EOF'
import { MCPTool } from "mcp-framework";
import { z } from "zod";
class EchoTool extends MCPTool {
  name = "echo";
  description = "Echoes a message";
  schema = z.object({ message: z.string().describe("The message to echo") });
  async execute(input) { return input.message; }
}
export default EchoTool;
EOF
ln -sfn ../node_modules "$fw/mcp-framework-server/node_modules"

# cclsp reads its language servers from a config file; none is configured,
# so it starts no language server.
echo '{"servers": []}' >"$scratch/cclsp.json"

# mcp-graphql-schema reads a schema file: one with a single field.
echo 'type Query { hello: String }' >"$scratch/schema.graphqls"

# mcp-server-kubernetes reads a kubeconfig: a dummy cluster on a closed
# loopback port.
cat >"$scratch/kubeconfig" <<'EOF'
apiVersion: v1
kind: Config
clusters: [{name: dummy, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: dummy, user: {token: dummy}}]
contexts: [{name: dummy, context: {cluster: dummy, user: dummy}}]
current-context: dummy
EOF

# fastmcp (npm) is a framework: a server with one tool, the way its README
# builds one.
fm="$scratch/pkgs/fastmcp_4.20.16"
if [ -d "$fm/node_modules/fastmcp" ]; then
	[ -d "$fm/node_modules/zod" ] || (cd "$fm" && npm install --no-save --no-audit --no-fund zod@3 >>install.log 2>&1)
	mkdir -p "$fm/fastmcp-server"
	echo '{"name": "fastmcp-add", "version": "0.1.0", "type": "module"}' >"$fm/fastmcp-server/package.json"
	cat >"$fm/fastmcp-server/index.js" <<'EOF2'
import { FastMCP } from "fastmcp";
import { z } from "zod";
const server = new FastMCP({ name: "Addition", version: "1.0.0" });
server.addTool({
  name: "add",
  description: "Add two numbers",
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async (args) => String(args.a + args.b),
});
server.start({ transportType: "stdio" });
EOF2
	ln -sfn ../node_modules "$fm/fastmcp-server/node_modules"
fi

# tmcp is a framework (its own implementation of the protocol): a server
# with one tool, the way its README builds one.
tm="$scratch/pkgs/tmcp_1.20.0"
if [ -d "$tm/node_modules/tmcp" ]; then
	[ -d "$tm/node_modules/@tmcp/transport-stdio" ] || (cd "$tm" && npm install --no-save --no-audit --no-fund tmcp@1.20.0 @tmcp/transport-stdio@0.5.0 @tmcp/adapter-zod@0.1.7 zod@4 >>install.log 2>&1)
	mkdir -p "$tm/tmcp-server"
	echo '{"name": "tmcp-echo", "version": "0.1.0", "type": "module"}' >"$tm/tmcp-server/package.json"
	cat >"$tm/tmcp-server/index.js" <<'EOF2'
import { McpServer } from "tmcp";
import { ZodJsonSchemaAdapter } from "@tmcp/adapter-zod";
import { StdioTransport } from "@tmcp/transport-stdio";
import { z } from "zod";
const server = new McpServer(
  { name: "tmcp-echo", version: "1.0.0", description: "echo" },
  { adapter: new ZodJsonSchemaAdapter(), capabilities: { tools: { listChanged: true } } },
);
server.tool(
  { name: "echo", description: "Echoes a message", schema: z.object({ message: z.string() }) },
  async ({ message }) => ({ content: [{ type: "text", text: message }] }),
);
new StdioTransport(server).listen();
EOF2
	ln -sfn ../node_modules "$tm/tmcp-server/node_modules"
fi

# @ivotoby/openapi-mcp-server serves the operations of an OpenAPI spec: a
# small one, with an API on a closed loopback port.
cat >"$scratch/openapi.json" <<'EOF2'
{"openapi": "3.0.0", "info": {"title": "Pets", "version": "1.0.0"},
 "servers": [{"url": "http://127.0.0.1:9"}],
 "paths": {"/pets/{petId}": {"get": {"operationId": "getPetById", "summary": "Get a pet",
   "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "string"}}],
   "responses": {"200": {"description": "a pet"}}}}}}
EOF2

out="$repo/testdata/notfound"
mkdir -p "$out"
only=()
if [ -n "${ONLY:-}" ]; then
	only=(-only "$ONLY")
fi
# shellcheck disable=SC2016 # expanded by the inner shell
unshare -n -- sh -c 'ip link set lo up && exec "$@"' _ \
	"$bin" -root "$scratch" -out "$out/corpus.jsonl" -status "$out/servers.json" "${only[@]}"
echo "node $(node --version), recorded $(date -u +%Y-%m-%d)" >&2
"$bin" -table "$out/corpus.jsonl" -status "$out/servers.json"
