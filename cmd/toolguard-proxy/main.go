// Command toolguard-proxy puts the toolguard middleware in front of any
// Streamable HTTP MCP server, in any language: a reverse proxy that replaces
// the upstream's own answer to a tools/call for a tool it does not have
// with JSON-RPC error -32602 listing the tools the caller can call. Every
// call reaches the upstream; every other answer is proxied untouched, event
// streams as they come.
//
// Usage:
//
//	toolguard-proxy -upstream http://127.0.0.1:3000/mcp [-listen 127.0.0.1:8080] [flags]
//
// The guard never speaks to the upstream; it reads what passes: the list in
// data.availableTools is the upstream's answer to the caller's own
// tools/list, kept for that caller only. Put authentication in front of it,
// or use -hide-tool-list and -hide-suggestions. An upstream that cannot be
// reached gets the caller 502, one that does not begin its answer within
// -upstream-timeout 504, each with a body naming the cause. It serves one
// path, -path or the upstream URL's. Exit status: 0 after a graceful
// shutdown (SIGINT, SIGTERM), -h or -version; 1 on a server error; 64 on a
// usage error. docs/COMMANDS.md has every flag, the logs and a curl
// session; docs/OBSERVE.md the metrics and health endpoints.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/toolguard/toolguard/internal/cli"
	"github.com/toolguard/toolguard/internal/cmdlog"
	toolguard "github.com/toolguard/toolguard/middleware"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop) // a second signal ends the proxy at once, as without a handler
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	os.Exit(code)
}

// config is what the flags say.
type config struct {
	upstream, listen, path, host string
	upstreamURL                  *url.URL // upstream, parsed
	shutdown                     time.Duration
	quiet                        bool
	logPass                      bool
	upstreamTimeout              time.Duration
	guard                        toolguard.Options
	keepNoList                   bool // -list-ttl 0
	metricsListen, logFormat     string
	healthWindow                 time.Duration
	metrics                      *metrics // with -metrics-listen
}

// usageHead is what -h prints before the flags.
const usageHead = `usage: toolguard-proxy -upstream URL [-listen ADDRESS] [flags]

Exit status: 0 after a graceful shutdown (or -h, -version), 1 on a server
error, 64 on a usage error.

flags:
`

// newCommand is the command line, its flags writing into c.
func newCommand(c *config) *cli.Command {
	cmd := cli.New("toolguard-proxy", usageHead)
	fs := cmd.Flags
	fs.StringVar(&c.upstream, "upstream", "", "the upstream MCP endpoint, e.g. http://127.0.0.1:3000/mcp (required)")
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8080", "listen `address`")
	fs.StringVar(&c.path, "path", "", "the one `path` served, matched exactly, percent-encoded as in a URL (default: the upstream URL's path, or /)")
	fs.StringVar(&c.host, "host", "keep", "the Host sent upstream: keep (the caller's, so the server's DNS-rebinding protection judges the caller; a request with none, or with a full URL as its target, is answered 400) or upstream (the upstream URL's host)")
	fs.DurationVar(&c.shutdown, "shutdown-timeout", 10*time.Second, "how long in-flight calls may finish after SIGINT or SIGTERM (standing GET event streams end at once); 0 does not wait")
	fs.BoolVar(&c.quiet, "quiet", false, "no log line per answer the guard writes (a translated not-found answer, or -32020)")
	fs.BoolVar(&c.logPass, "log-pass", false, "one log line per request the guard passes through: the reason, the tool, the tool set's error, the status the upstream answered and the Host the request came with")
	fs.DurationVar(&c.upstreamTimeout, "upstream-timeout", time.Minute, "how long the upstream has to begin its answer (its status line; an event stream begins at once) before the caller gets 504; 0 waits as long as the caller does")
	fs.Int64Var(&c.guard.MaxBodyBytes, "max-body-bytes", toolguard.DefaultMaxBodyBytes, "larger bodies pass through unread; more than 0")
	fs.IntVar(&c.guard.ToolListLimit, "tool-list-limit", toolguard.DefaultToolListLimit, "cap on the names in data.availableTools; more than 0 (-hide-tool-list leaves the list out)")
	fs.BoolVar(&c.guard.HideToolList, "hide-tool-list", false, "leave data.availableTools out of rejections")
	fs.BoolVar(&c.guard.HideSuggestions, "hide-suggestions", false, "leave data.suggestions out of rejections")
	fs.BoolVar(&c.guard.BareMessage, "bare-message", false, "the message is \"Unknown tool: X\" alone, the spec's example (by default it also names the nearest names and says to call tools/list)")
	fs.BoolVar(&c.guard.AnswerHeaderMismatch, "answer-header-mismatch", false, "answer a 2026-07-28 Mcp-Method/Mcp-Name mismatch with 400 and -32020 instead of passing it on")
	fs.DurationVar(&c.guard.ListTTL, "list-ttl", toolguard.DefaultListTTL, "how long the upstream's answer to a caller's own tools/list is kept for data.availableTools; 0 keeps none")
	observeFlags(fs, c)
	return cmd
}

