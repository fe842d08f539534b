package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Options configures a check. The zero value is ready to use.
type Options struct {
	// ProbeName is the made-up tool to call. Default DefaultProbeName.
	ProbeName string

	// Header is sent with every request: the place for your own
	// credentials. The checker sends none of its own.
	Header http.Header

	// Client sends HTTP requests. Default: a client of its own.
	Client *http.Client

	// Timeout bounds each request. Default 15s.
	Timeout time.Duration

	// MaxPages bounds how many tools/list pages are followed. Default 20.
	MaxPages int

	// MaxBodyBytes bounds how much of a reply is read. Default 4 MiB.
	MaxBodyBytes int64

	// MaxRetries bounds the retries of a request answered 429. Default 3.
	MaxRetries int

	// MaxRetryWait is the longest the checker waits before a retry; a
	// Retry-After beyond it ends the check as rate_limited. Default 10s.
	MaxRetryWait time.Duration

	// Era forces a protocol era: Era2025 skips server/discover, Era2026
	// does not fall back to initialize. Default: try 2026-07-28 first,
	// then fall back, as the spec's backward-compatibility section says.
	Era string

	// pace, if set, is called before every HTTP request (fleet mode's
	// per-host spacing).
	pace func(ctx context.Context, url string) error
}

func (o Options) withDefaults() (Options, error) {
	if o.ProbeName == "" {
		o.ProbeName = DefaultProbeName
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.Timeout == 0 {
		o.Timeout = 15 * time.Second
	}
	if o.MaxPages == 0 {
		o.MaxPages = 20
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = 4 << 20
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 3
	}
	if o.MaxRetryWait == 0 {
		o.MaxRetryWait = 10 * time.Second
	}
	switch {
	case o.Timeout < 0 || o.MaxPages < 0 || o.MaxBodyBytes < 0 || o.MaxRetries < 0 || o.MaxRetryWait < 0:
		return o, errors.New("conformance: negative option")
	case o.Era != "" && o.Era != Era2025 && o.Era != Era2026:
		return o, fmt.Errorf("conformance: unknown era %q (want %q or %q)", o.Era, Era2025, Era2026)
	}
	return o, nil
}

// CheckURL checks the Streamable HTTP MCP server at url.
func CheckURL(ctx context.Context, url string, opts Options) (Report, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return Report{}, fmt.Errorf("conformance: %q is not an http or https URL", url)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return Report{}, err
	}
	c := &httpConn{url: url, client: opts.Client, opts: &opts}
	rep := probe(ctx, c, &opts, false)
	rep.Target = url
	return rep, nil
}

// CheckCommand starts argv as a stdio MCP server, checks it over
// line-delimited JSON-RPC and stops it.
func CheckCommand(ctx context.Context, argv []string, opts Options) (Report, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return Report{}, err
	}
	c, err := startStdio(argv, &opts)
	if err != nil {
		return Report{}, fmt.Errorf("conformance: starting %q: %w", strings.Join(argv, " "), err)
	}
	rep := probe(ctx, c, &opts, true)
	rep.Target = "stdio:" + strings.Join(argv, " ")
	return rep, nil
}

// prober runs one check over one connection.
type prober struct {
	c      conn
	opts   *Options
	stdio  bool
	nextID int64
	era    string
	rep    Report
}

func probe(ctx context.Context, c conn, opts *Options, stdio bool) Report {
	start := time.Now()
	p := &prober{c: c, opts: opts, stdio: stdio}
	p.rep = Report{Check: Check}
	p.run(ctx)
	c.close()
	p.rep.Era = p.era
	p.rep.Duration = time.Since(start)
	return p.rep
}

// stop records a verdict from a reply.
func (p *prober) stop(v Verdict, cat Category, stage string, rep *reply, detail string) {
	p.rep.Verdict, p.rep.Category, p.rep.Stage, p.rep.Detail = v, cat, stage, detail
	if rep != nil {
		p.rep.HTTPStatus, p.rep.MediaType = rep.status, rep.media
	}
}

func (p *prober) run(ctx context.Context) {
	if p.opts.Era != Era2025 {
		ok, done := p.discover(ctx)
		if done {
			return
		}
		if ok {
			p.era = Era2026
		} else if p.opts.Era == Era2026 {
			p.stop(Unverified, ToolsListUnreadable, "discover", nil, "server/discover did not answer with 2026-07-28 among its versions")
			return
		}
	}
	if p.era == "" {
		p.era = Era2025
		if !p.initialize(ctx) {
			return
		}
	}
	names, ok := p.listTools(ctx)
	if !ok {
		return
	}
	p.rep.Tools = len(names)
	if slices.Contains(names, p.opts.ProbeName) {
		p.stop(Unverified, NameCollision, "tools/list", nil, "the server lists a tool named "+p.opts.ProbeName+"; the call is not sent")
		return
	}
	p.callProbe(ctx)
}

