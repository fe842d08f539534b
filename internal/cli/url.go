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
// with a host, the target in it masked as Redacted masks it.
func HTTPURL(target string) error {
	u, err := url.Parse(target)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL", Redacted(target))
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q is not an http or https URL", Redacted(target))
	case u.Host == "":
		return fmt.Errorf("%q names no host", Redacted(target))
	}
	return nil
}
