package hosts

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A remote server that answers 401 with WWW-Authenticate wants the host to
// sign in: protect leaves its entry to the host and says why; a server
// that answers is bridged, and the headers of the entry reach it.
func TestProtectLeavesOAuthServersToTheHost(t *testing.T) {
	var sawKey atomic.Value
	oauth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer oauth.Close()
	plain401 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized) // no WWW-Authenticate: not an OAuth sign-in
	}))
	defer plain401.Close()
	open := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawKey.Store(r.Header.Get("X-Key"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":0,"result":{}}`))
	}))
	defer open.Close()

	h, _ := Lookup("cursor")
	w, _, store := testWorld(t)
	path := h.Files(w)[0]
	os.MkdirAll(filepath.Dir(path), 0o755)
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"linear": map[string]any{"url": oauth.URL + "/mcp"},
		"legacy": map[string]any{"type": "sse", "url": oauth.URL + "/sse"},
		"plain":  map[string]any{"url": plain401.URL + "/mcp"},
		"open":   map[string]any{"url": open.URL + "/mcp", "headers": map[string]string{"X-Key": "k1"}},
		"gone":   map[string]any{"url": "http://127.0.0.1:1/mcp"},
	}})
	os.WriteFile(path, data, 0o600)
	res, err := Protect(h, Options{World: w, Store: store, Executable: fakeExe, Probe: ProbeOAuth})
	if err != nil {
		t.Fatal(err)
	}
	skipped := map[string]string{}
	for _, e := range res[0].Skipped {
		skipped[e.Name] = e.Skip
	}
	for _, name := range []string{"linear", "legacy"} {
		if !strings.Contains(skipped[name], "OAuth sign-in (401, WWW-Authenticate: Bearer)") || !strings.Contains(skipped[name], "left to the host") {
			t.Errorf("%s: %q", name, skipped[name])
		}
	}
	var bridged []string
	for _, ch := range res[0].Changes {
		bridged = append(bridged, ch.Entry.Name)
	}
	if len(bridged) != 3 || len(skipped) != 2 {
		t.Errorf("bridged %v, skipped %v", bridged, skipped)
	}
	if sawKey.Load() != "k1" {
		t.Errorf("the probe did not send the entry's headers: %v", sawKey.Load())
	}
	var after struct {
		McpServers map[string]map[string]any `json:"mcpServers"`
	}
	json.Unmarshal(mustRead(t, path), &after)
	if after.McpServers["linear"]["url"] != oauth.URL+"/mcp" || after.McpServers["linear"]["command"] != nil {
		t.Errorf("the OAuth entry was changed: %v", after.McpServers["linear"])
	}
	if after.McpServers["open"]["command"] != fakeExe {
		t.Errorf("the open server was not bridged: %v", after.McpServers["open"])
	}
}
