package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := `{
		// the organisation's rules
		"neverGrant": ["~/.ssh", "~/.*/credentials", "/etc"],
		"requireConfinement": true,
		"allowedServers": [{"name": "fs*"}, {"command": "npx -y @modelcontextprotocol/*"}],
		"deniedServers": [{"url": "https://evil.example/*"},],
		"network": {"default": "ask", "never": ["*.pastebin.com:*"]},
		"reachWait": "5s",
		"allowOnce": false,
		"auditTo": ["journal"],
	}`
	p, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if !p.RequireConfinement || p.OnceAllowed() || len(p.NeverGrant) != 3 || p.Network.Default != "ask" {
		t.Errorf("%+v", p)
	}
	if d, ok := p.WaitFor(); !ok || d.Seconds() != 5 {
		t.Errorf("reachWait %v %v", d, ok)
	}
	bad := map[string]string{
		`{"neverGrant": ["~/.ssh"], "allowedServer": []}`:     `unknown key "allowedServer"`,
		`{"requireConfinement": "yes"}`:                       `"requireConfinement" takes true or false`,
		`{"neverGrant": "~/.ssh"}`:                            `"neverGrant" takes a list`,
		`{"neverGrant": ["relative/x"]}`:                      `neverGrant "relative/x"`,
		`{"neverGrant": ["/x/[a"]}`:                           `neverGrant "/x/[a"`,
		`{"allowedServers": [{"name": "a", "command": "b"}]}`: `one of name, command or url`,
		`{"network": {"default": "sometimes"}}`:               `network.default "sometimes"`,
		`{"network": {"weird": 1}}`:                           `unknown key "weird"`,
		`{"reachWait": "soon"}`:                               `reachWait "soon"`,
		`{"auditTo": ["email"]}`:                              `auditTo "email"`,
		`{"neverGrant": [`:                                    `unexpected EOF`,
	}
	for in, want := range bad {
		if _, err := Parse([]byte(in)); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", in, err, want)
		}
	}
}

func TestNeverGranted(t *testing.T) {
	p := Policy{NeverGrant: []string{"~/.ssh", "~/.*/credentials", "/etc"}}
	home := "/home/ann"
	cases := map[string]string{
		"/home/ann/.ssh":               "~/.ssh",
		"/home/ann/.ssh/id_ed25519":    "~/.ssh",
		"/home/ann/.aws/credentials":   "~/.*/credentials",
		"/home/ann/.aws/credentials/x": "~/.*/credentials",
		"/etc/passwd":                  "/etc",
		"/home/ann/src":                "",
		"/home/ann/.aws/config":        "",
		"/home/ann/a/.aws/credentials": "",
		"/home/bob/.ssh":               "",
		"/home/ann/.sshd":              "",
	}
	for path, want := range cases {
		if got := p.NeverGranted(path, home); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".ssh"), 0o700)
	os.MkdirAll(filepath.Join(dir, ".aws", "credentials"), 0o700)
	got := p.NeverGrantedBeneath(dir, dir)
	if len(got) != 2 {
		t.Errorf("beneath the home folder: %v", got)
	}
}

func TestDenied(t *testing.T) {
	p := Policy{
		AllowedServers: []ServerRule{{Name: "fs*"}, {Command: "npx -y @modelcontextprotocol/*"}},
		DeniedServers:  []ServerRule{{Command: "* --unsafe*"}, {URL: "https://evil.example/*"}},
	}
	cases := []struct {
		srv    Server
		denied bool
	}{
		{Server{Name: "fs-home", Command: "node", Args: []string{"x.js"}}, false},
		{Server{Name: "memory", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}}, false},
		{Server{Name: "other", Command: "npx", Args: []string{"-y", "@evil/server"}}, true},
		{Server{Name: "fs", Command: "node", Args: []string{"a.js", "--unsafe-mode"}}, true},
		{Server{Name: "fs-remote", URL: "https://evil.example/mcp"}, true},
	}
	for _, c := range cases {
		if why := p.Denied(c.srv); (why != "") != c.denied {
			t.Errorf("%+v: %q", c.srv, why)
		}
	}
	if why := (Policy{}).Denied(Server{Name: "x"}); why != "" {
		t.Errorf("no policy denies %q", why)
	}
}

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		ok         bool
	}{
		{"*", "", true}, {"a*c", "abc", true}, {"a*c", "ab/ c", true}, {"a*c", "ab/c d", false}, {"a?c", "abc", true},
		{"a?c", "ac", false}, {"*.x", "a.y", false}, {"npx -y @scope/pkg*", "npx -y @scope/pkg@1.2", true},
		{"ab", "abc", false}, {"**", "x", true},
	} {
		if got := glob(c.pattern, c.s); got != c.ok {
			t.Errorf("glob(%q, %q) = %v", c.pattern, c.s, got)
		}
	}
}

// TestLoad: no file, no policy; a good file is the policy; a file anyone
// but an administrator could write, or one that is broken, is a broken
// policy that says why.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	old, oldParents := location, parentsChecked
	t.Cleanup(func() { location, parentsChecked = old, oldParents })
	location, parentsChecked = filepath.Join(dir, "policy.json"), false
	if p := Load(); p.Set() {
		t.Errorf("no file: %+v", p)
	}
	os.WriteFile(location, []byte(`{"requireConfinement": true}`), 0o644)
	if p := Load(); !p.RequireConfinement || p.Broken != "" || p.Source != location {
		t.Errorf("a good file: %+v", p)
	}
	os.WriteFile(location, []byte(`{"requireConfinment": true}`), 0o644)
	if p := Load(); !strings.Contains(p.Broken, `unknown key "requireConfinment"`) || !strings.Contains(p.Refusal(), "nothing can be granted") {
		t.Errorf("a broken file: %+v", p)
	}
	if os.Geteuid() == 0 {
		os.WriteFile(location, []byte(`{}`), 0o644)
		os.Chmod(location, 0o666)
		if p := Load(); !strings.Contains(p.Broken, "can be written by others") {
			t.Errorf("a file others may write: %+v", p)
		}
		os.Chmod(location, 0o644)
		os.Chown(location, 65534, 65534)
		if p := Load(); !strings.Contains(p.Broken, "belongs to user 65534") {
			t.Errorf("a file of another user: %+v", p)
		}
		os.Chown(location, 0, 0)
		parentsChecked = true // the temporary folder sits in /tmp, which anyone may write
		if p := Load(); !strings.Contains(p.Broken, "can be written by others") {
			t.Errorf("a file in a folder others may write: %+v", p)
		}
	}
}
