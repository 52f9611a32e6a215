package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/control"
)

// fakeBrowser stands in for the running app's MCP manager: server "docs"
// has two resources, any other is not connected.
type fakeBrowser struct{}

var fakeResources = []app.ResourceInfo{
	{URI: "demo://a.md", Name: "a.md", MIMEType: "text/markdown"},
	{URI: "demo://logo", Name: "logo"},
}

func (fakeBrowser) ListResources(_ context.Context, server string) ([]app.ResourceInfo, error) {
	if server != "docs" {
		return nil, fmt.Errorf("server %q is not connected", server)
	}
	return fakeResources, nil
}

func (fakeBrowser) ReadResource(_ context.Context, server, uri string) ([]app.ResourceContent, error) {
	if server != "docs" {
		return nil, fmt.Errorf("server %q is not connected", server)
	}
	switch uri {
	case "demo://a.md":
		return []app.ResourceContent{{URI: uri, MIMEType: "text/markdown", Text: "# A\nline two\n"}}, nil
	case "demo://logo":
		return []app.ResourceContent{{URI: uri, MIMEType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G'}}}, nil
	}
	return nil, fmt.Errorf("server %q: resources/read %s: Resource not found", server, uri)
}

// serveControl runs a control socket in the harness's state folder, as the
// running app does, until the test ends.
func serveControl(t *testing.T, h *harness) {
	t.Helper()
	srv, err := control.Listen(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	srv.Handle("resources", ResourcesHandler(fakeBrowser{}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(apptest.Patience):
			t.Error("control socket did not stop (hung?)")
		}
	})
}

func TestResourcesVerbs(t *testing.T) {
	h := newHarness(t)
	h.ok("servers", "add", "docs", "--", "docs-server")
	h.ok("servers", "add", "idle", "--", "idle-server")

	// Without a running app there is nothing to ask.
	h.fails(1, []string{"resources", "list", "docs"}, "start it first", "rootkeeper headless")

	serveControl(t, h)
	if got, want := h.ok("resources", "list", "docs"), "demo://a.md  a.md  text/markdown\ndemo://logo  logo  -\n"; got != want {
		t.Errorf("resources list:\n got %q\nwant %q", got, want)
	}
	var list []app.ResourceInfo
	if err := json.Unmarshal([]byte(h.ok("resources", "list", "docs", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fakeResources, list); diff != "" {
		t.Errorf("resources list --json (-want +got):\n%s", diff)
	}

	if got := h.ok("resources", "read", "docs", "demo://a.md"); got != "# A\nline two\n" {
		t.Errorf("read text printed %q", got)
	}
	if got := h.ok("resources", "read", "docs", "demo://logo"); !strings.Contains(got, "binary, 4 bytes, image/png") {
		t.Errorf("read blob printed %q", got)
	}
	var contents []map[string]string
	if err := json.Unmarshal([]byte(h.ok("resources", "read", "docs", "demo://logo", "--json")), &contents); err != nil {
		t.Fatal(err)
	}
	if len(contents) != 1 || contents[0]["blob"] != "iVBORw==" || contents[0]["mimeType"] != "image/png" {
		t.Errorf("read blob --json = %v, want base64 iVBORw==", contents)
	}

	h.fails(2, []string{"resources", "list", "nope"}, `no server "nope"`)
	h.fails(2, []string{"resources", "read", "docs"}, "URI")
	h.fails(2, []string{"resources", "peek", "docs"}, `"peek"`)
	h.fails(1, []string{"resources", "list", "idle"}, `server "idle" is not connected`)
	h.fails(1, []string{"resources", "read", "docs", "demo://none"}, "demo://none", "not found")
}
