// Command ampserver serves a real mcp-go server with n tools, alone or
// behind toolguard, for the amplification benchmark
// (interop/amplify_bench_test.go): the benchmark starts it as a child
// process, so the CPU time it reads from /proc is the server's own.
//
//	ampserver -mode alone|guard [-tools n] [-stateless] [-cpuprofile file]
//
// The server runs in mcp-go's default streamable HTTP mode (it hands out
// session ids), or with -stateless in its stateless mode. With -mode guard
// the guard is set up as a user would deploy it: toolguardmcpgo.Tools on
// the server and its handler, toolguard.New with every other option left
// at its default, and the guard's handler in front of mcp-go's.
//
// It listens on a free loopback port and prints the address on stdout.
// The tools have input schemas of the size and shape real servers publish
// (a description, three to eight typed parameters with their own
// descriptions, enums, bounds, required lists and annotations), so that a
// tools/list of 1,000 of them is about a megabyte, as it would be.
//
// With -cpuprofile, it writes a CPU profile of its whole life to the file
// when it gets SIGTERM or SIGINT, then exits.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/interop/internal/childserver"
)

func main() {
	mode := flag.String("mode", "alone", "alone or guard")
	n := flag.Int("tools", 10, "number of tools")
	stateless := flag.Bool("stateless", false, "serve in mcp-go's stateless mode (no sessions)")
	profile := flag.String("cpuprofile", "", "write a CPU profile to this file on SIGTERM or SIGINT")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
		go func() {
			<-stop
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				log.Fatal(err)
			}
			os.Exit(0)
		}()
	}
	if *n < 1 {
		log.Fatalf("ampserver: -tools %d, want at least 1", *n)
	}
	s := server.NewMCPServer("amp", "1.0.0", server.WithToolCapabilities(true))
	for i := range *n {
		s.AddTool(tool(i), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	}
	var opts []server.StreamableHTTPOption
	if *stateless {
		opts = append(opts, server.WithStateLess(true))
	}
	var h http.Handler = server.NewStreamableHTTPServer(s, opts...)
	childserver.Serve("ampserver", s, h, *mode)
}

var (
	verbs = []string{"get", "list", "create", "update", "delete", "search", "add", "remove", "merge", "assign"}
	nouns = []string{"issue", "pull_request", "repository", "branch", "commit", "release", "workflow_run",
		"comment", "label", "milestone", "discussion", "gist", "team", "project_item", "notification",
		"code_scanning_alert", "secret", "deployment", "webhook", "tag"}
)

// tool is the i-th tool: verb_noun, with a _vK suffix past the first 200.
func tool(i int) mcp.Tool {
	verb, noun := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
	name := verb + "_" + noun
	if k := i / (len(verbs) * len(nouns)); k > 0 {
		name = fmt.Sprintf("%s_v%d", name, k+1)
	}
	opts := []mcp.ToolOption{
		mcp.WithDescription(fmt.Sprintf("%s a %s in a GitHub repository. Use this when the user asks to %s a %s by its number or name; "+
			"the answer is the %s as JSON with its URL, author, timestamps and state. Requires a token with repo scope for private repositories.",
			verb, noun, verb, noun, noun)),
		mcp.WithTitleAnnotation(verb + " " + noun),
		mcp.WithReadOnlyHintAnnotation(verb == "get" || verb == "list" || verb == "search"),
		mcp.WithDestructiveHintAnnotation(verb == "delete" || verb == "remove"),
		mcp.WithString("owner", mcp.Required(), mcp.Description("Repository owner: a user or organization login, as in github.com/OWNER/repo.")),
		mcp.WithString("repo", mcp.Required(), mcp.Description("Repository name without the owner, as in github.com/owner/REPO.")),
		mcp.WithNumber(noun+"_number", mcp.Required(), mcp.Min(1), mcp.Description("The number of the "+noun+" as shown in its URL.")),
	}
	if i%2 == 0 {
		opts = append(opts, mcp.WithString("state", mcp.Enum("open", "closed", "all"), mcp.DefaultString("open"),
			mcp.Description("Only "+noun+"s in this state.")))
	}
	if i%3 == 0 {
		opts = append(opts,
			mcp.WithNumber("per_page", mcp.Min(1), mcp.Max(100), mcp.DefaultNumber(30), mcp.Description("Results per page, at most 100.")),
			mcp.WithNumber("page", mcp.Min(1), mcp.DefaultNumber(1), mcp.Description("Page number of the results, from 1.")))
	}
	if i%4 == 0 {
		opts = append(opts, mcp.WithArray("labels", mcp.WithStringItems(), mcp.Description("Label names to filter or set; case-insensitive.")))
	}
	if i%5 == 0 {
		opts = append(opts, mcp.WithBoolean("dry_run", mcp.DefaultBool(false), mcp.Description("Validate the request and report what would change without changing anything.")))
	}
	return mcp.NewTool(name, opts...)
}
