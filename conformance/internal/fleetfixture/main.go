// Command fleetfixture serves the conformance zoo's HTTP servers on many
// loopback ports, for measuring fleet mode: it listens on -n ports (each a
// server of its own, the zoo over and over), writes the target list to
// -out, and serves until interrupted.
//
//	go run -C conformance/internal/fleetfixture . -n 5525 -out /tmp/fleet.txt &
//	toolguard-check -fleet /tmp/fleet.txt -json -quiet > /tmp/fleet.jsonl
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"reflect"
	"strings"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/conformance/internal/zoo"
)

func main() {
	n := flag.Int("n", 5525, "how many servers (distinct ports)")
	out := flag.String("out", "fleet.txt", "where to write the target list")
	flag.Parse()
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	count, err := serve(*n, w)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	f.Close()
	log.Printf("%d servers; targets in %s", count, *out)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	<-ch
}

// serve starts n loopback servers, the zoo's HTTP servers over and over
// (those fleet mode can check with the same options), and writes the URL
// of each to w, one a line. They serve until the process ends.
func serve(n int, w io.Writer) (int, error) {
	count := 0
	for count < n {
		for _, tc := range zoo.Cases() {
			if count == n {
				break
			}
			// Fleet mode runs every target with the same options; the
			// 5 MB replies are a test of their own.
			if tc.Command != nil || !reflect.DeepEqual(tc.Opts, conformance.Options{}) ||
				strings.Contains(tc.Name, "MB") || strings.Contains(tc.Name, "padded") {
				continue
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return count, err
			}
			go http.Serve(ln, tc.Server)
			if _, err := fmt.Fprintf(w, "http://%s/mcp\n", ln.Addr()); err != nil {
				return count, err
			}
			count++
		}
	}
	return count, nil
}
