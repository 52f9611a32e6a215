package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/secrets/spot/spottest"
)

// recorderServer is a stdio server that writes its arguments (NUL
// separated) to $DUMP.args and its environment to $DUMP.env, prints both on
// its stderr (as a careless server might), then answers the handshake.
func recorderServer(t *testing.T) string {
	return writeScript(t, `printf '%s\0' "$@" > "$DUMP.args.tmp" && mv "$DUMP.args.tmp" "$DUMP.args"
env -0 > "$DUMP.env.tmp" && mv "$DUMP.env.tmp" "$DUMP.env"
echo "recorder started: $*" >&2
env | sed 's/^/recorder env: /' >&2
INFO='{"name":"recorder","version":"1"}'
`+mcpShell)
}

// recorderHTTP is a remote MCP server that answers the handshake and keeps
// every request's URI and headers.
type recorderHTTP struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
}

func newRecorderHTTP(t *testing.T) *recorderHTTP {
	r := &recorderHTTP{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.seen = append(r.seen, req.Clone(req.Context()))
		r.mu.Unlock()
		if req.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &msg)
		if len(msg.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if msg.Method == "initialize" {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"recorder","version":"1"}}}`, msg.ID)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, msg.ID)
	}))
	t.Cleanup(r.Close)
	return r
}

// got finds a request for uri, as the server saw it.
func (r *recorderHTTP) got(uri string) *http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, req := range r.seen {
		if req.RequestURI == uri {
			return req
		}
	}
	return nil
}

// here is rawURL pointing at the recorder: its scheme and host replaced,
// its userinfo, path and query kept byte for byte.
func (r *recorderHTTP) here(rawURL string) string {
	i := strings.Index(rawURL, "://") + 3
	end := len(rawURL)
	if j := strings.IndexAny(rawURL[i:], "/?#"); j >= 0 {
		end = i + j
	}
	userinfo := ""
	if at := strings.LastIndexByte(rawURL[i:end], '@'); at >= 0 {
		userinfo = rawURL[i : i+at+1]
	}
	return "http://" + userinfo + strings.TrimPrefix(r.URL, "http://") + rawURL[end:]
}

// corpusCase is a secret shape of the corpus as one server: how it is
// added, imported or written in a host's file, and what it must get when it
// runs.
type corpusCase struct {
	shape spottest.Shape
	name  string
	dump  string // stdio: the recorder's files
	url   string // remote: its URL, at the recorder
}

func corpusCases(t *testing.T, prefix string, rec *recorderHTTP) []corpusCase {
	dumps := t.TempDir()
	var out []corpusCase
	for i, s := range spottest.Shapes {
		if !s.Secret() {
			continue
		}
		c := corpusCase{shape: s, name: fmt.Sprintf("%s%d", prefix, i)}
		switch s.Kind {
		case spottest.Args, spottest.Env:
			c.dump = filepath.Join(dumps, c.name)
		case spottest.Header:
			c.url = rec.URL + "/" + c.name + "/mcp"
		case spottest.URL:
			c.url = rec.here(s.Value)
		}
		out = append(out, c)
	}
	return out
}

// entry is the case as an mcpServers entry.
func (c corpusCase) entry(recorder string) map[string]any {
	switch c.shape.Kind {
	case spottest.Args:
		return map[string]any{"command": recorder, "args": c.shape.Args, "env": map[string]string{"DUMP": c.dump}}
	case spottest.Env:
		return map[string]any{"command": recorder, "env": map[string]string{"DUMP": c.dump, c.shape.Name: c.shape.Value}}
	case spottest.Header:
		return map[string]any{"type": "http", "url": c.url, "headers": map[string]string{c.shape.Name: c.shape.Value}}
	}
	return map[string]any{"type": "http", "url": c.url}
}

// add is the case as `servers add` arguments.
func (c corpusCase) add(recorder string) []string {
	switch c.shape.Kind {
	case spottest.Args:
		return append([]string{"servers", "add", c.name, "--confine=false", "--env", "DUMP=" + c.dump, "--", recorder}, c.shape.Args...)
	case spottest.Env:
		return []string{"servers", "add", c.name, "--confine=false", "--env", "DUMP=" + c.dump, "--env", c.shape.Name + "=" + c.shape.Value, "--", recorder}
	case spottest.Header:
		return []string{"servers", "add", c.name, "--url", c.url, "--header", c.shape.Name + ": " + c.shape.Value}
	}
	return []string{"servers", "add", c.name, "--url", c.url}
}

// checkRun checks that the server of c got its configuration byte for
// byte, where it belongs, and returns what is still to come ("" when it
// has been checked).
func (c corpusCase) checkRun(t *testing.T, rec *recorderHTTP) (waiting string) {
	t.Helper()
	s := c.shape
	switch s.Kind {
	case spottest.Args:
		data, err := os.ReadFile(c.dump + ".args")
		if err != nil {
			return c.name + "'s arguments"
		}
		if got := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00"); !slices.Equal(got, s.Args) {
			t.Errorf("%s (%s) got the arguments %q, want %q", c.name, s.From, got, s.Args)
		}
	case spottest.Env:
		data, err := os.ReadFile(c.dump + ".env")
		if err != nil {
			return c.name + "'s environment"
		}
		if !slices.Contains(strings.Split(string(data), "\x00"), s.Name+"="+s.Value) {
			t.Errorf("%s (%s) did not get %s=%q", c.name, s.From, s.Name, s.Value)
		}
	default:
		u := c.url[strings.Index(c.url, "://")+3:]
		u = u[strings.IndexByte(u, '/'):]
		req := rec.got(u)
		if req == nil {
			return c.name + "'s request for " + u
		}
		if s.Kind == spottest.Header {
			if got := req.Header.Get(s.Name); got != s.Value {
				t.Errorf("%s (%s) sent %s: %q, want %q", c.name, s.From, s.Name, got, s.Value)
			}
		} else if at := strings.LastIndexByte(c.url[:strings.Index(c.url, u)], '@'); at >= 0 {
			userinfo := c.url[len("http://"):at]
			if got, want := req.Header.Get("Authorization"), "Basic "+base64.StdEncoding.EncodeToString([]byte(userinfo)); got != want {
				t.Errorf("%s (%s) sent Authorization %q, want %q (from %q)", c.name, s.From, got, want, userinfo)
			}
		}
	}
	return ""
}

// waitAll waits until every case's server got its configuration, and
// says which did not.
func waitAll(t *testing.T, cases []corpusCase, rec *recorderHTTP) {
	t.Helper()
	var waiting []string
	defer func() {
		if t.Failed() {
			t.Logf("still waiting for: %q", waiting)
		}
	}()
	waitFor(t, "every server to get its configuration", func() bool {
		waiting = nil
		for _, c := range cases {
			if w := c.checkRun(t, rec); w != "" {
				waiting = append(waiting, w)
			}
		}
		return len(waiting) == 0
	})
}

// outputs collects what Rootkeeper printed and wrote, to grep for secrets.
type outputs map[string]string

func (o outputs) run(t *testing.T, env []string, state, what string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--state-dir", state}, args...)...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	o[what+": "+strings.Join(args, " ")+" (stdout)"] = out.String()
	o[what+": "+strings.Join(args, " ")+" (stderr)"] = errOut.String()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatal(err)
	}
	return out.String() + errOut.String()
}

// files adds every file under dir but the hosts' backups, which are the
// hosts' own files as they were (restore gives them back byte for byte).
func (o outputs) files(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "backups" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			o[p] = string(data)
		}
		return nil
	})
}

// grep fails the test for every corpus secret found in any output.
func (o outputs) grep(t *testing.T) {
	t.Helper()
	for _, s := range spottest.Shapes {
		for _, secret := range s.Secrets {
			for what, text := range o {
				if strings.Contains(text, secret) {
					i := strings.Index(text, secret)
					t.Errorf("%s (%s): %q is in %s: …%s…", s.From, s.Shape, secret, what, text[max(0, i-80):min(len(text), i+len(secret)+40)])
				}
			}
		}
	}
}

// Every secret shape of the corpus, given to `servers add`, `import` and
// `hosts protect` of the real binary beside a real Secret Service, is in
// the keyring and nowhere else: not in state.json, not in what any
// command prints (servers list [--json], status [--json], hosts
// list/protect, doctor, warnings and errors), not in the logs, the audit
// log, the app's output or a bridge's stderr — also though the server
// prints all it got on its stderr. The servers get every value byte for
// byte where it was configured; restore gives the host its file back byte
// for byte.
func TestCorpusSecretsAreNeverPrinted(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("shell script servers and gnome-keyring")
	}
	apptest.SecretService(t)
	home := t.TempDir()
	env := append(serverEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	recorder := recorderServer(t)
	rec := newRecorderHTTP(t)
	out := outputs{}

	// servers add, one per shape.
	added := t.TempDir()
	addCases := corpusCases(t, "a", rec)
	for _, c := range addCases {
		out.run(t, env, added, "servers add", c.add(recorder)...)
	}
	shown := 0 // servers list shows arguments and URLs, not env or headers
	for _, c := range addCases {
		if c.shape.Kind == spottest.Args || c.shape.Kind == spottest.URL {
			shown += len(c.shape.Secrets)
		}
	}
	if n := strings.Count(out.run(t, env, added, "list", "servers", "list"), "(secret)"); n != shown {
		t.Errorf("servers list shows %d (secret) for %d secrets in arguments and URLs", n, shown)
	}
	// import, all in one file.
	imported := t.TempDir()
	importCases := corpusCases(t, "i", rec)
	cfg := map[string]any{}
	for _, c := range importCases {
		cfg[c.name] = c.entry(recorder)
	}
	data, _ := json.MarshalIndent(map[string]any{"mcpServers": cfg}, "", "  ")
	file := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(file, data, 0o600)
	out.run(t, env, imported, "import", "import", file)
	// hosts protect: Claude Code's file with every shape (env stays in
	// the host's file, where the host keeps it).
	protected := t.TempDir()
	hostCases := corpusCases(t, "h", rec)
	cfg = map[string]any{}
	for _, c := range hostCases {
		cfg[c.name] = c.entry(recorder)
	}
	orig, _ := json.MarshalIndent(map[string]any{"mcpServers": cfg}, "", "  ")
	claudeJSON := filepath.Join(home, ".claude.json")
	os.WriteFile(claudeJSON, orig, 0o600)
	out.run(t, env, protected, "hosts", "hosts", "list")
	out.run(t, env, protected, "hosts", "hosts", "list", "--json")
	if o := out.run(t, env, protected, "hosts", "hosts", "protect", "claude-code"); !strings.Contains(o, "backup: ") {
		t.Fatalf("hosts protect:\n%s", o)
	}
	out.run(t, env, protected, "hosts", "hosts", "list")

	for _, state := range []string{added, imported, protected} {
		for _, args := range [][]string{{"servers", "list"}, {"servers", "list", "--json"}, {"status"}, {"status", "--json"}, {"doctor"}} {
			out.run(t, env, state, "offline", args...)
		}
	}
	// What the state files keep is references; the keyring has the rest.
	for _, state := range []string{added, imported, protected} {
		saved, _ := os.ReadFile(filepath.Join(state, app.StateFileName))
		if !strings.Contains(string(saved), "keyring:rootkeeper/") {
			t.Errorf("%s keeps no reference:\n%s", state, saved)
		}
	}

	// A bridge, as a host starts it, for a stdio server that prints what
	// it got on its stderr and for a remote one.
	bridgeCase := func(cases []corpusCase, kind string) corpusCase {
		for _, c := range cases {
			if c.shape.Kind == kind && (kind != spottest.URL || strings.Contains(c.url, "@")) {
				return c
			}
		}
		t.Fatalf("no %s case", kind)
		return corpusCase{}
	}
	bridge := func(state, name string, c corpusCase) {
		t.Helper()
		br := exec.Command(binary, "--state-dir", state, "bridge", name)
		br.Env = append(slices.Clone(env), "DUMP="+c.dump)
		var errOut bytes.Buffer
		br.Stderr = &errOut
		in, _ := br.StdinPipe()
		stdout, _ := br.StdoutPipe()
		if err := br.Start(); err != nil {
			t.Fatal(err)
		}
		io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test-host","version":"1"}}}`+"\n")
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || !strings.Contains(line, `"id":1`) {
			t.Errorf("bridge %s: initialize: %q %v\n%s", c.name, line, err, errOut.String())
		}
		waitFor(t, c.name+" through the bridge", func() bool { return c.checkRun(t, rec) == "" })
		in.Close()
		br.Wait()
		out["bridge "+c.name+" (stdout)"] = line
		out["bridge "+c.name+" (stderr)"] = errOut.String()
	}
	for _, c := range []corpusCase{bridgeCase(addCases, spottest.Args), bridgeCase(addCases, spottest.Env)} {
		bridge(added, c.name, c)
	}
	for _, c := range []corpusCase{bridgeCase(hostCases, spottest.URL), bridgeCase(hostCases, spottest.Header)} {
		bridge(protected, "claude-code."+c.name, c)
	}

	// The app: every server added gets its configuration, byte for byte.
	h := startHeadless(t, added)
	waitAll(t, addCases, rec)
	waitFor(t, "the app to answer", func() bool { return liveStatus(t, added).Running })
	for _, args := range [][]string{{"status"}, {"status", "--json"}, {"servers", "list"}, {"audit", "--json"}} {
		out.run(t, env, added, "live", args...)
	}
	if err := h.stop(); err != nil {
		t.Errorf("headless: %v", err)
	}
	out["headless (stderr)"] = h.logs.String()
	if log, _ := os.ReadFile(filepath.Join(added, "logs", addCases[0].name+".log")); !strings.Contains(string(log), "recorder started") {
		t.Errorf("the server log has not the server's stderr:\n%s", log)
	}

	// Restore: the host's file, byte for byte.
	out.run(t, env, protected, "hosts", "hosts", "restore", "claude-code")
	if back, _ := os.ReadFile(claudeJSON); !bytes.Equal(back, orig) {
		t.Errorf("restore did not give the file back byte for byte:\n%s", back)
	}

	for _, state := range []string{added, imported, protected} {
		out.files(t, state)
	}
	out.grep(t)
	secrets, lookalikes := spottest.Counts()
	t.Logf("%d secret shapes (%d servers each way), %d look-alikes; %d outputs and files grepped", secrets, len(addCases), lookalikes, len(out))
}

