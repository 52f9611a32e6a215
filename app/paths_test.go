package app

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func skipOnWindows(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("POSIX paths")
	}
}

// nastyPaths are absolute clean paths whose names are hard on URIs.
var nastyPaths = []struct {
	name string
	path string
	uri  string // the exact URI expected; "" when not pinned
}{
	{"root", "/", "file:///"},
	{"plain", "/home/ann/src", "file:///home/ann/src"},
	{"unreserved", "/a-b.c_d~E9", "file:///a-b.c_d~E9"},
	{"space", "/tmp/a b", "file:///tmp/a%20b"},
	{"space and hash", "/tmp/a b#c", "file:///tmp/a%20b%23c"},
	{"doc example", "/home/a b/#x", "file:///home/a%20b/%23x"},
	{"hash", "/p/#", "file:///p/%23"},
	{"percent", "/p/100%", "file:///p/100%25"},
	{"literal %20", "/p/a%20b", "file:///p/a%2520b"},
	{"literal %2F", "/p/a%2Fb", "file:///p/a%252Fb"},
	{"literal %2e%2e", "/p/%2e%2e", "file:///p/%252e%252e"},
	{"question", "/p/what?", "file:///p/what%3F"},
	{"semicolon", "/p/a;b", "file:///p/a%3Bb"},
	{"ampersand", "/p/a&b", "file:///p/a%26b"},
	{"equals", "/p/a=b", "file:///p/a%3Db"},
	{"plus", "/p/a+b", "file:///p/a%2Bb"},
	{"at", "/p/@scope", "file:///p/%40scope"},
	{"colon", "/p/c:d", "file:///p/c%3Ad"},
	{"brackets", "/p/[x]", "file:///p/%5Bx%5D"},
	{"single quote", "/p/it's", "file:///p/it%27s"},
	{"double quote", `/p/"q"`, "file:///p/%22q%22"},
	{"backslash", `/p/a\b`, "file:///p/a%5Cb"},
	{"tab", "/p/a\tb", "file:///p/a%09b"},
	{"newline", "/p/a\nb", "file:///p/a%0Ab"},
	{"carriage return", "/p/a\rb", "file:///p/a%0Db"},
	{"DEL and controls", "/p/\x01\x1f\x7f", "file:///p/%01%1F%7F"},
	{"e acute NFC", "/p/caf\u00e9", "file:///p/caf%C3%A9"},
	{"e acute NFD", "/p/cafe\u0301", "file:///p/cafe%CC%81"},
	{"japanese", "/p/日本語", "file:///p/%E6%97%A5%E6%9C%AC%E8%AA%9E"},
	{"emoji", "/p/🦀", "file:///p/%F0%9F%A6%80"},
	{"emoji ZWJ", "/p/👩\u200d💻", ""},
	{"leading dash", "/-rf", "file:///-rf"},
	{"leading dashes", "/p/--help", "file:///p/--help"},
	{"three dots", "/p/...", "file:///p/..."},
	{"dot prefix", "/p/.git", "file:///p/.git"},
	{"two dots prefix", "/p/..x", "file:///p/..x"},
	{"invalid UTF-8", "/p/\xff\xfe", "file:///p/%FF%FE"},
	{"lone continuation", "/p/a\x80", "file:///p/a%80"},
	{"all ASCII specials", "/ !\"#$%&'()*+,:;<=>?@[\\]^`{|}", "file:///%20%21%22%23%24%25%26%27%28%29%2A%2B%2C%3A%3B%3C%3D%3E%3F%40%5B%5C%5D%5E%60%7B%7C%7D"},
	{"localhost-like", "/localhost", "file:///localhost"},
	{"deep", "/a/b/c/d/e/f", "file:///a/b/c/d/e/f"},
}

