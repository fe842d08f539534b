package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// Options configures a check. The zero value is ready to use.
type Options struct {
	// ProbeName is the made-up tool to call. Default DefaultProbeName.
	ProbeName string

	// Header is sent with every request: the place for your own
	// credentials. The checker sends none of its own.
	Header http.Header

	// Client sends HTTP requests. Default: a client of its own for each
	// check, whose idle connections are closed when the check ends; in
	// CheckFleet, one client for the fleet, its pool sized for
	// FleetOptions.Concurrency and closed when the fleet ends.
	//
	// Whatever the client, the checker never follows a redirect that
	// turns its POST into a GET (301, 302, 303): the reply to that GET
	// would answer a request it never sent, so the 3xx itself is
	// classified (an empty body is empty_body). A 307 or 308 keeps the
	// method and the body, and is followed as HTTP clients, MCP SDKs among
	// them, follow it; the client's own CheckRedirect still applies then.
	Client *http.Client

	// Timeout bounds each request, over HTTP and stdio alike. Default
	// 15s. When the check ends, a stdio server's input is closed and it
	// has half a second to exit; then its process group gets SIGTERM, and
	// half a second later SIGKILL.
	Timeout time.Duration

	// MaxPages bounds how many tools/list pages are followed. Default 20.
	MaxPages int

	// MaxBodyBytes bounds how much of a reply is read. Default 4 MiB. A
	// longer reply is not classified from a part: the check is UNVERIFIED
	// reply_too_large. An event stream may run longer as long as the
	// reply is within the bound.
	MaxBodyBytes int64

	// MaxRetries bounds the retries of a request answered 429, or 503
	// with a Retry-After header. Default 3.
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
	for _, f := range []struct {
		name     string
		negative bool
	}{
		{"Timeout", o.Timeout < 0}, {"MaxPages", o.MaxPages < 0}, {"MaxBodyBytes", o.MaxBodyBytes < 0},
		{"MaxRetries", o.MaxRetries < 0}, {"MaxRetryWait", o.MaxRetryWait < 0},
	} {
		if f.negative {
			return o, fmt.Errorf("conformance: Options.%s must not be negative", f.name)
		}
	}
	switch {
	case o.Era != "" && o.Era != Era2025 && o.Era != Era2026:
		return o, fmt.Errorf("conformance: unknown era %q (want %q or %q)", o.Era, Era2025, Era2026)
	}
	return o, nil
}

// CheckURL checks the Streamable HTTP MCP server at url. The error is
// for bad options or a URL that is not http(s); a server that cannot be
// reached is a report, UNVERIFIED unreachable.
func CheckURL(ctx context.Context, url string, opts Options) (Report, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return Report{}, fmt.Errorf("conformance: %q is not an http or https URL", url)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return Report{}, err
	}
	client := noSilentRedirects(opts.Client)
	if opts.Client == nil {
		// A transport of the check's own, not http.DefaultTransport: its
		// connections end with the check, and no other check's
		// connections count against its pool.
		tr := newTransport(1)
		defer tr.CloseIdleConnections()
		client.Transport = tr
	}
	c := &httpConn{url: url, client: client, opts: &opts}
	rep := probe(ctx, c, &opts, false)
	rep.Target = url
	return rep, nil
}

// noSilentRedirects returns a copy of c (or of a zero client) that does
// not follow a redirect turning the POST into another method.
func noSilentRedirects(c *http.Client) *http.Client {
	var cp http.Client
	if c != nil {
		cp = *c
	}
	next := cp.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.Method != via[0].Method || len(via) >= 10 {
			return http.ErrUseLastResponse
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &cp
}

// CheckCommand starts argv as a stdio MCP server in a process group of its
// own, checks it over line-delimited JSON-RPC and ends it as a careful
// wrapper does: it closes the server's input and gives it half a second to
// exit; then, if anything of the group is left (the server, or what it
// started: npm exec's sh and node, say), it sends the group SIGTERM, half a
// second later SIGKILL, and reaps the server. No process of the group is
// left behind. A command
// that does not start is a report, UNVERIFIED unreachable, as in fleet
// mode; the error is for bad options or an empty argv.
func CheckCommand(ctx context.Context, argv []string, opts Options) (Report, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return Report{}, err
	}
	if len(argv) == 0 {
		return Report{}, errors.New("conformance: empty stdio command")
	}
	target := "stdio:" + strings.Join(argv, " ")
	c, err := startStdio(argv, &opts)
	if err != nil {
		return Report{Target: target, Check: CheckName, Verdict: Unverified, Category: Unreachable,
			Detail: "the command does not start: " + err.Error()}, nil
	}
	rep := probe(ctx, c, &opts, true)
	rep.Target = target
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
	p.rep = Report{Check: CheckName}
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
		if hint := hostHint(*rep); hint != "" {
			p.rep.Detail += "; " + hint
		}
	}
}

// namesHost matches a body that speaks of the request's Host or Origin:
// "forbidden: host not allowed", "Invalid Host header", "Invalid Origin".
var namesHost = regexp.MustCompile(`(?i)\b(host|hostname|origin)\b`)

