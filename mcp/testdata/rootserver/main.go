// Command rootserver is a small MCP server for Rootkeeper's tests and
// benchmark. It asks for the client's roots when initialized and on every
// notifications/roots/list_changed, and reports each answer as a line
//
//	NAME roots ["file:///a","file:///b"]
//	NAME rootserr {"code":-32601,"message":"...","data":{...}}
//
// to the unix socket RK_REPORT names, or the TCP address after "tcp:" in
// it (Wine has no unix sockets), and on stderr with -stderr; or else on
// stderr. Its
// tool "roots" asks for the roots with an input request (SEP-2322), which
// the SDK turns into roots/list for clients before 2026-07-28.
//
// Flags make it misbehave: -exit-on-discover exits on server/discover like
// servers predating 2026-07-28 (go-sdk #1177); -exit-after exits some time
// after initialization; -hang stops reading stdin once initialized;
// -spawn-child leaves a child process (itself, with -idle) in its process
// group;
// -slow-handshake delays its answers to server/discover and initialize. It
// reports "early" for a list_changed that arrives before initialized. It reports
// "start" with its pid, arguments and ROOTKEEPER_ROOTS when it starts.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	name           = flag.String("name", "rootserver", "name used in reports")
	version        = flag.String("version", "", "the only protocol version to speak (default: all)")
	exitOnDiscover = flag.Bool("exit-on-discover", false, "exit when sent server/discover")
	exitAfter      = flag.Duration("exit-after", 0, "exit this long after initialization")
	hang           = flag.Bool("hang", false, "stop reading stdin once initialized")
	spawnChild     = flag.Bool("spawn-child", false, "start a child that idles (-idle 10m) in the same process group")
	idle           = flag.Duration("idle", 0, "do nothing for this long, then exit (the child of -spawn-child)")
	echoStderr     = flag.Bool("stderr", false, "also write reports to stderr when reporting to a socket")
	slowHandshake  = flag.Duration("slow-handshake", 0, "wait this long before answering server/discover and initialize")
)

var (
	reportMu sync.Mutex
	reportW  io.Writer
	hangNow  = make(chan struct{})
	hangOnce sync.Once

	initialized atomic.Bool // notifications/initialized has arrived
)

func report(event string, payload any) {
	data, _ := json.Marshal(payload)
	line := fmt.Sprintf("%s %s %s\n", *name, event, data)
	reportMu.Lock()
	defer reportMu.Unlock()
	if reportW != nil {
		io.WriteString(reportW, line)
	}
	if reportW == nil || *echoStderr {
		os.Stderr.WriteString(line)
	}
}

func reportRoots(res *mcp.ListRootsResult, err error) {
	if err != nil {
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			report("rootserr", map[string]any{"code": werr.Code, "message": werr.Message, "data": werr.Data})
		} else {
			report("rootserr", map[string]any{"message": err.Error()})
		}
		return
	}
	uris := []string{}
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	report("roots", uris)
}

func fetch(ss *mcp.ServerSession) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reportRoots(ss.ListRoots(ctx, nil))
}

// stdin stops delivering input once hangNow is closed.
type stdin struct{ r io.Reader }

func (s stdin) Read(p []byte) (int, error) {
	select {
	case <-hangNow:
		select {}
	default:
	}
	return s.r.Read(p)
}
func (stdin) Close() error { return os.Stdin.Close() }

func main() {
	flag.Parse()
	if *idle > 0 {
		time.Sleep(*idle)
		return
	}
	if sock := os.Getenv("RK_REPORT"); sock != "" {
		network, addr := "unix", sock
		if a, ok := strings.CutPrefix(sock, "tcp:"); ok {
			network, addr = "tcp", a
		}
		c, err := net.Dial(network, addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "report socket:", err)
			os.Exit(1)
		}
		reportW = c
	}
	start := map[string]any{"pid": os.Getpid(), "args": flag.Args(), "env": os.Getenv("ROOTKEEPER_ROOTS")}
	if *spawnChild {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, "spawn:", err)
			os.Exit(1)
		}
		cmd := exec.Command(self, "-idle", "10m")
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "spawn:", err)
			os.Exit(1)
		}
		start["child"] = cmd.Process.Pid
	}
	report("start", start)
	opts := &mcp.ServerOptions{
		InitializedHandler: func(ctx context.Context, req *mcp.InitializedRequest) {
			initialized.Store(true)
			if *hang {
				hangOnce.Do(func() { close(hangNow) })
			}
			if *exitAfter > 0 {
				time.AfterFunc(*exitAfter, func() { os.Exit(3) })
			}
			// Ask even a client without the roots capability: it must refuse.
			go fetch(req.Session)
		},
		RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) {
			go fetch(req.Session)
		},
	}
	if *version != "" {
		opts.SupportedProtocolVersions = []string{*version}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "rootserver", Version: "1.0"}, opts)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "server/discover", "initialize":
				time.Sleep(*slowHandshake)
			case "notifications/roots/list_changed":
				// Only pings may come before the handshake has ended.
				if !initialized.Load() {
					report("early", method)
				}
			}
			return next(ctx, method, req)
		}
	})
	s.AddTool(&mcp.Tool{Name: "roots", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			resp, ok := req.Params.InputResponses["roots"]
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil
			}
			res, _ := resp.(*mcp.ListRootsResult)
			if res == nil {
				return nil, fmt.Errorf("input response %T is not a roots list", resp)
			}
			reportRoots(res, nil)
			data, _ := json.Marshal(res.Roots)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}}, nil
		})
	in := io.Reader(os.Stdin)
	if *exitOnDiscover {
		// Like servers predating 2026-07-28 that take anything but
		// initialize as fatal.
		br := bufio.NewReader(os.Stdin)
		first, err := br.ReadBytes('\n')
		if err != nil || !bytes.Contains(first, []byte(`"initialize"`)) {
			fmt.Fprintf(os.Stderr, "unexpected first message %s\n", first)
			os.Exit(2)
		}
		in = io.MultiReader(bytes.NewReader(first), br)
	}
	t := &mcp.IOTransport{Reader: stdin{in}, Writer: nopCloser{os.Stdout}}
	if err := s.Run(context.Background(), t); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
