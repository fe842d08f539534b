package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"strings"

	"github.com/toolguard/toolguard/internal/sse"
)

// outcome is the classification of one reply.
type outcome struct {
	verdict  Verdict
	category Category
	code     *int
	detail   string
}

// mediaTypeOf reduces a Content-Type to the fixed list a report records.
func mediaTypeOf(contentType string) string {
	if strings.TrimSpace(contentType) == "" {
		return MediaNone
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return MediaOther
	}
	switch mt {
	case MediaJSON, MediaEventStream, MediaHTML, MediaText:
		return mt
	}
	return MediaOther
}

// classifyCall classifies the reply to the made-up tools/call, whose id was
// id. body is the whole reply (or an event stream).
func classifyCall(media string, body []byte, id int64) outcome {
	if len(bytes.TrimSpace(body)) == 0 {
		return outcome{verdict: ObservedRisk, category: EmptyBody, detail: "the reply has an empty body"}
	}
	if media == MediaEventStream {
		msg, ok := findInStream(body, id)
		if !ok {
			return outcome{verdict: ObservedRisk, category: EventStreamNoData,
				detail: "the event stream carries no data event with the reply"}
		}
		return classifyMessage(msg, id)
	}
	return classifyMessage(body, id)
}

// classifyMessage classifies one JSON text as a reply to request id.
func classifyMessage(b []byte, id int64) outcome {
	if !json.Valid(b) {
		return outcome{verdict: ObservedRisk, category: NotJSON, detail: "the reply is not JSON"}
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(b, &msg) != nil {
		return outcome{verdict: ObservedRisk, category: NotJSONRPC, detail: "the reply is JSON but not a JSON-RPC object"}
	}
	rawErr, hasErr := msg["error"]
	rawRes, hasRes := msg["result"]
	_, hasVersion := msg["jsonrpc"]
	if !hasVersion && !hasErr && !hasRes {
		return outcome{verdict: ObservedRisk, category: NotJSONRPC, detail: "the reply is JSON but not JSON-RPC"}
	}
	var version string
	versionOK := json.Unmarshal(msg["jsonrpc"], &version) == nil && version == "2.0"

	if hasErr {
		var e map[string]json.RawMessage
		var code int
		var codeOK bool
		if json.Unmarshal(rawErr, &e) == nil && e != nil {
			code, codeOK = smallInt(e["code"])
		}
		var message string
		wellFormed := versionOK && !hasRes && e != nil && codeOK &&
			json.Unmarshal(e["message"], &message) == nil && idMatches(msg["id"], id, true)
		var codePtr *int
		if codeOK {
			codePtr = &code
		}
		if wellFormed {
			return outcome{verdict: Verified, code: codePtr, detail: fmt.Sprintf("a JSON-RPC error %d", code)}
		}
		return outcome{verdict: ObservedRisk, category: JSONRPCMalformed, code: codePtr,
			detail: "the reply claims to be JSON-RPC, but its error object is malformed"}
	}
	if hasRes {
		var res struct {
			IsError *bool `json:"isError"`
		}
		_ = json.Unmarshal(rawRes, &res)
		if res.IsError != nil && *res.IsError {
			return outcome{verdict: ObservedRisk, category: ResultIsError,
				detail: "an ordinary result with isError: true instead of a JSON-RPC error"}
		}
		return outcome{verdict: ObservedRisk, category: ResultOK,
			detail: "an ordinary result, as if the made-up tool had worked"}
	}
	return outcome{verdict: ObservedRisk, category: JSONRPCMalformed,
		detail: "the reply claims to be JSON-RPC but has neither result nor error"}
}

// smallInt reads a JSON number that is an integer exactly representable in
// an int32.
func smallInt(raw json.RawMessage) (int, bool) {
	var f float64
	if raw == nil || json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

// idMatches reports whether raw is the id of request id (or null, which
// JSON-RPC allows in an error when the id could not be read).
func idMatches(raw json.RawMessage, id int64, nullOK bool) bool {
	raw = bytes.TrimSpace(raw)
	if nullOK && (raw == nil || string(raw) == "null") {
		return true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return false
	}
	v, err := n.Int64()
	return err == nil && v == id
}

// findInStream returns the data of the first SSE message event whose JSON
// message answers request id, skipping notifications and server requests.
func findInStream(body []byte, id int64) ([]byte, bool) {
	for _, data := range sse.Messages(body) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		if json.Unmarshal(data, &msg) != nil || msg.Method != nil || msg.ID == nil {
			continue
		}
		if idMatches(msg.ID, id, false) {
			return data, true
		}
	}
	return nil, false
}