// Without a keyring every secret stays in the 0600 state file, each is
// warned about once and none is printed; the servers still get them.
func TestCorpusWithoutAKeyringIsNeverPrinted(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("shell script servers")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	env := serverEnv()
	recorder := recorderServer(t)
	rec := newRecorderHTTP(t)
	out := outputs{}
	state := t.TempDir()
	cases := corpusCases(t, "n", rec)
	warnings := 0
	for _, c := range cases {
		// Each command warns of the secrets of the server it writes
		// (others' are another matter).
		o := out.run(t, env, state, "servers add", c.add(recorder)...)
		for _, line := range strings.Split(o, "\n") {
			if strings.Contains(line, "no keyring took") && strings.Contains(line, fmt.Sprintf("server %q", c.name)) {
				warnings++
			}
		}
	}
	if want := func() (n int) {
		for _, c := range cases {
			n += len(c.shape.Secrets)
		}
		return n
	}(); warnings != want {
		t.Errorf("%d warnings for %d secrets", warnings, want)
	}
	path := filepath.Join(state, app.StateFileName)
	saved, _ := os.ReadFile(path)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 || !strings.Contains(string(saved), spottest.PostgresPW) {
		t.Fatalf("the secrets are not in the 0600 state file: %v %v", fi.Mode(), err)
	}
	for _, args := range [][]string{{"servers", "list"}, {"servers", "list", "--json"}, {"status"}, {"status", "--json"}, {"doctor"}} {
		out.run(t, env, state, "offline", args...)
	}
	h := startHeadless(t, state)
	waitAll(t, cases, rec)
	h.stop()
	out["headless (stderr)"] = h.logs.String()
	out.files(t, filepath.Join(state, "logs"))
	out.grep(t)
}