// parse reads the command line and writes nothing. Its error is
// flag.ErrHelp after -h, cli.ErrVersion after -version, or the usage
// error, to be reported by the command's Exit.
func parse(args []string) (*config, error) {
	c := &config{}
	cmd := newCommand(c)
	if err := cmd.Parse(args); err != nil {
		return nil, err
	}
	if cmd.Flags.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags come before it; the server to guard is -upstream URL)", cli.RedactedArg(cmd.Flags.Arg(0)))
	}
	if c.upstream == "" {
		return nil, errors.New("-upstream is required: the URL of the MCP server to guard")
	}
	u, err := url.Parse(c.upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("-upstream %q is not an http(s) URL", cli.Redacted(c.upstream))
	}
	if u.User != nil {
		// Never sent (a reverse proxy does not turn them into a header),
		// and printed in the log: refused rather than dropped.
		return nil, fmt.Errorf("-upstream must not carry credentials (user:password@): the caller's Authorization header reaches the upstream as it is")
	}
	if u.Fragment != "" || strings.HasSuffix(c.upstream, "#") {
		return nil, fmt.Errorf("-upstream %q has a fragment (#), which is never sent", cli.Redacted(c.upstream))
	}
	c.upstreamURL = u
	if c.metricsListen != "" {
		c.metrics = newMetrics(time.Now, c.healthWindow)
	}
	if err := checkFlags(c); err != nil {
		return nil, err
	}
	if c.upstreamTimeout < 0 {
		return nil, fmt.Errorf("-upstream-timeout must not be negative")
	}
	if c.host != "keep" && c.host != "upstream" {
		return nil, fmt.Errorf("-host must be keep or upstream, not %q", c.host)
	}
	if c.path == "" {
		c.path = u.EscapedPath()
		if c.path == "" {
			c.path = "/"
		}
	} else {
		p, err := servedPath(c.path)
		if err != nil {
			return nil, err
		}
		c.path = p
	}
	return c, nil
}

// checkFlags checks the numeric flags, naming the flag, and makes 0 mean
// what it says where the library would read it as "the default".
func checkFlags(c *config) error {
	positive := []struct {
		name string
		v    int64
	}{
		{"-max-body-bytes", c.guard.MaxBodyBytes},
		{"-tool-list-limit", int64(c.guard.ToolListLimit)},
	}
	for _, f := range positive {
		if f.v <= 0 {
			return fmt.Errorf("%s must be more than 0", f.name)
		}
	}
	notNegative := []struct {
		name string
		v    int64
	}{
		{"-list-ttl", int64(c.guard.ListTTL)},
		{"-shutdown-timeout", int64(c.shutdown)},
	}
	for _, f := range notNegative {
		if f.v < 0 {
			return fmt.Errorf("%s must not be negative", f.name)
		}
	}
	// The library reads 0 as its default; here 0 means none.
	if c.keepNoList = c.guard.ListTTL == 0; c.keepNoList {
		c.guard.ListTTL = time.Nanosecond // a list is never shown
	}
	return nil
}

// servedPath checks the -path flag and returns it as a request's
// URL.EscapedPath has it: a path beginning with /, percent-encoded as in a
// URL, with no query, fragment, space or control character.
func servedPath(p string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("-path %q is not a URL path: %s", p, why)
	}
	if !strings.HasPrefix(p, "/") {
		return bad("it must begin with /")
	}
	if strings.ContainsAny(p, "?#") {
		return bad("no query or fragment (? or #)")
	}
	for _, r := range p {
		if r <= ' ' || r == 0x7f {
			return bad("no space or control character")
		}
	}
	decoded, err := url.PathUnescape(p)
	if err != nil {
		return bad("a bad % escape")
	}
	return (&url.URL{Path: decoded, RawPath: p}).EscapedPath(), nil
}

