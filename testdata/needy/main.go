// Command needy is an MCP server for Rootkeeper's tests that needs a file
// of the person's to run, as a Kubernetes server needs ~/.kube/config: it
// reads -config (by default $HOME/.kube/config) when it starts and exits
// with the error when it cannot, as such servers do. Once initialized it
// asks for its roots with roots/list (so that the client records what it
// was sent), and
// its tool "config" answers with what it read.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	home, _ := os.UserHomeDir()
	config := flag.String("config", filepath.Join(home, ".kube", "config"), "the file it needs to run")
	flag.Parse()
	data, err := os.ReadFile(*config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "needy:", err)
		os.Exit(1)
	}
	opts := &mcp.ServerOptions{
		// A version where a server asks for its roots with roots/list
		// (from 2026-07-28 it asks within a request it answers).
		SupportedProtocolVersions: []string{"2025-06-18"},
		InitializedHandler: func(ctx context.Context, req *mcp.InitializedRequest) {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				req.Session.ListRoots(ctx, nil)
			}()
		},
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "needy", Version: "1.0"}, opts)
	s.AddTool(&mcp.Tool{Name: "config", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
	}
}
