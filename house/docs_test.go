package house

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// anchorOf is the anchor GitHub gives a heading: lower case, spaces to
// dashes, punctuation but dashes and underscores dropped.
func anchorOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the anchors of a Markdown file's headings.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range headingRE.FindAllStringSubmatch(string(data), -1) {
		out[anchorOf(m[1])] = true
	}
	return out
}

// TestDocsLinksResolve: every relative link of README.md and docs/*.md
// names a file that exists, and a heading in it where it names one.
func TestDocsLinksResolve(t *testing.T) {
	pages, _ := filepath.Glob("../docs/*.md")
	pages = append(pages, "../README.md")
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %q: no such file", page, target)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[anchor] {
				t.Errorf("%s: link %q: no such heading in %s", page, target, path)
			}
		}
	}
}

// TestREADMEIsAFrontDoor: README.md stays a front door — at most 200
// lines, the rest in docs/.
func TestREADMEIsAFrontDoor(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 200 {
		t.Errorf("README.md is %d lines: move the detail to docs/", n)
	}
}
