package cli

import (
	"fmt"
	"net/url"
	"strings"
)

// Redacted is target, a URL, with a password in it masked as
// url.URL.Redacted masks it ("http://alice:xxxxx@host/"), also when target
// does not parse, or parses with an "@" in its fragment (a password with
// "/", "?" or "#" in it ends the host early): then everything from the
// first ":" after the scheme to the last "@" is masked but the user name,
// more than the password at times, never less. What a command may print
// of a URL it was given.
func Redacted(target string) string {
	u, err := url.Parse(target)
	switch {
	case err == nil && u.User != nil:
		return u.Redacted()
	case err == nil && !strings.Contains(u.Fragment, "@"):
		return target
	}
	scheme, rest, ok := strings.Cut(target, "://")
	at := strings.LastIndex(rest, "@")
	user, _, hasPassword := strings.Cut(rest[:max(at, 0)], ":")
	if !ok || at < 0 || !hasPassword {
		return target
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}

// RedactedArg is Redacted for what a user may have meant as a URL: one
// without "://" is masked as the http:// URL it would be ("alice:pw@host").
func RedactedArg(s string) string {
	if strings.Contains(s, "://") {
		return Redacted(s)
	}
	return strings.TrimPrefix(Redacted("http://"+s), "http://")
}

// HTTPURL reports an error for a target that is not an http or https URL
// with a host, the target in it masked as RedactedArg masks it; one
// without "://" that would be such a URL with http:// before it is told so.
func HTTPURL(target string) error {
	u, err := url.Parse(target)
	var why string
	switch {
	case err != nil:
		why = "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		why = "is not an http or https URL"
	case u.Host == "":
		return fmt.Errorf("%q names no host", RedactedArg(target))
	default:
		return nil
	}
	if meant := "http://" + target; !strings.Contains(target, "://") && HTTPURL(meant) == nil {
		return fmt.Errorf("%q %s (did you mean %q?)", RedactedArg(target), why, Redacted(meant))
	}
	return fmt.Errorf("%q %s", RedactedArg(target), why)
}