func TestURIRoundTripNastyNames(t *testing.T) {
	skipOnWindows(t)
	for _, tc := range nastyPaths {
		t.Run(tc.name, func(t *testing.T) {
			if filepath.Clean(tc.path) != tc.path {
				t.Fatalf("bad test case: %q is not clean", tc.path)
			}
			u := URIFromPath(tc.path)
			if tc.uri != "" && u != tc.uri {
				t.Errorf("URIFromPath(%q) = %q, want %q", tc.path, u, tc.uri)
			}
			if !strings.HasPrefix(u, "file:///") {
				t.Errorf("URIFromPath(%q) = %q, want a file:/// prefix", tc.path, u)
			}
			for i := len("file://"); i < len(u); i++ {
				if c := u[i]; !(c == '/' || c == '%' || unreservedForTest(c)) {
					t.Errorf("URIFromPath(%q) = %q has unescaped byte %q", tc.path, u, c)
				}
			}
			got, err := PathFromURI(u)
			if err != nil {
				t.Fatalf("PathFromURI(%q): %v", u, err)
			}
			if got != tc.path {
				t.Errorf("PathFromURI(URIFromPath(%q)) = %q (bytes % x), want bytes % x", tc.path, got, got, tc.path)
			}
			// Independent check: the standard library reads the URI the same way.
			pu, err := url.Parse(u)
			if err != nil {
				t.Fatalf("url.Parse(%q): %v", u, err)
			}
			if pu.Scheme != "file" || pu.Host != "" || pu.RawQuery != "" || pu.Fragment != "" || pu.Path != tc.path {
				t.Errorf("url.Parse(%q) = scheme %q host %q query %q fragment %q path %q; want file, \"\", \"\", \"\", %q",
					u, pu.Scheme, pu.Host, pu.RawQuery, pu.Fragment, pu.Path, tc.path)
			}
		})
	}
}

// unreservedForTest is written independently of the implementation.
func unreservedForTest(c byte) bool {
	return strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~", c) >= 0
}

func TestURIFromPathNFCAndNFDDiffer(t *testing.T) {
	nfc, nfd := "/p/caf\u00e9", "/p/cafe\u0301"
	if URIFromPath(nfc) == URIFromPath(nfd) {
		t.Fatalf("NFC and NFD names map to the same URI %q; they are different folders", URIFromPath(nfc))
	}
}

func TestPathFromURIAccepts(t *testing.T) {
	skipOnWindows(t)
	for _, tc := range []struct{ uri, want string }{
		{"file:///a/b", "/a/b"},
		{"file://localhost/a/b", "/a/b"},
		{"file://LocalHost/a/b", "/a/b"},
		{"FILE:///a/b", "/a/b"},
		{"File:///a/b", "/a/b"},
		{"file:/a/b", "/a/b"},
		{"file:///a/b/", "/a/b"},
		{"file:///", "/"},
		{"file://localhost/", "/"},
		{"file:/", "/"},
		{"file:///a%20b", "/a b"},
		{"file:///caf%c3%a9", "/café"},
		{"file:///caf%C3%A9", "/café"},
		{"file:///caf%c3%A9", "/café"},
		{"file:///a%3f%23%25", "/a?#%"},
		{"file:///a b", "/a b"},     // unescaped space: lenient
		{"file:///café", "/café"},   // raw UTF-8: lenient
		{"file:///a+b", "/a+b"},     // '+' is not a space in paths
		{"file:///p/...", "/p/..."}, // three dots is a name
		{"file:///p/.%2e.", "/p/..."},
		{"file:///p/%2e%2e%2e", "/p/..."},
		{"file:///p/.git", "/p/.git"},
	} {
		got, err := PathFromURI(tc.uri)
		if err != nil {
			t.Errorf("PathFromURI(%q): %v", tc.uri, err)
			continue
		}
		if got != tc.want {
			t.Errorf("PathFromURI(%q) = %q, want %q", tc.uri, got, tc.want)
		}
	}
}

