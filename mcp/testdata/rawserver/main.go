// Command rawserver is the smallest MCP server that follows roots, for
// Rootkeeper's grant-latency benchmark: newline-delimited JSON-RPC on stdin
// and stdout with no SDK, so that a benchmark of fifty of them on two cores
// measures the client rather than fifty servers' own machinery. It answers
// initialize (any version the client asks for) and ping, refuses everything
// else, asks for roots/list when initialized and on every
// notifications/roots/list_changed, and reports each answer as the line
//
//	NAME roots ["file:///a","file:///b"]
//
// to the unix socket named by RK_REPORT.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
)

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func main() {
	name := flag.String("name", "rawserver", "name used in reports")
	flag.String("version", "", "accepted for the benchmark's common arguments; any version is spoken")
	flag.Parse()
	report, err := net.Dial("unix", os.Getenv("RK_REPORT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "report socket:", err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	send := func(m message) {
		m.JSONRPC = "2.0"
		data, _ := json.Marshal(m)
		out.Write(append(data, '\n'))
		out.Flush()
	}
	next := 0
	ask := func() {
		next++
		send(message{ID: json.RawMessage(fmt.Sprint(next)), Method: "roots/list", Params: json.RawMessage(`{}`)})
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 16<<20)
	for in.Scan() {
		var m message
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		switch {
		case m.Method == "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(m.Params, &p)
			res, _ := json.Marshal(map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{},
				"serverInfo":      map[string]string{"name": "rawserver", "version": "1.0"},
			})
			send(message{ID: m.ID, Result: res})
		case m.Method == "ping":
			send(message{ID: m.ID, Result: json.RawMessage(`{}`)})
		case m.Method == "notifications/initialized", m.Method == "notifications/roots/list_changed":
			ask()
		case m.Method != "" && m.ID != nil:
			send(message{ID: m.ID, Error: json.RawMessage(`{"code":-32601,"message":"Method not found"}`)})
		case m.Method == "" && m.Result != nil:
			var r struct {
				Roots []struct {
					URI string `json:"uri"`
				} `json:"roots"`
			}
			json.Unmarshal(m.Result, &r)
			uris := []string{}
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			data, _ := json.Marshal(uris)
			fmt.Fprintf(report, "%s roots %s\n", *name, data)
		}
	}
}
