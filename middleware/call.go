package toolguard

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/toolguard/toolguard/mcpwire"
)

// A Call is the tools/call whose answer the guard is writing. The request
// the guard hands to [ToolSet.List] carries it in its context
// ([CallFromContext]), so a tool set that asks the server can ask exactly
// as the caller: with the call's own params._meta.
type Call struct {
	// Name is the tool name the call asked for.
	Name string
	// Meta is the call's params._meta object as it came on the wire,
	// without progressToken (which names the call's own request), or nil
	// when the call has none. For a 2026-07-28 call it carries the protocol
	// version, client info and capabilities (the keys
	// io.modelcontextprotocol/protocolVersion, …/clientInfo and
	// …/clientCapabilities), which servers read to decide what to list.
	Meta json.RawMessage
	// Sessionless reports a 2026-07-28 request (no initialize, no
	// session: the caller is known by its headers and _meta).
	Sessionless bool

	relay *relayed
}

// relayed holds the messages the server sent the caller on requests a
// tool set made as the caller while the guard wrote its answer (mcp-go
// hands a session's queued notifications to whichever of the session's
// POSTs comes next): the guard's answer carries them. Messages that come
// after the answer was written are lost to the caller and logged.
type relayed struct {
	mu      sync.Mutex
	msgs    [][]byte
	settled bool
	lost    func(n int) // told of messages that come after settle
}

// relay keeps msgs, the messages other than the reply that the server
// sent on a request the tool set made as the caller of ctx's call.
func relay(ctx context.Context, msgs [][]byte) {
	if len(msgs) == 0 {
		return
	}
	c, ok := CallFromContext(ctx)
	if !ok || c.relay == nil {
		return
	}
	rl := c.relay
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.settled {
		if rl.lost != nil {
			rl.lost(len(msgs))
		}
		return
	}
	rl.msgs = append(rl.msgs, msgs...)
}

// settle returns the messages relayed so far; lost is told of later ones.
func (c *Call) settle(lost func(n int)) [][]byte {
	if c == nil || c.relay == nil {
		return nil
	}
	rl := c.relay
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rl.settled, rl.lost = true, lost
	msgs := rl.msgs
	rl.msgs = nil
	return msgs
}

type callKey struct{}

// CallFromContext returns the call the guard put in the context of the
// request it hands to [ToolSet.List].
func CallFromContext(ctx context.Context) (*Call, bool) {
	c, ok := ctx.Value(callKey{}).(*Call)
	return c, ok
}

// withCallIn returns r with the context parent, c in it.
func withCallIn(r *http.Request, parent context.Context, c Call) (*http.Request, *Call) {
	cc := &callContext{Context: parent, call: c}
	cc.call.relay = &cc.relay
	return r.WithContext(cc), &cc.call
}

// callContext is the context of the request withCall returns: its
// parent with the call as the value of callKey, allocated together.
type callContext struct {
	context.Context
	call  Call
	relay relayed
}

func (c *callContext) Value(key any) any {
	if _, ok := key.(callKey); ok {
		return &c.call
	}
	return c.Context.Value(key)
}

// acceptableClientMeta reports whether the _meta of a 2026-07-28 call is
// one that mcp-go and go-sdk both accept before dispatch: no protocol key
// twice, clientCapabilities an object of capability objects (booleans
// only as listChanged), clientInfo absent or an object of strings. Both
// SDKs refuse a call without valid clientCapabilities (-32602, 400), and
// go-sdk one with a clientInfo it cannot decode; anything more unusual
// than the shapes above is left to the server.
func acceptableClientMeta(meta []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(meta))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	var caps, info json.RawMessage
	var version bool
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return false
		}
		switch t {
		case mcpwire.MetaProtocolVersion:
			if version {
				return false
			}
			version = true
		case mcpwire.MetaClientCapabilities:
			if caps != nil {
				return false
			}
			caps = raw
		case mcpwire.MetaClientInfo:
			if info != nil {
				return false
			}
			info = raw
		}
	}
	if caps == nil || !capabilities(json.NewDecoder(bytes.NewReader(caps)), "", 0) {
		return false
	}
	return info == nil || stringObject(json.NewDecoder(bytes.NewReader(info)))
}

// capabilities reports whether the next value of dec is an object whose
// members are capability objects, or booleans named listChanged, with no
// key twice. key is the member name the value belongs to.
func capabilities(dec *json.Decoder, key string, depth int) bool {
	t, err := dec.Token()
	if err != nil || depth > 8 {
		return false
	}
	if _, ok := t.(bool); ok {
		return key == "listChanged"
	}
	if t != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok || seen[k] || !capabilities(dec, k, depth+1) {
			return false
		}
		seen[k] = true
	}
	_, err = dec.Token()
	return err == nil
}

// stringObject reports whether the next value of dec is an object of
// strings, with no key twice.
func stringObject(dec *json.Decoder) bool {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok || seen[k] {
			return false
		}
		seen[k] = true
		if v, err := dec.Token(); err != nil {
			return false
		} else if _, ok := v.(string); !ok {
			return false
		}
	}
	_, err := dec.Token()
	return err == nil
}
