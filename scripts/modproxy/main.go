// Command modproxy writes modules from a working tree into a file-based Go
// module proxy, at one version, so that `GOPROXY=file://DIR` can serve them
// to a consumer exactly as a published tag would (scripts/check-install.sh).
//
//	cd scripts/modproxy && go run . -version v0.1.0 -out /tmp/proxy ../.. ../../adapters/echo ...
//
// Each module's zip holds the files of its directory tree, without nested
// modules (directories with their own go.mod), .git and node_modules, as the
// go command's own zips do. Only files tracked by git are taken when the tree
// is a git checkout.
package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	version := flag.String("version", "v0.1.0", "the version to write the modules at")
	out := flag.String("out", "", "the proxy directory to write (required)")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: modproxy -version v0.1.0 -out DIR moduledir...")
		os.Exit(2)
	}
	for _, dir := range flag.Args() {
		mod, err := write(*out, dir, *version)
		if err != nil {
			fmt.Fprintf(os.Stderr, "modproxy: %s: %v\n", dir, err)
			os.Exit(1)
		}
		fmt.Printf("%s@%s\n", mod, *version)
	}
}

func write(out, dir, version string) (string, error) {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	mod := modulePath(gomod)
	if mod == "" {
		return "", errors.New("go.mod has no module line")
	}
	files, err := moduleFiles(dir)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return "", err
		}
		w, err := zw.Create(mod + "@" + version + "/" + f)
		if err != nil {
			return "", err
		}
		if _, err := w.Write(data); err != nil {
			return "", err
		}
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	vdir := filepath.Join(out, filepath.FromSlash(escape(mod)), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return "", err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	for name, data := range map[string][]byte{
		version + ".zip":  buf.Bytes(),
		version + ".mod":  gomod,
		version + ".info": info,
		"list":            []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			return "", err
		}
	}
	return mod, nil
}

// moduleFiles lists the module's files, slash-separated and relative to dir.
func moduleFiles(dir string) ([]string, error) {
	var all []string
	if out, err := exec.Command("git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard", ".").Output(); err == nil {
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				all = append(all, f)
			}
		}
	} else {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				rel, _ := filepath.Rel(dir, p)
				all = append(all, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var files []string
	nested := map[string]bool{}
	for _, f := range all {
		if inNested(dir, f, nested) || strings.Contains("/"+f, "/node_modules/") {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f))); err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a symlink
		}
		files = append(files, f)
	}
	return files, nil
}

// inNested reports whether f lies in a directory below dir that holds its
// own go.mod (another module).
func inNested(dir, f string, memo map[string]bool) bool {
	for d := path.Dir(f); d != "."; d = path.Dir(d) {
		is, ok := memo[d]
		if !ok {
			_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(d), "go.mod"))
			is = err == nil
			memo[d] = is
		}
		if is {
			return true
		}
	}
	return false
}

func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// escape applies the module proxy's case encoding (an upper-case letter
// becomes '!' and the letter in lower case).
func escape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
