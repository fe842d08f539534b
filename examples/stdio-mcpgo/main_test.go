package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/fixture"
)

// TestExample runs the example as a client would over its pipes: a known
// call reaches the real mcp-go server, an unknown one gets the guard's
// -32602 with the tools this client can call.
func TestExample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clientOut, serverIn := io.Pipe()
	serverOut, clientIn := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, clientOut, clientIn); clientIn.Close() }()

	lines := bufio.NewScanner(serverOut)
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(serverIn, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	type reply struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *fixture.Answer `json:"error"`
	}
	recv := func(id int) reply {
		t.Helper()
		for lines.Scan() {
			var r reply
			if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
				t.Fatalf("not JSON on standard output: %q", lines.Text())
			}
			if r.ID == id {
				return r
			}
		}
		t.Fatalf("no reply to %d: %v", id, lines.Err())
		return reply{}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	recv(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":10,"method":"tools/list"}`) // as clients do first: the guard reads the answer
	recv(10)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}`)
	if r := recv(2); r.Error != nil || !strings.Contains(string(r.Result), "Sunny in Oslo") {
		t.Fatalf("known tool: %+v %s", r.Error, r.Result)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_wether","arguments":{}}}`)
	r := recv(3)
	if r.Error == nil || r.Error.Code != -32602 || r.Error.Message != "Unknown tool: get_wether. Did you mean get_weather? Call tools/list for the available tools." {
		t.Fatalf("unknown tool: %+v %s", r.Error, r.Result)
	}
	if !slices.Equal(r.Error.Data.AvailableTools, []string{"get_weather"}) || !slices.Equal(r.Error.Data.Suggestions, []string{"get_weather"}) {
		t.Fatalf("data: %+v", r.Error.Data)
	}
	serverIn.Close()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the server did not end when its input closed")
	}
}