// handler returns the guarded reverse proxy.
func handler(c *config, logger *cmdlog.Logger) (http.Handler, error) {
	u := c.upstreamURL
	query := newUpstreamQuery(u.RawQuery)
	rp := &reporter{upstream: logged(u), logger: logger, logPass: c.logPass, metrics: c.metrics, upstreamTimeout: c.upstreamTimeout}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.ResponseHeaderTimeout = c.upstreamTimeout
	base.DisableCompression = true // no Accept-Encoding the caller did not send
	var transport http.RoundTripper = base
	if c.metrics != nil {
		transport = metricsTransport{base, c.metrics}
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.URL.Path, pr.Out.URL.RawPath = u.Path, u.RawPath
			pr.Out.URL.RawQuery = query.join(pr.In.URL.RawQuery)
			if c.host == "keep" {
				pr.Out.Host = pr.In.Host
			}
			// The caller's own forwarding headers, which ReverseProxy
			// takes out, go on as sent; the proxy adds none.
			for _, k := range [...]string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
				if v, ok := pr.In.Header[k]; ok && !hasToken(pr.In.Header, "Connection", k) {
					pr.Out.Header[k] = v
				}
			}
		},
		FlushInterval: -1, // event streams as they come
		ErrorLog:      logger.Log(slog.LevelError),
		ErrorHandler:  rp.proxyError,
		Transport:     transport,
	}
	opts := c.guard // no tool set: the upstream decides every call
	opts.OnReject = func(r *http.Request, rej *toolguard.Rejection) {
		rp.onReject(r, rej) // a translated answer is not a pass-through
		if !c.quiet {
			rp.logAnswer(r, rej, c)
		}
	}
	if c.logPass || c.metrics != nil {
		opts.OnPass = rp.onPass
	}
	guard, err := toolguard.New(opts)
	if err != nil {
		return nil, err
	}
	return asSent(c.path, c.host == "keep", rp.wrap(guard.Handler(oneContinue(proxy)))), nil
}

// asSent serves h at exactly path, as the request wrote it (its
// EscapedPath: "/%6Dcp" is not "/mcp", which some servers would not
// serve), and answers 404 elsewhere. The path is the user's text: it is
// never read as an http.ServeMux pattern, where {x} would be a wildcard and
// some paths would not parse at all. The 404 does not name the path (an
// upstream's may hold a key). With keepHost, a request whose Host
// cannot be sent on as the caller sent it is answered 400: an empty or
// missing Host (the upstream would get its own URL's host), and a full
// URL as the request target (net/http keeps its host, not the Host
// header, which some servers judge instead).
func asSent(path string, keepHost bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.EscapedPath() != path:
			http.Error(w, "404 page not found: not the path toolguard-proxy serves (-path; by default the -upstream URL's path)", http.StatusNotFound)
		case keepHost && r.Host == "":
			http.Error(w, "toolguard-proxy: the request names no Host, and -host keep sends the upstream the caller's", http.StatusBadRequest)
		case keepHost && !strings.HasPrefix(r.RequestURI, "/"):
			http.Error(w, "toolguard-proxy: the request target is a full URL; send its path, and its host in Host", http.StatusBadRequest)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// oneContinue relays no 100 Continue of the upstream to a caller that
// asked for one (Expect: 100-continue): net/http sent it one as the body
// was read, for the guard, and a second would be an answer the upstream
// alone never gives.
func oneContinue(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hasToken(r.Header, "Expect", "100-continue") {
			w = noContinue{w}
		}
		h.ServeHTTP(w, r)
	})
}

// hasToken reports whether the comma-separated values of header key in h
// hold token, in any letter case, as net/http reads them.
func hasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

type noContinue struct{ http.ResponseWriter }

func (w noContinue) WriteHeader(code int) {
	if code != http.StatusContinue {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w noContinue) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args)
	if err != nil {
		// -h, -version, or the one line of a usage error
		return newCommand(&config{}).Exit(err, stdout, stderr)
	}
	logger, err := cmdlog.New(stderr, c.logFormat, "toolguard-proxy")
	if err != nil {
		return newCommand(&config{}).Usage(stderr, err.Error())
	}
	h, err := handler(c, logger)
	if err != nil {
		return newCommand(&config{}).Usage(stderr, err.Error())
	}
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		fmt.Fprintln(stderr, "toolguard-proxy:", err)
		return 1
	}
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{Handler: endsOnShutdown(streams, h), ErrorLog: logger.Log(slog.LevelError), ReadHeaderTimeout: 30 * time.Second}
	srv.RegisterOnShutdown(endStreams)
	stopMetrics, err := serveMetrics(c, logger)
	if err != nil {
		ln.Close()
		fmt.Fprintln(stderr, "toolguard-proxy:", err)
		return 1
	}
	defer stopMetrics()
	logger.Event(slog.LevelInfo, "listening", fmt.Sprintf("listening on http://%s%s -> %s", ln.Addr(), c.path, logged(c.upstreamURL)),
		slog.String("addr", ln.Addr().String()), slog.String("path", c.path), slog.String("upstream", logged(c.upstreamURL)))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		logger.Event(slog.LevelError, "", err.Error())
		return 1
	case <-ctx.Done():
	}
	logger.Printf("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), c.shutdown)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Printf("shutdown: %v", err)
		srv.Close()
		return 1
	}
	return 0
}

