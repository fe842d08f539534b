package cli

import (
	"fmt"
	"net/url"
	"strings"
)

// Redacted is target, a URL, with a password in it masked as
// url.URL.Redacted masks it ("http://alice:xxxxx@host/"), also when target
// does not parse: what a command may print of a URL it was given.
func Redacted(target string) string {
	if u, err := url.Parse(target); err == nil {
		if u.User != nil {
			return u.Redacted()
		}
		return target
	}
	scheme, rest, ok := strings.Cut(target, "://")
	if !ok {
		return target
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	user, _, hasPassword := strings.Cut(rest[:max(at, 0)], ":")
	if at < 0 || !hasPassword {
		return target
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}

// HTTPURL reports an error for a target that is not an http or https URL
// with a host, the target in it masked as Redacted masks it; one without
// "://" is shown with http:// before it, what was likely meant.
func HTTPURL(target string) error {
	u, err := url.Parse(target)
	shown, hint := Redacted(target), ""
	if !strings.Contains(target, "://") { // (a password is masked as in the URL meant)
		meant := Redacted("http://" + target)
		shown, hint = strings.TrimPrefix(meant, "http://"), fmt.Sprintf(" (did you mean %q?)", meant)
	}
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL%s", shown, hint)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q is not an http or https URL%s", shown, hint)
	case u.Host == "":
		return fmt.Errorf("%q names no host", shown)
	}
	return nil
}