// send sends one message and handles what every stage handles alike:
// transport failures, credential gates and rate limits. ok false means the
// verdict is recorded.
func (p *prober) send(ctx context.Context, stage, method string, params any, notification bool) (reply, int64, bool) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	var id int64
	if !notification {
		p.nextID++
		id = p.nextID
		msg["id"] = id
	}
	protocol := http.Header{}
	if p.era == Era2026 {
		params = withMeta(params)
		protocol.Set("Mcp-Protocol-Version", Era2026)
		protocol.Set("Mcp-Method", method)
		if method == "tools/call" {
			protocol.Set("Mcp-Name", headerValue(p.opts.ProbeName))
		}
	} else if p.era == Era2025 && method != "initialize" {
		protocol.Set("Mcp-Protocol-Version", Era2025)
	}
	if params != nil {
		msg["params"] = params
	}
	body, _ := json.Marshal(msg)
	rep, err := p.c.roundTrip(ctx, request{method: method, id: id, body: body, header: protocol})
	if err != nil {
		cat := failure(err)
		p.stop(Unverified, cat, stage, nil, fmt.Sprintf("%s: %v", method, err))
		return rep, id, false
	}
	switch rep.status {
	case http.StatusUnauthorized, http.StatusForbidden:
		p.stop(Unverified, CredentialGated, stage, &rep, fmt.Sprintf("%s answered %d: turned away before tool dispatch", method, rep.status))
		return rep, id, false
	case http.StatusTooManyRequests:
		p.stop(Unverified, RateLimited, stage, &rep, method+" stayed rate limited (429)")
		return rep, id, false
	}
	return rep, id, true
}

// withMeta adds the 2026-07-28 _meta to params.
func withMeta(params any) map[string]any {
	m := map[string]any{}
	if pm, ok := params.(map[string]any); ok {
		for k, v := range pm {
			m[k] = v
		}
	}
	m["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    Era2026,
		"io.modelcontextprotocol/clientInfo":         clientInfo,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	return m
}

var clientInfo = map[string]any{"name": "toolguard-conformance", "version": "0.1.0"}

// headerValue encodes a value for an Mcp-* header, using the
// =?base64?...?= sentinel where a plain value would not survive.
func headerValue(s string) string {
	plain := s != "" && s[0] != ' ' && s[len(s)-1] != ' ' &&
		!(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?="))
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] <= 0x7e
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// result extracts the JSON-RPC result of a reply to id.
func result(rep reply, id int64) (json.RawMessage, error) {
	body := rep.body
	if rep.media == MediaEventStream {
		b, ok := findInStream(body, id)
		if !ok {
			return nil, errors.New("no reply in the event stream")
		}
		body = b
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if len(body) == 0 {
		return nil, fmt.Errorf("empty reply (HTTP %d)", rep.status)
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, fmt.Errorf("reply is not a JSON-RPC message (HTTP %d)", rep.status)
	}
	if msg.Error != nil {
		return nil, fmt.Errorf("JSON-RPC error %d", msg.Error.Code)
	}
	if len(msg.Result) == 0 || msg.Result[0] != '{' {
		return nil, fmt.Errorf("reply has no result object (HTTP %d)", rep.status)
	}
	return msg.Result, nil
}

// discover asks server/discover. ok reports a 2026-07-28 server; done that
// a verdict is recorded.
func (p *prober) discover(ctx context.Context) (ok, done bool) {
	p.era = Era2026 // the request is a modern one
	rep, id, sent := p.send(ctx, "discover", "server/discover", nil, false)
	p.era = ""
	if !sent {
		return false, true
	}
	res, err := result(rep, id)
	if err != nil {
		return false, false
	}
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(res, &d) != nil {
		return false, false
	}
	return slices.Contains(d.SupportedVersions, Era2026), false
}

func (p *prober) initialize(ctx context.Context) bool {
	params := map[string]any{
		"protocolVersion": Era2025,
		"capabilities":    map[string]any{},
		"clientInfo":      clientInfo,
	}
	rep, id, ok := p.send(ctx, "initialize", "initialize", params, false)
	if !ok {
		return false
	}
	if _, err := result(rep, id); err != nil {
		p.stop(Unverified, ToolsListUnreadable, "initialize", &rep, "the handshake failed: "+err.Error())
		return false
	}
	_, _, ok = p.send(ctx, "initialize", "notifications/initialized", nil, true)
	return ok
}

func (p *prober) listTools(ctx context.Context) ([]string, bool) {
	var names []string
	cursor := ""
	for page := 0; ; page++ {
		if page == p.opts.MaxPages {
			p.stop(Unverified, ToolsListUnreadable, "tools/list", nil, fmt.Sprintf("the tool list has more than %d pages", p.opts.MaxPages))
			return nil, false
		}
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		rep, id, ok := p.send(ctx, "tools/list", "tools/list", params, false)
		if !ok {
			return nil, false
		}
		res, err := result(rep, id)
		var list struct {
			Tools []struct {
				Name *string `json:"name"`
			} `json:"tools"`
			NextCursor *string `json:"nextCursor"`
		}
		if err == nil {
			if json.Unmarshal(res, &list) != nil || list.Tools == nil {
				err = errors.New("the result has no tools array")
			}
		}
		for _, t := range list.Tools {
			if t.Name == nil {
				err = errors.New("a listed tool has no name")
				break
			}
			names = append(names, *t.Name)
		}
		if err != nil {
			p.stop(Unverified, ToolsListUnreadable, "tools/list", &rep, "tools/list: "+err.Error())
			return nil, false
		}
		if list.NextCursor == nil || *list.NextCursor == "" {
			return names, true
		}
		cursor = *list.NextCursor
	}
}

func (p *prober) callProbe(ctx context.Context) {
	params := map[string]any{"name": p.opts.ProbeName, "arguments": map[string]any{}}
	rep, id, ok := p.send(ctx, "tools/call", "tools/call", params, false)
	if !ok {
		return
	}
	o := classifyCall(rep.media, rep.body, id)
	p.stop(o.verdict, o.category, "tools/call", &rep, o.detail)
	p.rep.ErrorCode = o.code
}
