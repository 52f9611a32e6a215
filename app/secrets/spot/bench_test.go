package spot

import (
	"encoding/json"
	"testing"

	"rootkeeper/app/secrets/spot/spottest"
)

// server is one corpus shape as a server's configuration.
type server struct {
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

func corpusServers() []server {
	var out []server
	for _, s := range spottest.Shapes {
		switch s.Kind {
		case spottest.Args:
			out = append(out, server{Args: s.Args})
		case spottest.Env:
			out = append(out, server{Env: map[string]string{s.Name: s.Value, "LOG_LEVEL": "info"}})
		case spottest.Header:
			out = append(out, server{URL: "https://mcp.example.com/mcp", Headers: map[string]string{s.Name: s.Value}})
		default:
			out = append(out, server{URL: s.Value})
		}
	}
	return out
}

// BenchmarkFind is what sealing and showing cost: finding the secrets of
// every server of the corpus (116 servers) once.
func BenchmarkFind(b *testing.B) {
	servers := corpusServers()
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range servers {
			InArgs(s.Args)
			for k, v := range s.Env {
				InEnv(k, v)
			}
			for k, v := range s.Headers {
				InHeader(k, v)
			}
			InURL(s.URL)
		}
	}
}

// BenchmarkFindAnchor is the anchor: encoding the same servers as JSON,
// which every save of the state does anyway.
func BenchmarkFindAnchor(b *testing.B) {
	servers := corpusServers()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(servers); err != nil {
			b.Fatal(err)
		}
	}
}
