package house

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// buildSuffix is a file name's build constraint suffix (_unix, _linux…).
var buildSuffix = regexp.MustCompile(`_(unix|other|linux|windows|darwin|amd64|arm64)$`)

// TestAppDocMapsEveryFile: app/doc.go, the map of package app, names every
// file at app/'s root (a file built for some systems as stem_*.go) and
// every subpackage of app/; and names no file that is gone.
func TestAppDocMapsEveryFile(t *testing.T) {
	doc, err := os.ReadFile("../app/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	entries, err := os.ReadDir("../app")
	if err != nil {
		t.Fatal(err)
	}
	stems := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			if name != "testdata" && !regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`).MatchString(text) {
				t.Errorf("app/doc.go does not name the subpackage app/%s", name)
			}
			continue
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || name == "doc.go" {
			continue
		}
		stem := strings.TrimSuffix(name, ".go")
		if s := buildSuffix.ReplaceAllString(stem, ""); s != stem {
			if !strings.Contains(text, s+"_*.go") {
				t.Errorf("app/doc.go does not map %s (as %s_*.go)", name, s)
			}
			stems[s+"_*"] = true
			continue
		}
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(text) {
			t.Errorf("app/doc.go does not map %s", name)
		}
		stems[stem] = true
	}
	for _, m := range regexp.MustCompile(`([a-z_]+(?:_\*)?)\.go\b`).FindAllStringSubmatch(text, -1) {
		if !stems[m[1]] && m[1] != "doc" {
			if _, err := os.Stat(filepath.Join("../app", m[1]+".go")); err != nil {
				t.Errorf("app/doc.go maps %s.go, which is not at app/'s root", m[1])
			}
		}
	}
}
