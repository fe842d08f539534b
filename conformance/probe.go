package conformance

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolguard/toolguard/internal/cli"
	"github.com/toolguard/toolguard/internal/mcpwire"
)

// Options configures a check. The zero value is ready to use.
type Options struct {
	// ProbeName is the made-up tool to call. Default DefaultProbeName.
	ProbeName string

	// Header is sent with every request: the place for your own
	// credentials. The checker sends none of its own. A Host entry is the
	// Host sent (a server's allow-list judges it).
	Header http.Header

	// Client sends HTTP requests. Default: a client of its own for each
	// check, whose connections are closed when the check ends. In
	// CheckFleet each target in progress has its own too: the fleet's
	// pools grow with its concurrency, none closes a connection another
	// target is about to reuse, and a finished target holds none.
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

	// Env is added to the environment of a stdio server ("NAME=value"),
	// on top of the checker's own.
	Env []string

	// pace, if set, is called before every HTTP request (fleet mode's
	// per-host spacing).
	pace func(ctx context.Context, url string) error

	// stdioGrace, stdioTermGrace and nullGrace, if set, stand in for the
	// constants of the same names (a test's bounds).
	stdioGrace, stdioTermGrace, nullGrace time.Duration
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
// for bad options, a URL that is not http(s), or ctx ending before the
// check did (no report: its last answer was never had); a server that
// cannot be reached is a report, UNVERIFIED unreachable.
func CheckURL(ctx context.Context, url string, opts Options) (Report, error) {
	if err := cli.HTTPURL(url); err != nil {
		return Report{}, fmt.Errorf("conformance: %w", err)
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
		tr := newTransport()
		defer tr.CloseIdleConnections()
		client.Transport = tr
	}
	c := &httpConn{url: url, client: client, opts: &opts}
	rep := probe(ctx, c, &opts, false)
	rep.Target = cli.Redacted(url)
	return finished(ctx, rep)
}

// finished returns rep, or no report and the error when ctx ended before
// the check did.
func finished(ctx context.Context, rep Report) (Report, error) {
	if err := ctx.Err(); err != nil {
		return Report{}, fmt.Errorf("conformance: the check was cut short: %w", err)
	}
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
// mode; the error is for bad options, an empty argv, or ctx ending
// before the check did (as CheckURL's).
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
		return unreachable(target, "the command does not start: "+err.Error()), nil
	}
	rep := probe(ctx, c, &opts, true)
	if opts.Era == "" && rep.Stage == "discover" && rep.Category == Unreachable && ctx.Err() == nil {
		// A server that ends at a first message other than initialize (the
		// Rust SDK's rmcp) is a legacy one: it is started again and asked
		// as one. (One that never answers is a timeout, not asked twice.)
		// One that ends at initialize too ends whatever it is asked: the
		// first report stands, with no era guessed.
		legacy := opts
		legacy.Era = Era2025
		if c, err = startStdio(argv, &legacy); err == nil {
			if again := probe(ctx, c, &legacy, true); again.Stage != "initialize" || again.Category != Unreachable {
				rep = again
			} else {
				first := rep.Detail
				rep.Detail += "; started again and asked initialize, it went away too"
				if why := strings.TrimPrefix(again.Detail, "initialize: "); !strings.Contains(first, why) {
					rep.Detail += " (" + why + ")" // what it said the second time, when it said something else
				}
			}
		}
	}
	rep.Target = target
	return finished(ctx, rep)
}

// unreachable is the report of a target that could not be asked at all.
func unreachable(target, detail string) Report {
	return Report{Target: target, Check: CheckName, Verdict: Unverified, Category: Unreachable, Detail: detail,
		NameHeader: NameHeaderReport{Check: NameHeaderCheck, State: NotApplicable,
			Detail: stoppedBefore(Unreachable)}}
}

// stoppedBefore says why mcp_name_header was not run after error_taxonomy
// stopped with c before its call.
func stoppedBefore(c Category) string {
	return fmt.Sprintf("%s stopped before its call could be compared (%s)", CheckName, c)
}