func TestPathFromURIRejects(t *testing.T) {
	skipOnWindows(t)
	for _, tc := range []struct{ uri, want string }{
		{"", "missing scheme"},
		{"/home/ann", "missing scheme"},
		{"home/ann:x", "missing scheme"},
		{"http://x/y", "scheme must be file"},
		{"https:///a", "scheme must be file"},
		{"files:///a", "scheme must be file"},
		{"fil:///a", "scheme must be file"},
		{":///a", "scheme must be file"},
		{"file://server/share", `host must be empty or localhost, not "server"`},
		{"file://localhost:80/a", "host must be empty or localhost"},
		{"file://user@localhost/a", "host must be empty or localhost"},
		{"file://127.0.0.1/a", "host must be empty or localhost"},
		{"file://%6Cocalhost/a", "host must be empty or localhost"},
		{"file://localhost", "empty path"},
		{"file://", "empty path"},
		{"file:", "empty path"},
		{"file:foo", "relative"},
		{"file:foo/bar", "relative"},
		{"file:./foo", "relative"},
		{"file:///a/../b", `".." segment`},
		{"file:///..", `".." segment`},
		{"file:///a/..", `".." segment`},
		{"file:///a/../", `".." segment`},
		{"file:///a/%2e%2e/b", `".." segment`},
		{"file:///a/%2E%2E/b", `".." segment`},
		{"file:///a/%2E./b", `".." segment`},
		{"file:///a/.%2e/b", `".." segment`},
		{"file:///a/./b", `"." segment`},
		{"file:///a/.", `"." segment`},
		{"file:///a/%2e", `"." segment`},
		{"file:///a/%2E/", `"." segment`},
		{"file:///a\x00b", "NUL"},
		{"file:///a%00b", "NUL"},
		{"file:///a/%00", "NUL"},
		{"file:///a%2Fb", "encoded slash"},
		{"file:///a%2fb", "encoded slash"},
		{"file:///a/%2F", "encoded slash"},
		{"file:///a%2F..%2Fetc", "encoded slash"},
		{"file:///a%zz", `malformed percent escape "%zz"`},
		{"file:///a%", `malformed percent escape "%"`},
		{"file:///a%4", `malformed percent escape "%4"`},
		{"file:///a%g0/b", `malformed percent escape "%g0"`},
		{"file:///a% 1", "malformed percent escape"},
		{"file:///a?b=c", "has a query"},
		{"file:///a?", "has a query"},
		{"file:///a#frag", "has a fragment"},
		{"file:///a#", "has a fragment"},
		{"file:///a#x?y", "has a fragment"},
		{"file:///a?y#x", "has a query"},
		{"file:///a//b", "empty path segment"},
		{"file:////a", "empty path segment"},
		{"file:///a/b//", "empty path segment"},
		{"file://///server/share", "empty path segment"},
	} {
		got, err := PathFromURI(tc.uri)
		if err == nil {
			t.Errorf("PathFromURI(%q) = %q, want an error containing %q", tc.uri, got, tc.want)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) {
			t.Errorf("PathFromURI(%q) error %q, want it to contain %q", tc.uri, msg, tc.want)
		}
		if prefix := "invalid root URI " + quote(tc.uri) + ": "; !strings.HasPrefix(msg, prefix) {
			t.Errorf("PathFromURI(%q) error %q, want it to start with %q", tc.uri, msg, prefix)
		}
		if strings.ContainsAny(msg, "\n\r") {
			t.Errorf("PathFromURI(%q) error %q spans lines", tc.uri, msg)
		}
		var ie *InvalidURIError
		if !errors.As(err, &ie) || ie.URI != tc.uri {
			t.Errorf("PathFromURI(%q) error %#v, want an *InvalidURIError carrying the URI", tc.uri, err)
		}
	}
}

// quote is how the messages name paths and URIs.
func quote(s string) string { return strconv.Quote(s) }

func TestValidAbsPath(t *testing.T) {
	skipOnWindows(t)
	for _, p := range []string{"/", "/a", "/a/../b", "/a b", "/-x"} {
		if err := ValidAbsPath(p); err != nil {
			t.Errorf("ValidAbsPath(%q) = %v, want nil", p, err)
		}
	}
	for _, tc := range []struct{ p, want string }{
		{"", `invalid path "": empty path`},
		{"a/b", `invalid path "a/b": not an absolute path`},
		{".", `invalid path ".": not an absolute path`},
		{"~/x", `invalid path "~/x": not an absolute path`},
		{"/a\x00b", `invalid path "/a\x00b": contains a NUL byte`},
	} {
		err := ValidAbsPath(tc.p)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ValidAbsPath(%q) = %v, want %s", tc.p, err, tc.want)
		}
		var pe *InvalidPathError
		if !errors.As(err, &pe) || pe.Path != tc.p {
			t.Errorf("ValidAbsPath(%q) error %#v, want an *InvalidPathError carrying the path", tc.p, err)
		}
	}
}

