package interop

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/internal/fixture"
)

// v2CapsStdioServer is a TypeScript SDK v2 server (@modelcontextprotocol/server
// 2.4.0, serveStdio) whose tool list depends on the caller, as
// github-mcp-server's does: it lists delete_repository only to a client
// that declares elicitation (in its initialize, or in the request's _meta
// in 2026-07-28), and answers any other caller who calls it with an
// actionable isError. Run with node --input-type=module from testdata/node.
const v2CapsStdioServer = `
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
serveStdio(() => {
  const server = new McpServer({ name: 'v2-caps-stdio', version: '1.0.0' });
  const text = (t) => ({ content: [{ type: 'text', text: t }] });
  const elicits = (ctx) => {
    const env = ctx?.mcpReq?.envelope;
    const caps = env ? env['io.modelcontextprotocol/clientCapabilities'] : server.server.getClientCapabilities();
    return Boolean(caps?.elicitation);
  };
  server.registerTool('get_repository', { description: 'read a repository' }, async () => text('repository'));
  server.registerTool('delete_repository', { description: 'delete a repository (asks first)' }, async (ctx) =>
    elicits(ctx) ? text('deleted') : { content: [{ type: 'text', text: 'Tool "delete_repository" requires client support for form elicitation.' }], isError: true });
  server.server.setRequestHandler('tools/list', (req, ctx) => ({ tools: [
    { name: 'get_repository', description: 'read a repository', inputSchema: { type: 'object' } },
    ...(elicits(ctx) ? [{ name: 'delete_repository', description: 'delete a repository (asks first)', inputSchema: { type: 'object' } }] : []),
  ] }));
  return server;
});
`

// v2CapsStdio returns the argv that starts v2CapsStdioServer.
func v2CapsStdio(t *testing.T) []string {
	t.Helper()
	dir := fixture.NodeDir(t)
	// sh -c: node resolves the script's imports from its working directory.
	return []string{"sh", "-c", `cd "$0" && exec node --input-type=module -e "$1"`, dir, v2CapsStdioServer}
}

// v2Session lists the tools, calls delete_repository and an unknown name,
// in the 2025 era (capabilities in initialize) or 2026-07-28 (in each
// request's _meta), and returns the three answers as the client read them.
func v2Session(t *testing.T, argv []string, modern, elicitation bool) (list, deleteRepo, unknown string) {
	t.Helper()
	c, _ := startLineClient(t, argv)
	caps := map[string]any{}
	if elicitation {
		caps["elicitation"] = map[string]any{}
	}
	meta := ""
	if modern {
		b, _ := json.Marshal(caps)
		meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + string(b) +
			`,"io.modelcontextprotocol/clientInfo":{"name":"interop","version":"1"}}`
	} else {
		c.handshake(t, caps)
	}
	c.send(t, `{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{`+strings.TrimPrefix(meta, ",")+`}}`)
	list, _ = c.waitLine(t, `"l"`)
	c.send(t, `{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"delete_repository","arguments":{}`+meta+`}}`)
	deleteRepo, _ = c.waitLine(t, `"d"`)
	c.send(t, `{"jsonrpc":"2.0","id":"u","method":"tools/call","params":{"name":"delete_repo","arguments":{}`+meta+`}}`)
	unknown, _ = c.waitLine(t, `"u"`)
	for _, l := range c.seen {
		if strings.Contains(l, "toolguard-") {
			t.Errorf("the client saw the guard's own traffic: %s", l)
		}
	}
	return list, deleteRepo, unknown
}

// TestTypeScriptV2CapabilityServerThroughStdioCommand: behind
// toolguard-stdio, a caller the TypeScript SDK v2 server does not list
// delete_repository for, who calls it, gets the server's actionable
// isError byte for byte; an unknown name gets -32602 with the caller's own
// tools in data (never the hidden name); a caller who declares elicitation
// gets it listed, in data too. Both eras.
func TestTypeScriptV2CapabilityServerThroughStdioCommand(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatal("sh is needed")
	}
	for _, modern := range []bool{false, true} {
		for _, elicitation := range []bool{false, true} {
			t.Run(fmt.Sprintf("modern=%v,elicitation=%v", modern, elicitation), func(t *testing.T) {
				argv := v2CapsStdio(t)
				aList, aDelete, aUnknown := v2Session(t, argv, modern, elicitation)
				gList, gDelete, gUnknown := v2Session(t, wrapped(t, argv), modern, elicitation)
				if gList != aList || gDelete != aDelete {
					t.Errorf("through toolguard-stdio:\n%s%s\nalone:\n%s%s", gList, gDelete, aList, aDelete)
				}
				want := []string{"get_repository"}
				if elicitation {
					want = []string{"delete_repository", "get_repository"}
					if !strings.Contains(gDelete, `"text":"deleted"`) {
						t.Errorf("a caller with elicitation: %s", gDelete)
					}
				} else if !strings.Contains(gDelete, `"text":"Tool \"delete_repository\" requires client support for form elicitation."}],"isError":true`) {
					t.Errorf("the caller without elicitation must get the server's isError: %s", gDelete)
				}
				var m rpcMessage
				json.Unmarshal([]byte(aUnknown), &m)
				if m.Error == nil || m.Error.Code != -32602 || m.Error.Message != "Tool delete_repo not found" {
					t.Errorf("alone, the SDK's own not-found answer: %s", aUnknown)
				}
				m = rpcMessage{}
				json.Unmarshal([]byte(gUnknown), &m)
				if m.Error == nil || m.Error.Code != -32602 || !fixture.IsGuardMessage(m.Error.Message, "delete_repo") ||
					!slices.Equal(availableTools(t, m.Error.Data), want) {
					t.Errorf("unknown tool through toolguard-stdio: %s, want availableTools %q", gUnknown, want)
				}
				if !elicitation && strings.Contains(gUnknown, "delete_repository") {
					t.Errorf("the hidden name is in the answer: %s", gUnknown)
				}
			})
		}
	}
}
