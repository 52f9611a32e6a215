// Command inputserver is an MCP server for the bridge's tests, written
// against the wire (no SDK) so that it speaks every protocol revision the
// same way. It answers initialize with the version it is asked for (or
// server/discover with 2026-07-28), ping, and these tools:
//
//	roots-asked  the roots it was last given in answer to its own roots/list
//	             (it asks when initialized and on every list_changed)
//	roots        asks for roots with an input request (SEP-2322) and returns
//	             the URIs it was given
//	mixed        asks for roots and an elicitation in one input-required
//	             result, and returns both answers
//	echo         returns its "text" argument (any size)
//	capabilities the client capabilities it saw (initialize or _meta)
//	started      as JSON: its pid, its arguments and $ROOTKEEPER_ROOTS (roots
//	             modes args and env), and how many initialize requests it got
//	slow         answers after its "ms" argument (milliseconds); it logs
//	             "slow began" (notifications/message) when it begins
//
// resources/read of mem://N returns N bytes of text.
//
// It counts the list_changed notifications it gets (tool "changes").
// With INPUTSERVER_LINGER set it stays a minute after its stdin closes,
// ignoring SIGTERM: a server only SIGKILL ends. It then notes each SIGTERM
// it ignores as a line "PID SIGTERM" in the file INPUTSERVER_LINGER names:
// a server ended at once, by SIGKILL alone, notes none.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

var (
	mu      sync.Mutex
	out     = bufio.NewWriterSize(os.Stdout, 1<<20)
	asked   = "none"
	caps    = "{}"
	changes int
	inits   int
	nextID  int
)

func send(v any) {
	data, _ := json.Marshal(v)
	mu.Lock()
	defer mu.Unlock()
	out.Write(append(data, '\n'))
	out.Flush()
}

func askRoots() {
	mu.Lock()
	nextID++
	id := nextID
	mu.Unlock()
	send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "roots/list", "params": map[string]any{}})
}

func text(id json.RawMessage, s string) {
	send(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}})
}

func uris(raw json.RawMessage) string {
	var r struct {
		Roots []struct{ URI string } `json:"roots"`
	}
	json.Unmarshal(raw, &r)
	var u []string
	for _, x := range r.Roots {
		u = append(u, x.URI)
	}
	return strings.Join(u, " ")
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 256<<20)
	for in.Scan() {
		line := in.Bytes()
		var batch []msg
		if len(line) > 0 && line[0] == '[' {
			json.Unmarshal(line, &batch)
		} else {
			var m msg
			if json.Unmarshal(line, &m) != nil {
				continue
			}
			batch = []msg{m}
		}
		for _, m := range batch {
			handle(m)
		}
	}
	if notes := os.Getenv("INPUTSERVER_LINGER"); notes != "" {
		// A server slow to go: only SIGKILL ends it.
		terms := make(chan os.Signal, 1)
		signal.Notify(terms, syscall.SIGTERM)
		linger := time.After(time.Minute)
		for {
			select {
			case <-terms:
				if f, err := os.OpenFile(notes, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
					fmt.Fprintf(f, "%d SIGTERM\n", os.Getpid())
					f.Close()
				}
			case <-linger:
				return
			}
		}
	}
}

func handle(m msg) {
	switch {
	case m.Method == "initialize":
		var p struct {
			ProtocolVersion string          `json:"protocolVersion"`
			Capabilities    json.RawMessage `json:"capabilities"`
		}
		json.Unmarshal(m.Params, &p)
		mu.Lock()
		caps = string(p.Capabilities)
		inits++
		mu.Unlock()
		send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
			"protocolVersion": p.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "inputserver", "version": "1"}}})
	case m.Method == "server/discover":
		send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
			"supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{"tools": map[string]any{}}}})
	case m.Method == "notifications/initialized":
		go askRoots()
	case m.Method == "notifications/roots/list_changed":
		mu.Lock()
		changes++
		mu.Unlock()
		go askRoots()
	case m.Method == "ping":
		send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{}})
	case m.Method == "tools/call":
		call(m)
	case m.Method == "resources/read":
		// mem://N is N bytes of text.
		var p struct{ URI string }
		json.Unmarshal(m.Params, &p)
		var n int
		fmt.Sscanf(p.URI, "mem://%d", &n)
		send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
			"contents": []any{map[string]any{"uri": p.URI, "mimeType": "text/plain", "text": strings.Repeat("x", n)}}}})
	case m.Method == "" && len(m.Result) > 0: // our roots/list answered
		mu.Lock()
		asked = uris(m.Result)
		mu.Unlock()
	case m.Method == "" && len(m.Error) > 0:
		mu.Lock()
		asked = "error " + string(m.Error)
		mu.Unlock()
	case m.Method != "" && len(m.ID) > 0:
		send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
	}
}

func call(m msg) {
	var p struct {
		Name           string                     `json:"name"`
		Arguments      map[string]any             `json:"arguments"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   string                     `json:"requestState"`
		Meta           map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(m.Params, &p)
	if c, ok := p.Meta["io.modelcontextprotocol/clientCapabilities"]; ok {
		mu.Lock()
		caps = string(c)
		mu.Unlock()
	}
	inputRequired := func(reqs map[string]any, state string) {
		send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
			"resultType": "input_required", "inputRequests": reqs, "requestState": state}})
	}
	rootsReq := map[string]any{"method": "roots/list", "params": map[string]any{}}
	switch p.Name {
	case "roots-asked":
		mu.Lock()
		s := asked
		mu.Unlock()
		text(m.ID, s)
	case "changes":
		mu.Lock()
		n := changes
		mu.Unlock()
		text(m.ID, fmt.Sprint(n))
	case "capabilities":
		mu.Lock()
		s := caps
		mu.Unlock()
		text(m.ID, s)
	case "started":
		mu.Lock()
		n := inits
		mu.Unlock()
		data, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "args": os.Args[1:], "env": os.Getenv("ROOTKEEPER_ROOTS"), "inits": n})
		text(m.ID, string(data))
	case "slow":
		ms, _ := p.Arguments["ms"].(float64)
		// The host hears that it began (a log message), then the answer.
		send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
			"params": map[string]any{"level": "info", "data": "slow began"}})
		go func() {
			time.Sleep(time.Duration(ms) * time.Millisecond)
			text(m.ID, "slept")
		}()
	case "echo":
		s, _ := p.Arguments["text"].(string)
		text(m.ID, s)
	case "roots":
		if r, ok := p.InputResponses["r"]; ok && p.RequestState == "roots-1" {
			text(m.ID, uris(r))
			return
		}
		inputRequired(map[string]any{"r": rootsReq}, "roots-1")
	case "mixed":
		r, okR := p.InputResponses["r"]
		e, okE := p.InputResponses["e"]
		if okR && okE && p.RequestState == "mixed-1" {
			var el struct{ Action string }
			json.Unmarshal(e, &el)
			text(m.ID, "roots="+uris(r)+" elicit="+el.Action)
			return
		}
		inputRequired(map[string]any{"r": rootsReq, "e": map[string]any{"method": "elicitation/create",
			"params": map[string]any{"message": "Proceed?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}}}, "mixed-1")
	default:
		send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "unknown tool " + p.Name}})
	}
}
