package main

import (
	"archive/zip"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A module written into the proxy holds its own files only (no nested
// module, no node_modules), under the path and version the go command
// asks for, with the case-encoded module path, its go.mod, its .info and
// the version list.
func TestWriteModuleAsTheProxyServesIt(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"go.mod":                          "module example.com/Kit\n\ngo 1.24\n",
		"kit.go":                          "package kit\n",
		"sub/sub.go":                      "package sub\n",
		"nested/go.mod":                   "module example.com/Kit/nested\n",
		"nested/n.go":                     "package nested\n",
		"testdata/node/node_modules/x.js": "x\n",
	}
	for name, data := range files {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	mod, err := write(out, src, "v0.1.0")
	if err != nil || mod != "example.com/Kit" {
		t.Fatalf("write: %q, %v", mod, err)
	}
	vdir := filepath.Join(out, "example.com", "!kit", "@v")
	zr, err := zip.OpenReader(filepath.Join(vdir, "v0.1.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var got []string
	for _, f := range zr.File {
		got = append(got, f.Name)
	}
	slices.Sort(got)
	want := []string{"example.com/Kit@v0.1.0/go.mod", "example.com/Kit@v0.1.0/kit.go", "example.com/Kit@v0.1.0/sub/sub.go"}
	if !slices.Equal(got, want) {
		t.Errorf("zip holds %q, want %q", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(vdir, "v0.1.0.mod")); string(b) != files["go.mod"] {
		t.Errorf(".mod is %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(vdir, "list")); string(b) != "v0.1.0\n" {
		t.Errorf("list is %q", b)
	}
	if _, err := os.Stat(filepath.Join(vdir, "v0.1.0.info")); err != nil {
		t.Error(err)
	}
}
