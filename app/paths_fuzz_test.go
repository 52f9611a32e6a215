package app

import (
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// FuzzURIRoundTrip feeds each input both as a path and as a URI.
//
// As a path: every absolute clean path without NUL survives
// PathFromURI(URIFromPath(p)).
//
// As a URI: whatever PathFromURI accepts is absolute, clean, NUL-free and
// free of ".." segments, and survives the round trip back through
// URIFromPath.
func FuzzURIRoundTrip(f *testing.F) {
	for _, tc := range nastyPaths {
		f.Add(tc.path)
		f.Add(tc.uri)
	}
	for _, s := range []string{
		"file:///a/%2e%2e/b", "file:///a/.%2E/b", "file:///a%2Fb", "file:///a%00",
		"file://localhost/x/", "FILE:///x", "file:/x", "file:x", "file://server/x",
		"file:///a%", "file:///a%z", "file:///a?q", "file:///a#f", "file:///a//b",
		"file:///C:/x", "/a/../b", "relative/path", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// s as a path.
		if ValidAbsPath(s) == nil && filepath.Clean(s) == s {
			u := URIFromPath(s)
			got, err := PathFromURI(u)
			if err != nil {
				t.Fatalf("PathFromURI(URIFromPath(%q) = %q): %v", s, u, err)
			}
			if got != s {
				t.Fatalf("PathFromURI(URIFromPath(%q) = %q) = %q", s, u, got)
			}
			if runtime.GOOS != "windows" {
				if pu, err := url.Parse(u); err != nil || pu.Path != s || pu.Host != "" || pu.RawQuery != "" || pu.Fragment != "" {
					t.Fatalf("url.Parse(URIFromPath(%q) = %q) = %+v, %v", s, u, pu, err)
				}
			}
		}

		// s as a URI.
		p, err := PathFromURI(s)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "invalid root URI ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("PathFromURI(%q) error %q is not one line starting with \"invalid root URI \"", s, msg)
			}
			return
		}
		if err := ValidAbsPath(p); err != nil {
			t.Fatalf("PathFromURI(%q) = %q: %v", s, p, err)
		}
		if filepath.Clean(p) != p {
			t.Fatalf("PathFromURI(%q) = %q, not clean", s, p)
		}
		if strings.IndexByte(p, 0) >= 0 {
			t.Fatalf("PathFromURI(%q) = %q contains NUL", s, p)
		}
		for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
			if seg == ".." || seg == "." {
				t.Fatalf("PathFromURI(%q) = %q has a %q segment", s, p, seg)
			}
		}
		u := URIFromPath(p)
		back, err := PathFromURI(u)
		if err != nil || back != p {
			t.Fatalf("PathFromURI(%q) = %q; URIFromPath gives %q, which parses back to %q, %v", s, p, u, back, err)
		}
	})
}