// prober runs one check over one connection.
type prober struct {
	c      conn
	opts   *Options
	stdio  bool
	nextID int64
	era    string
	// version is the protocol version the server answered initialize
	// with, sent in Mcp-Protocol-Version after it (the 2025 era), as the
	// specification asks; empty before, or if it named none.
	version string
	rep     Report
}

func probe(ctx context.Context, c conn, opts *Options, stdio bool) Report {
	start := time.Now()
	p := &prober{c: c, opts: opts, stdio: stdio}
	p.rep = Report{Check: CheckName, NameHeader: NameHeaderReport{Check: NameHeaderCheck}}
	p.run(ctx)
	if p.rep.NameHeader.State == "" {
		p.rep.NameHeader.State = NotApplicable
		p.rep.NameHeader.Detail = p.notApplicable()
	}
	c.close()
	p.rep.Era = cmp.Or(p.version, p.era)
	p.rep.Duration = time.Since(start)
	return p.rep
}

// stop records a verdict from a reply.
func (p *prober) stop(v Verdict, cat Category, stage string, rep *reply, detail string) {
	p.rep.Verdict, p.rep.Category, p.rep.Stage, p.rep.Detail = v, cat, stage, detail
	p.rep.Hints = nil
	if rep != nil {
		p.rep.HTTPStatus, p.rep.MediaType = rep.status, rep.media
		if h, ok := proxyHint(*rep, p.stdio); ok {
			p.rep.Hints = append(p.rep.Hints, h)
		}
		if hint := hostHint(*rep); hint != "" {
			p.rep.Detail += "; " + hint
		} else if loc := rep.header.Get("Location"); loc != "" && (rep.status == 301 || rep.status == 302 || rep.status == 303) {
			p.rep.Detail += fmt.Sprintf("; it redirects to %q, which the checker does not follow (the redirect would turn the POST into a GET): check that URL", cli.Redacted(loc))
		} else if v == Unverified && rep.status >= 400 {
			if b := bodyLine(rep.body); b != "" {
				p.rep.Detail += "; the body reads " + b
			}
		}
	}
}

// bodyLineBytes bounds the part of a body a detail line shows.
const bodyLineBytes = 200

// bodyLine returns the start of an HTTP error's body as one quoted line,
// its white space collapsed and at most about bodyLineBytes long, for a
// reply that could not be classified: a proxy's 502 says why in its body
// ("the upstream cannot be reached: connection refused"). "" for a body
// of white space.
func bodyLine(body []byte) string {
	cut := len(body) > 4*bodyLineBytes
	if cut {
		body = body[:4*bodyLineBytes]
	}
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(body), "\uFFFD")), " ")
	if s == "" {
		return ""
	}
	if len(s) > bodyLineBytes {
		i := bodyLineBytes
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s, cut = s[:i], true
	}
	if cut {
		s += "…"
	}
	return strconv.Quote(s)
}

// isVersion matches a protocol version, as MCP names them (a date).
var isVersion = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

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
	first, o, ok := p.callProbe(ctx)
	if !ok {
		return
	}
	used := []string{p.opts.ProbeName}
	if o.verdict == ObservedRisk {
		used = append(used, p.confirm(ctx, names, used, o))
	}
	p.nameHeader(ctx, names, used, first, o)
}

// A failure is a request that drew no reply to classify: what ask reports
// instead of a reply. rep is set when an HTTP reply came (a 401, a 429).
type askFailure struct {
	category Category
	detail   string
	rep      *reply
}

