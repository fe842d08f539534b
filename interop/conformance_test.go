package interop

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/internal/fixture"
)

// TestMain lets the test binary serve a real mcp-go server on stdio, for
// the stdio checks, when TOOLGUARD_MCPGO_STDIO is set.
func TestMain(m *testing.M) {
	if os.Getenv("TOOLGUARD_MCPGO_STDIO") != "" {
		if err := server.ServeStdio(newMCPGo("echo", "add")); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func check(t *testing.T, url string) conformance.Report {
	t.Helper()
	rep, err := conformance.CheckURL(context.Background(), url, conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func want(t *testing.T, rep conformance.Report, v conformance.Verdict, c conformance.Category, era string) {
	t.Helper()
	if rep.Verdict != v || rep.Category != c || (era != "" && rep.Era != era) || rep.Tools != 2 {
		t.Errorf("got %s (era %s, %d tools), want %s %s era %s", rep, rep.Era, rep.Tools, v, c, era)
	}
}

func TestCheckerOnRealMCPGo(t *testing.T) {
	for name, opts := range map[string][]server.StreamableHTTPOption{
		"default":   nil,
		"stateful":  {server.WithStateful(true)},
		"stateless": {server.WithStateLess(true)},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(server.NewStreamableHTTPServer(newMCPGo("echo", "add"), opts...))
			defer srv.Close()
			rep := check(t, srv.URL+"/mcp")
			want(t, rep, conformance.Verified, "", conformance.Era2026)
			if rep.ErrorCode == nil || *rep.ErrorCode != -32602 || rep.HTTPStatus != 400 {
				t.Errorf("mcp-go answered %v with HTTP %d, want -32602 with 400 (2026-07-28)", rep.ErrorCode, rep.HTTPStatus)
			}
		})
	}
	t.Run("2025 era", func(t *testing.T) {
		srv := httptest.NewServer(server.NewStreamableHTTPServer(newMCPGo("echo", "add")))
		defer srv.Close()
		rep, err := conformance.CheckURL(context.Background(), srv.URL+"/mcp", conformance.Options{Era: conformance.Era2025})
		if err != nil {
			t.Fatal(err)
		}
		want(t, rep, conformance.Verified, "", conformance.Era2025)
		if rep.HTTPStatus != 200 {
			t.Errorf("HTTP %d", rep.HTTPStatus)
		}
	})
	t.Run("TestHandler", func(t *testing.T) {
		h := server.NewStreamableHTTPServer(newMCPGo("echo", "add"), server.WithEndpointPath("/"))
		if err := conformance.TestHandler(h, conformance.Options{}); err != nil {
			t.Error(err)
		}
	})
}

func TestCheckerOnRealGoSDK(t *testing.T) {
	for name, opts := range map[string]*gosdk.StreamableHTTPOptions{
		"stateful sse": nil,
		"json":         {JSONResponse: true},
		"stateless":    {Stateless: true},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(goSDKHandler(newGoSDK("echo", "add"), opts))
			defer srv.Close()
			rep := check(t, srv.URL)
			want(t, rep, conformance.Verified, "", "")
			if rep.ErrorCode == nil || *rep.ErrorCode != -32602 {
				t.Errorf("go-sdk answered code %v", rep.ErrorCode)
			}
		})
	}
}

func TestCheckerOnRealTypeScript(t *testing.T) {
	for _, mode := range []string{"--mode=stateful", "--mode=stateless", "--json=true"} {
		t.Run(mode, func(t *testing.T) {
			ts := fixture.StartTS(t, mode)
			want(t, check(t, ts.URL), conformance.ObservedRisk, conformance.ResultIsError, conformance.Era2025)
		})
	}
}

func TestCheckerOnStdio(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := conformance.CheckCommand(context.Background(), []string{"env", "TOOLGUARD_MCPGO_STDIO=1", exe}, conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want(t, rep, conformance.Verified, "", "")

	rep, err = conformance.CheckCommand(context.Background(), fixture.StdioCommand(t), conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want(t, rep, conformance.ObservedRisk, conformance.ResultIsError, conformance.Era2025)
}

// The published reference servers from npm, over stdio, as their users run
// them: each answers the made-up tool with isError.
func TestCheckerOnPublishedStdioServers(t *testing.T) {
	mods := filepath.Join(fixture.NodeDir(t), "node_modules", "@modelcontextprotocol")
	for name, args := range map[string][]string{
		"server-everything":          {"stdio"},
		"server-memory":              nil,
		"server-filesystem":          {t.TempDir()},
		"server-sequential-thinking": nil,
	} {
		t.Run(name, func(t *testing.T) {
			argv := append([]string{"node", filepath.Join(mods, name, "dist", "index.js")}, args...)
			if name == "server-memory" {
				argv = append([]string{"env", "MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}, argv...)
			}
			rep, err := conformance.CheckCommand(context.Background(), argv, conformance.Options{Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != conformance.ObservedRisk || rep.Category != conformance.ResultIsError || rep.Tools == 0 ||
				rep.MediaType != "" || rep.HTTPStatus != 0 {
				t.Errorf("%s (%d tools, media %q)", rep, rep.Tools, rep.MediaType)
			}
		})
	}
}
