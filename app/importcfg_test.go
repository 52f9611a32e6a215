package app

import "testing"

// A config written by a Windows editor starts with a byte order mark and
// ends its lines with CRLF; it imports as any other.
func TestParseServerConfigAfterAByteOrderMark(t *testing.T) {
	servers, err := ParseServerConfig([]byte("\ufeff{\r\n  \"mcpServers\": {\r\n    \"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"x\"]}\r\n  }\r\n}\r\n"))
	if err != nil || len(servers) != 1 || servers[0].Name != "fs" || servers[0].Command != "npx" {
		t.Fatalf("%+v %v", servers, err)
	}
}
