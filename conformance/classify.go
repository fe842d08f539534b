package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// outcome is the classification of one reply.
type outcome struct {
	verdict  Verdict
	category Category
	code     *int
	detail   string
	data     *ErrorData // a VERIFIED error's guard lists, if it has any
	// message and rawData are a VERIFIED error's message and data, for
	// the hints.
	message string
	rawData json.RawMessage
}

// classifyCall classifies the reply to the made-up tools/call, whose id was
// id. body is the whole reply (or an event stream).
func classifyCall(media MediaType, body []byte, id int64) outcome {
	if len(bytes.TrimSpace(body)) == 0 {
		return outcome{verdict: ObservedRisk, category: EmptyBody, detail: "the reply has an empty body"}
	}
	if media == MediaEventStream {
		msg, stray := findInStream(body, id)
		switch {
		case msg != nil:
			return classifyMessage(msg, id)
		case stray != nil:
			o := classifyMessage(stray, id)
			o.detail = "in the event stream: " + o.detail
			return o
		}
		return outcome{verdict: ObservedRisk, category: EventStreamNoData,
			detail: "the event stream carries no data event with a reply"}
	}
	return classifyMessage(body, id)
}

// classifyMessage classifies one JSON text as the reply to request id.
//
// A reply is JSON-RPC when it is an object with a jsonrpc member. A
// JSON-RPC error is well-formed (VERIFIED) when jsonrpc is "2.0", there is
// no result, error is an object whose code is an integer (of any size) and
// whose message is a string, and id is the request's id (equal as a
// number) or null, which JSON-RPC allows when the request's id could not
// be read. A missing id, an id of another type ("3" for 3) or another
// value makes it malformed. A result is classified by isError alone,
// whatever its id.
func classifyMessage(b []byte, id int64) outcome {
	if !json.Valid(b) {
		return outcome{verdict: ObservedRisk, category: NotJSON, detail: "the reply is not JSON"}
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(b, &msg) != nil || msg == nil {
		return outcome{verdict: ObservedRisk, category: NotJSONRPC, detail: "the reply is JSON but not a JSON-RPC object"}
	}
	rawVersion, hasVersion := msg["jsonrpc"]
	if !hasVersion {
		return outcome{verdict: ObservedRisk, category: NotJSONRPC, detail: "the reply is JSON but not JSON-RPC (no jsonrpc member)"}
	}
	rawErr, hasErr := msg["error"]
	rawRes, hasRes := msg["result"]
	var version string
	versionOK := json.Unmarshal(rawVersion, &version) == nil && version == "2.0"

	if hasErr {
		var e map[string]json.RawMessage
		_ = json.Unmarshal(rawErr, &e)
		isInt, code, small := jsonInteger(e["code"])
		var codePtr *int
		if small {
			c := int(code)
			codePtr = &c
		}
		rawID, hasID := msg["id"]
		var why string
		switch {
		case !versionOK:
			why = `jsonrpc is not "2.0"`
		case hasRes:
			why = "it has both result and error"
		case e == nil:
			why = "error is not an object"
		case !isInt:
			why = "the error code is not an integer"
		case !isString(e["message"]):
			why = "the error message is not a string"
		case !hasID:
			why = "it has no id"
		case !idEquals(rawID, id) && string(bytes.TrimSpace(rawID)) != "null":
			why = fmt.Sprintf("its id %s is not the request's id %d", clip(rawID), id)
		}
		if why == "" {
			codeText := string(bytes.TrimSpace(e["code"]))
			var message string
			_ = json.Unmarshal(e["message"], &message)
			return outcome{verdict: Verified, code: codePtr, detail: "a JSON-RPC error " + clip([]byte(codeText)), data: errorData(e["data"]),
				message: message, rawData: e["data"]}
		}
		return outcome{verdict: ObservedRisk, category: JSONRPCMalformed, code: codePtr,
			detail: "the reply claims to be JSON-RPC, but its error is malformed: " + why}
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

// clip shortens a JSON text for a detail line.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

func isString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	var s string
	return len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil
}

// maxRecorded is the largest error code magnitude a report records: the
// integers every JSON reader holds exactly.
const maxRecorded = 1 << 53

// jsonInteger reports whether raw is a JSON number whose value is an
// integer, of any size ("3", "-32602", "1e3", "2.0", "9007199254740993").
// When its magnitude is at most 2^53 it also returns the value, small true.
// It reads the digits as text, so no size is too large.
func jsonInteger(raw json.RawMessage) (isInt bool, v int64, small bool) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') || !json.Valid([]byte(s)) {
		return false, 0, false // null, strings, objects...
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	mant, exp := s, ""
	if i := indexAnyByte(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	intPart, frac, _ := cut(mant, '.')
	digits := trimLeft(intPart+frac, '0')
	if digits == "" {
		return true, 0, true // zero, however written
	}
	// value = digits × 10^shift
	shift := -int64(len(frac))
	if exp != "" {
		e, err := strconv.ParseInt(exp, 10, 64)
		if err != nil { // an exponent beyond int64: huge or tiny
			return exp[0] != '-', 0, false
		}
		if e > 1<<40 || e < -(1<<40) {
			return e > 0, 0, false
		}
		shift += e
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		shift++
	}
	if shift < 0 {
		return false, 0, false
	}
	if int64(len(digits))+shift > 16 {
		return true, 0, false
	}
	n, _ := strconv.ParseInt(digits, 10, 64)
	for ; shift > 0; shift-- {
		n *= 10
	}
	if n > maxRecorded {
		return true, 0, false
	}
	if neg {
		n = -n
	}
	return true, n, true
}

func indexAnyByte(s, chars string) int {
	for i := 0; i < len(s); i++ {
		for j := 0; j < len(chars); j++ {
			if s[i] == chars[j] {
				return i
			}
		}
	}
	return -1
}

func cut(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func trimLeft(s string, c byte) string {
	for len(s) > 0 && s[0] == c {
		s = s[1:]
	}
	return s
}

// idEquals reports whether raw is a JSON number equal to id.
func idEquals(raw json.RawMessage, id int64) bool {
	isInt, v, small := jsonInteger(raw)
	return isInt && small && v == id
}

// A match says whether a message may be the answer to a request.
type match int

const (
	noMatch match = iota
	// nullMatch: a result or error whose id is null or absent, which
	// may answer a request whose id the server could not read, or a
	// notification it answered by mistake.
	nullMatch
	// idMatch: the request's id, as a number or as the same number in a
	// string ("3" for 3). Which of these is well-formed is
	// classifyMessage's business.
	idMatch
)

// answers sorts one JSON text found in a stream or on stdio: m says
// whether it may be the answer to request id; stray that it is not JSON,
// or JSON that does not claim JSON-RPC. Notifications, requests from the
// server and answers to other ids are neither.
func answers(data []byte, id int64) (m match, stray bool) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(data, &msg) != nil || msg == nil {
		return noMatch, true
	}
	if _, ok := msg["jsonrpc"]; !ok {
		return noMatch, true
	}
	if _, ok := msg["method"]; ok {
		return noMatch, false
	}
	_, hasRes := msg["result"]
	_, hasErr := msg["error"]
	raw := bytes.TrimSpace(msg["id"])
	var s string
	switch {
	case idEquals(raw, id):
		return idMatch, false
	case !hasRes && !hasErr:
		return noMatch, false
	case len(raw) == 0 || string(raw) == "null":
		return nullMatch, false
	case json.Unmarshal(raw, &s) == nil && s == strconv.FormatInt(id, 10):
		return idMatch, false
	}
	return noMatch, false
}

// findInStream returns the data of the first message event of an event
// stream that answers request id. When none does, stray is the first data
// that is not JSON or not JSON-RPC, if any: the stream then carried data,
// just not a reply.
func findInStream(body []byte, id int64) (reply, stray []byte) {
	for _, data := range streamMessages(body) {
		m, s := answers(data, id)
		if m != noMatch {
			return data, nil
		}
		if s && stray == nil {
			stray = data
		}
	}
	return nil, stray
}

// errorData reads the guard's lists from an error's data: availableTools
// and suggestions, each kept only when it is an array of strings. It
// returns nil when neither is.
func errorData(raw json.RawMessage) *ErrorData {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	strs := func(raw json.RawMessage) []string {
		var s []string
		if len(raw) == 0 || json.Unmarshal(raw, &s) != nil || s == nil {
			return nil
		}
		return s
	}
	d := ErrorData{AvailableTools: strs(m["availableTools"]), Suggestions: strs(m["suggestions"])}
	if d.AvailableTools == nil && d.Suggestions == nil {
		return nil
	}
	return &d
}
