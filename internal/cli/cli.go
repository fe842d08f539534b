// Package cli holds what toolguard's commands share on their command line:
// a usage error is the one line that is wrong and "run with -h for help",
// -h prints the usage, and -version prints the version from the build info.
//
//	cmd := cli.New("toolguard-x", "usage: toolguard-x [flags] URL\n\nflags:\n")
//	n := cmd.Flags.Int("n", 1, "how many")
//	if err := cmd.Parse(args); err != nil {
//		return cmd.Exit(err, stdout, stderr) // -h, -version or a usage error
//	}
//	if *n <= 0 {
//		return cmd.Usage(stderr, "-n must be more than 0")
//	}
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
)

// ExitUsage is the exit status of a usage error (EX_USAGE).
const ExitUsage = 64

// ErrVersion is what Parse returns when -version was given.
var ErrVersion = errors.New("cli: -version")

// Command is a command's flags, with -version among them.
type Command struct {
	Name  string        // the command's name, the prefix of its messages
	Head  string        // what -h prints before the flags
	Flags *flag.FlagSet // the command's flags; the flag package prints nothing
	ver   *bool
}

// New returns a Command named name whose -h prints head, then the flags.
func New(name, head string) *Command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // Exit writes what is to be written
	fs.Usage = func() {}
	c := &Command{Name: name, Head: head, Flags: fs}
	c.ver = fs.Bool("version", false, "print the version (from the build info) and exit")
	return c
}

// Parse parses args and writes nothing. It returns flag.ErrHelp after -h
// or -help, ErrVersion after -version (whatever else was given, once the
// flags parse), or the flag package's own error.
func (c *Command) Parse(args []string) error {
	if err := c.Flags.Parse(args); err != nil {
		return err
	}
	if *c.ver {
		return ErrVersion
	}
	return nil
}

// Exit writes what err calls for and returns the exit status: the usage on
// stderr and 0 for flag.ErrHelp, the version on stdout and 0 for
// ErrVersion, else err as a usage error (see Usage).
func (c *Command) Exit(err error, stdout, stderr io.Writer) int {
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.Help(stderr)
		return 0
	case errors.Is(err, ErrVersion):
		info, ok := debug.ReadBuildInfo()
		fmt.Fprintln(stdout, Version(c.Name, info, ok))
		return 0
	}
	return c.Usage(stderr, err.Error())
}

// Usage writes a usage error, "NAME: MSG" and "run with -h for help", and
// returns ExitUsage.
func (c *Command) Usage(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "%s: %s\nrun with -h for help\n", c.Name, msg)
	return ExitUsage
}

// Help writes the usage: Head, then every flag with its default.
func (c *Command) Help(w io.Writer) {
	fmt.Fprint(w, c.Head)
	c.Flags.SetOutput(w)
	c.Flags.PrintDefaults()
	c.Flags.SetOutput(io.Discard)
}

// Version is the line -version prints: the name, the main module's version
// ("(devel)" when built from a checkout), the commit and whether the tree
// was modified when the build recorded them, and the Go version. ok and
// info are debug.ReadBuildInfo's.
func Version(name string, info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return name + " (no build info)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	s := name + " " + v
	var rev, modified string
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			modified = kv.Value
		}
	}
	if rev != "" {
		s += " commit " + rev[:min(12, len(rev))]
		if modified == "true" {
			s += " (modified)"
		}
	}
	if info.GoVersion != "" {
		s += " " + info.GoVersion
	}
	return s
}
