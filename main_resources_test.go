package main

import (
	"encoding/json"
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// `resources list|read` asks a headless app, which asks the real
// server-everything; without the app it says the app must run.
func TestResourcesThroughTheHeadlessApp(t *testing.T) {
	server := apptest.NPMServer(t, "mcp-server-everything")
	state := t.TempDir()
	mustRun(t, state, "servers", "add", "everything", "--", server, "stdio")

	_, errOut, code := rootkeeper(t, state, "resources", "list", "everything")
	if code != 1 || !strings.Contains(errOut, "rootkeeper headless") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("without the app: exit %d %q, want 1 and one line saying the app must run", code, errOut)
	}

	startHeadless(t, state)
	waitFor(t, "the server to connect", func() bool {
		_, live := lastSent(liveStatus(t, state), "everything")
		return live != nil && live.State == app.ServerConnected
	})

	const doc = "demo://resource/static/document/instructions.md"
	list := mustRun(t, state, "resources", "list", "everything")
	if !strings.Contains(list, doc+"  instructions.md  text/markdown\n") {
		t.Errorf("resources list lacks %s:\n%s", doc, list)
	}
	if text := mustRun(t, state, "resources", "read", "everything", doc); len(text) < 100 || strings.HasPrefix(text, "(binary") {
		t.Errorf("read %s printed %q", doc, text)
	}
	const blob = "demo://resource/dynamic/blob/3"
	if out := mustRun(t, state, "resources", "read", "everything", blob); !strings.HasPrefix(out, "(binary, ") || !strings.Contains(out, "bytes, text/plain") {
		t.Errorf("read blob printed %q", out)
	}
	var contents []app.ResourceContent
	if err := json.Unmarshal([]byte(mustRun(t, state, "resources", "read", "everything", blob, "--json")), &contents); err != nil {
		t.Fatal(err)
	}
	if len(contents) != 1 || !strings.HasPrefix(string(contents[0].Blob), "Resource 3: This is a base64 blob") {
		t.Errorf("read blob --json decodes to %+v", contents)
	}

	_, errOut, code = rootkeeper(t, state, "resources", "list", "nope")
	if code != 2 || !strings.Contains(errOut, `no server "nope"`) {
		t.Errorf("unknown server: exit %d %q, want 2 naming it", code, errOut)
	}
	_, errOut, code = rootkeeper(t, state, "resources", "read", "everything", "demo://no/such")
	if code != 1 || !strings.Contains(errOut, "demo://no/such") {
		t.Errorf("unknown URI: exit %d %q, want 1 naming it", code, errOut)
	}
}
