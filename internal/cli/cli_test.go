package cli

import (
	"bytes"
	"errors"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// A flag error is one line naming the command and the hint; -h is the
// head and every flag; -version is one line on standard output, whatever
// else was given; a command's own usage error reads the same.
func TestParseAndExit(t *testing.T) {
	newCmd := func() *Command {
		c := New("toolguard-x", "usage: toolguard-x [flags] URL\n\nflags:\n")
		c.Flags.Int("n", 1, "how many")
		return c
	}
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string // stderr "" means empty; a prefix otherwise
	}{
		{[]string{"-nope"}, ExitUsage, "", "toolguard-x: flag provided but not defined: -nope\nrun with -h for help\n"},
		{[]string{"-n", "many"}, ExitUsage, "", "toolguard-x: invalid value \"many\" for flag -n: parse error\nrun with -h for help\n"},
		{[]string{"-h"}, 0, "", "usage: toolguard-x [flags] URL\n\nflags:\n  -n int\n"},
		{[]string{"-version", "http://x"}, 0, "toolguard-x ", ""},
	} {
		c := newCmd()
		err := c.Parse(tc.args)
		if err == nil {
			t.Fatalf("%q parsed", tc.args)
		}
		var out, errOut bytes.Buffer
		code := c.Exit(err, &out, &errOut)
		if code != tc.code || !strings.HasPrefix(out.String(), tc.stdout) || (tc.stdout == "") != (out.Len() == 0) ||
			!strings.HasPrefix(errOut.String(), tc.stderr) || (tc.stderr == "") != (errOut.Len() == 0) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, out.String(), errOut.String(), tc.code, tc.stdout, tc.stderr)
		}
		if tc.args[0] == "-h" && (!strings.Contains(errOut.String(), "-version") || strings.Contains(errOut.String(), "run with -h")) {
			t.Errorf("-h: %q", errOut.String())
		}
		if tc.args[0] == "-version" && (strings.Count(out.String(), "\n") != 1 || !strings.HasSuffix(out.String(), " "+runtime.Version()+"\n")) {
			t.Errorf("-version: %q", out.String())
		}
	}
	if err := newCmd().Parse([]string{"-n", "2", "x"}); err != nil {
		t.Errorf("good flags: %v", err)
	}
	var errOut bytes.Buffer
	if code := newCmd().Exit(errors.New("want one URL"), nil, &errOut); code != ExitUsage || errOut.String() != "toolguard-x: want one URL\nrun with -h for help\n" {
		t.Errorf("exit %d, %q", code, errOut.String())
	}
}

func TestVersion(t *testing.T) {
	for _, tc := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v0.3.0"}}, "toolguard-x v0.3.0 go1.26.1"},
		{&debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "5aee1e6a0b1c2d3e4f"}, {Key: "vcs.modified", Value: "true"}}},
			"toolguard-x (devel) commit 5aee1e6a0b1c (modified) go1.26.1"},
		{&debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}, "toolguard-x (devel) commit abc"},
		{nil, "toolguard-x (no build info)"},
	} {
		if got := Version("toolguard-x", tc.info, tc.info != nil); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
