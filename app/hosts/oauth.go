package hosts

import (
	"context"
	"net/http"
	"strings"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/serverentry"
)

// probeTimeout bounds how long protect waits for a remote server's answer.
const probeTimeout = 3 * time.Second

// ProbeOAuth asks a remote server whether it wants an OAuth sign-in: a
// server that answers 401 with a WWW-Authenticate header leaves the sign-in
// to its client, which is the host (it opens a browser, keeps the tokens);
// the bridge cannot do that, so such an entry is left to the host, and the
// reason is returned. A server that cannot be reached, or answers anything
// else, is bridged as usual ("").
func ProbeOAuth(ctx context.Context, srv app.Server) string {
	if srv.URL == "" || srv.Type == app.TransportStdio {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var req *http.Request
	var err error
	if srv.Type == app.TransportSSE {
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if err == nil {
			req.Header.Set("Accept", "text/event-stream")
		}
	} else {
		body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rootkeeper-probe","version":"0"}}}`
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
	}
	if err != nil {
		return ""
	}
	for k, v := range srv.Headers {
		if !serverentry.HasHostVariable(v) {
			req.Header.Set(k, v)
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return ""
	}
	resp.Body.Close()
	auth := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || auth == "" {
		return ""
	}
	scheme, _, _ := strings.Cut(auth, " ")
	return "the server asks for an OAuth sign-in (401, WWW-Authenticate: " + scheme + "): the host signs in and keeps the tokens, which the bridge cannot, so it is left to the host"
}