// ask sends one message and handles what every stage handles alike:
// transport failures, replies over the size bound, credential gates and
// rate limits, which it returns as a failure. nameHeader is the Mcp-Name a
// 2026-07-28 tools/call carries.
func (p *prober) ask(ctx context.Context, method string, params any, notification bool, nameHeader string) (reply, int64, *askFailure) {
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
			protocol.Set(hdrName, headerValue(nameHeader))
		}
	} else if p.era == Era2025 && method != "initialize" {
		protocol.Set(hdrProtocolVersion, cmp.Or(p.version, Era2025))
	}
	if params != nil {
		msg["params"] = params
	}
	body, _ := json.Marshal(msg)
	rep, err := p.c.roundTrip(ctx, request{method: method, id: id, body: body, header: protocol})
	switch {
	case err != nil:
		return rep, id, &askFailure{failure(err), fmt.Sprintf("%s: %v", method, err), nil}
	case rep.tooLarge:
		return rep, id, &askFailure{ReplyTooLarge, fmt.Sprintf("the reply to %s is longer than %d bytes; it is not classified from a part", method, p.opts.MaxBodyBytes), &rep}
	case rep.status == http.StatusUnauthorized || rep.status == http.StatusForbidden:
		return rep, id, &askFailure{CredentialGated, fmt.Sprintf("%s answered %d: turned away before tool dispatch", method, rep.status), &rep}
	case retryable(rep):
		detail := fmt.Sprintf("%s stayed unavailable (%d) after the retries allowed", method, rep.status)
		if v := rep.header.Get("Retry-After"); v != "" {
			switch wait, ok := retryAfter(v, 0, time.Now()); {
			case !ok:
				detail = fmt.Sprintf("%s answered %d with a Retry-After the checker cannot read, %q", method, rep.status, v)
			case wait > p.opts.MaxRetryWait:
				detail = fmt.Sprintf("%s answered %d asking to wait %v (Retry-After), beyond the %v the checker waits", method, rep.status, wait.Round(time.Second), p.opts.MaxRetryWait)
			}
		}
		return rep, id, &askFailure{RateLimited, detail, &rep}
	}
	return rep, id, nil
}

