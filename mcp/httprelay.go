package mcp

import (
	"net/http"
	"net/url"
)

// RelayHTTPClient is the HTTP client with which the bridge reaches server
// endpoint: the server's configured headers (often a token) go to its
// origin only, as for the managed clients, but reply bodies are not bounded
// here: the bridge relays messages whole (≥ 16 MB included) and bounds each
// message itself.
func RelayHTTPClient(endpoint string, headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return &http.Client{Transport: http.DefaultTransport}
	}
	origin := ""
	if u, err := url.Parse(endpoint); err == nil {
		origin = originOf(u)
	}
	return &http.Client{Transport: &headerTransport{base: http.DefaultTransport, origin: origin, headers: headers}}
}

// OriginOf is scheme://host:port of u, lowercased, with the default port
// made explicit: two URLs with the same origin may share credentials.
func OriginOf(u *url.URL) string { return originOf(u) }
