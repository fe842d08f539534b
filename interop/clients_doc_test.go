package interop

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/internal/fixture"
)

// docPath is the path docs/CLIENTS.md writes for toolguard-stdio; the
// reader puts theirs there, and so does the test.
const docPath = "/home/you/go/bin/toolguard-stdio"

// docServerArgs is the server's command line every stdio entry gives.
var docServerArgs = []string{"npx", "-y", "@modelcontextprotocol/server-everything"}

// docProxyURL is toolguard-proxy's default address with the upstream's
// path /mcp, where every HTTP entry points.
const docProxyURL = "http://127.0.0.1:8080/mcp"

// clientsDoc returns docs/CLIENTS.md's JSON code blocks, and the one
// marked <!-- clients:mcpServers -->.
func clientsDoc(t *testing.T) (blocks []string, marked string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "CLIENTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)(<!-- clients:mcpServers -->\n)?[ \t]*```json\n(.*?)\n[ \t]*```")
	for _, m := range re.FindAllStringSubmatch(string(doc), -1) {
		blocks = append(blocks, m[2])
		if m[1] != "" {
			marked = m[2]
		}
	}
	if marked == "" {
		t.Fatal("docs/CLIENTS.md has no JSON block marked <!-- clients:mcpServers -->")
	}
	return blocks, marked
}

// TestClientsDocSnippetRunsInInspector: the mcpServers block of
// docs/CLIENTS.md, with only toolguard-stdio's path replaced, configures
// a real client (MCP Inspector's CLI 1.0.3, which reads that file format
// with --config and --server): it starts server-everything with npx
// through toolguard-stdio, lists its tools, and a call to a tool the
// server does not have is answered with the guard's -32602. Every other
// JSON block parses, and its entries have the same command line, or the
// proxy's address.
func TestClientsDocSnippetRunsInInspector(t *testing.T) {
	blocks, marked := clientsDoc(t)
	for _, b := range blocks {
		var file struct {
			MCPServers map[string]map[string]any `json:"mcpServers"`
			Servers    map[string]map[string]any `json:"servers"` // VS Code
		}
		if err := json.Unmarshal([]byte(b), &file); err != nil {
			t.Errorf("a JSON block of docs/CLIENTS.md does not parse: %v\n%s", err, b)
			continue
		}
		entries := file.MCPServers
		if entries == nil {
			entries = file.Servers
		}
		if len(entries) != 1 {
			t.Errorf("want one server entry, got %d:\n%s", len(entries), b)
		}
		for _, e := range entries {
			url, _ := e["url"].(string)
			if serverURL, ok := e["serverUrl"].(string); ok {
				url = serverURL
			}
			args, _ := json.Marshal(e["args"])
			want, _ := json.Marshal(docServerArgs)
			switch {
			case e["command"] != nil && (e["command"] != docPath || string(args) != string(want)):
				t.Errorf("a stdio entry runs %v %s, want %s %s", e["command"], args, docPath, want)
			case e["command"] == nil && url != docProxyURL:
				t.Errorf("an HTTP entry points at %q, want the proxy's %s:\n%s", url, docProxyURL, b)
			}
		}
	}

	if strings.Count(marked, docPath) != 1 {
		t.Fatalf("the marked block names %s %d times, want once:\n%s", docPath, strings.Count(marked, docPath), marked)
	}
	config := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(config, []byte(strings.Replace(marked, docPath, command(t, "toolguard-stdio"), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	nodeModules := filepath.Join(fixture.NodeDir(t), "node_modules")
	inspector := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(filepath.Join(nodeModules, ".bin", "mcp-inspector-cli"),
			append([]string{"--cli", "--config", config, "--server", "everything"}, args...)...)
		// inspector-cli 1.0.3 reads its package.json as "../package.json"
		// of its working directory: node_modules, whose parent holds the
		// fixtures' package.json, as any project's does. npx finds
		// server-everything there, installed; offline, it asks no
		// registry.
		cmd.Dir = nodeModules
		cmd.Env = append(os.Environ(), "npm_config_offline=true", "npm_config_update_notifier=false")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	out, code := inspector("--method", "tools/list")
	var names []string
	for _, m := range regexp.MustCompile(`"name": "([^"]+)"`).FindAllStringSubmatch(out, -1) {
		names = append(names, m[1])
	}
	if code != 0 || !slices.Contains(names, "echo") || !slices.Contains(names, "get-sum") {
		t.Fatalf("tools/list through the documented entry: exit %d, tools %q\n%s", code, names, out)
	}
	out, code = inspector("--method", "tools/call", "--tool-name", "ech", "--tool-arg", "message=hi")
	if code == 0 || !strings.Contains(out, "MCP error -32602: Unknown tool: ech. Did you mean echo?") {
		t.Errorf("a call to ech through the documented entry: exit %d\n%s", code, out)
	}
	out, code = inspector("--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi")
	if code != 0 || !strings.Contains(out, "Echo: hi") {
		t.Errorf("a call to echo through the documented entry: exit %d\n%s", code, out)
	}
}
