package mcp

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// A remote server's configured headers (its token) go to its own origin
// only: a redirect to another host must not carry them there.
func TestHeadersStayOnTheServersOrigin(t *testing.T) {
	seen := map[string]string{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen["other"] = r.Header.Get("Authorization")
	}))
	defer other.Close()
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen["own"] = r.Header.Get("Authorization")
		if r.URL.Path == "/mcp" {
			http.Redirect(w, r, other.URL+"/elsewhere", http.StatusTemporaryRedirect)
		}
	}))
	defer own.Close()

	hc := httpClient(own.URL+"/mcp", map[string]string{"Authorization": "Bearer secret"})
	resp, err := hc.Get(own.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen["own"] != "Bearer secret" {
		t.Errorf("the server's own origin got Authorization %q, want the configured one", seen["own"])
	}
	if _, reached := seen["other"]; !reached {
		t.Fatal("the redirect was not followed; the test proves nothing")
	}
	if seen["other"] != "" {
		t.Errorf("a cross-host redirect carried the server's token: %q", seen["other"])
	}
}