// endsOnShutdown ends GET requests when done is: a client's standing event
// stream for the server's messages stays open for as long as the client
// runs, so Shutdown, which waits for requests in flight, would otherwise
// wait for it until -shutdown-timeout and fail. Clients open it again
// (resuming with Last-Event-ID where the server keeps events). Calls in
// flight (POST) get -shutdown-timeout to finish.
func endsOnShutdown(done context.Context, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer context.AfterFunc(done, cancel)()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	})
}

// listErrText says why an answer went out without the tool list, in the
// words of the command's flags.
func listErrText(err error, c *config) string {
	switch {
	case errors.Is(err, toolguard.ErrNoList) && c.keepNoList:
		return "no list is kept (-list-ttl 0)"
	case errors.Is(err, toolguard.ErrNoList):
		return fmt.Sprintf("the caller has not listed its tools (or not within -list-ttl %v, or since the upstream said its list changed, or since it initialized again or deleted its session)", c.guard.ListTTL)
	}
	return err.Error()
}

// logged is the upstream URL as the log shows it: without its query,
// which may hold a key.
func logged(u *url.URL) string {
	v := *u
	if v.RawQuery != "" || v.ForceQuery {
		v.RawQuery, v.ForceQuery = "", false
		return v.String() + "?…"
	}
	return v.String()
}

// upstreamQuery is the -upstream URL's query and the names it sets, read
// once.
type upstreamQuery struct {
	raw  string
	keys map[string]bool
}

func newUpstreamQuery(raw string) upstreamQuery {
	q := upstreamQuery{raw: raw, keys: map[string]bool{}}
	for p := range strings.FieldsFuncSeq(raw, func(r rune) bool { return r == '&' || r == ';' }) {
		k, _, _ := strings.Cut(p, "=")
		q.keys[foldKey(unescapeLax(k))] = true
	}
	return q
}

// join is the query sent upstream: the upstream URL's, then the caller's
// parameters, less those any server could read as one the upstream URL
// sets (so a caller cannot replace a key the operator put there). The
// caller's other parameters go on as they came.
func (q upstreamQuery) join(caller string) string {
	if q.raw == "" || caller == "" {
		return q.raw + caller
	}
	joined := q.raw
	for p := range strings.SplitSeq(caller, "&") {
		if p != "" && !q.sets(p) {
			joined += "&" + p
		}
	}
	return joined
}

// sets reports whether a server could read the caller's parameter p as
// one the upstream URL sets: its name whole, up to a "[" a "]" follows
// (PHP's and qs's a[] and a[x]), or up to a "." (qs's allowDots a.x); some
// servers split on ";" too (Rack 2).
func (q upstreamQuery) sets(p string) bool {
	for part := range strings.SplitSeq(p, ";") {
		k, _, _ := strings.Cut(part, "=")
		u := unescapeLax(k)
		bracket, dot := strings.IndexByte(u, '['), strings.IndexByte(u, '.')
		if q.keys[foldKey(u)] ||
			bracket > 0 && strings.Contains(u[bracket:], "]") && q.keys[foldKey(u[:bracket])] ||
			dot > 0 && q.keys[foldKey(u[:dot])] {
			return true
		}
	}
	return false
}

// unescapeLax decodes "+" and each valid %XX of a parameter's name, and
// leaves the rest as it is, as PHP does (Go refuses the whole name for one
// stray "%"); PHP reads the name up to a NUL.
func unescapeLax(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '+':
			c = ' '
		case c == '%' && i+2 < len(k):
			if v, err := strconv.ParseUint(k[i+1:i+3], 16, 8); err == nil {
				c, i = byte(v), i+2
			}
		}
		if c == 0 {
			break
		}
		b.WriteByte(c)
	}
	return b.String()
}

// foldKey is a parameter's name as the laxest server reads it: only its
// letters and digits, in lower case (PHP reads "api.key", "api key" and
// "api[key" as "api_key"; ASP.NET ignores case).
func foldKey(k string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, k)
}