// hostHint says, for a 403 or 421 whose body names the Host or Origin,
// that the server's DNS-rebinding protection judged the Host the checker
// sent, not its credentials. It changes no verdict.
func hostHint(rep reply) string {
	if rep.status != http.StatusForbidden && rep.status != http.StatusMisdirectedRequest || rep.host == "" {
		return ""
	}
	body := rep.body
	if len(body) > 4<<10 {
		body = body[:4<<10]
	}
	if !namesHost.Match(body) {
		return ""
	}
	return fmt.Sprintf("the body names the Host or Origin: this is the server's DNS-rebinding (Host allow-list) protection judging the Host sent, %q, not a credential gate; check it under a name the server allows, or add %q to its allow-list", rep.host, rep.host)
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
// transport failures, replies over the size bound, credential gates and
// rate limits. ok false means the verdict is recorded.
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
		protocol.Set(hdrProtocolVersion, Era2026)
		protocol.Set(hdrMethod, method)
		if method == "tools/call" {
			protocol.Set(hdrName, headerValue(p.opts.ProbeName))
		}
	} else if p.era == Era2025 && method != "initialize" {
		protocol.Set(hdrProtocolVersion, Era2025)
	}
	if params != nil {
		msg["params"] = params
	}
	body, _ := json.Marshal(msg)
	rep, err := p.c.roundTrip(ctx, request{method: method, id: id, body: body, header: protocol})
	if err != nil {
		p.stop(Unverified, failure(err), stage, nil, fmt.Sprintf("%s: %v", method, err))
		return rep, id, false
	}
	switch {
	case rep.tooLarge:
		p.stop(Unverified, ReplyTooLarge, stage, &rep, fmt.Sprintf("the reply to %s is longer than %d bytes; it is not classified from a part", method, p.opts.MaxBodyBytes))
		return rep, id, false
	case rep.status == http.StatusUnauthorized || rep.status == http.StatusForbidden:
		if stage == "discover" && !isJSONRPCError(rep, id) {
			return rep, id, true // a legacy server's 4xx: discover falls back
		}
		p.stop(Unverified, CredentialGated, stage, &rep, fmt.Sprintf("%s answered %d: turned away before tool dispatch", method, rep.status))
		return rep, id, false
	case retryable(rep):
		p.stop(Unverified, RateLimited, stage, &rep, fmt.Sprintf("%s stayed unavailable (%d) after the retries allowed", method, rep.status))
		return rep, id, false
	}
	return rep, id, true
}

// isJSONRPCError reports whether rep carries a JSON-RPC error for request
// id, well-formed or not: the way a 2026-07-28 server says no.
func isJSONRPCError(rep reply, id int64) bool {
	body := rep.body
	if rep.media == MediaEventStream {
		body, _ = findInStream(body, id)
	}
	var m struct {
		JSONRPC *string         `json:"jsonrpc"`
		Error   json.RawMessage `json:"error"`
	}
	return json.Unmarshal(body, &m) == nil && m.JSONRPC != nil && len(m.Error) > 0
}

// withMeta adds the 2026-07-28 _meta to params.
func withMeta(params any) map[string]any {
	m := map[string]any{}
	if pm, ok := params.(map[string]any); ok {
		for k, v := range pm {
			m[k] = v
		}
	}
	m["_meta"] = mcpwire.Meta(Era2026, clientName, clientVersion)
	return m
}

// The client the checker says it is.
const clientName, clientVersion = "toolguard-conformance", "0.1.0"

var clientInfo = map[string]any{"name": clientName, "version": clientVersion}

// result extracts the JSON-RPC result of a reply to id.
func result(rep reply, id int64) (json.RawMessage, error) {
	body := rep.body
	if rep.media == MediaEventStream {
		b, _ := findInStream(body, id)
		if b == nil {
			return nil, errors.New("no reply in the event stream")
		}
		body = b
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    json.RawMessage `json:"code"`
			Message any             `json:"message"`
		} `json:"error"`
	}
	status := ""
	if rep.status != 0 {
		status = fmt.Sprintf(" (HTTP %d)", rep.status)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, fmt.Errorf("empty reply%s", status)
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, fmt.Errorf("the reply is not a JSON-RPC message%s", status)
	}
	if msg.Error != nil {
		return nil, fmt.Errorf("JSON-RPC error %s%s", clip(msg.Error.Code), status)
	}
	if len(msg.Result) == 0 || msg.Result[0] != '{' {
		return nil, fmt.Errorf("the reply has no result object%s", status)
	}
	return msg.Result, nil
}

// discover asks server/discover. ok reports a 2026-07-28 server; done that
// a verdict is recorded. Any answer but a result listing 2026-07-28 marks
// a legacy server, to be asked with initialize: by 2026-07-28 version
// negotiation, a 4xx without a JSON-RPC error (a 401 from a gateway that
// does not know the method, say) is how an older server says no. Only a
// JSON-RPC error with 401/403 is a modern server asking for credentials.
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
		detail := "the handshake failed: " + err.Error()
		if hint := p.c.legacyHint(ctx); hint != "" {
			detail += "; " + hint
		}
		p.stop(Unverified, ToolsListUnreadable, "initialize", &rep, detail)
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
		rep, id, ok := p.send(ctx, "tools/list", "tools/list", toolsListParams(cursor), false)
		if !ok {
			return nil, false
		}
		res, err := result(rep, id)
		var more []string
		if err == nil {
			more, cursor, err = readToolsPage(res)
		}
		if err != nil {
			p.stop(Unverified, ToolsListUnreadable, "tools/list", &rep, "tools/list: "+err.Error())
			return nil, false
		}
		names = append(names, more...)
		if cursor == "" {
			return names, true
		}
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
