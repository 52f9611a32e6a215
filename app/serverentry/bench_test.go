package serverentry

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchConfig is a pasted config of 100 servers of every shape.
func benchConfig() []byte {
	var b strings.Builder
	b.WriteString("{\n  // pasted\n  \"mcpServers\": {\n")
	for i := range 100 {
		entry := []string{
			`{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/p%d"], "env": {"LOG": "1"}}`,
			`{"httpUrl": "https://h%d.example.com/mcp", "headers": {"X-Team": "blue"}}`,
			`{"type": "local", "command": ["npx", "-y", "pkg-%d"], "environment": {"A": "b"}}`,
			`{"cmd": "uvx", "args": ["mcp-%d"], "envs": {"K": "v"}, "type": "stdio"}`,
		}[i%4]
		fmt.Fprintf(&b, "    \"s%d\": %s,\n", i, fmt.Sprintf(entry, i))
	}
	b.WriteString("  },\n}\n")
	return []byte(b.String())
}

// BenchmarkParse reads a pasted config of 100 servers; the anchor,
// BenchmarkDecodeStandardJSON, decodes the same text (comments and
// trailing commas taken out) with encoding/json into maps.
func BenchmarkParse(b *testing.B) {
	data := benchConfig()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		cfg, err := Parse(data)
		if err != nil || len(cfg.Servers) != 100 {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeStandardJSON(b *testing.B) {
	v, err := ParseJSONC(benchConfig())
	if err != nil {
		b.Fatal(err)
	}
	v.Standardize()
	data := v.Pack()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			b.Fatal(err)
		}
	}
}
