package conformance

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Over the recorded answers of real npm servers to a made-up name
// (testdata/notfound), a VERIFIED answer carries tool_not_named exactly
// when its message and data do not name the tool asked and do not say a
// tool is unknown: puppeteer's "Could not find Chrome" does, the SDKs'
// "Tool X not found" and a bare "Unknown tool" do not.
func TestToolNotNamedHintOnRealAnswers(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "testdata", "notfound", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var verified, hinted int
	var puppeteer, bareSeen bool
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e struct {
			Package, Kind, Tool, Answer string
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Kind != "unknown" {
			continue
		}
		var msg struct {
			ID int64 `json:"id"`
		}
		json.Unmarshal([]byte(e.Answer), &msg)
		o := classifyMessage([]byte(e.Answer), msg.ID)
		h, ok := toolNotNamedHint(o, e.Tool)
		if o.verdict != Verified {
			if ok {
				t.Errorf("%s: a hint on a %s answer", e.Package, o.verdict)
			}
			continue
		}
		verified++
		named := strings.Contains(strings.ToLower(o.message+string(o.rawData)), strings.ToLower(e.Tool))
		m := strings.TrimRight(strings.ToLower(o.message), ".")
		bare := strings.HasSuffix(m, "unknown tool") || strings.HasSuffix(m, "tool not found")
		if ok == (named || bare) {
			t.Errorf("%s %s: hint %v, but the message %q names the tool: %v, says a tool is unknown: %v", e.Package, e.Tool, ok, o.message, named, bare)
		}
		if bare {
			bareSeen = true
		}
		if ok {
			hinted++
			if h.Kind != HintToolNotNamed || !strings.Contains(h.Text, e.Tool) {
				t.Errorf("%s: hint %+v", e.Package, h)
			}
		}
		if e.Package == "@modelcontextprotocol/server-puppeteer" {
			puppeteer = true
			if !ok || !strings.Contains(h.Text, "error -32603") || !strings.Contains(h.Text, "Could not find Chrome") {
				t.Errorf("puppeteer: hint %v %+v", ok, h)
			}
		}
	}
	if !puppeteer || !bareSeen || verified == 0 {
		t.Fatalf("corpus: puppeteer %v, a bare unknown tool %v, %d VERIFIED answers", puppeteer, bareSeen, verified)
	}
	t.Logf("%d VERIFIED answers of the corpus, %d with tool_not_named", verified, hinted)
}