// send asks as ask does, and records the verdict of a failure. ok false
// means the verdict is recorded.
func (p *prober) send(ctx context.Context, stage, method string, params any, notification bool) (reply, int64, bool) {
	rep, id, f := p.ask(ctx, method, params, notification, p.opts.ProbeName)
	if f == nil {
		return rep, id, true
	}
	if f.category == CredentialGated && stage == "discover" && !isJSONRPCError(rep, id) {
		return rep, id, true // a legacy server's 4xx: discover falls back
	}
	p.stop(Unverified, f.category, stage, f.rep, f.detail)
	return rep, id, false
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
	m["_meta"] = map[string]any{
		mcpwire.MetaProtocolVersion:    Era2026,
		mcpwire.MetaClientInfo:         map[string]string{"name": clientName, "version": clientVersion},
		mcpwire.MetaClientCapabilities: map[string]any{}, // no optional capability
	}
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
	res, err := result(rep, id)
	if err != nil {
		detail := "the handshake failed: " + err.Error()
		if hint := p.c.legacyHint(ctx); hint != "" {
			detail += "; " + hint
		}
		p.stop(Unverified, ToolsListUnreadable, "initialize", &rep, detail)
		return false
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(res, &r) == nil && isVersion.MatchString(r.ProtocolVersion) {
		p.version = r.ProtocolVersion
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

// callProbe calls the made-up tool and records the verdict. ok reports a
// reply that was classified, VERIFIED or OBSERVED_RISK.
func (p *prober) callProbe(ctx context.Context) (reply, outcome, bool) {
	params := map[string]any{"name": p.opts.ProbeName, "arguments": map[string]any{}}
	rep, id, ok := p.send(ctx, "tools/call", "tools/call", params, false)
	if !ok {
		return rep, outcome{}, false
	}
	o := classifyCall(rep.media, rep.body, id)
	if why := refusedBeforeDispatch(rep, o); why != "" {
		p.stop(Unverified, RefusedBeforeDispatch, "tools/call", &rep, why)
		p.rep.ErrorCode = o.code
		return rep, o, false
	}
	p.stop(o.verdict, o.category, "tools/call", &rep, o.detail)
	p.rep.ErrorCode, p.rep.ErrorData = o.code, o.data
	if h, ok := toolNotNamedHint(o, p.opts.ProbeName); ok {
		p.rep.Hints = append(p.rep.Hints, h)
	} else if o.verdict == Verified && !namesUpstream.Match(rep.body) {
		// A well-formed error that names the tool is the server's own
		// answer, whatever its status: no proxy hint for a bare 5xx.
		p.rep.Hints = nil
	}
	return rep, o, true
}

// refusedBeforeDispatch says why the answer o to the made-up call is a
// refusal the transport gives before any tool lookup, which says nothing
// of how the server answers an unknown tool; "" if it is not one. Two
// the specification defines: -32020, headers that do not match the body
// (a proxy between that drops or rewrites Mcp-Name draws it), and a 404
// to a request in a session, the answer to a session the server no longer
// knows, told from a 404 page or a tool's answer by what it says of the
// session (-32001, "Session not found", "Invalid session ID") and by not
// being a result nor naming a tool.
func refusedBeforeDispatch(rep reply, o outcome) string {
	switch {
	case o.code != nil && *o.code == codeHeaderMismatch:
		return "the call was refused with -32020, the error for a request whose headers do not match its body (a proxy between may drop or rewrite Mcp-Name), so it was turned away before tool dispatch"
	case rep.status != http.StatusNotFound || !rep.session || o.category == ResultIsError || o.category == ResultOK:
		return ""
	case o.code != nil && *o.code == -32001 || sessionGone.Match(rep.body) && !bytes.Contains(bytes.ToLower(rep.body), []byte("tool")):
		return "the call, sent in the session the server gave, was answered 404 about the session: the server no longer knows it (a restart, or another replica behind a load balancer), so the call was turned away before tool dispatch"
	}
	return ""
}

// sessionGone matches what servers say of a session they do not know.
var sessionGone = regexp.MustCompile(`(?i)\bsession\b[^.\n]{0,20}\b(not found|unknown|expired|invalid)\b|\b(invalid|unknown|expired|no valid)\s+session\b`)

// madeUp returns a made-up name derived from ProbeName with tag, that the
// server does not list and that is none of used.
func (p *prober) madeUp(listed, used []string, tag string) string {
	base := p.opts.ProbeName
	for i := 0; ; i++ {
		t := tag
		if i > 0 {
			t += strconv.Itoa(i + 1)
		}
		var name string
		if len(base) > 4 && strings.HasSuffix(base, "__") {
			name = base[:len(base)-2] + "_" + t + "__"
		} else {
			name = base + "_" + t
		}
		if !slices.Contains(listed, name) && !slices.Contains(used, name) {
			return name
		}
	}
}

// confirm asks a second made-up name after a risky answer (through the
// pacer, in a fleet). The risk stands if the second answer has the same
// category; otherwise the verdict becomes UNVERIFIED inconsistent. It
// returns the name it used.
func (p *prober) confirm(ctx context.Context, listed, used []string, first outcome) string {
	name := p.madeUp(listed, used, "second")
	params := map[string]any{"name": name, "arguments": map[string]any{}}
	rep, id, f := p.ask(ctx, "tools/call", params, false, name)
	c := &Confirmation{Name: name}
	if f != nil {
		c.Verdict, c.Category, c.Detail = Unverified, f.category, f.detail
		if f.rep != nil {
			c.HTTPStatus, c.MediaType = f.rep.status, f.rep.media
		}
	} else {
		o := classifyCall(rep.media, rep.body, id)
		c.Verdict, c.Category, c.ErrorCode, c.Detail = o.verdict, o.category, o.code, o.detail
		c.HTTPStatus, c.MediaType = rep.status, rep.media
	}
	p.rep.Confirmation = c
	if c.Verdict == ObservedRisk && c.Category == first.category {
		return name
	}
	p.rep.Detail = fmt.Sprintf("two made-up names drew different answers: %s drew %s; %s drew %s",
		p.opts.ProbeName, answerLabel(first.verdict, first.category, p.rep.HTTPStatus, first.code, first.detail),
		name, answerLabel(c.Verdict, c.Category, c.HTTPStatus, c.ErrorCode, c.Detail))
	p.rep.Verdict, p.rep.Category = Unverified, Inconsistent
	return name
}

// answerLabel names one answer for a detail line: its category (or
// VERIFIED with its code), status and what it was.
func answerLabel(v Verdict, c Category, status int, code *int, detail string) string {
	s := string(c)
	if c == "" {
		s = string(v)
	}
	if code != nil {
		s += fmt.Sprintf(" %d", *code)
	}
	if status != 0 {
		s += fmt.Sprintf(", HTTP %d", status)
	}
	return s + " (" + detail + ")"
}

// nameHeader runs the mcp_name_header check against a 2026-07-28 server
// over HTTP, after the made-up call drew first (classified o): it calls
// the same made-up tool with an Mcp-Name naming another made-up tool.
func (p *prober) nameHeader(ctx context.Context, listed, used []string, first reply, o outcome) {
	if p.stdio || p.era != Era2026 {
		return // not applicable; probe says why
	}
	nh := &p.rep.NameHeader
	nh.HeaderName = p.madeUp(listed, used, "header")
	params := map[string]any{"name": p.opts.ProbeName, "arguments": map[string]any{}}
	rep, id, f := p.ask(ctx, "tools/call", params, false, nh.HeaderName)
	if f != nil {
		nh.State, nh.Detail = Undetermined, "the mismatched call drew no answer to judge: "+f.detail
		if f.rep != nil {
			nh.HTTPStatus, nh.MediaType = f.rep.status, f.rep.media
		}
		return
	}
	m := classifyCall(rep.media, rep.body, id)
	nh.HTTPStatus, nh.MediaType, nh.ErrorCode = rep.status, rep.media, m.code
	isError := m.verdict == Verified || m.category == JSONRPCMalformed && m.code != nil
	sameCode := (m.code == nil) == (o.code == nil) && (m.code == nil || *m.code == *o.code)
	mismatch := fmt.Sprintf("a tools/call of %s with Mcp-Name %s", p.opts.ProbeName, nh.HeaderName)
	switch {
	case isError && m.code != nil && *m.code == codeHeaderMismatch:
		nh.State, nh.Detail = Strict, mismatch+" was refused with -32020 (headers and body disagree)"
		if rep.status != http.StatusBadRequest {
			nh.Detail += fmt.Sprintf(", with HTTP %d where the spec says 400", rep.status)
		}
	case rep.status == first.status && m.verdict == o.verdict && m.category == o.category && sameCode:
		nh.State, nh.Detail = Lenient, mismatch+" was answered as if the header matched: "+answerLabel(m.verdict, m.category, rep.status, m.code, m.detail)+", as with the right header"
	case isError && rep.status == http.StatusBadRequest:
		nh.State, nh.Detail = Strict, mismatch+" was refused with HTTP 400 and a JSON-RPC error"
	default:
		nh.State, nh.Detail = Undetermined, mismatch+" drew "+answerLabel(m.verdict, m.category, rep.status, m.code, m.detail)+
			", neither a refusal nor the answer with the right header, "+answerLabel(o.verdict, o.category, first.status, o.code, o.detail)
	}
}

// codeHeaderMismatch is the 2026-07-28 error for headers that disagree
// with the body.
const codeHeaderMismatch = -32020

// notApplicable says why mcp_name_header was not run.
func (p *prober) notApplicable() string {
	switch {
	case p.stdio:
		return "a stdio target: Mcp-Name is an HTTP header of 2026-07-28"
	case p.era == Era2025 && p.rep.Stage != "initialize":
		return "the server speaks " + cmp.Or(p.version, Era2025) + ": Mcp-Name is a 2026-07-28 header"
	case p.rep.Category != "":
		return stoppedBefore(p.rep.Category)
	}
	return "the target was not asked"
}
