package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"rootkeeper/app/apptest"
	"rootkeeper/app/cli"
)

// policyFile is an organisation's policy for the test: a file the test
// binary (built with the seam rootkeeper_policytest) reads instead of
// /etc/rootkeeper/policy.json; it returns the environment that points
// there, and the file, which the test may rewrite.
func policyFile(t *testing.T, content string) (env []string, file string) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return append(serverEnv(), "ROOTKEEPER_TEST_POLICY_FILE="+file), file
}

// runIn runs the binary with env on stateDir: its output, its errors and
// its exit code.
func runIn(t *testing.T, env []string, stateDir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--state-dir", stateDir}, args...)...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// refused fails the test unless the command was refused as bad input
// (exit 2) in one line that names want and says the organisation set it.
func refused(t *testing.T, what string, stderr string, code int, want string) {
	t.Helper()
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "set by your organisation") {
		t.Errorf("%s: exit %d, stderr %q; want exit 2 with %q, set by your organisation", what, code, stderr, want)
	}
}

// TestPolicyNeverGrant: a folder the organisation never grants can be
// made no root and granted to no server; a confined server's read there
// is refused at once and never asked about (no request, nothing to
// answer); and when the policy comes to never grant a folder a running
// bridged server was allowed, that server loses it without the bridge
// being started again.
func TestPolicyNeverGrant(t *testing.T) {
	state, secret := reachSetup(t)
	project := filepath.Join(filepath.Dir(secret), "project")
	env, file := policyFile(t, `{
		// the organisation's rules
		"neverGrant": ["`+secret+`"],
	}`)
	_, errOut, code := runIn(t, env, state, "roots", "add", secret)
	refused(t, "a root the policy never grants", errOut, code, `rule "`+secret+`"`)
	os.Mkdir(filepath.Join(secret, "sub"), 0o755)
	_, errOut, code = runIn(t, env, state, "roots", "add", filepath.Join(secret, "sub"))
	refused(t, "a root inside it", errOut, code, secret)

	h := startHostSessionIn(t, env, state)
	if line := <-h.try("read", filepath.Join(secret, "a.txt")); !strings.Contains(line, "permission denied") {
		t.Fatalf("a read the policy never grants: %s", line)
	}
	if line := <-h.try("read", filepath.Join(project, "missing")); !strings.Contains(line, "no such file") {
		t.Fatalf("a read in its own folder: %s", line)
	}
	if r, ok := reachRequest(t, state, secret); ok {
		t.Errorf("a folder never granted was asked about: %+v", r)
	}
	os.WriteFile(filepath.Join(project, "x.txt"), []byte("x"), 0o600)
	if line := <-h.try("read", filepath.Join(project, "x.txt")); !strings.Contains(line, `\"got\":\"x\"`) {
		t.Fatalf("a read in its granted folder: %s", line)
	}
	// The organisation now never grants the project either: the running
	// session loses it.
	if err := os.WriteFile(file, []byte(`{"neverGrant": ["`+secret+`", "`+project+`"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	apptest.Eventually(t, "the project taken from the running session", func() (bool, string) {
		line := <-h.try("read", filepath.Join(project, "x.txt"))
		return strings.Contains(line, "permission denied"), line
	})
	out, _, _ := runIn(t, env, state, "status")
	if !strings.Contains(out, "Policy: your organisation's policy") || !strings.Contains(out, "allowed "+project+", but set by your organisation: never granted") {
		t.Errorf("status does not say what the policy sets:\n%s", out)
	}
	// status --json: the decision the policy sets aside, with its rule.
	out, _, _ = runIn(t, env, state, "status", "--json")
	var st cli.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	aside := 0
	for _, srv := range st.Servers {
		for _, r := range srv.SetAside {
			if r.Path == project && strings.Contains(r.Policy, project) {
				aside++
			}
		}
	}
	if aside != 1 || !strings.Contains(st.Policy, "never granted") {
		t.Errorf("status --json: %d servers with the project set aside, policy %q:\n%s", aside, st.Policy, out)
	}
}

// TestPolicyRequiresConfinement: a server cannot be added unconfined, nor
// turned unconfined, where the organisation requires confinement.
func TestPolicyRequiresConfinement(t *testing.T) {
	state := t.TempDir()
	env, _ := policyFile(t, `{"requireConfinement": true}`)
	_, errOut, code := runIn(t, env, state, "servers", "add", "free", "--no-confine", "--", "sh", "-c", "true")
	refused(t, "--no-confine", errOut, code, "must run confined")
	if _, errOut, code := runIn(t, env, state, "servers", "add", "fs", "--", "sh", "-c", "true"); code != 0 {
		t.Fatalf("servers add: exit %d %s", code, errOut)
	}
	_, errOut, code = runIn(t, env, state, "servers", "unconfine", "fs")
	refused(t, "servers unconfine", errOut, code, "cannot run unconfined")
	out, _, _ := runIn(t, env, state, "doctor")
	if !strings.Contains(out, "every stdio server confined") {
		t.Errorf("doctor does not show the policy:\n%s", out)
	}
	out, _, _ = runIn(t, env, state, "status", "--json")
	var st cli.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st.Servers) != 1 || !slices.Contains(st.Servers[0].Policy, "runs confined: required") {
		t.Errorf("status --json does not say the policy requires fs confined (%v):\n%s", err, out)
	}
}

// TestPolicyDeniedServer: a server the organisation denies cannot be
// added; one stored before the policy came is not started, and a bridge
// for it answers its host's initialize with an error that says the
// organisation blocked it.
func TestPolicyDeniedServer(t *testing.T) {
	state := t.TempDir()
	nosy := apptest.Program(t, "mcp/confine/testdata/nosy")
	mustRun(t, state, "servers", "add", "nosy", "--", nosy)
	env, _ := policyFile(t, `{"deniedServers": [{"name": "nos*"}]}`)
	_, errOut, code := runIn(t, env, state, "servers", "add", "nosy2", "--", nosy)
	refused(t, "a denied server", errOut, code, `deniedServers has {"name": "nos*"}`)

	br := exec.Command(binary, "--state-dir", state, "bridge", "nosy")
	br.Env = env
	in, _ := br.StdinPipe()
	out, _ := br.StdoutPipe()
	var logs strings.Builder
	br.Stderr = &logs
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	defer br.Wait()
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test-host","version":"1"}}}`+"\n")
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatalf("no answer to initialize; stderr: %s", logs.String())
	}
	if line := sc.Text(); !strings.Contains(line, `"error"`) || !strings.Contains(line, "your organisation blocks nosy") {
		t.Errorf("the denied server's bridge answered %s", line)
	}
	in.Close()
}

// TestPolicyBroken: a policy file that cannot be read refuses every grant
// and says why, rather than run without the policy.
func TestPolicyBroken(t *testing.T) {
	state := t.TempDir()
	folder := t.TempDir()
	mustRun(t, state, "servers", "add", "fs", "--", "sh", "-c", "true")
	mustRun(t, state, "roots", "add", folder, "--enable")
	env, _ := policyFile(t, `{"neverGrants": ["~/.ssh"]}`)
	_, errOut, code := runIn(t, env, state, "grant", "fs", folder)
	if code != 2 || !strings.Contains(errOut, `unknown key "neverGrants"`) || !strings.Contains(errOut, "nothing can be granted") {
		t.Errorf("a grant under a broken policy: exit %d, %q", code, errOut)
	}
	out, _, code := runIn(t, env, state, "doctor")
	if code == 0 || !strings.Contains(out, "an administrator fixes") {
		t.Errorf("doctor under a broken policy: exit %d\n%s", code, out)
	}
}