// realTempDir is t.TempDir() with its own symlinks resolved (macOS /var ->
// /private/var), so that expectations are canonical.
func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestCanonicalPathSymlink(t *testing.T) {
	skipOnWindows(t)
	dir := realTempDir(t)
	target := filepath.Join(dir, "real project #1")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link to it")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	canon, display, err := CanonicalPath(link, "/nonexistent-cwd")
	if err != nil {
		t.Fatalf("CanonicalPath(%q): %v", link, err)
	}
	if canon != target {
		t.Errorf("canonical = %q, want the target %q", canon, target)
	}
	if display != link {
		t.Errorf("display = %q, want the link %q", display, link)
	}

	// A link inside a path, given unclean, with a trailing slash.
	sub := filepath.Join(target, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	canon, display, err = CanonicalPath(link+"//./sub/", "")
	if err != nil {
		t.Fatal(err)
	}
	if canon != sub || display != filepath.Join(link, "sub") {
		t.Errorf("CanonicalPath through link = (%q, %q), want (%q, %q)", canon, display, sub, filepath.Join(link, "sub"))
	}
}

func TestCanonicalPathRelative(t *testing.T) {
	skipOnWindows(t)
	dir := realTempDir(t)
	if err := os.MkdirAll(filepath.Join(dir, "a", "b c"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, given := range []string{"a/b c", "./a/b c", "a/../a/b c/", "a//b c"} {
		canon, display, err := CanonicalPath(given, dir)
		if err != nil {
			t.Fatalf("CanonicalPath(%q, %q): %v", given, dir, err)
		}
		want := filepath.Join(dir, "a", "b c")
		if canon != want || display != want {
			t.Errorf("CanonicalPath(%q, %q) = (%q, %q), want (%q, %q)", given, dir, canon, display, want, want)
		}
	}
	canon, display, err := CanonicalPath(".", dir)
	if err != nil || canon != dir || display != dir {
		t.Errorf("CanonicalPath(\".\", %q) = (%q, %q, %v), want (%q, %q, nil)", dir, canon, display, err, dir, dir)
	}
	// An absolute path ignores cwd.
	canon, _, err = CanonicalPath(dir, "/elsewhere")
	if err != nil || canon != dir {
		t.Errorf("CanonicalPath(%q, \"/elsewhere\") = (%q, %v), want %q", dir, canon, err, dir)
	}
	// A relative cwd is refused rather than silently made absolute.
	if _, _, err := CanonicalPath("x", "rel/cwd"); err == nil {
		t.Errorf("CanonicalPath with relative cwd succeeded, want an error")
	}
}

func TestCanonicalPathMissing(t *testing.T) {
	skipOnWindows(t)
	dir := realTempDir(t)
	missing := filepath.Join(dir, "no such folder")
	_, _, err := CanonicalPath(missing, "")
	if err == nil {
		t.Fatalf("CanonicalPath(%q) succeeded, want an error", missing)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v does not wrap fs.ErrNotExist", err)
	}
	if !strings.Contains(err.Error(), quote(missing)) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("error %q does not name %q and say it does not exist", err, missing)
	}

	// Relative: the message names the absolute path and what was typed.
	_, _, err = CanonicalPath("gone", dir)
	if err == nil || !strings.Contains(err.Error(), quote(filepath.Join(dir, "gone"))) || !strings.Contains(err.Error(), `given as "gone"`) {
		t.Errorf("CanonicalPath(\"gone\", dir) error = %v, want it to name both paths", err)
	}

	// A dangling symlink is missing too.
	link := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := CanonicalPath(link, ""); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CanonicalPath(dangling link) error = %v, want fs.ErrNotExist", err)
	}

	for _, bad := range []string{"", "/a\x00b"} {
		if _, _, err := CanonicalPath(bad, dir); err == nil {
			t.Errorf("CanonicalPath(%q) succeeded, want an error", bad)
		}
	}
}
